//! A fault-injecting TCP proxy for PostgreSQL: cuts a connection exactly around a commit.
//!
//! Tests put it between a ledger and the server to produce the two failures a client cannot
//! tell apart: the connection lost *before* the server saw the commit (nothing committed) and lost
//! *after* the server committed but before its reply arrived (everything committed). Either
//! way the caller gets `retrykey::Error::Storage`: the outcome is unknown, and only a retry
//! with the same key tells which it was.
//!
//! A commit is a `COMMIT`, or the `Sync` that ends a statement sent outside a transaction: the
//! server commits such a statement on its own when it reaches that `Sync`, and the statement's
//! reply comes only after. Either is cut the same way.
//!
//! A cut can be aimed at one kind of transaction ([`FaultProxy::arm_where`]): the proxy follows
//! each connection's statements (the text of a simple query, and of a prepared statement when
//! it is bound, however long ago it was parsed) from one `BEGIN`, `COMMIT` or `ROLLBACK` to the
//! next (outside those, from one `Sync` to the next), and cuts only a commit whose transaction
//! ran a statement containing the given text.
//!
//! It can also play an outage ([`FaultProxy::set_reachable`]): while the server is
//! "unreachable", every message on an open connection cuts it and every new connection is
//! closed at once, until the server is reachable again.
//!
//! It reads the protocol's message framing (a type byte and a length) in both directions; it
//! needs a plain (non-TLS) connection, which is what the lab uses on 127.0.0.1.

use std::collections::HashMap;
use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

/// Which cut the next commit gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitCut {
    /// Close the connection instead of forwarding the commit (`COMMIT`, or the `Sync` of a
    /// statement outside a transaction) to the server.
    BeforeCommit,
    /// Forward the commit, then close the connection instead of forwarding the server's reply
    /// to it, which comes once it has committed.
    AfterCommit,
}

/// A cut waiting for its commit: which cut, and the text a statement of the committed
/// transaction must contain (`None`: any commit).
#[derive(Debug)]
struct Armed {
    cut: CommitCut,
    within: Option<String>,
}

/// What every connection of one proxy shares.
#[derive(Debug, Default)]
struct Shared {
    armed: Mutex<Option<Armed>>,
    down: AtomicBool,
    cuts: AtomicU64,
}

/// A running proxy on 127.0.0.1; it serves until the process ends.
#[derive(Debug, Clone)]
pub struct FaultProxy {
    addr: SocketAddr,
    shared: Arc<Shared>,
}

impl FaultProxy {
    /// Starts a proxy to `upstream` on a free port of 127.0.0.1.
    pub fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let proxy = Self {
            addr: listener.local_addr()?,
            shared: Arc::default(),
        };
        let shared = Arc::clone(&proxy.shared);
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if shared.down.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is closed before it starts
                }
                let shared = Arc::clone(&shared);
                std::thread::spawn(move || {
                    if let Ok(server) = TcpStream::connect(upstream) {
                        let _ = relay(client, server, &shared);
                    }
                });
            }
        });
        Ok(proxy)
    }

    /// Starts a proxy to the PostgreSQL server that the connection `url` names.
    pub fn in_front_of(url: &str) -> io::Result<Self> {
        let config: tokio_postgres::Config = url.parse().map_err(io::Error::other)?;
        let host = match config.get_hosts().first() {
            Some(tokio_postgres::config::Host::Tcp(host)) => host.clone(),
            _ => "127.0.0.1".to_owned(),
        };
        let port = config.get_ports().first().copied().unwrap_or(5432);
        let upstream = (host.as_str(), port)
            .to_socket_addrs()?
            .next()
            .ok_or_else(|| io::Error::other(format!("{host} has no address")))?;
        Self::start(upstream)
    }

    /// The proxy's address, to put in the connection URL instead of the server's.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The connection string of `url` with the proxy in place of the server: the same user,
    /// password and database.
    pub fn url(&self, url: &str) -> String {
        let config: tokio_postgres::Config = url.parse().expect("a PostgreSQL URL");
        let user = config.get_user().unwrap_or("postgres");
        let password = config
            .get_password()
            .map(|password| String::from_utf8_lossy(password).into_owned())
            .unwrap_or_default();
        let dbname = config.get_dbname().unwrap_or(user);
        format!(
            "host={} port={} user={user} password='{password}' dbname={dbname}",
            self.addr.ip(),
            self.addr.port()
        )
    }

    /// The next commit on any connection through the proxy gets `fault` (once).
    pub fn arm(&self, fault: CommitCut) {
        self.set_armed(Armed {
            cut: fault,
            within: None,
        });
    }

    /// The next commit of a transaction that ran a statement containing `statement` (as in
    /// `"INSERT INTO payments"`) gets `fault` (once); other commits pass.
    pub fn arm_where(&self, fault: CommitCut, statement: &str) {
        self.set_armed(Armed {
            cut: fault,
            within: Some(statement.to_owned()),
        });
    }

    fn set_armed(&self, armed: Armed) {
        *self
            .shared
            .armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(armed);
    }

    /// Whether the cut asked for by [`FaultProxy::arm`] still waits for its commit: false once
    /// a commit has taken it, so a run can tell that its fault really happened.
    pub fn is_armed(&self) -> bool {
        self.shared
            .armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Commits cut so far, by either cut.
    pub fn cuts(&self) -> u64 {
        self.shared.cuts.load(Ordering::SeqCst)
    }

    /// Plays an outage (`false`) or ends it (`true`): while the server is unreachable, each
    /// connection is cut at its next message and new ones are closed at once.
    pub fn set_reachable(&self, reachable: bool) {
        self.shared.down.store(!reachable, Ordering::SeqCst);
    }
}

/// The statements one connection has run since its transaction began, as the client sent them.
#[derive(Default)]
struct Transaction {
    /// Prepared statements by name (`""`: the unnamed one), as parsed.
    prepared: HashMap<Vec<u8>, Arc<str>>,
    /// The texts run since the last `BEGIN`, `COMMIT` or `ROLLBACK` (outside a transaction,
    /// since the last `Sync`).
    ran: Vec<Arc<str>>,
    /// Between a `BEGIN` and its `COMMIT` or `ROLLBACK`.
    explicit: bool,
    /// Messages sent that the server answers with a `ReadyForQuery` of its own: the startup,
    /// each simple query and each `Sync`.
    requests: u64,
}

impl Transaction {
    /// Whether the client message `kind` commits: a `COMMIT`, or the `Sync` that ends
    /// prepared statements run outside a transaction.
    fn commits(&self, kind: u8, body: &[u8]) -> bool {
        match kind {
            b'Q' => body.starts_with(b"COMMIT"),
            b'S' => !self.explicit && !self.ran.is_empty(),
            _ => false,
        }
    }

    /// Follows one client message: `Q` (a simple query), `P` (Parse), `B` (Bind) and `S`
    /// (Sync).
    fn follow(&mut self, kind: u8, body: &[u8]) {
        match kind {
            b'Q' => {
                self.requests += 1;
                let text = cstr(body, 0).0;
                for statement in text.split(|&byte| byte == b';') {
                    if let Some(explicit) = opens_a_transaction(statement) {
                        self.explicit = explicit;
                        self.ran.clear();
                    }
                }
                // Outside a transaction, a simple query is a transaction of its own, over by
                // its end.
                if self.explicit {
                    self.ran.push(String::from_utf8_lossy(text).into());
                } else {
                    self.ran.clear();
                }
            }
            b'P' => {
                let (name, rest) = cstr(body, 0);
                let query = cstr(body, rest).0;
                self.prepared
                    .insert(name.to_vec(), String::from_utf8_lossy(query).into());
            }
            b'B' => {
                let rest = cstr(body, 0).1; // the portal's name
                let statement = cstr(body, rest).0;
                if let Some(text) = self.prepared.get(statement) {
                    self.ran.push(Arc::clone(text));
                }
            }
            b'S' => {
                self.requests += 1;
                if !self.explicit {
                    self.ran.clear();
                }
            }
            _ => {}
        }
    }

    /// Whether a statement run since the transaction began contains `text`.
    fn ran(&self, text: &str) -> bool {
        self.ran.iter().any(|statement| statement.contains(text))
    }
}

/// The NUL-terminated string at `from` in `body`, and where the next field starts.
fn cstr(body: &[u8], from: usize) -> (&[u8], usize) {
    let rest = body.get(from..).unwrap_or_default();
    let end = rest
        .iter()
        .position(|&byte| byte == 0)
        .unwrap_or(rest.len());
    (&rest[..end], from + end + 1)
}

/// Whether one statement of a simple query opens a transaction (`Some(true)`) or ends one
/// (`Some(false)`); `None` for any other statement.
fn opens_a_transaction(statement: &[u8]) -> Option<bool> {
    let statement = statement.trim_ascii_start();
    let starts = |word: &str| {
        statement.len() >= word.len()
            && statement[..word.len()].eq_ignore_ascii_case(word.as_bytes())
    };
    if starts("BEGIN") || starts("START TRANSACTION") {
        Some(true)
    } else if starts("COMMIT") || starts("ROLLBACK") {
        Some(false)
    } else {
        None
    }
}

enum Verdict {
    Forward,
    Cut,
}

fn relay(client: TcpStream, server: TcpStream, shared: &Shared) -> io::Result<()> {
    // Which of the server's replies (counted by their `ReadyForQuery`, from 1) an after-commit
    // cut drops from its first message on; 0 while none is armed. The reply to a commit comes
    // whole once the server has committed.
    let cut_reply = Arc::new(AtomicU64::new(0));
    let downstream = {
        let (from, to) = (server.try_clone()?, client.try_clone()?);
        let cut_reply = Arc::clone(&cut_reply);
        std::thread::spawn(move || replies(&from, &to, &cut_reply))
    };
    // The startup's reply counts as the first.
    let mut transaction = Transaction {
        requests: 1,
        ..Transaction::default()
    };
    let _ = pump(
        client.try_clone()?,
        server.try_clone()?,
        true,
        |kind, body| {
            if shared.down.load(Ordering::SeqCst) {
                return Verdict::Cut;
            }
            let cut = transaction.commits(kind, body).then(|| {
                let mut armed = shared.armed.lock().unwrap_or_else(PoisonError::into_inner);
                let aimed = armed.as_ref().is_some_and(|armed| {
                    armed
                        .within
                        .as_deref()
                        .is_none_or(|within| transaction.ran(within))
                });
                if aimed { armed.take() } else { None }
            });
            transaction.follow(kind, body);
            match cut.flatten().map(|armed| armed.cut) {
                None => Verdict::Forward,
                Some(CommitCut::BeforeCommit) => {
                    shared.cuts.fetch_add(1, Ordering::SeqCst);
                    Verdict::Cut
                }
                Some(CommitCut::AfterCommit) => {
                    shared.cuts.fetch_add(1, Ordering::SeqCst);
                    cut_reply.store(transaction.requests, Ordering::SeqCst);
                    Verdict::Forward
                }
            }
        },
    );
    close(&client, &server);
    let _ = downstream.join();
    Ok(())
}

/// Forwards the server's replies to the client, dropping the one `cut_reply` names (counted by
/// their `ReadyForQuery`, from 1) and every one after it.
fn replies(server: &TcpStream, client: &TcpStream, cut_reply: &AtomicU64) -> io::Result<()> {
    let mut replied = 0_u64;
    let _ = pump(
        server.try_clone()?,
        client.try_clone()?,
        false,
        |kind, _| {
            if cut_reply.load(Ordering::SeqCst) == replied + 1 {
                return Verdict::Cut;
            }
            replied += u64::from(kind == b'Z');
            Verdict::Forward
        },
    );
    close(server, client);
    Ok(())
}

/// Copies framed messages from `from` to `to` until either side closes or `inspect` cuts.
/// The client's first message (the startup packet) has no type byte.
fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    untyped_first: bool,
    mut inspect: impl FnMut(u8, &[u8]) -> Verdict,
) -> io::Result<()> {
    let mut first = untyped_first;
    loop {
        let mut header = Vec::with_capacity(5);
        let mut kind = 0_u8;
        if !first {
            let mut byte = [0_u8; 1];
            from.read_exact(&mut byte)?;
            kind = byte[0];
            header.push(kind);
        }
        let mut length = [0_u8; 4];
        from.read_exact(&mut length)?;
        header.extend_from_slice(&length);
        let length = u32::from_be_bytes(length) as usize;
        let mut body = vec![0_u8; length.saturating_sub(4)];
        from.read_exact(&mut body)?;
        if !first && matches!(inspect(kind, &body), Verdict::Cut) {
            return Ok(());
        }
        first = false;
        to.write_all(&header)?;
        to.write_all(&body)?;
    }
}

fn close(a: &TcpStream, b: &TcpStream) {
    let _ = a.shutdown(Shutdown::Both);
    let _ = b.shutdown(Shutdown::Both);
}
