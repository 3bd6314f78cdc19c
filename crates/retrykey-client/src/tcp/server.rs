//! The ledger service: accepts loopback connections and answers one reply line per request line.

use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use retrykey::Ledger;
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;
use tokio::task::{JoinHandle, JoinSet};

use crate::Error;
use crate::budget::take_one;
use crate::tcp::protocol;

/// The fault switch: what the service does wrong on purpose, for the next few requests.
///
/// Clones share the switch, so a test can arm it while the service runs.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    drop_replies: Arc<AtomicU32>,
    busy: Arc<AtomicU32>,
    busy_seconds: Arc<AtomicU64>,
}

impl Faults {
    /// The next `count` requests commit, then the connection closes before the reply is written.
    pub fn drop_next_replies(&self, count: u32) {
        self.drop_replies.store(count, Ordering::Release);
    }

    /// The next `count` requests are answered `BUSY` (retry after `seconds`) without applying.
    pub fn busy_next(&self, count: u32, seconds: u64) {
        self.busy_seconds.store(seconds, Ordering::Release);
        self.busy.store(count, Ordering::Release);
    }
}

/// A running ledger service. Dropping it (or [`LedgerServer::shutdown`]) stops it and closes
/// every connection; the ledger itself lives on with whoever else holds it.
#[derive(Debug)]
pub struct LedgerServer {
    addr: SocketAddr,
    faults: Faults,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl LedgerServer {
    /// Starts serving `ledger` on `addr` (use `127.0.0.1:0` for any free port).
    pub async fn start(
        addr: SocketAddr,
        ledger: Arc<dyn Ledger>,
        faults: Faults,
    ) -> Result<Self, Error> {
        let listener = TcpListener::bind(addr).await?;
        let addr = listener.local_addr()?;
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(serve(listener, ledger, faults.clone(), stopped));
        Ok(Self {
            addr,
            faults,
            stop: Some(stop),
            task,
        })
    }

    /// The address the service listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// The service's fault switch.
    pub fn faults(&self) -> &Faults {
        &self.faults
    }

    /// Stops accepting, closes every open connection, and waits until the port is free.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

impl Drop for LedgerServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(
    listener: TcpListener,
    ledger: Arc<dyn Ledger>,
    faults: Faults,
    mut stopped: oneshot::Receiver<()>,
) {
    // Dropping the set when the loop ends aborts the connection tasks: none outlives the service.
    let mut connections = JoinSet::new();
    loop {
        tokio::select! {
            _ = &mut stopped => break,
            accepted = listener.accept() => {
                if let Ok((stream, _)) = accepted {
                    connections.spawn(connection(stream, Arc::clone(&ledger), faults.clone()));
                }
            }
            // Reap finished connections so the set does not grow with the service's lifetime.
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }
}

async fn connection(stream: TcpStream, ledger: Arc<dyn Ledger>, faults: Faults) {
    let (read, mut write) = stream.into_split();
    let mut lines = BufReader::new(read);
    while let Some(line) = protocol::read_line(&mut lines).await {
        let reply = match protocol::parse_request(&line) {
            Err(problem) => protocol::invalid_line(&problem),
            Ok(_) if take_one(&faults.busy) => {
                protocol::busy_line(faults.busy_seconds.load(Ordering::Acquire))
            }
            Ok((key, request)) => {
                let result = ledger.apply(&key, &request);
                if result.is_ok() && take_one(&faults.drop_replies) {
                    // The effect and its receipt are committed; the reply never leaves.
                    return;
                }
                protocol::reply_line(&result)
            }
        };
        if write.write_all(reply.as_bytes()).await.is_err() {
            return;
        }
    }
}
