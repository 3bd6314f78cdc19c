//! A PostgreSQL server of a scenario's own, so that it can be restarted mid-run without touching
//! the server other tests use (`RETRYKEY_PG_URL`).
//!
//! It is a real cluster: `initdb` into a fresh folder under the temporary directory, then the
//! server started with `pg_ctl` on a free loopback port, trusting local logins of one role
//! (nothing else can reach 127.0.0.1 of this machine's sandbox, and the cluster lives for one
//! scenario). A restart is an *immediate* shutdown (SIGQUIT to the server: no checkpoint, every
//! connection cut, crash recovery at the next start), then a start. PostgreSQL refuses to run
//! as root, so as root the commands run as the `postgres` user, which the server's Debian
//! package creates.

use std::path::PathBuf;
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

use retrykey_testkit::server_programs;

use crate::rig::free_port;

/// The role the scenario's programs log in as.
const ROLE: &str = "retrykey";

/// A running private cluster, stopped and deleted on drop.
pub struct PrivateServer {
    bin: PathBuf,
    dir: PathBuf,
    port: u16,
    as_postgres: bool,
}

impl PrivateServer {
    /// Creates the cluster and starts it; `Err` says what is missing.
    pub fn start() -> Result<Self, String> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let bin = server_programs::bin_dir()?;
        let dir = std::env::temp_dir().join(format!(
            "retrykey-pg-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        let port = free_port().map_err(|error| format!("no free port: {error}"))?;
        let server = Self {
            bin,
            dir,
            port,
            as_postgres: server_programs::is_root(),
        };
        let dir = server.dir.display().to_string();
        server.run(
            "initdb",
            &[
                "-D",
                &dir,
                "-U",
                ROLE,
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
            ],
        )?;
        server.start_server()?;
        Ok(server)
    }

    /// The URL of its `postgres` database, as the role the programs use.
    pub fn url(&self) -> String {
        format!("postgres://{ROLE}@127.0.0.1:{}/postgres", self.port)
    }

    /// An immediate shutdown, then a start on the same port: what a crashed and restarted
    /// database looks like to its clients.
    pub fn restart(&self) -> Result<(), String> {
        self.stop_server()?;
        self.start_server()
    }

    fn start_server(&self) -> Result<(), String> {
        let dir = self.dir.display().to_string();
        let log = self.dir.join("server.log").display().to_string();
        let options = format!(
            "-p {} -k {dir} -c listen_addresses=127.0.0.1 -c max_connections=60",
            self.port
        );
        self.run(
            "pg_ctl",
            &[
                "-D", &dir, "-l", &log, "-o", &options, "-w", "-t", "60", "start",
            ],
        )
        .map(drop)
    }

    fn stop_server(&self) -> Result<(), String> {
        let dir = self.dir.display().to_string();
        self.run("pg_ctl", &["-D", &dir, "-m", "immediate", "-w", "stop"])
            .map(drop)
    }

    /// Runs one of the server's programs (as `postgres` when this process is root).
    fn run(&self, program: &str, args: &[&str]) -> Result<Output, String> {
        let path = self.bin.join(program);
        let mut command = if self.as_postgres {
            let mut command = Command::new("runuser");
            command.args(["-u", "postgres", "--"]).arg(&path);
            command
        } else {
            Command::new(&path)
        };
        let output = command
            .args(args)
            .current_dir(std::env::temp_dir())
            .output()
            .map_err(|error| format!("cannot run {}: {error}", path.display()))?;
        if !output.status.success() {
            return Err(format!(
                "{program} failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        Ok(output)
    }
}

impl Drop for PrivateServer {
    fn drop(&mut self) {
        let _ = self.stop_server();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}
