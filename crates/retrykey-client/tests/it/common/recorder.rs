//! A loopback HTTP server that records every request it receives (method, path, headers, body)
//! and answers each connection from a script, so a test checks what really arrived.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// What the server does with one connection, in order.
pub enum Reply {
    /// Writes this response and closes the connection.
    Answer(&'static str),
    /// Reads the request and never answers: the connection stays open until the test ends.
    Hang,
}

/// One request as it arrived.
#[derive(Clone, Debug)]
pub struct Received {
    /// The method, as sent.
    pub method: String,
    /// The request target.
    pub path: String,
    /// Every header line, names lowercased, in order.
    pub headers: Vec<(String, String)>,
    /// The body (read up to its `Content-Length`).
    pub body: Vec<u8>,
}

impl Received {
    /// The values of the header `name`, in order.
    pub fn all(&self, name: &str) -> Vec<&str> {
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .filter(|(n, _)| *n == name)
            .map(|(_, v)| v.as_str())
            .collect()
    }

    /// The one value of the header `name`; fails the test if it is absent or repeated.
    pub fn one(&self, name: &str) -> &str {
        match self.all(name).as_slice() {
            [value] => value,
            other => panic!("expected one {name} header, got {other:?} in {self:?}"),
        }
    }
}

/// A running recorder.
pub struct Recorder {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Recorder {
    /// Starts a server on 127.0.0.1 that answers connection `n` with `script[n]`.
    pub async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let received: Arc<Mutex<Vec<Received>>> = Arc::default();
        let log = Arc::clone(&received);
        tokio::spawn(async move {
            // Connections left hanging live as long as this task, that is, as long as the test.
            let mut held = Vec::new();
            for reply in script {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let Some(request) = read_request(&mut stream).await else {
                    continue;
                };
                log.lock().unwrap().push(request);
                match reply {
                    Reply::Answer(response) => {
                        stream.write_all(response.as_bytes()).await.ok();
                        stream.shutdown().await.ok();
                    }
                    Reply::Hang => held.push(stream),
                }
            }
            std::future::pending::<()>().await;
        });
        Self { addr, received }
    }

    /// The URL of `path` on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// The requests received so far.
    pub fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }
}

async fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let mut bytes = Vec::new();
    let mut buf = [0u8; 1024];
    let head_end = loop {
        if let Some(at) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
            break at;
        }
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            return None;
        }
        bytes.extend_from_slice(&buf[..n]);
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut request_line = lines.next()?.split(' ');
    let (method, path) = (
        request_line.next()?.to_owned(),
        request_line.next()?.to_owned(),
    );
    let headers: Vec<(String, String)> = lines
        .filter_map(|line| line.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = bytes[head_end + 4..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut buf).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&buf[..n]);
    }
    Some(Received {
        method,
        path,
        headers,
        body,
    })
}
