//! The one body type the layer hands to the inner service and returns to the server.

use std::any::Any;
use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as _, Frame};
use http_body_util::BodyExt;
use http_body_util::combinators::UnsyncBoxBody;

pub use retrykey_server::BoxError;

/// A type-erased HTTP body: what the inner service receives and what the layer answers with.
///
/// Erasing the type lets the same layer sit in front of an axum `Router` and a plain hyper
/// service, whatever body types they were written for. (A struct rather than a type alias,
/// so the compiler sees one concrete `'static` type in every async block.) Bytes already in
/// memory (a buffered request, a stored reply, a small handler answer) are held inline, so
/// they cost no allocation; only a real stream is boxed.
pub struct Body(Inner);

enum Inner {
    /// In memory: yielded as one data frame, then the end (`None` once sent, or if empty).
    Full(Option<Bytes>),
    /// Any other body, boxed.
    Boxed(UnsyncBoxBody<Bytes, BoxError>),
}

impl Body {
    /// An empty body.
    pub fn empty() -> Self {
        Body(Inner::Full(None))
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
        match &mut self.0 {
            Inner::Full(bytes) => Poll::Ready(bytes.take().map(|bytes| Ok(Frame::data(bytes)))),
            Inner::Boxed(body) => Pin::new(body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match &self.0 {
            Inner::Full(bytes) => bytes.is_none(),
            Inner::Boxed(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> http_body::SizeHint {
        match &self.0 {
            Inner::Full(bytes) => {
                http_body::SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64))
            }
            Inner::Boxed(body) => body.size_hint(),
        }
    }
}

/// Boxes any body with `Bytes` chunks into a [`Body`]; a [`Body`] is returned as it is.
pub fn boxed<B>(body: B) -> Body
where
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    // A service written against this crate already answers with `Body`: boxing it again
    // would cost an allocation and an extra indirection on every frame.
    let mut body = Some(body);
    if let Some(already) = (&mut body as &mut dyn Any).downcast_mut::<Option<Body>>()
        && let Some(already) = already.take()
    {
        return already;
    }
    let body = body.expect("taken only when it is a Body");
    Body(Inner::Boxed(
        body.map_err(|error| error.into()).boxed_unsync(),
    ))
}

/// A [`Body`] holding bytes that are already in memory (a buffered request, a stored reply).
pub fn full(bytes: impl Into<Bytes>) -> Body {
    let bytes: Bytes = bytes.into();
    Body(Inner::Full((!bytes.is_empty()).then_some(bytes)))
}

/// A body that first yields a chunk already read, then the rest of the original stream.
///
/// Used when a response turned out too large to store: the part read while measuring it is
/// sent first, and the remainder streams on without being held in memory.
#[doc(hidden)]
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
    /// The body did not arrive within the server's body timeout: its stream failed with an
    /// [`std::io::Error`] of kind [`TimedOut`](std::io::ErrorKind::TimedOut), as
    /// `retrykey-server`'s body deadline does.
    TimedOut,
    /// The stream failed before its end (the client went away, a malformed chunk).
    Broken(BoxError),
}

/// Reads a whole body into memory, refusing it as soon as it passes `limit` bytes.
pub async fn read_limited(mut body: Body, limit: usize) -> Result<Bytes, ReadError> {
    if body.size_hint().lower() > limit as u64 {
        return Err(ReadError::TooLarge); // a Content-Length over the limit: refuse unread
    }
    if let Inner::Full(bytes) = &mut body.0 {
        return Ok(bytes.take().unwrap_or_default()); // already in memory, and within the limit
    }
    let mut chunks = Chunks::default();
    while let Some(frame) = body.frame().await {
        let frame = frame.map_err(|error| {
            if error
                .downcast_ref::<std::io::Error>()
                .is_some_and(|error| error.kind() == std::io::ErrorKind::TimedOut)
            {
                ReadError::TimedOut
            } else {
                ReadError::Broken(error)
            }
        })?;
        if let Ok(data) = frame.into_data()
            && chunks.push(data) > limit
        {
            return Err(ReadError::TooLarge);
        }
    }
    Ok(chunks.join())
}

/// A response body read far enough to know whether it fits in the store.
#[doc(hidden)]
pub enum Captured {
    /// The whole body, no longer than the limit.
    Whole(Bytes),
    /// The body passed the limit: what was read so far, and the unread rest.
    TooLarge(Bytes, Body),
    /// The stream failed before its end.
    Broken(BoxError),
}

/// Reads a response body up to `limit` bytes without ever holding much more than that.
#[doc(hidden)]
pub async fn capture(mut body: Body, limit: usize) -> Captured {
    if let Inner::Full(bytes) = &mut body.0 {
        let bytes = bytes.take().unwrap_or_default();
        return if bytes.len() > limit {
            Captured::TooLarge(bytes, Body::empty())
        } else {
            Captured::Whole(bytes)
        };
    }
    let mut chunks = Chunks::default();
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                // Trailers are not kept: a replay is status, headers and body.
                if let Ok(data) = frame.into_data()
                    && chunks.push(data) > limit
                {
                    return Captured::TooLarge(chunks.join(), body);
                }
            }
            Err(error) => return Captured::Broken(error),
        }
    }
    Captured::Whole(chunks.join())
}

/// Chunks read so far. Most bodies arrive in one chunk, which is kept as it is: the list
/// (and the copy that joins it) is only needed from the second chunk on.
#[derive(Default)]
struct Chunks {
    first: Option<Bytes>,
    more: Vec<Bytes>,
    total: usize,
}

impl Chunks {
    /// Adds a chunk; returns the total length so far.
    fn push(&mut self, data: Bytes) -> usize {
        self.total += data.len();
        if data.is_empty() {
            return self.total;
        }
        match &self.first {
            None => self.first = Some(data),
            Some(_) => self.more.push(data),
        }
        self.total
    }

    /// One `Bytes` holding every chunk, copying only when there was more than one.
    fn join(self) -> Bytes {
        let Some(first) = self.first else {
            return Bytes::new();
        };
        if self.more.is_empty() {
            return first;
        }
        let mut joined = Vec::with_capacity(self.total);
        joined.extend_from_slice(&first);
        for chunk in &self.more {
            joined.extend_from_slice(chunk);
        }
        joined.into()
    }
}
