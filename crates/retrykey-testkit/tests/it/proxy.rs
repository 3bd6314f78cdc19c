//! The fault proxy aimed at one kind of transaction: a stand-in server that records the messages
//! that reach it, and a client that writes PostgreSQL's framing by hand.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::mpsc;
use std::time::Duration;

use retrykey_testkit::proxy::{CommitCut, FaultProxy};

/// One framed message: its type byte, its length, its body.
fn message(kind: u8, body: &[u8]) -> Vec<u8> {
    let length = u32::try_from(body.len() + 4).expect("a short message");
    [&[kind][..], &length.to_be_bytes(), body].concat()
}

/// The startup packet: a length and protocol 3.0, no type byte (and no parameters: the stand-in
/// reads no further).
fn startup() -> Vec<u8> {
    [8_u32.to_be_bytes(), [0, 3, 0, 0]].concat()
}

fn query(text: &str) -> Vec<u8> {
    message(b'Q', &[text.as_bytes(), b"\0"].concat())
}

/// Parse: the statement's name, its text, no parameter types.
fn parse(name: &str, text: &str) -> Vec<u8> {
    message(
        b'P',
        &[name.as_bytes(), b"\0", text.as_bytes(), b"\0\0\0"].concat(),
    )
}

/// Bind: the unnamed portal, the statement's name, no formats, parameters or result formats.
fn bind(statement: &str) -> Vec<u8> {
    message(
        b'B',
        &[b"\0", statement.as_bytes(), b"\0\0\0\0\0\0\0"].concat(),
    )
}

/// Sync: the end of a run of prepared statements; outside a transaction, their commit.
fn sync() -> Vec<u8> {
    message(b'S', b"")
}

/// A server that accepts one connection and sends the type bytes and texts of the messages it
/// reads (after the startup packet) until the connection closes.
fn recording_server() -> (TcpListener, mpsc::Receiver<(u8, String)>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let accepting = listener.try_clone().expect("a listener");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let Ok((mut stream, _)) = accepting.accept() else {
            return;
        };
        let mut length = [0_u8; 4];
        if stream.read_exact(&mut length).is_err() {
            return;
        }
        let mut startup = vec![0_u8; u32::from_be_bytes(length) as usize - 4];
        if stream.read_exact(&mut startup).is_err() {
            return;
        }
        loop {
            let mut kind = [0_u8; 1];
            if stream.read_exact(&mut kind).is_err() || stream.read_exact(&mut length).is_err() {
                return;
            }
            let mut body = vec![0_u8; u32::from_be_bytes(length) as usize - 4];
            if stream.read_exact(&mut body).is_err() {
                return;
            }
            let text = String::from_utf8_lossy(&body).replace('\0', " ");
            if tx.send((kind[0], text.trim().to_owned())).is_err() {
                return;
            }
        }
    });
    (listener, rx)
}

/// A proxy in front of a recording server, and a client connected through it, past startup.
fn proxied() -> (FaultProxy, TcpStream, mpsc::Receiver<(u8, String)>) {
    let (server, seen) = recording_server();
    let proxy = FaultProxy::start(server.local_addr().expect("an address")).expect("a proxy");
    let mut client = TcpStream::connect(proxy.addr()).expect("a connection");
    client.write_all(&startup()).expect("startup");
    (proxy, client, seen)
}

fn send(client: &mut TcpStream, messages: &[Vec<u8>]) {
    for message in messages {
        client.write_all(message).expect("a message");
    }
}

/// Every message that reached the server, until the connection closed (or five quiet seconds).
fn everything_reached(seen: &mpsc::Receiver<(u8, String)>) -> Vec<(u8, String)> {
    let mut reached = Vec::new();
    while let Ok(message) = seen.recv_timeout(Duration::from_secs(5)) {
        reached.push(message);
    }
    reached
}

#[test]
fn an_aimed_cut_takes_only_the_commit_of_a_transaction_that_ran_its_statement() {
    let (proxy, mut client, seen) = proxied();
    proxy.arm_where(CommitCut::BeforeCommit, "INSERT INTO payments");
    // Prepared long before the transaction that binds it, as a statement cache does.
    let insert = parse("s1", "INSERT INTO payments (amount) VALUES ($1)");
    let claim = [
        query("BEGIN"),
        query("INSERT INTO http_keys VALUES (1)"),
        query("COMMIT"),
    ];
    let charge = [query("BEGIN"), bind("s1"), query("COMMIT")];
    send(&mut client, &[&[insert][..], &claim, &charge].concat());
    let reached = everything_reached(&seen);
    let commits = reached
        .iter()
        .filter(|(kind, text)| *kind == b'Q' && text == "COMMIT");
    // The claim's COMMIT passed; the charge's, after its INSERT INTO payments, was cut.
    assert_eq!(commits.count(), 1, "{reached:?}");
    assert_eq!(
        reached.last().map(|(kind, _)| *kind),
        Some(b'B'),
        "{reached:?}"
    );
    assert_eq!(proxy.cuts(), 1);
    assert!(!proxy.is_armed());
}

#[test]
fn an_aimed_cut_waits_while_no_transaction_runs_its_statement() {
    let (proxy, mut client, seen) = proxied();
    proxy.arm_where(CommitCut::AfterCommit, "INSERT INTO operations");
    // A statement that ran in an earlier transaction does not count in the next.
    let earlier = [
        query("BEGIN"),
        query("INSERT INTO operations VALUES (1)"),
        query("ROLLBACK"),
    ];
    let later = [query("BEGIN"), query("SELECT 1"), query("COMMIT")];
    send(&mut client, &[&earlier[..], &later].concat());
    let mut commits = 0;
    while let Ok((kind, text)) = seen.recv_timeout(Duration::from_secs(2)) {
        commits += usize::from(kind == b'Q' && text == "COMMIT");
        if commits == 1 {
            break;
        }
    }
    assert_eq!(commits, 1);
    assert_eq!(proxy.cuts(), 0);
    assert!(proxy.is_armed());
}

#[test]
fn a_statement_outside_a_transaction_is_cut_at_the_sync_that_commits_it() {
    let (proxy, mut client, seen) = proxied();
    proxy.arm_where(CommitCut::BeforeCommit, "INSERT INTO payments");
    // A prepare (Parse, Sync) binds nothing and commits nothing; a claim's statement commits
    // at its Sync and passes; the charge's Sync is the commit that is cut.
    let prepare = [
        parse("s1", "INSERT INTO payments (amount) VALUES ($1)"),
        sync(),
    ];
    let claim = [
        parse("s2", "INSERT INTO http_keys VALUES (1)"),
        bind("s2"),
        sync(),
    ];
    let charge = [bind("s1"), sync()];
    send(&mut client, &[&prepare[..], &claim, &charge].concat());
    let reached = everything_reached(&seen);
    let kinds: Vec<u8> = reached.iter().map(|(kind, _)| *kind).collect();
    assert_eq!(kinds, b"PSPBSB", "{reached:?}");
    assert_eq!(proxy.cuts(), 1);
    assert!(!proxy.is_armed());
}
