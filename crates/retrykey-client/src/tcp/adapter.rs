//! The TCP adapter: one attempt is one connection, one request line, one reply line.

use std::net::SocketAddr;

use retrykey::{Receipt, Request};
use tokio::io::{AsyncWriteExt, BufReader};
use tokio::net::TcpStream;

use crate::tcp::protocol;
use crate::{Attempt, Failure, Success, TransportError};

/// Sends attempts to a [`LedgerServer`](crate::tcp::LedgerServer) at `addr`.
///
/// A failed connect is [`Failure::Refused`] (nothing was sent); a connection that closes or
/// breaks after the request left is [`Failure::Lost`] (it may have committed). Either carries
/// the socket's error as [`TransportError::Io`], or [`TransportError::Closed`] when the service
/// closed the connection without a reply.
#[derive(Clone, Copy, Debug)]
pub struct TcpAdapter {
    addr: SocketAddr,
}

impl TcpAdapter {
    /// An adapter for the service at `addr`.
    pub fn new(addr: SocketAddr) -> Self {
        Self { addr }
    }

    /// One attempt: applies `request` under the attempt's key.
    pub async fn apply(
        &self,
        attempt: Attempt,
        request: &Request,
    ) -> Result<Success<Receipt>, Failure> {
        let mut stream = TcpStream::connect(self.addr)
            .await
            .map_err(|e| Failure::Refused(e.into()))?;
        let line = protocol::request_line(&attempt.key, request);
        stream
            .write_all(line.as_bytes())
            .await
            .map_err(|e| Failure::Lost(e.into()))?;
        let mut reader = BufReader::new(stream);
        protocol::read_line(&mut reader)
            .await
            .ok_or(Failure::Lost(TransportError::Closed))
            .and_then(|reply| protocol::parse_reply(&reply))
    }
}
