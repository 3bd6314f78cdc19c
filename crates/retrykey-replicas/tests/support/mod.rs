//! Real `payments` processes for the tests: started on a free loopback port, killed when
//! dropped (so a failing test leaves nothing running), and a database file that is deleted
//! when dropped.

#![allow(dead_code, reason = "each test file uses its own part of this module")]

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

use retrykey_http::loopback::{LoopbackClient, LoopbackReply};

/// One `payments` process.
pub struct Replica {
    /// `http://127.0.0.1:PORT`.
    pub url: String,
    pub child: Child,
    pub stdout: BufReader<ChildStdout>,
    pub client: LoopbackClient,
}

impl Replica {
    /// Starts `payments --listen 127.0.0.1:0 ARGS` and reads its address from its first line.
    pub fn start(args: &[&str]) -> Self {
        Self::start_with(args, &[])
    }

    /// The same, with extra environment variables.
    pub fn start_with(args: &[&str], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_payments"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the payments binary starts");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped stdout"));
        let mut first = String::new();
        stdout.read_line(&mut first).expect("a first line");
        let url = first
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line: {first:?}"))
            .to_owned();
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        Self {
            client: LoopbackClient::new(&url),
            url,
            child,
            stdout,
        }
    }

    /// A keyed payment of `body`.
    pub async fn pay(&self, key: &str, body: &'static str) -> LoopbackReply {
        self.client
            .post("/payments", &[("idempotency-key", key)], body)
            .await
            .expect("an answer")
    }

    /// The charges this replica reports (read from its book, so from the shared database).
    pub async fn charges(&self) -> u64 {
        let body = self
            .client
            .get("/payments/count", &[])
            .await
            .expect("an answer")
            .body;
        let rest = body
            .strip_prefix("{\"charges\":")
            .unwrap_or_else(|| panic!("count: {body:?}"));
        rest[..rest.find(',').expect("attempts follow")]
            .parse()
            .expect("a number")
    }

    /// SIGKILL: the process stops wherever it is, as in a crash.
    pub fn kill(mut self) {
        self.child.kill().expect("the replica can be killed");
        self.child.wait().expect("the replica is reaped");
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A SQLite file path in the temporary folder, unused until a replica opens it; the file and
/// its WAL companions are deleted on drop.
pub struct DbFile(PathBuf);

impl DbFile {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "retrykey-{name}-{}-{}.sqlite",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let file = Self(path);
        file.remove();
        file
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// `sqlite:PATH`, the `--store` value.
    pub fn store(&self) -> String {
        format!("sqlite:{}", self.0.display())
    }

    /// Whether the file or one of its companions exists.
    pub fn exists(&self) -> bool {
        self.companions().iter().any(|path| path.exists())
    }

    fn companions(&self) -> [PathBuf; 3] {
        ["", "-wal", "-shm"].map(|suffix| {
            let mut path = self.0.as_os_str().to_owned();
            path.push(suffix);
            PathBuf::from(path)
        })
    }

    fn remove(&self) {
        for path in self.companions() {
            let _ = std::fs::remove_file(path);
        }
    }
}

impl Drop for DbFile {
    fn drop(&mut self) {
        self.remove();
    }
}
