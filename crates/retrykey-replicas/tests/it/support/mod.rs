//! Real `payments` processes for the tests: started on a free loopback port, watched line by
//! line, paused and resumed with SIGSTOP and SIGCONT, killed with SIGKILL, and always killed when
//! dropped (so a failing test leaves nothing running); the databases they share, deleted when
//! dropped.

use std::ffi::OsStr;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

use retrykey_server::loopback::{LoopbackClient, LoopbackReply};

/// One `payments` process and the lines it prints.
pub struct Replica {
    child: Child,
    lines: Receiver<String>,
    errors: Receiver<String>,
    /// Its address, `http://127.0.0.1:PORT`.
    pub url: String,
    pub client: LoopbackClient,
}

impl Replica {
    /// Starts `payments --listen 127.0.0.1:0 ARGS` and reads its address from its first line.
    pub fn start<S: AsRef<OsStr>>(args: &[S]) -> Self {
        Self::start_with(args, &[])
    }

    /// The same, with extra environment variables.
    pub fn start_with<S: AsRef<OsStr>>(args: &[S], env: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_payments"))
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the payments binary starts");
        let lines = read_lines(child.stdout.take().expect("piped stdout"));
        let errors = read_lines(child.stderr.take().expect("piped stderr"));
        let mut replica = Self {
            child,
            lines,
            errors,
            url: String::new(),
            client: LoopbackClient::new(String::new()),
        };
        let first = replica.next_line(Duration::from_secs(30));
        let url = first
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line: {first:?}"));
        assert!(url.starts_with("http://127.0.0.1:"), "{url}");
        replica.client = LoopbackClient::new(url.to_owned());
        replica.url = url.to_owned();
        replica
    }

    fn next_line(&self, within: Duration) -> String {
        match self.lines.recv_timeout(within) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => panic!("no line from payments within {within:?}"),
            Err(RecvTimeoutError::Disconnected) => panic!("payments closed its output"),
        }
    }

    /// Waits (bounded) until the server prints `expected`.
    pub fn wait_for_line(&self, expected: &str, within: Duration) {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if self.next_line(left) == expected {
                return;
            }
        }
    }

    /// A keyed payment of `body`.
    pub async fn pay(&self, key: &str, body: &str) -> LoopbackReply {
        self.client
            .post("/payments", &[("idempotency-key", key)], body.to_owned())
            .await
            .expect("an answer")
    }

    /// `(charges, attempts)` as this replica reports them: charges from the shared database,
    /// attempts (handler runs) counted by this process.
    pub async fn counts(&self) -> (u64, u64) {
        let body = self
            .client
            .get("/payments/count", &[])
            .await
            .expect("an answer")
            .body;
        let field = |name: &str| -> u64 {
            let start = body
                .find(&format!("\"{name}\":"))
                .unwrap_or_else(|| panic!("no {name} in {body:?}"))
                + name.len()
                + 3;
            let digits: String = body[start..]
                .chars()
                .take_while(char::is_ascii_digit)
                .collect();
            digits.parse().expect("a number")
        };
        (field("charges"), field("attempts"))
    }

    /// The charges this replica reports.
    pub async fn charges(&self) -> u64 {
        self.counts().await.0
    }

    /// Waits (bounded) until this process has entered its handler `n` times.
    pub async fn handler_entered(&self, n: u64) {
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.counts().await.1 < n {
            assert!(
                Instant::now() < deadline,
                "the handler was not entered {n} times"
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// SIGSTOP: the process stops where it is, renewals included, as a paused machine does.
    pub fn pause(&self) {
        self.signal("-STOP");
    }

    /// SIGCONT: it carries on from where it stopped.
    pub fn resume(&self) {
        self.signal("-CONT");
    }

    fn signal(&self, signal: &str) {
        let status = Command::new("kill")
            .args([signal, &self.child.id().to_string()])
            .status()
            .expect("kill(1) runs");
        assert!(status.success(), "kill {signal} failed");
    }

    /// `127.0.0.1:PORT`, for raw sockets.
    pub fn addr(&self) -> &str {
        self.url.trim_start_matches("http://")
    }

    /// SIGTERM, as a service manager stops a service.
    pub fn sigterm(&self) {
        self.signal("-TERM");
    }

    /// Waits (bounded) for the process to exit; returns its exit code and the lines it printed
    /// on stdout and stderr since the last one read.
    pub fn exit(mut self, within: Duration) -> Exit {
        let deadline = Instant::now() + within;
        let status = loop {
            if let Some(status) = self.child.try_wait().expect("the process can be waited on") {
                break status;
            }
            assert!(
                Instant::now() < deadline,
                "payments did not exit within {within:?}"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        // The reader threads see the end of the output once the process has gone.
        let drain = |lines: &Receiver<String>| {
            let mut all = Vec::new();
            while let Ok(line) = lines.recv_timeout(Duration::from_secs(5)) {
                all.push(line);
            }
            all
        };
        Exit {
            code: status.code(),
            stdout: drain(&self.lines),
            stderr: drain(&self.errors),
        }
    }

    /// SIGKILL: the process stops wherever it is, as in a crash.
    pub fn kill(mut self) {
        self.child.kill().expect("the process can be killed");
        self.child.wait().expect("the process is reaped");
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        // SIGKILL ends a stopped process too: no need to resume it first.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// How a process ended, and what it printed last.
#[derive(Debug)]
pub struct Exit {
    pub code: Option<i32>,
    pub stdout: Vec<String>,
    pub stderr: Vec<String>,
}

/// A thread reads the lines, so that a test can wait for one with a deadline.
fn read_lines(output: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (sender, lines) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(output).lines().map_while(Result::ok) {
            if sender.send(line).is_err() {
                break;
            }
        }
    });
    lines
}

/// A SQLite file in the temporary folder, deleted (with its WAL companions) on drop.
pub struct DbFile(PathBuf);

impl DbFile {
    pub fn new(name: &str) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let file = Self(std::env::temp_dir().join(format!(
            "retrykey-{name}-{}-{}.sqlite",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        )));
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

    /// The `payments` flags that open this file.
    pub fn args(&self) -> Vec<String> {
        vec!["--store".to_owned(), self.store()]
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

/// A PostgreSQL schema of one test's own, named after the test and this process's id, so that
/// tests running at once never share records or charges; created empty, dropped on drop.
pub struct PgSchema {
    pub url: String,
    pub name: String,
}

impl PgSchema {
    pub async fn new(test: &str) -> Self {
        let url = std::env::var("RETRYKEY_PG_URL")
            .ok()
            .filter(|url| !url.trim().is_empty())
            .expect("RETRYKEY_PG_URL is set: this test was built to run on PostgreSQL");
        let name = format!("rk_{test}_{}", std::process::id());
        connect(&url)
            .await
            .batch_execute(&format!(
                "DROP SCHEMA IF EXISTS {name} CASCADE; CREATE SCHEMA {name}"
            ))
            .await
            .expect("a fresh schema");
        Self { url, name }
    }

    /// The `payments` flags that open this schema.
    pub fn args(&self) -> Vec<String> {
        ["--store", "postgres", "--pg-schema", &self.name]
            .map(str::to_owned)
            .to_vec()
    }

    /// The rows in the schema's keys table, read directly.
    pub async fn key_rows(&self) -> u64 {
        let rows: i64 = connect(&self.url)
            .await
            .query_one(
                &format!("SELECT count(*) FROM {}.http_keys", self.name),
                &[],
            )
            .await
            .expect("the keys table is readable")
            .get(0);
        rows.unsigned_abs()
    }

    /// Whether the key `id` is in flight (no answer, no expiry) in the schema's keys table:
    /// `None` when it has no row.
    pub async fn key_in_flight(&self, id: retrykey_http::EntryId) -> Option<bool> {
        connect(&self.url)
            .await
            .query_opt(
                &format!(
                    "SELECT expires_at IS NULL AND status IS NULL FROM {}.http_keys WHERE entry_id = $1",
                    self.name
                ),
                &[&id.as_bytes().as_slice()],
            )
            .await
            .expect("the keys table is readable")
            .map(|row| row.get(0))
    }

    /// The charges in the schema's payments table, read directly.
    pub async fn charges(&self) -> i64 {
        connect(&self.url)
            .await
            .query_one(&format!("SELECT count(*) FROM {}.payments", self.name), &[])
            .await
            .expect("the payments table is readable")
            .get(0)
    }
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, connection) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("PostgreSQL answers");
    tokio::spawn(connection);
    client
}

impl Drop for PgSchema {
    fn drop(&mut self) {
        // A plain thread: Drop cannot await, and the test's runtime may be shutting down.
        let (url, name) = (self.url.clone(), self.name.clone());
        let _ = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async {
                connect(&url)
                    .await
                    .batch_execute(&format!("DROP SCHEMA IF EXISTS {name} CASCADE"))
                    .await
            })
        })
        .join();
    }
}
