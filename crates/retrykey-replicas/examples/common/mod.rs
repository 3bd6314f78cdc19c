//! The `payments` server as the load runs start it: a real process on a free loopback port,
//! stopped by its own process id when dropped.

#![allow(dead_code, reason = "each load run uses its own part of this module")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use anyhow::Context;

/// A running `payments` process.
pub struct Payments {
    child: Child,
    /// `http://127.0.0.1:PORT`.
    pub url: String,
}

impl Payments {
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

    /// `127.0.0.1:PORT`, for raw sockets.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// The process's resident memory, from `/proc/PID/status`.
    pub fn resident_bytes(&self) -> anyhow::Result<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))?;
        let kib: u64 = status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
            .context("no VmRSS line")?;
        Ok(kib * 1024)
    }
}

impl Drop for Payments {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
