//! A fault-injecting TCP proxy for PostgreSQL: cuts a connection exactly around its COMMIT.
//!
//! Tests put it between a ledger and the server to produce the two failures a client cannot
//! tell apart: the connection lost *before* the server saw COMMIT (nothing committed) and lost
//! *after* the server committed but before its reply arrived (everything committed). Either
//! way the caller gets `retrykey::Error::Storage`: the outcome is unknown, and only a retry
//! with the same key tells which it was.
//!
//! It can also play an outage ([`FaultProxy::set_reachable`]): while the server is
//! "unreachable", every message on an open connection cuts it and every new connection is
//! closed at once, until the server is reachable again.
//!
//! It reads the protocol's message framing (a type byte and a length) in both directions; it
//! needs a plain (non-TLS) connection, which is what the lab uses on 127.0.0.1.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
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

/// A running proxy on 127.0.0.1; it serves until the process ends.
#[derive(Debug, Clone)]
pub struct FaultProxy {
    addr: SocketAddr,
    armed: Arc<Mutex<Option<CommitCut>>>,
    down: Arc<AtomicBool>,
}

impl FaultProxy {
    /// Starts a proxy to `upstream` on a free port of 127.0.0.1.
    pub fn start(upstream: SocketAddr) -> io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0")?;
        let proxy = Self {
            addr: listener.local_addr()?,
            armed: Arc::default(),
            down: Arc::default(),
        };
        let (armed, down) = (Arc::clone(&proxy.armed), Arc::clone(&proxy.down));
        std::thread::spawn(move || {
            for client in listener.incoming().flatten() {
                if down.load(Ordering::SeqCst) {
                    continue; // dropped: the connection is closed before it starts
                }
                let (armed, down) = (Arc::clone(&armed), Arc::clone(&down));
                std::thread::spawn(move || {
                    if let Ok(server) = TcpStream::connect(upstream) {
                        let _ = relay(client, server, &armed, &down);
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
        *self.armed.lock().unwrap_or_else(PoisonError::into_inner) = Some(fault);
    }

    /// Whether the cut asked for by [`FaultProxy::arm`] still waits for its COMMIT: false once
    /// a COMMIT has taken it, so a run can tell that its fault really happened.
    pub fn is_armed(&self) -> bool {
        self.armed
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
    }

    /// Plays an outage (`false`) or ends it (`true`): while the server is unreachable, each
    /// connection is cut at its next message and new ones are closed at once.
    pub fn set_reachable(&self, reachable: bool) {
        self.down.store(!reachable, Ordering::SeqCst);
    }
}

enum Verdict {
    Forward,
    Cut,
}

fn relay(
    client: TcpStream,
    server: TcpStream,
    armed: &Mutex<Option<CommitCut>>,
    down: &AtomicBool,
) -> io::Result<()> {
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
    let _ = pump(
        client.try_clone()?,
        server.try_clone()?,
        true,
        |kind, body| {
            if down.load(Ordering::SeqCst) {
                return Verdict::Cut;
            }
            if kind != b'Q' || !body.starts_with(b"COMMIT") {
                return Verdict::Forward;
            }
            match armed.lock().unwrap_or_else(PoisonError::into_inner).take() {
                None => Verdict::Forward,
                Some(CommitCut::BeforeCommit) => Verdict::Cut,
                Some(CommitCut::AfterCommit) => {
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
