//! What the load runs share: the `payments` server as they start it (a real process on a free
//! loopback port, stopped by its own process id when dropped), the charges it reports, a
//! process's resident memory, and a run bounded in time.

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
        let mut command = Command::new(binary);
        command.args(["--work-ms", "0"]).args(args);
        Self::start_command(command)
    }

    /// Starts `command` (a `payments` binary with its flags and environment, `--work-ms`
    /// included) on `--listen 127.0.0.1:0`, and reads its address.
    pub fn start_command(mut command: Command) -> anyhow::Result<Self> {
        let mut child = command
            .args(["--listen", "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .spawn()
            .with_context(|| {
                format!(
                    "cannot start {}",
                    Path::new(command.get_program()).display()
                )
            })?;
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

    /// Whether it still runs (it has not exited).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
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

/// The charges the `payments` server at `url` (`http://127.0.0.1:PORT`) reports on
/// `GET /payments/count`, asked on a connection of its own within 5 s.
pub async fn charges(url: &str) -> anyhow::Result<u64> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = url.trim_start_matches("http://");
    let ask = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        let request =
            format!("GET /payments/count HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\r\n");
        stream.write_all(request.as_bytes()).await?;
        let mut reply = Vec::new();
        stream.read_to_end(&mut reply).await?;
        anyhow::Ok(String::from_utf8_lossy(&reply).into_owned())
    };
    let reply = tokio::time::timeout(Duration::from_secs(5), ask)
        .await
        .context("no count within 5 s")??;
    count_in(&reply).with_context(|| format!("no charge count in {reply:?}"))
}

/// The `N` of `"charges":N` in a 200 answer.
fn count_in(reply: &str) -> Option<u64> {
    let (head, body) = reply.split_once("\r\n\r\n")?;
    if head.split_whitespace().nth(1) != Some("200") {
        return None;
    }
    let rest = &body[body.find("\"charges\":")? + "\"charges\":".len()..];
    let digits = rest
        .trim_start()
        .split(|c: char| !c.is_ascii_digit())
        .next()?;
    digits.parse().ok()
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
