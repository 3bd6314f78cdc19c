//! Keyed payments over real TCP, one connection per request, every step bounded by the
//! request's deadline, so that a server that stops answering shows as a timeout, never a hang.

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use crate::burst::{Heard, Service};

/// The amount every keyed payment of a burst charges.
const AMOUNT: u64 = 7;

/// An HTTP answer, as far as the runs read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpReply {
    /// The status code.
    pub status: u16,
    /// Whether it carries `Retry-After`.
    pub retry_after: bool,
    /// Its `Location`, if any.
    pub location: Option<String>,
    /// Whether it carries `Idempotent-Replayed: true`.
    pub replayed: bool,
    /// Its body.
    pub body: String,
}

/// Sends one request to `addr` and reads the whole answer, within `deadline` in all.
pub fn request(addr: &str, head: &str, body: &str, deadline: Duration) -> io::Result<HttpReply> {
    let until = Instant::now() + deadline;
    let left = || {
        until
            .checked_duration_since(Instant::now())
            .filter(|left| !left.is_zero())
            .ok_or_else(|| io::Error::from(io::ErrorKind::TimedOut))
    };
    let socket: SocketAddr = addr.parse().map_err(io::Error::other)?;
    let mut stream = TcpStream::connect_timeout(&socket, left()?)?;
    stream.set_write_timeout(Some(left()?))?;
    let message = format!(
        "{head}\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(message.as_bytes())?;
    let mut raw = Vec::new();
    let mut chunk = [0_u8; 4096];
    loop {
        stream.set_read_timeout(Some(left()?))?;
        match stream.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => raw.extend_from_slice(&chunk[..n]),
            Err(error) if error.kind() == io::ErrorKind::WouldBlock => {
                return Err(io::ErrorKind::TimedOut.into());
            }
            Err(error) => return Err(error),
        }
    }
    parse(&String::from_utf8_lossy(&raw)).ok_or_else(|| io::Error::other("not an HTTP answer"))
}

/// Reads a status line, the headers the runs need, and the body.
fn parse(raw: &str) -> Option<HttpReply> {
    let (head, body) = raw.split_once("\r\n\r\n")?;
    let mut lines = head.lines();
    let status = lines.next()?.split_whitespace().nth(1)?.parse().ok()?;
    let mut reply = HttpReply {
        status,
        retry_after: false,
        location: None,
        replayed: false,
        body: body.to_owned(),
    };
    for line in lines {
        let (name, value) = line.split_once(':')?;
        match name.trim().to_ascii_lowercase().as_str() {
            "retry-after" => reply.retry_after = true,
            "location" => reply.location = Some(value.trim().to_owned()),
            "idempotent-replayed" => reply.replayed = value.trim() == "true",
            _ => {}
        }
    }
    Some(reply)
}

/// What a keyed payment's answer means to a client that retries until it is definitive. A 201
/// counts only whole: its body `{"payment":N}` and its `Location: /payments/N` name the same
/// payment; any other 201 is a half-written record served, outside the contract.
pub fn classify(reply: &io::Result<HttpReply>) -> Heard {
    match reply {
        Ok(reply) if reply.status == 201 => match payment(reply) {
            Some(number) => Heard::Definitive {
                identity: format!("201 /payments/{number} {}", reply.body.trim()),
                replayed: reply.replayed,
            },
            None => Heard::Wrong(format!(
                "201 with Location {:?} and body {:?}",
                reply.location,
                reply.body.trim()
            )),
        },
        // Unavailable, or the key's first attempt still running: the contract's "retry".
        Ok(reply) if matches!(reply.status, 503 | 409) && reply.retry_after => {
            Heard::Retry(reply.status.to_string())
        }
        Ok(reply) => Heard::Wrong(format!("{} {}", reply.status, reply.body.trim())),
        Err(error) if error.kind() == io::ErrorKind::TimedOut => Heard::TimedOut,
        Err(error) => Heard::Wrong(format!("connection: {error}")),
    }
}

/// The payment a 201 names, if its body is `{"payment":N}` and its `Location` `/payments/N`.
pub fn payment(reply: &HttpReply) -> Option<u64> {
    let json: serde_json::Value = serde_json::from_str(&reply.body).ok()?;
    let object = json.as_object().filter(|object| object.len() == 1)?;
    let number = object.get("payment")?.as_u64()?;
    let location = reply.location.as_deref()?.strip_prefix("/payments/")?;
    (location.parse::<u64>().ok()? == number).then_some(number)
}

/// `payments` replicas over one store; attempt `n` of a client goes to replica
/// `client + n` in turn, so a retry often meets another replica than its first attempt.
pub struct PaymentsReplicas {
    /// `127.0.0.1:PORT` of each replica.
    pub replicas: Vec<String>,
}

impl Service for PaymentsReplicas {
    fn send(&self, client: usize, key: &str, attempt: u32, deadline: Duration) -> Heard {
        let replica = &self.replicas[(client + attempt as usize) % self.replicas.len()];
        let head = format!(
            "POST /payments HTTP/1.1\r\nIdempotency-Key: \"{key}\"\r\nContent-Type: application/json"
        );
        let body = format!("{{\"amount\": {AMOUNT}}}");
        classify(&request(replica, &head, &body, deadline))
    }
}

/// The charges the store holds, from `GET /payments/count`, asked again for up to `patience`
/// (the server may still be reconnecting to its database).
pub fn charges(addr: &str, patience: Duration) -> anyhow::Result<u64> {
    let until = Instant::now() + patience;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    loop {
        match runtime.block_on(retrykey_testkit::load::charges(addr)) {
            Ok(charges) => return Ok(charges),
            Err(error) if Instant::now() >= until => return Err(error),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CREATED: &str = "HTTP/1.1 201 Created\r\nlocation: /payments/4\r\ncontent-length: 14\r\n\r\n{\"payment\":4}\n";

    #[test]
    fn a_created_payment_is_definitive_with_its_location_and_body() {
        let reply = parse(CREATED).expect("an answer");
        assert_eq!(reply.location.as_deref(), Some("/payments/4"));
        assert_eq!(
            classify(&Ok(reply)),
            Heard::Definitive {
                identity: "201 /payments/4 {\"payment\":4}".into(),
                replayed: false,
            }
        );
        let replay = CREATED.replace("\r\n\r\n", "\r\nIdempotent-Replayed: true\r\n\r\n");
        let Heard::Definitive { replayed, .. } = classify(&Ok(parse(&replay).unwrap())) else {
            panic!("a replay is definitive");
        };
        assert!(replayed);
    }

    #[test]
    fn a_201_whose_location_and_body_disagree_is_wrong() {
        for torn in [
            CREATED.replace("/payments/4", "/payments/5"),
            CREATED.replace("location: /payments/4\r\n", ""),
            CREATED.replace("{\"payment\":4}", "{\"payment\":"),
            CREATED.replace("{\"payment\":4}", "{\"payment\":4,\"x\":1}"),
        ] {
            let reply = parse(&torn).expect("an answer");
            assert!(
                matches!(classify(&Ok(reply)), Heard::Wrong(_)),
                "{torn:?} passed"
            );
        }
    }

    #[test]
    fn unavailable_is_a_retry_only_with_retry_after() {
        let with = parse("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 1\r\n\r\n{}").unwrap();
        assert_eq!(classify(&Ok(with)), Heard::Retry("503".into()));
        let without = parse("HTTP/1.1 503 Service Unavailable\r\n\r\n{}").unwrap();
        assert_eq!(classify(&Ok(without)), Heard::Wrong("503 {}".into()));
        let error = parse("HTTP/1.1 500 Internal Server Error\r\n\r\noops").unwrap();
        assert_eq!(classify(&Ok(error)), Heard::Wrong("500 oops".into()));
    }

    #[test]
    fn silence_is_a_timeout_and_a_reset_is_wrong() {
        let silent = Err(io::ErrorKind::TimedOut.into());
        assert_eq!(classify(&silent), Heard::TimedOut);
        let reset = Err(io::ErrorKind::ConnectionReset.into());
        assert!(matches!(classify(&reset), Heard::Wrong(_)));
        assert_eq!(parse("garbage"), None);
    }

    #[test]
    fn a_server_that_never_answers_times_out_at_the_deadline() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let reply = request(&addr, "GET / HTTP/1.1", "", Duration::from_millis(300));
        assert_eq!(reply.unwrap_err().kind(), io::ErrorKind::TimedOut);
        drop(listener);
    }
}
