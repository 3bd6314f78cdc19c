//! HTTP/1.1 over a plain TCP connection, one exchange per connection, written byte for byte.
//!
//! The kit writes requests itself rather than through an HTTP client: it must send what a
//! client library would refuse or tidy up (a key header on two lines, a malformed value), and
//! leave in the middle of a request, and a witness shows exactly what went on the wire.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// The server's address and the path every request's path is appended to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Base {
    /// The host name or address, as the `Host` header carries it.
    pub host: String,
    /// The port.
    pub port: u16,
    /// The base URL's own path, without a trailing `/` (empty for none).
    pub prefix: String,
}

/// Why a base URL was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BaseError {
    /// Only plain HTTP is spoken.
    #[error(
        "{0:?} is not an http:// URL (the kit speaks plain HTTP/1.1; put a TLS proxy in front of an https server)"
    )]
    NotHttp(String),
    /// No host, or a port that is not a number.
    #[error("{0:?} has no host, or a port that is not a number from 1 to 65535")]
    BadAuthority(String),
}

impl std::str::FromStr for Base {
    type Err = BaseError;

    fn from_str(url: &str) -> Result<Self, BaseError> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| BaseError::NotHttp(url.to_owned()))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let bad = || BaseError::BadAuthority(url.to_owned());
        // An IPv6 address is bracketed, so its own colons are not the port's.
        let (host, port) = match authority.rsplit_once(':') {
            Some((host, port)) if !port.contains(']') => {
                (host, port.parse::<u16>().map_err(|_| bad())?)
            }
            _ => (authority, 80),
        };
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        if host.is_empty() || port == 0 || host.contains(['@', ' ', '[', ']']) {
            return Err(bad());
        }
        Ok(Self {
            host: host.to_owned(),
            port,
            prefix: path.trim_end_matches('/').to_owned(),
        })
    }
}

impl Base {
    /// The host as a URL or a `Host` header writes it: an IPv6 address in brackets.
    fn authority_host(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        }
    }
}

impl std::fmt::Display for Base {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "http://{}:{}{}",
            self.authority_host(),
            self.port,
            self.prefix
        )
    }
}

/// One request, as the kit writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireRequest {
    /// The method.
    pub method: String,
    /// The path (and query), after the base's prefix.
    pub path: String,
    /// Headers in the order they are written; a name may repeat.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: String,
    /// The local address to connect from (a loopback address standing for one caller), or
    /// `None` for the system's choice.
    pub from: Option<std::net::IpAddr>,
}

/// One answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireAnswer {
    /// The status code.
    pub status: u16,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body, as text (lossily).
    pub body: String,
}

impl WireAnswer {
    /// The first value of a header, by name in any case.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_str())
    }
}

/// Why an exchange got no answer.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The connection could not be opened.
    #[error("cannot connect: {0}")]
    Connect(std::io::Error),
    /// The connection broke.
    #[error("the connection broke: {0}")]
    Broken(std::io::Error),
    /// The server closed the connection before a whole answer.
    #[error("the connection closed before a whole answer")]
    Closed,
    /// No whole answer within the time limit.
    #[error("no answer within {0} ms")]
    TimedOut(u64),
    /// The answer is larger than the kit reads.
    #[error("the answer is larger than {0} bytes")]
    TooLarge(usize),
    /// The bytes are not an HTTP/1.1 answer.
    #[error("not an HTTP answer: {0}")]
    Malformed(String),
}

impl WireRequest {
    /// The request's bytes: request line, `Host`, `Content-Length`, `Connection: close`, the
    /// headers as given, the body.
    pub fn to_bytes(&self, base: &Base) -> Vec<u8> {
        let mut head = format!(
            "{} {}{} HTTP/1.1\r\nhost: {}:{}\r\nconnection: close\r\ncontent-length: {}\r\n",
            self.method,
            base.prefix,
            self.path,
            base.authority_host(),
            base.port,
            self.body.len()
        );
        for (name, value) in &self.headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        let mut bytes = head.into_bytes();
        bytes.extend_from_slice(self.body.as_bytes());
        bytes
    }
}

/// Sends `request` on a new connection and reads the whole answer, within `limit`.
pub async fn exchange(
    base: &Base,
    request: &WireRequest,
    limit: Duration,
) -> Result<WireAnswer, WireError> {
    let work = async {
        let mut stream = connect(base, request.from).await?;
        stream
            .write_all(&request.to_bytes(base))
            .await
            .map_err(WireError::Broken)?;
        read_answer(&mut stream).await
    };
    tokio::time::timeout(limit, work)
        .await
        .unwrap_or(Err(WireError::TimedOut(limit.as_millis() as u64)))
}

/// Sends `request` whole, waits `linger` for the server to start on it, then closes the
/// connection without reading: a client that gave up.
pub async fn send_and_leave(
    base: &Base,
    request: &WireRequest,
    linger: Duration,
) -> Result<(), WireError> {
    let mut stream = connect(base, request.from).await?;
    stream
        .write_all(&request.to_bytes(base))
        .await
        .map_err(WireError::Broken)?;
    tokio::time::sleep(linger).await;
    drop(stream);
    Ok(())
}

/// Whether a connection to `base` opens (within five seconds), before any check runs.
pub async fn reachable(base: &Base) -> Result<(), WireError> {
    let limit = Duration::from_secs(5);
    match tokio::time::timeout(limit, connect(base, None)).await {
        Ok(stream) => stream.map(drop),
        Err(_) => Err(WireError::TimedOut(limit.as_millis() as u64)),
    }
}

/// A connection to `base`, from the local address `from` when one is given.
async fn connect(base: &Base, from: Option<std::net::IpAddr>) -> Result<TcpStream, WireError> {
    let stream = match from {
        None => TcpStream::connect((base.host.as_str(), base.port)).await,
        Some(from) => connect_from(base, from).await,
    }
    .map_err(WireError::Connect)?;
    stream.set_nodelay(true).map_err(WireError::Connect)?;
    Ok(stream)
}

/// A connection to `base` from the local address `from` (port of the system's choice).
pub(crate) async fn connect_from(
    base: &Base,
    from: std::net::IpAddr,
) -> std::io::Result<TcpStream> {
    let mut last = None;
    for to in tokio::net::lookup_host((base.host.as_str(), base.port)).await? {
        if to.is_ipv4() != from.is_ipv4() {
            continue;
        }
        let socket = match from {
            std::net::IpAddr::V4(_) => tokio::net::TcpSocket::new_v4()?,
            std::net::IpAddr::V6(_) => tokio::net::TcpSocket::new_v6()?,
        };
        socket.bind(std::net::SocketAddr::new(from, 0))?;
        match socket.connect(to).await {
            Ok(stream) => return Ok(stream),
            Err(error) => last = Some(error),
        }
    }
    Err(last.unwrap_or_else(|| {
        std::io::Error::new(
            std::io::ErrorKind::AddrNotAvailable,
            format!("{} has no address of the same family as {from}", base.host),
        )
    }))
}

/// Reads until the head is whole, then the body its framing promises.
async fn read_answer(stream: &mut TcpStream) -> Result<WireAnswer, WireError> {
    let mut buffer = Vec::with_capacity(4096);
    loop {
        match parse_head(&buffer)? {
            // An interim answer (100 Continue, 103 Early Hints) comes before the real one.
            Some((answer, Framing::Length { head, .. })) if (100..200).contains(&answer.status) => {
                buffer.drain(..head);
                continue;
            }
            Some((answer, framing)) => return read_body(stream, buffer, answer, framing).await,
            None => {}
        }
        if read_more(stream, &mut buffer).await? == 0 {
            return Err(WireError::Closed);
        }
    }
}

/// The most bytes of one answer the kit reads: more is no answer a check could use.
pub const MAX_ANSWER_BYTES: usize = 1 << 20;

async fn read_more(stream: &mut TcpStream, buffer: &mut Vec<u8>) -> Result<usize, WireError> {
    if buffer.len() >= MAX_ANSWER_BYTES {
        return Err(WireError::TooLarge(MAX_ANSWER_BYTES));
    }
    let mut chunk = [0u8; 8192];
    let read = stream.read(&mut chunk).await.map_err(WireError::Broken)?;
    buffer.extend_from_slice(&chunk[..read]);
    Ok(read)
}

/// How the body's end is known.
enum Framing {
    /// `Content-Length`, after the head of this many bytes.
    Length { head: usize, length: usize },
    /// `Transfer-Encoding: chunked`, after the head.
    Chunked { head: usize },
    /// Neither: the body ends when the connection closes.
    UntilClose { head: usize },
}

fn parse_head(buffer: &[u8]) -> Result<Option<(WireAnswer, Framing)>, WireError> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut response = httparse::Response::new(&mut headers);
    let head = match response.parse(buffer) {
        Ok(httparse::Status::Complete(head)) => head,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(error) => return Err(WireError::Malformed(error.to_string())),
    };
    let status = response.code.unwrap_or(0);
    let headers: Vec<(String, String)> = response
        .headers
        .iter()
        .map(|h| {
            let value = String::from_utf8_lossy(h.value).into_owned();
            (h.name.to_ascii_lowercase(), value)
        })
        .collect();
    let answer = WireAnswer {
        status,
        headers,
        body: String::new(),
    };
    // These statuses never have a body, whatever the headers say (RFC 9112, section 6.3).
    let bodiless = matches!(status, 100..=199 | 204 | 304);
    let framing = if bodiless {
        Framing::Length { head, length: 0 }
    } else if answer
        .header("transfer-encoding")
        .is_some_and(|te| te.eq_ignore_ascii_case("chunked"))
    {
        Framing::Chunked { head }
    } else if let Some(length) = answer.header("content-length") {
        let length = length
            .trim()
            .parse()
            .map_err(|_| WireError::Malformed(format!("content-length {length:?}")))?;
        Framing::Length { head, length }
    } else {
        Framing::UntilClose { head }
    };
    Ok(Some((answer, framing)))
}

async fn read_body(
    stream: &mut TcpStream,
    mut buffer: Vec<u8>,
    mut answer: WireAnswer,
    framing: Framing,
) -> Result<WireAnswer, WireError> {
    let body = loop {
        let done = match framing {
            Framing::Length { head, length } => {
                let end = head
                    .checked_add(length)
                    .filter(|end| *end <= MAX_ANSWER_BYTES);
                let end = end.ok_or(WireError::TooLarge(MAX_ANSWER_BYTES))?;
                (buffer.len() >= end).then(|| buffer[head..end].to_vec())
            }
            Framing::Chunked { head } => dechunk(&buffer[head..])?,
            Framing::UntilClose { .. } => None,
        };
        if let Some(body) = done {
            break body;
        }
        if read_more(stream, &mut buffer).await? == 0 {
            match framing {
                Framing::UntilClose { head } => break buffer[head..].to_vec(),
                _ => return Err(WireError::Closed),
            }
        }
    };
    answer.body = String::from_utf8_lossy(&body).into_owned();
    Ok(answer)
}

/// The body of a whole chunked encoding, or `None` while it is still partial.
fn dechunk(mut bytes: &[u8]) -> Result<Option<Vec<u8>>, WireError> {
    let mut body = Vec::new();
    loop {
        let Some(line_end) = bytes.windows(2).position(|w| w == b"\r\n") else {
            return Ok(None);
        };
        let size_text = String::from_utf8_lossy(&bytes[..line_end]);
        let size_text = size_text.split(';').next().unwrap_or("").trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| WireError::Malformed(format!("chunk size {size_text:?}")))?;
        let start = line_end + 2;
        if size == 0 {
            return Ok(Some(body));
        }
        if bytes.len() < start + size + 2 {
            return Ok(None);
        }
        body.extend_from_slice(&bytes[start..start + size]);
        bytes = &bytes[start + size + 2..];
    }
}
