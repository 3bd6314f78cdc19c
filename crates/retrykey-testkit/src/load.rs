//! What the load runs share: the `payments` server as they start it (a real process on a free
//! loopback port, stopped by its own process id when dropped), a process's resident memory, and
//! a run bounded in time.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use anyhow::Context;

/// A running `payments` process.
pub struct PaymentsProcess {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl PaymentsProcess {
    /// Starts `binary --listen 127.0.0.1:0 --work-ms 0 ARGS` and reads its address.
    pub fn start(binary: &Path, args: &[String]) -> anyhow::Result<Self> {
        let mut child = Command::new(binary)
            .args(["--listen", "127.0.0.1:0", "--work-ms", "0"])
            .args(args)
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let stdout = child.stdout.take().context("piped stdout")?;
        let mut server = Self {
            child,
            url: String::new(),
        };
        let mut lines = BufReader::new(stdout).lines();
        let first = lines.next().transpose()?.unwrap_or_default();
        server.url = first
            .strip_prefix("listening on ")
            .with_context(|| format!("unexpected first line {first:?}"))?
            .to_owned();
        // Keep reading its output, so that the server never blocks on a full pipe.
        std::thread::spawn(move || lines.for_each(drop));
        Ok(server)
    }

    /// The process's id, to read its figures from `/proc`.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// `127.0.0.1:PORT`, for raw sockets.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// The process's resident memory.
    pub fn resident_bytes(&self) -> anyhow::Result<u64> {
        resident_bytes(self.child.id())
    }
}

impl Drop for PaymentsProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The resident memory (`VmRSS`) of process `pid`, from `/proc/PID/status`.
pub fn resident_bytes(pid: u32) -> anyhow::Result<u64> {
    let path = format!("/proc/{pid}/status");
    let status = std::fs::read_to_string(&path).with_context(|| format!("read {path}"))?;
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|kib| kib.parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .with_context(|| format!("no VmRSS line in {path}"))
}

/// Runs `work` on a new runtime; fails if it has not finished after `max_seconds`.
pub fn run_within(
    max_seconds: u64,
    work: impl Future<Output = anyhow::Result<()>>,
) -> anyhow::Result<()> {
    let deadline = Duration::from_secs(max_seconds);
    tokio::runtime::Runtime::new()?.block_on(async {
        tokio::time::timeout(deadline, work)
            .await
            .with_context(|| format!("the run did not finish within {deadline:?}"))?
    })
}
