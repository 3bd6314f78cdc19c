//! A PostgreSQL server of the run's own, so that it can be stopped, crashed and severed under
//! load without touching the server that other tests share.
//!
//! `initdb` into a fresh folder, then `postgres` itself as this program's child on a free port
//! of 127.0.0.1, trusting logins of one role (only this machine's loopback reaches it, for one
//! run). The child's process id is the postmaster's, so a fast stop is SIGINT to it and an
//! immediate stop (a crash: no checkpoint, recovery at the next start) is SIGQUIT. PostgreSQL
//! refuses to run as root, so as root the server runs as the `postgres` user.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use retrykey_testkit::server_programs;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::process::{Spawned, on_timeout, signal};

/// The role the services log in as.
const ROLE: &str = "retrykey";

/// How a server is stopped.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StopMode {
    /// SIGINT: sessions ended, a checkpoint, a clean exit.
    Fast,
    /// SIGQUIT: every process ends at once, no checkpoint; the next start recovers from WAL.
    Immediate,
}

/// A running server, stopped by its process id and deleted on drop.
pub struct OwnServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    owner: Option<(u32, u32)>,
    postmaster: Option<Spawned>,
}

impl OwnServer {
    /// Creates a cluster under the temporary directory and starts it. `Err` says why not (the
    /// caller reports it as a skip when the programs are missing: see [`can_run_server`]).
    pub fn start(bin: PathBuf) -> anyhow::Result<Self> {
        let dir = std::env::temp_dir().join(format!("retrykey-faults-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("create {}", dir.display()))?;
        let undo = dir.clone();
        on_timeout(move || drop(std::fs::remove_dir_all(undo)));
        let owner = if server_programs::is_root() {
            Some(postgres_user()?)
        } else {
            None
        };
        if let Some((uid, gid)) = owner {
            std::os::unix::fs::chown(&dir, Some(uid), Some(gid))
                .with_context(|| format!("chown {}", dir.display()))?;
        }
        let port = std::net::TcpListener::bind("127.0.0.1:0")?
            .local_addr()?
            .port();
        let mut server = Self {
            bin,
            dir,
            port,
            owner,
            postmaster: None,
        };
        let data = server.dir.join("data");
        let mut initdb = server.command("initdb");
        initdb
            .arg("-D")
            .arg(&data)
            .args(["-U", ROLE, "--auth=trust", "-E", "UTF8", "--no-sync"]);
        let output = initdb.output().context("cannot run initdb")?;
        if !output.status.success() {
            bail!(
                "initdb failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
        }
        server.boot()?;
        Ok(server)
    }

    /// The URL the services use.
    pub fn url(&self) -> String {
        format!("postgres://{ROLE}@127.0.0.1:{}/postgres", self.port)
    }

    /// The postmaster's process id.
    pub fn pid(&self) -> Option<u32> {
        self.postmaster.as_ref().map(Spawned::pid)
    }

    /// Stops the server the way `how` says, waits for it to exit, and starts it again on the
    /// same folder and port.
    pub fn restart(&mut self, how: StopMode) -> anyhow::Result<()> {
        self.stop(how)?;
        self.boot()
    }

    /// Signals the postmaster and waits (at most 30 s) for it to exit.
    pub fn stop(&mut self, how: StopMode) -> anyhow::Result<()> {
        let Some(mut postmaster) = self.postmaster.take() else {
            return Ok(());
        };
        let name = match how {
            StopMode::Fast => "INT",
            StopMode::Immediate => "QUIT",
        };
        signal(postmaster.pid(), name)?;
        if !postmaster.exited_within(Duration::from_secs(30)) {
            bail!("the server did not stop within 30 s of SIG{name}");
        }
        Ok(())
    }

    /// Starts `postgres` as a child and waits until it accepts connections.
    fn boot(&mut self) -> anyhow::Result<()> {
        let mut postgres = self.command("postgres");
        postgres
            .arg("-D")
            .arg(self.dir.join("data"))
            .arg("-p")
            .arg(self.port.to_string())
            .arg("-k")
            .arg(&self.dir)
            // An immediate stop is a crash of the server's processes, not of the machine: what
            // they wrote is in the kernel's cache, so the run need not wait for the disk.
            .args(["-c", "listen_addresses=127.0.0.1", "-c", "fsync=off"])
            .args(["-c", "max_connections=100"])
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        let postmaster = Spawned::start(postgres, "postgres")?;
        self.postmaster = Some(postmaster);
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(60) {
            let ready = self
                .command("pg_isready")
                .args(["-q", "-h", "127.0.0.1", "-p", &self.port.to_string()])
                .status()
                .is_ok_and(|status| status.success());
            if ready {
                return Ok(());
            }
            if let Some(postmaster) = self.postmaster.as_mut()
                && !postmaster.running()
            {
                bail!("postgres exited at start (see {})", self.dir.display());
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        bail!("postgres did not accept connections within 60 s")
    }

    /// One of the server's programs, run as the cluster's owner.
    fn command(&self, program: &str) -> Command {
        let mut command = Command::new(self.bin.join(program));
        command.current_dir(&self.dir);
        if let Some((uid, gid)) = self.owner {
            command.uid(uid).gid(gid);
        }
        command
    }
}

impl Drop for OwnServer {
    fn drop(&mut self) {
        if self.stop(StopMode::Fast).is_err()
            && let Some(postmaster) = self.postmaster.take()
        {
            drop(postmaster); // killed by its id
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Whether this machine can run a server of the run's own, as `pg-faults` needs: the folder of
/// the server's programs, and as root a `postgres` user to run them as (PostgreSQL refuses to
/// run as root). `Err` says what is missing.
pub fn can_run_server() -> Result<PathBuf, String> {
    let bin = server_programs::bin_dir()?;
    if server_programs::is_root() {
        postgres_user().map_err(|error| format!("{error:#}"))?;
    }
    Ok(bin)
}

/// The `postgres` user's uid and gid, which the server's Debian package creates.
fn postgres_user() -> anyhow::Result<(u32, u32)> {
    let id = |flag: &str| -> anyhow::Result<u32> {
        let output = Command::new("id").args([flag, "postgres"]).output()?;
        if !output.status.success() {
            bail!("root, and no postgres user to run the server as");
        }
        Ok(String::from_utf8_lossy(&output.stdout).trim().parse()?)
    };
    Ok((id("-u")?, id("-g")?))
}

/// Runs `sql` on the server at `url` as an administrator and returns the first column of its
/// first row: what a fault run does beside the services (severing their connections).
pub fn admin_query(url: &str, sql: &str) -> anyhow::Result<i64> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async {
        let mut config: tokio_postgres::Config = url.parse()?;
        config
            .application_name("retrykey-faults")
            .connect_timeout(Duration::from_secs(5));
        let (client, connection) = config.connect(tokio_postgres::NoTls).await?;
        let driver = tokio::spawn(connection);
        let row = tokio::time::timeout(Duration::from_secs(10), client.query_one(sql, &[]))
            .await
            .context("no answer within 10 s")??;
        drop(client);
        let _ = driver.await;
        Ok(row.get::<_, i64>(0))
    })
}
