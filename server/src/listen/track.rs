//! What the registry of open connections learns from hyper: a connection's answer body done
//! (dropped) and then all written to the socket (a flush that completes), when it waits again.

use super::open::Slot;
use axum::body::{Body, Bytes};
use hyper::body::{Frame, SizeHint};
use hyper::rt::{Read, ReadBufCursor, Write};
use hyper_util::rt::TokioIo;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::net::TcpStream;

/// A connection's socket, telling its slot of every flush that completes (hyper flushes its
/// socket only once its own buffer is empty).
pub(super) struct TrackedIo {
    inner: TokioIo<TcpStream>,
    slot: Arc<Slot>,
}

impl TrackedIo {
    pub(super) fn new(stream: TcpStream, slot: Arc<Slot>) -> Self {
        Self {
            inner: TokioIo::new(stream),
            slot,
        }
    }
}

impl Read for TrackedIo {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: ReadBufCursor<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_read(cx, buf)
    }
}

impl Write for TrackedIo {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let flushed = Pin::new(&mut this.inner).poll_flush(cx);
        if let Poll::Ready(Ok(())) = flushed {
            this.slot.flushed();
        }
        flushed
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write_vectored(cx, bufs)
    }
}

/// An answer's body, telling its slot when hyper is done with it (read to the end, or dropped
/// with the connection).
pub(super) struct TrackedBody {
    inner: Body,
    slot: Arc<Slot>,
}

impl TrackedBody {
    pub(super) fn new(inner: Body, slot: Arc<Slot>) -> Self {
        Self { inner, slot }
    }
}

impl hyper::body::Body for TrackedBody {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for TrackedBody {
    fn drop(&mut self) {
        self.slot.answered();
    }
}
