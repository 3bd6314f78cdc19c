//! The durable ledger as a real process: `crash-server`, which serves one ledger (SQLite or
//! PostgreSQL) over a line protocol on its stdin and stdout. Each client of a burst talks to a
//! process of its own, so the clients run side by side as a pool's connections would.

use std::io::Write;
use std::path::Path;
use std::process::{ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use anyhow::{Context, bail};

use crate::burst::{Heard, Service};
use crate::process::{Spawned, line_reader};

/// Why a line got no reply.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silence {
    /// Nothing within the deadline (the process is then of no further use: a late reply
    /// would answer the next request).
    TimedOut,
    /// The process has exited, or no longer reads its input.
    Gone,
}

/// One `crash-server` process.
pub struct LineServer {
    /// The process.
    pub process: Spawned,
    stdin: ChildStdin,
    replies: Receiver<String>,
    stuck: bool,
}

impl LineServer {
    /// Starts `binary ARGS` with `env` added to its environment, and waits until it answers.
    pub fn start(binary: &Path, args: &[String], env: &[(&str, &str)]) -> anyhow::Result<Self> {
        let mut command = Command::new(binary);
        command
            .args(args)
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped());
        let mut process = Spawned::start(command, "crash-server")?;
        let replies = line_reader(process.stdout()?);
        let mut server = Self {
            stdin: process.stdin()?,
            process,
            replies,
            stuck: false,
        };
        match server.ask("ping", Duration::from_secs(30)) {
            Ok(ready) if ready == "ready" => Ok(server),
            Ok(other) => bail!("crash-server answered {other:?} to ping"),
            Err(no) => bail!("crash-server did not start: {no:?}"),
        }
    }

    /// Sends `line` and waits up to `deadline` for its reply.
    pub fn ask(&mut self, line: &str, deadline: Duration) -> Result<String, Silence> {
        if self.stuck {
            return Err(Silence::TimedOut);
        }
        writeln!(self.stdin, "{line}")
            .and_then(|()| self.stdin.flush())
            .map_err(|_| Silence::Gone)?;
        match self.replies.recv_timeout(deadline) {
            Ok(reply) => Ok(reply),
            Err(RecvTimeoutError::Timeout) => {
                self.stuck = true;
                Err(Silence::TimedOut)
            }
            Err(RecvTimeoutError::Disconnected) => Err(Silence::Gone),
        }
    }

    /// The ledger's `(total, records)`, asked until it answers or `tries` run out.
    pub fn state(&mut self, tries: u32) -> anyhow::Result<(u64, u64)> {
        let mut last = String::new();
        for _ in 0..tries {
            match self.ask("state", Duration::from_secs(10)) {
                Ok(reply) => {
                    if let Some(state) = parse_state(&reply) {
                        return Ok(state);
                    }
                    last = reply;
                }
                Err(no) => bail!("crash-server gave no state: {no:?}"),
            }
            std::thread::sleep(Duration::from_millis(300));
        }
        bail!("crash-server answered {last:?} to state")
    }
}

/// `state TOTAL RECORDS` read.
fn parse_state(reply: &str) -> Option<(u64, u64)> {
    let mut words = reply.strip_prefix("state ")?.split_whitespace();
    Some((words.next()?.parse().ok()?, words.next()?.parse().ok()?))
}

/// What one `apply` line's reply means to a client that retries until it is definitive: the
/// receipt (operation and total, which a replay must repeat), or the ledger's error.
pub fn classify(reply: Result<String, Silence>) -> Heard {
    match reply {
        Ok(line) => match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["ok", operation, total, how @ ("fresh" | "replayed")] => Heard::Definitive {
                identity: format!("{operation} {total}"),
                replayed: *how == "replayed",
            },
            ["err", ..] => Heard::Retry(line.clone()),
            _ => Heard::Wrong(line),
        },
        Err(Silence::TimedOut) => Heard::TimedOut,
        Err(Silence::Gone) => Heard::Wrong("the ledger's process is gone".to_owned()),
    }
}

/// The durable ledger behind several `crash-server` processes on one database: client `c`
/// talks to process `c`, its own, so that no request waits for another's behind its lock and
/// a request's time is its own. A burst needs at least as many processes as clients.
pub struct LedgerProcesses {
    /// The processes.
    pub servers: Vec<Mutex<LineServer>>,
}

impl LedgerProcesses {
    /// `count` processes of `binary ARGS`, with `env` added.
    pub fn start(
        binary: &Path,
        args: &[String],
        env: &[(&str, &str)],
        count: usize,
    ) -> anyhow::Result<Self> {
        let servers = (0..count)
            .map(|_| LineServer::start(binary, args, env).map(Mutex::new))
            .collect::<anyhow::Result<_>>()?;
        Ok(Self { servers })
    }

    /// The first process, which reads the ledger's state.
    pub fn first(&self) -> std::sync::MutexGuard<'_, LineServer> {
        self.servers[0]
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// The records the ledger holds (one per operation), and whether its total is `keys`
    /// units (each operation reserves one).
    pub fn effects(&self) -> anyhow::Result<(u64, u64)> {
        self.first().state(20).context("reading the ledger's state")
    }
}

impl Service for LedgerProcesses {
    fn send(&self, client: usize, key: &str, _attempt: u32, deadline: Duration) -> Heard {
        let Some(server) = self.servers.get(client) else {
            return Heard::Wrong(format!("no ledger process of its own for client {client}"));
        };
        let mut server = server.lock().unwrap_or_else(PoisonError::into_inner);
        classify(server.ask(&format!("apply {key} burst 1"), deadline))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_receipt_is_definitive_as_its_operation_and_total_whether_fresh_or_replayed() {
        let answer = |replayed| Heard::Definitive {
            identity: "12 40".into(),
            replayed,
        };
        assert_eq!(classify(Ok("ok 12 40 fresh".into())), answer(false));
        assert_eq!(classify(Ok("ok 12 40 replayed".into())), answer(true));
    }

    #[test]
    fn an_error_is_a_retry_and_anything_else_is_wrong() {
        let error = "err storage: database or disk is full";
        assert_eq!(classify(Ok(error.into())), Heard::Retry(error.into()));
        assert_eq!(classify(Ok("ok 1".into())), Heard::Wrong("ok 1".into()));
        assert_eq!(classify(Err(Silence::TimedOut)), Heard::TimedOut);
        assert!(matches!(classify(Err(Silence::Gone)), Heard::Wrong(_)));
    }

    #[test]
    fn the_state_line_is_read_as_total_and_records() {
        assert_eq!(parse_state("state 40 39"), Some((40, 39)));
        assert_eq!(parse_state("err no"), None);
    }
}
