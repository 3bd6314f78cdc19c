//! The real processes a run starts: found beside this program, started with a pipe for what they
//! print, stopped by their own process id, and all of them killed by a watchdog if the run
//! outlives its cap.

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, bail};
use retrykey_testkit::load::PaymentsProcess;

/// The ids of the processes this run started and has not stopped yet.
static RUNNING: Mutex<BTreeSet<u32>> = Mutex::new(BTreeSet::new());

/// What the watchdog undoes besides the processes (a mount), registered by whoever did it.
static UNDO: Mutex<Vec<Box<dyn FnOnce() + Send>>> = Mutex::new(Vec::new());

/// The program `name`, built beside this one (cargo puts a profile's binaries together).
pub fn sibling(name: &str) -> anyhow::Result<PathBuf> {
    let me = std::env::current_exe().context("cannot find this program's path")?;
    let path = me.with_file_name(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    if !path.exists() {
        bail!(
            "{} is not built (the just recipe builds it)",
            path.display()
        );
    }
    Ok(path)
}

/// Sends signal `name` (`INT`, `QUIT`, `KILL`) to process `pid`.
pub fn signal(pid: u32, name: &str) -> anyhow::Result<()> {
    let status = Command::new("kill")
        .args(["-s", name, &pid.to_string()])
        .status()
        .context("cannot run kill")?;
    if !status.success() {
        bail!("kill -s {name} {pid} failed");
    }
    Ok(())
}

/// Runs `undo` if the watchdog fires before the run ends (it is not run otherwise: the owner
/// undoes its own work on drop).
pub fn on_timeout(undo: impl FnOnce() + Send + 'static) {
    UNDO.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(Box::new(undo));
}

/// Ends the whole run after `cap`: kills every process it started, by its id, undoes what was
/// registered with [`on_timeout`], and exits with status 1.
pub fn watchdog(program: &'static str, cap: Duration) {
    std::thread::spawn(move || {
        std::thread::sleep(cap);
        eprintln!("{program}: the run did not end within {cap:?}; stopping it");
        let pids: BTreeSet<u32> =
            std::mem::take(&mut *RUNNING.lock().unwrap_or_else(PoisonError::into_inner));
        for pid in pids {
            let _ = signal(pid, "KILL");
        }
        let undo = std::mem::take(&mut *UNDO.lock().unwrap_or_else(PoisonError::into_inner));
        for step in undo {
            step();
        }
        std::process::exit(1);
    });
}

/// A process this run started; killed by its id when dropped.
pub struct Spawned {
    child: Child,
    name: String,
}

impl Spawned {
    /// Starts `command`, named `name` in messages.
    pub fn start(mut command: Command, name: &str) -> anyhow::Result<Self> {
        let child = command
            .spawn()
            .with_context(|| format!("cannot start {name}"))?;
        RUNNING
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(child.id());
        Ok(Self {
            child,
            name: name.to_owned(),
        })
    }

    /// Its process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether it still runs (it has not exited).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Its standard output, once (to read lines from).
    pub fn stdout(&mut self) -> anyhow::Result<ChildStdout> {
        self.child
            .stdout
            .take()
            .with_context(|| format!("{}'s stdout is not piped", self.name))
    }

    /// Its standard input, once.
    pub fn stdin(&mut self) -> anyhow::Result<std::process::ChildStdin> {
        self.child
            .stdin
            .take()
            .with_context(|| format!("{}'s stdin is not piped", self.name))
    }

    /// Waits up to `limit` for it to exit by itself; true if it did.
    pub fn exited_within(&mut self, limit: Duration) -> bool {
        let start = std::time::Instant::now();
        while start.elapsed() < limit {
            if !self.running() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        false
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let pid = self.child.id();
        // Out of the watchdog's list while the pid is still this child's: once it is reaped,
        // the system may give the number to another process.
        forget(pid);
        if self.running() {
            let _ = signal(pid, "KILL");
        }
        let _ = self.child.wait();
    }
}

fn forget(pid: u32) {
    RUNNING
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .remove(&pid);
}

/// A process started by another module's type, on the watchdog's list while this lives.
struct Watched(u32);

impl Watched {
    fn new(pid: u32) -> Self {
        RUNNING
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(pid);
        Self(pid)
    }
}

impl Drop for Watched {
    fn drop(&mut self) {
        forget(self.0);
    }
}

/// The lines `stdout` prints, read on a thread of their own so that the process never blocks
/// on a full pipe.
pub fn line_reader(stdout: ChildStdout) -> Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// A `payments` server this run started: the load runs' [`PaymentsProcess`], which kills it
/// by its id when dropped, and on the watchdog's list until then.
pub struct WatchedPayments {
    // Dropped first: off the list before the process is killed and reaped.
    _watched: Watched,
    /// The process.
    pub server: PaymentsProcess,
}

/// Starts a `payments` server from `command` (its flags, `--work-ms` included, and its
/// environment set) on a free port of 127.0.0.1.
pub fn payments(command: Command) -> anyhow::Result<WatchedPayments> {
    let server = PaymentsProcess::start_command(command)?;
    Ok(WatchedPayments {
        _watched: Watched::new(server.pid()),
        server,
    })
}
