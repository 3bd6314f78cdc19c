//! A fault proxy on 127.0.0.1: it passes each exchange to the server under test, or breaks it
//! the way a network does, as the request itself asks.
//!
//! The kit decides every fault (so that a run is the same plan each time it is repeated, and
//! a witness shows the fault beside the request it broke): a request carries it in the
//! [`FAULT_HEADER`], which the proxy removes before anything reaches the server.

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

use crate::wire::Base;

/// The header that asks the proxy for a fault; the server never sees it.
pub const FAULT_HEADER: &str = "X-Conform-ExchangeFault";

/// The longest the proxy waits for the server's whole answer.
const UPSTREAM_LIMIT: Duration = Duration::from_secs(30);

/// What the proxy does to one exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExchangeFault {
    /// The request goes through, and so does its answer.
    Pass,
    /// The connection is reset before the request reaches the server: nothing ran.
    Reset,
    /// The request reaches the server and is answered, and the answer is dropped: the client
    /// cannot tell whether anything ran.
    Lose,
    /// The request waits this many milliseconds before it goes on.
    Delay(u64),
}

impl ExchangeFault {
    /// The header value that asks for this fault (`None` for [`ExchangeFault::Pass`]).
    pub fn value(self) -> Option<String> {
        match self {
            ExchangeFault::Pass => None,
            ExchangeFault::Reset => Some("reset".to_owned()),
            ExchangeFault::Lose => Some("lose".to_owned()),
            ExchangeFault::Delay(ms) => Some(format!("delay {ms}")),
        }
    }

    fn parse(value: &str) -> ExchangeFault {
        match value.trim() {
            "reset" => ExchangeFault::Reset,
            "lose" => ExchangeFault::Lose,
            other => other
                .strip_prefix("delay ")
                .and_then(|ms| ms.trim().parse().ok())
                .map_or(ExchangeFault::Pass, ExchangeFault::Delay),
        }
    }
}

/// How many exchanges the proxy broke, by fault.
#[derive(Debug, Default)]
pub struct FaultCounts {
    /// Connections reset before the server saw the request.
    pub reset: AtomicU64,
    /// Answers dropped after the server gave them.
    pub lost: AtomicU64,
    /// Requests held back.
    pub delayed: AtomicU64,
}

/// A running proxy; it stops when dropped.
#[derive(Debug)]
pub struct HttpFaultProxy {
    base: Base,
    counts: Arc<FaultCounts>,
    task: JoinHandle<()>,
}

impl HttpFaultProxy {
    /// Starts a proxy on 127.0.0.1 (a port the OS picks) in front of `upstream`.
    pub async fn start(upstream: &Base) -> std::io::Result<Self> {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let base = Base {
            host: "127.0.0.1".to_owned(),
            port: listener.local_addr()?.port(),
            prefix: upstream.prefix.clone(),
        };
        let counts = Arc::new(FaultCounts::default());
        let (to, shared) = (upstream.clone(), Arc::clone(&counts));
        let task = tokio::spawn(async move {
            while let Ok((client, peer)) = listener.accept().await {
                tokio::spawn(relay(client, peer.ip(), to.clone(), Arc::clone(&shared)));
            }
        });
        Ok(Self { base, counts, task })
    }

    /// Where to send requests.
    pub fn base(&self) -> &Base {
        &self.base
    }

    /// The faults so far.
    pub fn counts(&self) -> &FaultCounts {
        &self.counts
    }
}

impl Drop for HttpFaultProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One exchange: read the request whole, apply its fault, pass it and its answer on, from the
/// client's own address (a server that tells callers apart by address still can).
async fn relay(mut client: TcpStream, peer: IpAddr, upstream: Base, counts: Arc<FaultCounts>) {
    let Some((request, fault)) = read_request(&mut client).await else {
        return;
    };
    match fault {
        ExchangeFault::Reset => {
            counts.reset.fetch_add(1, Ordering::Relaxed);
            let _ = socket_reset(client);
            return;
        }
        ExchangeFault::Delay(ms) => {
            counts.delayed.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(ms)).await;
        }
        ExchangeFault::Lose | ExchangeFault::Pass => {}
    }
    let answer = tokio::time::timeout(UPSTREAM_LIMIT, forward(&upstream, peer, &request)).await;
    let Ok(Ok(answer)) = answer else {
        return; // no answer to pass on: the client sees the connection close
    };
    if fault == ExchangeFault::Lose {
        counts.lost.fetch_add(1, Ordering::Relaxed);
        return;
    }
    let _ = client.write_all(&answer).await;
    let _ = client.shutdown().await;
}

/// Closes `client` with a reset: a zero linger, so no thread blocks on the close.
fn socket_reset(client: TcpStream) -> std::io::Result<()> {
    client.set_zero_linger()?;
    drop(client);
    Ok(())
}

/// Sends `request` to `upstream` and reads until it closes the connection (every kit request
/// asks it to).
async fn forward(upstream: &Base, from: IpAddr, request: &[u8]) -> std::io::Result<Vec<u8>> {
    let mut server = crate::wire::connect_from(upstream, from).await?;
    server.write_all(request).await?;
    let mut answer = Vec::new();
    server.read_to_end(&mut answer).await?;
    Ok(answer)
}

/// The request's bytes without the fault header, and the fault it asked for.
async fn read_request(client: &mut TcpStream) -> Option<(Vec<u8>, ExchangeFault)> {
    let mut buffer = Vec::with_capacity(4096);
    let head_end = loop {
        if let Some(at) = buffer.windows(4).position(|w| w == b"\r\n\r\n") {
            break at + 4;
        }
        let mut chunk = [0u8; 4096];
        let read = client.read(&mut chunk).await.ok()?;
        if read == 0 || buffer.len() > 1 << 20 {
            return None;
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let head = std::str::from_utf8(&buffer[..head_end]).ok()?.to_owned();
    let mut fault = ExchangeFault::Pass;
    let mut length = 0;
    let mut kept = String::new();
    for line in head.split_inclusive("\r\n") {
        let (name, value) = line.split_once(':').unwrap_or((line, ""));
        if name.eq_ignore_ascii_case(FAULT_HEADER) {
            fault = ExchangeFault::parse(value);
            continue;
        }
        if name.eq_ignore_ascii_case("content-length") {
            length = value.trim().parse().ok()?;
        }
        kept.push_str(line);
    }
    let mut body = buffer[head_end..].to_vec();
    while body.len() < length {
        let mut chunk = [0u8; 4096];
        let read = client.read(&mut chunk).await.ok()?;
        if read == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..read]);
    }
    let mut request = kept.into_bytes();
    request.extend_from_slice(&body);
    Some((request, fault))
}
