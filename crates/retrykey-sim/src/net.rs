//! One attempt of the retry client, as an HTTP POST over simulated TCP; and one attempt of a
//! call from one host to another.
//!
//! The retry loop is the client crate's own; this is only its transport, as `HttpAdapter` is
//! over real TCP. What an answer means (success, replay, which failure) is decided by the
//! client crate's [`HttpResponse::judge`], so the simulation reads answers as the client does.

use std::time::{Duration, SystemTime};

use bytes::Bytes;
use http::Request;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::TokioIo;
use retrykey_client::adapters::{HttpResponse, KEY_HEADER, KeyHeader, REPLAYED_HEADER};
use retrykey_client::{Attempt, Failure, Success, TransportError, retry_after};
use retrykey_history::{History, HistoryEvent, NoReply, OpId, Reply};

use crate::server::PORT;

/// Posts one attempt of operation `id` to the server's `path`, waiting at most `patience` for
/// the answer; records what was sent and what came back.
pub(crate) async fn post(
    history: &History,
    path: &str,
    id: OpId,
    attempt: Attempt,
    amount: u64,
    patience: Duration,
) -> Result<Success<HttpResponse>, Failure> {
    let host = format!("client-{}", id.client);
    history.record(
        &host,
        HistoryEvent::Sent {
            id,
            attempt: attempt.number,
            key: attempt.key.as_str().to_owned(),
            amount,
        },
    );
    let body = format!("{{\"amount\":{amount}}}").into_bytes();
    let exchanged = exchange("server", path, &attempt, body);
    let answer = match tokio::time::timeout(patience, exchanged).await {
        Ok(answer) => answer,
        // Dropping the exchange closes the connection: the client leaves mid-request.
        Err(_) => Err(Failure::TimedOut),
    };
    let reply = match &answer {
        Ok(answer) => Reply::Answer {
            status: answer.status,
            body: String::from_utf8_lossy(&answer.body).into_owned(),
            replayed: answer.replayed,
        },
        Err(Failure::Refused(_)) => Reply::None(NoReply::Refused),
        Err(Failure::TimedOut) => Reply::None(NoReply::GaveUp),
        Err(Failure::Lost(_) | Failure::Status(_)) => Reply::None(NoReply::Cut),
    };
    history.record(
        &host,
        HistoryEvent::Got {
            id,
            attempt: attempt.number,
            reply,
        },
    );
    answer?.judge()
}

/// One attempt of a call from this host to `host`'s `path`, posting `body` as JSON under the
/// attempt's key; the answer judged as the retry client judges one. Another stage's service
/// calls the service behind it with this.
pub async fn call(
    host: &str,
    path: &str,
    attempt: &Attempt,
    body: Vec<u8>,
) -> Result<Success<HttpResponse>, Failure> {
    exchange(host, path, attempt, body).await?.judge()
}

/// An HTTP answer as it arrived.
struct Answer {
    status: u16,
    replayed: bool,
    retry_after: Option<Duration>,
    body: Vec<u8>,
}

impl Answer {
    fn judge(self) -> Result<Success<HttpResponse>, Failure> {
        HttpResponse::judge(self.status, self.replayed, self.retry_after, self.body)
    }
}

async fn exchange(
    host: &str,
    path: &str,
    attempt: &Attempt,
    body: Vec<u8>,
) -> Result<Answer, Failure> {
    let key =
        KeyHeader::new(&attempt.key).map_err(|e| Failure::Refused(TransportError::other(e)))?;
    let stream = turmoil::net::TcpStream::connect((host, PORT))
        .await
        .map_err(|e| Failure::Refused(e.into()))?;
    let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| Failure::Lost(TransportError::other(e)))?;
    // The connection's driver ends with this attempt, whatever ends it.
    let driver = Driver(tokio::spawn(connection));
    let request = Request::post(path)
        .header(KEY_HEADER, key.as_str())
        .header(http::header::CONTENT_TYPE, "application/json")
        .body(Full::new(Bytes::from(body)))
        .map_err(|e| Failure::Refused(TransportError::other(e)))?;
    let response = sender
        .send_request(request)
        .await
        .map_err(|e| Failure::Lost(TransportError::other(e)))?;
    let status = response.status().as_u16();
    let header = |name: &str| {
        response
            .headers()
            .get(name)
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned)
    };
    let replayed = header(REPLAYED_HEADER).is_some_and(|v| v.eq_ignore_ascii_case("true"));
    // The simulated clock: turmoil's epoch plus the time the run has taken.
    let now = SystemTime::UNIX_EPOCH + turmoil::since_epoch().unwrap_or_default();
    let retry_after = header("retry-after").and_then(|value| retry_after::parse(&value, now));
    let body = response
        .into_body()
        .collect()
        .await
        .map_err(|e| Failure::Lost(TransportError::other(e)))?
        .to_bytes()
        .to_vec();
    drop(driver);
    Ok(Answer {
        status,
        replayed,
        retry_after,
        body,
    })
}

struct Driver(tokio::task::JoinHandle<Result<(), hyper::Error>>);

impl Drop for Driver {
    fn drop(&mut self) {
        self.0.abort();
    }
}
