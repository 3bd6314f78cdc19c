//! The one body type the layer hands to the inner service and returns to the server.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as _, Frame};
use http_body_util::combinators::UnsyncBoxBody;
use http_body_util::{BodyExt, Full};

/// Any error a body can produce, boxed so bodies of different origins share one type.
pub type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A type-erased HTTP body: what the inner service receives and what the layer answers with.
///
/// Erasing the type lets the same layer sit in front of an axum `Router` and a plain hyper
/// service, whatever body types they were written for. (A struct rather than a type alias,
/// so the compiler sees one concrete `'static` type in every async block.)
pub struct Body(UnsyncBoxBody<Bytes, BoxError>);

impl Body {
    /// An empty body.
    pub fn empty() -> Self {
        full(Bytes::new())
    }
}

impl std::fmt::Debug for Body {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Body")
    }
}

impl http_body::Body for Body {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        Pin::new(&mut self.0).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.0.size_hint()
    }
}

/// Boxes any body with `Bytes` chunks into a [`Body`].
pub fn boxed<B>(body: B) -> Body
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    Body(body.map_err(|error| error.into()).boxed_unsync())
}

/// A [`Body`] holding bytes that are already in memory (a buffered request, a stored reply).
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Body(
        Full::new(bytes.into())
            .map_err(|never| match never {})
            .boxed_unsync(),
    )
}

/// A body that first yields a chunk already read, then the rest of the original stream.
///
/// Used when a response turned out too large to store: the part read while measuring it is
/// sent first, and the remainder streams on without being held in memory.
pub struct Prefixed {
    prefix: Option<Bytes>,
    rest: Body,
}

impl Prefixed {
    /// Yields `prefix` first, then every frame of `rest`.
    pub fn new(prefix: Bytes, rest: Body) -> Self {
        Self {
            prefix: Some(prefix),
            rest,
        }
    }
}

impl http_body::Body for Prefixed {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        if let Some(prefix) = self.prefix.take() {
            return Poll::Ready(Some(Ok(Frame::data(prefix))));
        }
        Pin::new(&mut self.rest).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.prefix.is_none() && self.rest.is_end_stream()
    }
}

/// Why a request body could not be buffered.
#[derive(Debug)]
pub enum ReadError {
    /// The body is longer than the limit; reading stopped at the limit.
    TooLarge,
    /// The stream failed before its end (the client went away, a malformed chunk).
    Broken(BoxError),
}

/// Reads a whole body into memory, refusing it as soon as it passes `limit` bytes.
pub async fn read_limited(mut body: Body, limit: usize) -> Result<Bytes, ReadError> {
    if body.size_hint().lower() > limit as u64 {
        return Err(ReadError::TooLarge); // a Content-Length over the limit: refuse unread
    }
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut total = 0;
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(ReadError::Broken)?;
        if let Ok(data) = frame.into_data() {
            total += data.len();
            if total > limit {
                return Err(ReadError::TooLarge);
            }
            chunks.push(data);
        }
    }
    Ok(join(chunks))
}

/// A response body read far enough to know whether it fits in the store.
pub enum Captured {
    /// The whole body, no longer than the limit.
    Whole(Bytes),
    /// The body passed the limit: what was read so far, and the unread rest.
    TooLarge(Bytes, Body),
    /// The stream failed before its end.
    Broken(BoxError),
}

/// Reads a response body up to `limit` bytes without ever holding much more than that.
pub async fn capture(mut body: Body, limit: usize) -> Captured {
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut total = 0;
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                // Trailers are not kept: a replay is status, headers and body.
                if let Ok(data) = frame.into_data() {
                    total += data.len();
                    chunks.push(data);
                    if total > limit {
                        return Captured::TooLarge(join(chunks), body);
                    }
                }
            }
            Err(error) => return Captured::Broken(error),
        }
    }
    Captured::Whole(join(chunks))
}

/// One `Bytes` from several, copying only when there is more than one.
fn join(mut chunks: Vec<Bytes>) -> Bytes {
    match chunks.len() {
        0 => Bytes::new(),
        1 => chunks.swap_remove(0),
        _ => chunks.concat().into(),
    }
}
