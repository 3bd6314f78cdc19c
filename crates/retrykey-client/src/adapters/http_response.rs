//! What an HTTP answer means to the retry loop, whatever sent the request: the header names the
//! key travels in and a replay is marked by, and the judgement of one answer.
//!
//! Nothing here needs an HTTP client, so the simulator's transport and any caller's own use it
//! without the `http` feature.

use std::time::Duration;

use crate::{Failure, StatusFailure, Success};

/// The header that carries the operation key.
pub const KEY_HEADER: &str = "Idempotency-Key";
/// The header a service sets on a response delivered from its record.
pub const REPLAYED_HEADER: &str = "Idempotent-Replayed";

/// A successful HTTP response: its status and body.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HttpResponse {
    /// A 2xx status.
    pub status: u16,
    /// The body as received.
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// What one answer means to the retry loop, whatever transport carried it: a 2xx is a
    /// [`Success`] (a replay when the service said `Idempotent-Replayed: true`); any other status
    /// is a [`Failure::Status`], where a 409 with `Retry-After` reads as "the key's first request
    /// is still in progress". The HTTP adapter and the simulator's attempts share it.
    pub fn judge(
        status: u16,
        replayed: bool,
        retry_after: Option<Duration>,
        body: Vec<u8>,
    ) -> Result<Success<HttpResponse>, Failure> {
        if (200..300).contains(&status) {
            return Ok(Success {
                value: HttpResponse { status, body },
                replayed,
            });
        }
        Err(Failure::Status(StatusFailure {
            status,
            retry_after,
            in_progress: status == 409 && retry_after.is_some(),
            detail: String::from_utf8_lossy(&body).into_owned(),
        }))
    }
}
