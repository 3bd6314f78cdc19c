//! Harnesses: how a crash scenario starts a ledger, talks to it, and kills it.
//!
//! [`ProcessHarness`] runs the real thing: the crash server as a child process, aborted by a
//! failpoint. [`InProcess`] runs the same scenario inside the test process, where a hook
//! panics at the point instead; for the database the effect is the same (the open transaction
//! never commits), and it needs no binary, so the workspace tests can run it on every variant.

use std::io::{BufRead, BufReader, Write};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use retrykey::{Key, Ledger, Receipt, Request};

use retrykey_durable::LedgerOptions;
use retrykey_durable::crash::{Hooks, Point};

use super::server::{Backend, Opener};

/// Where a run should crash: at the `skip + 1`-th crossing of `point`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arm {
    /// The point.
    pub point: Point,
    /// How many crossings to let pass first.
    pub skip: usize,
}

/// What the ledger process (or its in-process stand-in) answered to one request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ServerReply {
    /// A receipt.
    Receipt(Receipt),
    /// A refusal or a storage error, as text.
    Refused(String),
    /// No reply: the ledger died while handling it.
    Crashed,
}

/// One life of a ledger: started, used, maybe crashed.
pub trait Run {
    /// Applies `units` of `job` under `key`.
    fn apply(&mut self, key: &str, job: &str, units: u64) -> ServerReply;
    /// The committed total and the number of records.
    fn state(&mut self) -> Result<(u64, usize), String>;
}

/// Starts lives of one ledger, all over the same database.
pub trait Harness {
    /// A new life, armed to crash or not.
    fn start(&self, arm: Option<Arm>) -> Result<Box<dyn Run>, String>;
}

/// The crash server as a child process over a line protocol on its stdin and stdout.
#[derive(Debug)]
pub struct ProcessHarness {
    server: PathBuf,
    backend: Backend,
}

impl ProcessHarness {
    /// Runs `server` (a crash-server binary) over `backend`, which it deletes when dropped.
    pub fn new(server: impl AsRef<Path>, backend: Backend) -> Self {
        Self {
            server: server.as_ref().to_path_buf(),
            backend,
        }
    }
}

impl Harness for ProcessHarness {
    fn start(&self, arm: Option<Arm>) -> Result<Box<dyn Run>, String> {
        let mut command = Command::new(&self.server);
        command
            .args(self.backend.args())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .env_remove("FAILPOINTS");
        if let Backend::Pg { url, .. } = &self.backend {
            command.env(retrykey_durable::pg::URL_VAR, url);
        }
        if let Some(Arm { point, skip }) = arm {
            let actions = if skip == 0 {
                "return".to_owned()
            } else {
                format!("{skip}*off->return")
            };
            command.env("FAILPOINTS", format!("{}={actions}", point.name()));
        }
        let mut child = command
            .spawn()
            .map_err(|error| format!("cannot start {}: {error}", self.server.display()))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut run = ChildRun {
            child,
            stdin,
            stdout,
        };
        // The server answers "ready" once its ledger is open (or exits if it cannot open it).
        match run.line("ping") {
            Some(line) if line == "ready" => Ok(Box::new(run)),
            other => Err(format!("the server did not start: {other:?}")),
        }
    }
}

impl Drop for ProcessHarness {
    fn drop(&mut self) {
        self.backend.remove();
    }
}

struct ChildRun {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl ChildRun {
    /// Sends one request line and reads one reply line; `None` when the process died.
    fn line(&mut self, request: &str) -> Option<String> {
        writeln!(self.stdin, "{request}").ok()?;
        self.stdin.flush().ok()?;
        let mut reply = String::new();
        match self.stdout.read_line(&mut reply) {
            Ok(0) | Err(_) => None,
            Ok(_) => Some(reply.trim_end().to_owned()),
        }
    }
}

impl Run for ChildRun {
    fn apply(&mut self, key: &str, job: &str, units: u64) -> ServerReply {
        match self.line(&format!("apply {key} {job} {units}")) {
            None => ServerReply::Crashed,
            Some(line) => parse_reply(&line),
        }
    }

    fn state(&mut self) -> Result<(u64, usize), String> {
        let line = self.line("state").ok_or("the server died")?;
        let words: Vec<&str> = line.split(' ').collect();
        match words.as_slice() {
            ["state", total, records] => match (total.parse(), records.parse()) {
                (Ok(total), Ok(records)) => Ok((total, records)),
                _ => Err(format!("unreadable reply {line:?}")),
            },
            _ => Err(format!("unexpected reply {line:?}")),
        }
    }
}

impl Drop for ChildRun {
    fn drop(&mut self) {
        // A crashed server is already gone; a live one is stopped here.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn parse_reply(line: &str) -> ServerReply {
    let words: Vec<&str> = line.split(' ').collect();
    match words.as_slice() {
        ["ok", operation, total, replayed] => match (operation.parse(), total.parse()) {
            (Ok(operation), Ok(total)) => ServerReply::Receipt(Receipt {
                operation,
                total,
                replayed: *replayed == "replayed",
            }),
            _ => ServerReply::Refused(format!("unreadable reply {line:?}")),
        },
        _ => ServerReply::Refused(line.to_owned()),
    }
}

/// The scenario inside this process: `open` opens the same database each time, with the hooks
/// it is given; an armed hook panics at its point, which stands for the crash.
#[derive(Debug)]
pub struct InProcess {
    backend: Backend,
    open: Opener,
}

impl InProcess {
    /// A harness over the ledger that `open` opens on `backend`, which it deletes when dropped.
    pub fn new(backend: Backend, open: Opener) -> Self {
        Self { backend, open }
    }
}

impl Harness for InProcess {
    fn start(&self, arm: Option<Arm>) -> Result<Box<dyn Run>, String> {
        let hooks = match arm {
            None => Hooks::none(),
            Some(Arm { point, skip }) => {
                let crossings = Arc::new(AtomicUsize::new(0));
                Hooks::with(move |at| {
                    if at == point && crossings.fetch_add(1, Ordering::SeqCst) == skip {
                        std::panic::panic_any(SimulatedCrash);
                    }
                })
            }
        };
        let options = LedgerOptions {
            hooks,
            ..LedgerOptions::default()
        };
        let ledger = (self.open)(&self.backend, options).map_err(|error| error.to_string())?;
        Ok(Box::new(InProcessRun {
            ledger: Some(ledger),
        }))
    }
}

impl Drop for InProcess {
    fn drop(&mut self) {
        self.backend.remove();
    }
}

/// The panic payload that stands for a crash.
#[derive(Debug)]
pub struct SimulatedCrash;

struct InProcessRun {
    ledger: Option<Box<dyn Ledger>>,
}

impl Run for InProcessRun {
    fn apply(&mut self, key: &str, job: &str, units: u64) -> ServerReply {
        let Some(ledger) = &self.ledger else {
            return ServerReply::Crashed;
        };
        let (key, request) = match (Key::new(key), Request::new(job, units)) {
            (Ok(key), Ok(request)) => (key, request),
            (Err(error), _) | (_, Err(error)) => return ServerReply::Refused(error.to_string()),
        };
        // The panic of a simulated crash is reported like any other panic; it is expected.
        match catch_unwind(AssertUnwindSafe(|| ledger.apply(&key, &request))) {
            Ok(Ok(receipt)) => ServerReply::Receipt(receipt),
            Ok(Err(error)) => ServerReply::Refused(error.to_string()),
            Err(_) => {
                // The process would be gone: so is this life of the ledger.
                self.ledger = None;
                ServerReply::Crashed
            }
        }
    }

    fn state(&mut self) -> Result<(u64, usize), String> {
        let ledger = self.ledger.as_ref().ok_or("the ledger crashed")?;
        let total = ledger.total().map_err(|error| error.to_string())?;
        let records = ledger.records().map_err(|error| error.to_string())?;
        Ok((total, records))
    }
}
