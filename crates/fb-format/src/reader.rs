//! Readers that drive the [`Framer`] over a whole slice or an `io::Read`.

use std::io::Read;

use crate::caches::Caches;
use crate::error::{Error, Result};
use crate::framer::{Framer, Message, Step};
use crate::prefetcher::Prefetcher;

/// Reads messages from a slice that holds the whole log (e.g. a memory map).
///
/// Messages borrow from the slice for its whole lifetime. As an iterator it
/// stops after the first error. Each message framed asks the CPU for the
/// bytes just after it, which a mapped log does not hold in any cache
/// (see `prefetcher.rs`), but with [`Caches::Off`].
#[derive(Debug, Clone)]
pub struct SliceReader<'a> {
    data: &'a [u8],
    pos: usize,
    framer: Framer,
    prefetcher: Prefetcher,
}

impl<'a> SliceReader<'a> {
    /// Reads `data` with the default payload limit.
    pub fn new(data: &'a [u8]) -> Self {
        Self::with_framer(data, Framer::new())
    }

    /// Reads `data` with a configured framer.
    pub fn with_framer(data: &'a [u8], framer: Framer) -> Self {
        Self {
            data,
            pos: 0,
            framer,
            prefetcher: Prefetcher::default(),
        }
    }

    /// The reader, asking the CPU for the lines ahead of it with
    /// [`Caches::On`] (the default) and not with [`Caches::Off`].
    #[must_use]
    pub fn with_caches(mut self, caches: Caches) -> Self {
        self.prefetcher = match caches {
            Caches::On => Prefetcher::default(),
            Caches::Off => Prefetcher::off(),
        };
        self
    }

    /// Where in the slice the lines asked for ahead of the reader end: 0
    /// when none was asked for.
    pub fn prefetched_to(&self) -> usize {
        self.prefetcher.asked()
    }

    /// The next message, `None` at the end of the log.
    #[inline]
    pub fn next_message(&mut self) -> Result<Option<Message<'a>>> {
        let rest = self.data.get(self.pos..).unwrap_or_default();
        match self.framer.next(rest, true)? {
            Step::Message(msg) => {
                let start = self.pos;
                self.pos += msg.len;
                self.prefetcher.fetch(self.data, start, self.pos);
                Ok(Some(msg))
            }
            Step::End | Step::NeedMore(_) => Ok(None),
        }
    }

    /// Offset of the next unread byte.
    pub fn offset(&self) -> u64 {
        self.framer.offset()
    }

    /// Index of the next unread message.
    pub fn index(&self) -> u64 {
        self.framer.index()
    }
}

impl<'a> Iterator for SliceReader<'a> {
    type Item = Result<Message<'a>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_message().transpose()
    }
}

/// Smallest read issued to the underlying reader.
const READ_CHUNK: usize = 256 << 10;

/// Reads messages from any `io::Read` through one reused buffer.
///
/// The buffer grows to about the largest message seen (bounded by the
/// framer's payload limit) plus one read chunk, however long the stream is.
#[derive(Debug)]
pub struct StreamReader<R> {
    inner: R,
    buf: Vec<u8>,
    start: usize,
    end: usize,
    at_end: bool,
    consumed: usize,
    framer: Framer,
}

impl<R: Read> StreamReader<R> {
    /// Reads `inner` with the default payload limit.
    pub fn new(inner: R) -> Self {
        Self::with_framer(inner, Framer::new())
    }

    /// Reads `inner` with a configured framer.
    pub fn with_framer(inner: R, framer: Framer) -> Self {
        Self {
            inner,
            buf: Vec::new(),
            start: 0,
            end: 0,
            at_end: false,
            consumed: 0,
            framer,
        }
    }

    /// The next message, `None` at the end of the log. The message borrows
    /// the internal buffer until the next call.
    pub fn next_message(&mut self) -> Result<Option<Message<'_>>> {
        self.start += std::mem::take(&mut self.consumed);
        loop {
            let unread = self.buf.get(self.start..self.end).unwrap_or_default();
            match self.framer.frame(unread, self.at_end)? {
                Step::Message(frame) => {
                    self.consumed = frame.len;
                    let unread = self.buf.get(self.start..self.end).unwrap_or_default();
                    return Ok(Some(frame.message(unread)));
                }
                Step::End => return Ok(None),
                Step::NeedMore(needed) => self.fill(needed)?,
            }
        }
    }

    /// Offset of the next unread message.
    pub fn offset(&self) -> u64 {
        self.framer.offset()
    }

    /// Index of the next unread message.
    pub fn index(&self) -> u64 {
        self.framer.index()
    }

    /// Bytes currently allocated for the buffer.
    pub fn buffer_capacity(&self) -> usize {
        self.buf.capacity()
    }

    /// Gives the underlying reader back.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Makes one read that adds to the unread bytes, which must reach
    /// `needed` eventually. The buffer grows geometrically as data arrives,
    /// never straight to `needed`: a corrupt size field costs memory only
    /// for bytes that really exist.
    fn fill(&mut self, needed: usize) -> Result<()> {
        if self.start + needed > self.buf.len() || self.end == self.buf.len() {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        if self.end == self.buf.len() {
            let grown = (self.buf.len() * 2)
                .max(READ_CHUNK)
                .min(needed.max(READ_CHUNK));
            self.buf.resize(grown, 0);
        }
        loop {
            let Some(space) = self.buf.get_mut(self.end..) else {
                return Ok(());
            };
            match self.inner.read(space) {
                Ok(0) => {
                    self.at_end = true;
                    return Ok(());
                }
                Ok(n) => {
                    self.end += n;
                    return Ok(());
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    let offset = self.framer.offset() + (self.end - self.start) as u64;
                    self.framer.stop();
                    return Err(Error::Io { offset, source });
                }
            }
        }
    }
}
