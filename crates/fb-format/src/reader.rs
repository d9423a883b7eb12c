//! Readers that drive the [`Framer`] over a whole slice or an `io::Read`.

use std::io::Read;

use crate::caches::Caches;
use crate::error::{Error, Result};
use crate::framer::{Framer, Message, Step};
use crate::prefetcher::Prefetcher;

/// A reader of a log's messages in order, whether the log is in memory
/// ([`SliceReader`]) or read as it goes ([`StreamReader`]): for a pass
/// that keeps nothing borrowed from one message to the next.
pub trait Messages {
    /// The next message, `None` at the end of the log.
    fn next_message(&mut self) -> Result<Option<Message<'_>>>;
    /// Index of the next message.
    fn index(&self) -> u64;
}

impl<M: Messages + ?Sized> Messages for Box<M> {
    fn next_message(&mut self) -> Result<Option<Message<'_>>> {
        (**self).next_message()
    }

    fn index(&self) -> u64 {
        (**self).index()
    }
}

impl Messages for SliceReader<'_> {
    fn next_message(&mut self) -> Result<Option<Message<'_>>> {
        SliceReader::next_message(self)
    }

    fn index(&self) -> u64 {
        SliceReader::index(self)
    }
}

impl<R: Read> Messages for StreamReader<R> {
    fn next_message(&mut self) -> Result<Option<Message<'_>>> {
        StreamReader::next_message(self)
    }

    fn index(&self) -> u64 {
        StreamReader::index(self)
    }
}

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

/// Reads land where the buffer's address and the stream's position agree
/// modulo this: a read whose destination is a few bytes past its source,
/// modulo the page size, is copied by the kernel several times slower
/// (measured: 1 to 31 bytes past a page cache page, bench/NOTES.md), and
/// a fresh buffer of the allocator is 16 bytes past a page.
pub const READ_ALIGN: usize = 64;

/// How many bytes past `address` a byte at stream position `position`
/// must be put (less than [`READ_ALIGN`]) for its address and position
/// to agree modulo [`READ_ALIGN`]: where every reader of this workspace
/// places its reads.
pub fn read_skew(address: usize, position: u64) -> usize {
    (position as usize).wrapping_sub(address) % READ_ALIGN
}

/// Largest buffer a thread keeps for its next [`StreamReader`]: what a
/// log of ordinary messages grows to, so that a folder of small files is
/// read through one buffer, while a buffer grown for a huge message is
/// given back to the allocator with its reader.
const SPARE_LIMIT: usize = 1 << 20;

thread_local! {
    /// The buffer of this thread's last [`StreamReader`], its bytes
    /// written (stale): the next reader reads into it without zeroing it
    /// again, once per input of a folder.
    static SPARE: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// A reader's buffer: taken from its thread's spare, and given back to
/// the spare of the thread that drops it.
#[derive(Debug)]
struct Buffer(Vec<u8>);

impl Buffer {
    fn from_spare() -> Self {
        Self(SPARE.with(std::cell::Cell::take))
    }
}

impl Drop for Buffer {
    fn drop(&mut self) {
        let buf = std::mem::take(&mut self.0);
        if buf.capacity() < SPARE_LIMIT {
            // `try_with`: a reader dropped while its thread ends has no
            // spare to go to.
            let _ = SPARE.try_with(|spare| {
                let kept = spare.take();
                spare.set(if buf.len() >= kept.len() { buf } else { kept });
            });
        }
    }
}

/// Reads messages from any `io::Read` through one reused buffer.
///
/// The buffer grows to about the largest message seen (bounded by the
/// framer's payload limit) plus one read chunk, however long the stream is.
#[derive(Debug)]
pub struct StreamReader<R> {
    inner: R,
    /// Bytes read, from `start` to `end`; every byte of it has been
    /// written (zeros, or bytes of an earlier read or input), so reads go
    /// straight into it.
    buf: Buffer,
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
            buf: Buffer::from_spare(),
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
            let unread = self.buf.0.get(self.start..self.end).unwrap_or_default();
            match self.framer.frame(unread, self.at_end)? {
                Step::Message(frame) => {
                    self.consumed = frame.len;
                    let unread = self.buf.0.get(self.start..self.end).unwrap_or_default();
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
        self.buf.0.capacity()
    }

    /// Gives the underlying reader back.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Moves the unread bytes to the front of the buffer, less than
    /// [`READ_ALIGN`] bytes in, where the next read's destination agrees
    /// with the stream's position modulo [`READ_ALIGN`]; later reads keep
    /// the agreement, as both advance by what is read. Where that would
    /// not fit, to the very front.
    fn place(&mut self) {
        let buf = &mut self.buf.0;
        let unread = self.end - self.start;
        // What has been read from the stream: the unread bytes end there.
        let read = self.framer.offset().wrapping_add(unread as u64);
        let at_front = (buf.as_ptr() as usize).wrapping_add(unread);
        let pad = read_skew(at_front, read);
        let pad = if pad + unread < buf.len() { pad } else { 0 };
        buf.copy_within(self.start..self.end, pad);
        self.start = pad;
        self.end = pad + unread;
    }

    /// Makes one read that adds to the unread bytes, which must reach
    /// `needed` eventually. The buffer grows geometrically as data arrives,
    /// never straight to `needed`: a corrupt size field costs memory only
    /// for bytes that really exist.
    fn fill(&mut self, needed: usize) -> Result<()> {
        let len = self.buf.0.len();
        if self.start == self.end || self.start + needed > len || self.end == len {
            self.place();
        }
        if self.end == self.buf.0.len() {
            let grown = (len * 2)
                .max(READ_CHUNK)
                .min(needed.max(READ_CHUNK) + READ_ALIGN);
            self.buf.0.resize(grown, 0);
            // A new allocation: its address is another.
            self.place();
        }
        loop {
            let Some(space) = self.buf.0.get_mut(self.end..) else {
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
