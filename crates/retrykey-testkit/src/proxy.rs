//! A fault-injecting TCP proxy for PostgreSQL: cuts a connection exactly around its COMMIT.
//!
//! Tests put it between a ledger and the server to produce the two failures a client cannot
//! tell apart: the connection lost *before* the server saw COMMIT (nothing committed) and lost
//! *after* the server committed but before its reply arrived (everything committed). Either
//! way the caller gets `retrykey::Error::Storage`: the outcome is unknown, and only a retry
//! with the same key tells which it was.
//!
//! A cut can be aimed at one kind of transaction ([`FaultProxy::arm_where`]): the proxy follows
//! each connection's statements (the text of a simple query, and of a prepared statement when
//! it is bound, however long ago it was parsed) from one `BEGIN`, `COMMIT` or `ROLLBACK` to the
//! next, and cuts only a COMMIT whose transaction ran a statement containing the given text.
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

/// Which cut the next COMMIT gets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommitCut {
    /// Close the connection instead of forwarding COMMIT to the server.
    BeforeCommit,
    /// Forward COMMIT, wait for the server to report it done, then close the connection
    /// instead of forwarding that report.
    AfterCommit,
}

/// A cut waiting for its COMMIT: which cut, and the text a statement of the COMMIT's
/// transaction must contain (`None`: any COMMIT).
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

    /// The next COMMIT on any connection through the proxy gets `fault` (once).
    pub fn arm(&self, fault: CommitCut) {
        self.set_armed(Armed {
            cut: fault,
            within: None,
        });
    }

    /// The next COMMIT of a transaction that ran a statement containing `statement` (as in
    /// `"INSERT INTO payments"`) gets `fault` (once); other COMMITs pass.
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

    /// Whether the cut asked for by [`FaultProxy::arm`] still waits for its COMMIT: false once
    /// a COMMIT has taken it, so a run can tell that its fault really happened.
    pub fn is_armed(&self) -> bool {
        self.shared
            .armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// COMMITs cut so far, by either cut.
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
    /// The texts run since the last `BEGIN`, `COMMIT` or `ROLLBACK`.
    ran: Vec<Arc<str>>,
}

impl Transaction {
    /// Follows one client message: `Q` (a simple query), `P` (Parse) and `B` (Bind).
    fn follow(&mut self, kind: u8, body: &[u8]) {
        match kind {
            b'Q' => {
                let text = cstr(body, 0).0;
                if starts_a_transaction(text) {
                    self.ran.clear();
                }
                self.ran.push(String::from_utf8_lossy(text).into());
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

/// Whether a simple query opens or closes a transaction, so what came before is not part of it.
fn starts_a_transaction(text: &[u8]) -> bool {
    let text = text.trim_ascii_start();
    ["BEGIN", "COMMIT", "ROLLBACK", "START TRANSACTION"]
        .iter()
        .any(|word| {
            text.len() >= word.len() && text[..word.len()].eq_ignore_ascii_case(word.as_bytes())
        })
}

enum Verdict {
    Forward,
    Cut,
}

fn relay(client: TcpStream, server: TcpStream, shared: &Shared) -> io::Result<()> {
    let cut_after_commit = Arc::new(AtomicBool::new(false));
    let downstream = {
        let cut = Arc::clone(&cut_after_commit);
        let (from, to) = (server.try_clone()?, client.try_clone()?);
        std::thread::spawn(move || {
            let _ = pump(from.try_clone()?, to.try_clone()?, false, |kind, body| {
                // CommandComplete "COMMIT": the server has committed. Drop the report.
                if cut.load(Ordering::SeqCst) && kind == b'C' && body.starts_with(b"COMMIT") {
                    Verdict::Cut
                } else {
                    Verdict::Forward
                }
            });
            close(&from, &to);
            io::Result::Ok(())
        })
    };
    let mut transaction = Transaction::default();
    let _ = pump(
        client.try_clone()?,
        server.try_clone()?,
        true,
        |kind, body| {
            if shared.down.load(Ordering::SeqCst) {
                return Verdict::Cut;
            }
            let commit = kind == b'Q' && body.starts_with(b"COMMIT");
            let cut = commit.then(|| {
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
                    cut_after_commit.store(true, Ordering::SeqCst);
                    Verdict::Forward
                }
            }
        },
    );
    close(&client, &server);
    let _ = downstream.join();
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
