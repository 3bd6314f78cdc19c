//! One real program of the outbox (`converter`, `dispatcher`): started with its flags, its
//! output read line by line, stopped with SIGSTOP and resumed with SIGCONT, killed with SIGKILL,
//! and always killed when dropped, so that a failing scenario leaves nothing running.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A running program and everything it has printed so far.
pub struct Program {
    name: String,
    child: Child,
    lines: Receiver<String>,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Program {
    /// Starts `path` with `args` and `env`; `name` is what the scenario calls it in its
    /// messages.
    pub fn start<S: AsRef<OsStr>>(
        name: &str,
        path: &Path,
        args: &[S],
        env: &[(String, String)],
    ) -> Self {
        let mut child = Command::new(path)
            .args(args)
            .envs(env.iter().map(|(name, value)| (name, value)))
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|error| panic!("{name} ({}) does not start: {error}", path.display()));
        let stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let seen = Arc::new(Mutex::new(Vec::new()));
        let (sender, lines) = mpsc::channel();
        let kept = Arc::clone(&seen);
        // A thread reads the lines, so that a scenario can wait for one with a deadline.
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                kept.lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .push(line.clone());
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Self {
            name: name.to_owned(),
            child,
            lines,
            seen,
        }
    }

    /// Waits (bounded) for a line that starts with `prefix`, and returns it.
    pub fn wait_for(&self, prefix: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.starts_with(prefix) => return line,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    panic!("{} printed no {prefix:?} line within {within:?}", self.name)
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("{} ended before printing {prefix:?}", self.name)
                }
            }
        }
    }

    /// How many lines printed so far contain `text`.
    pub fn count(&self, text: &str) -> usize {
        self.seen
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .filter(|line| line.contains(text))
            .count()
    }

    /// SIGSTOP: the process stops where it is, as a paused machine does.
    pub fn stop(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT: it carries on from where it stopped.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    /// SIGTERM, then waits (bounded) for it to exit.
    pub fn terminate(mut self) {
        self.signal("-TERM");
        let deadline = Instant::now() + Duration::from_secs(60);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        panic!("{} did not exit within 60 s of SIGTERM", self.name);
    }

    /// SIGKILL: the process stops wherever it is, as in a crash. What it printed stays
    /// readable.
    pub fn kill(&mut self) {
        self.child.kill().expect("the process can be killed");
        self.child.wait().expect("the process is reaped");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill {signal} {} failed", self.name);
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SIGKILL ends a stopped process too: no need to resume it first.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
