//! A stream read straight into the buffers of the batches: each run of
//! REGULAR messages becomes a batch that owns the bytes it was read into,
//! so that nothing is copied but by the kernel, and the bytes read past a
//! batch's last message (less than one read) once more, into the next
//! buffer.

use std::io::Read;

use fb_format::{read_skew, Framer, MessageKind, Position, Step, READ_ALIGN};

use super::{Batcher, BATCH_BYTES};
use crate::batch::Messages;

/// Bytes asked of the stream at a time (more when a message needs more).
const READ: usize = 64 << 10;

// Reads land where the buffer's address and the stream's position agree
// modulo READ_ALIGN, as `fb_format`'s stream reader places them: the
// kernel copies a read whose destination is a few bytes past its source,
// modulo the page size, several times slower, and a buffer of the
// allocator starts 16 bytes past a page (bench/NOTES.md). Each file of a
// folder starts at a page, so every read of a file used to be the slow
// kind.

/// The reading thread's view of a stream: the buffer it reads into, what
/// of it is framed, and the run of REGULAR messages the next batch gets.
pub(super) struct Chunked<R> {
    input: R,
    framer: Framer,
    /// Read into; its length is what was ever written to it.
    buf: Vec<u8>,
    /// Bytes of `buf` read from the stream.
    filled: usize,
    /// Bytes of `buf` framed: every message before is taken.
    framed: usize,
    /// Where the run of REGULAR messages starts in `buf`.
    start: usize,
    /// Where the run's first message is.
    first: Position,
    /// Messages in the run, and their payload bytes.
    count: u64,
    bytes: usize,
    eof: bool,
}

impl<R: Read> Chunked<R> {
    /// Reads `input` into `buf` first (a spare buffer of the batches
    /// before: a fresh one would be zeroed again as it grows, for each of
    /// a folder's files).
    pub(super) fn new(input: R, framer: Framer, buf: Vec<u8>) -> Self {
        Self {
            input,
            framer,
            buf,
            filled: 0,
            framed: 0,
            start: 0,
            first: Position::START,
            count: 0,
            bytes: 0,
            eof: false,
        }
    }

    /// Where the next message is.
    pub(super) fn at(&self) -> Position {
        self.framer.position()
    }

    /// The buffer read into, for the next stream once this one is over.
    pub(super) fn into_buffer(self) -> Vec<u8> {
        self.buf
    }

    /// Takes the next message of the stream into `b`: false once the
    /// stream is over or the workers are gone. The run of messages before
    /// an error is handed over before the error is.
    pub(super) fn next<B>(&mut self, b: &mut Batcher<'_, '_, '_, B>) -> fb_format::Result<bool> {
        let frame = loop {
            let rest = self.buf.get(self.framed..self.filled).unwrap_or_default();
            match self.framer.frame(rest, self.eof) {
                Ok(Step::Message(frame)) => break frame,
                Ok(Step::End) => {
                    let end = self.framer.offset();
                    self.cut(b, self.framed, end);
                    return Ok(false);
                }
                Ok(Step::NeedMore(n)) => {
                    if let Err(e) = self.fill(n) {
                        self.cut(b, self.framed, self.framer.offset());
                        return Err(e);
                    }
                }
                Err(e) => {
                    self.cut(b, self.framed, e.offset());
                    return Err(e);
                }
            }
        };
        let at = self.framed;
        self.framed += frame.len;
        if frame.kind == MessageKind::Regular {
            if self.count == 0 {
                self.start = at;
                self.first = Position::new(frame.offset, frame.index);
                b.begin_batch();
            }
            self.count += 1;
            self.bytes += frame.payload.len();
            let msg = frame.message(self.buf.get(at..).unwrap_or_default());
            let _regular = b.follow(&msg);
            let end = frame.offset + frame.len as u64;
            return Ok(self.bytes < BATCH_BYTES || self.cut(b, self.framed, end));
        }
        // What comes between REGULAR messages (a checkpoint above all)
        // closes the run; the next batch starts from the state after it.
        let alive = self.cut(b, at, frame.offset);
        // The message now starts where `cut` left the framed bytes.
        let from = self.framed - frame.len;
        let msg = frame.message(self.buf.get(from..).unwrap_or_default());
        Ok(b.follow(&msg) && alive)
    }

    /// Hands the run, whose messages end at `at` in `buf` (`end` in the
    /// stream), to a worker as a batch that owns the buffer; what follows
    /// `at` moves to the start of another buffer. False when the workers
    /// are gone.
    fn cut<B>(&mut self, b: &mut Batcher<'_, '_, '_, B>, at: usize, end: u64) -> bool {
        if self.count == 0 {
            return true;
        }
        let mut next = b.spare_buffer();
        let tail = self.buf.get(at..self.filled).unwrap_or_default();
        if next.len() < tail.len() + READ_ALIGN {
            next.resize(tail.len() + READ_ALIGN, 0);
        }
        // The stream position of `at`: `framed` is the framer's offset.
        let tail_pos = (self.framer.offset()).wrapping_sub((self.framed - at) as u64);
        let pad = read_skew(next.as_ptr() as usize, tail_pos);
        if let Some(to) = next.get_mut(pad..pad + tail.len()) {
            to.copy_from_slice(tail);
        }
        let data = std::mem::replace(&mut self.buf, next);
        let messages = Messages::owned(
            data,
            self.start..at,
            self.first,
            (self.count, self.bytes),
            self.framer.max_payload(),
        );
        self.filled = self.filled - at + pad;
        self.framed = self.framed - at + pad;
        self.start = pad;
        self.count = 0;
        self.bytes = 0;
        b.send_messages(messages, end)
    }

    /// Moves what the buffer keeps (the run from `start`, or what is not
    /// framed) less than [`READ_ALIGN`] bytes further, where the next
    /// read's destination agrees with its stream position; nothing moves
    /// once it does, as both advance by what is read. The buffer must have
    /// [`READ_ALIGN`] bytes of room past what it reads next.
    fn place(&mut self) {
        let pos = self.framer.offset() + (self.filled - self.framed) as u64;
        let by = read_skew((self.buf.as_ptr() as usize).wrapping_add(self.filled), pos);
        if by == 0 {
            return;
        }
        let keep = if self.count > 0 {
            self.start
        } else {
            self.framed
        };
        self.buf.copy_within(keep..self.filled, keep + by);
        if self.count > 0 {
            self.start += by;
        }
        self.framed += by;
        self.filled += by;
    }

    /// Reads until `n` bytes past those framed are in the buffer, or the
    /// stream ends.
    fn fill(&mut self, n: usize) -> fb_format::Result<()> {
        while self.filled - self.framed < n && !self.eof {
            if self.count == 0 && self.framed >= READ_ALIGN {
                // Nothing of what is framed goes to a batch: make room,
                // by a whole number of READ_ALIGN (the placement stays).
                let by = self.framed - self.framed % READ_ALIGN;
                self.buf
                    .copy_within(self.framed..self.filled, self.framed - by);
                self.filled -= by;
                self.framed -= by;
            }
            let want = (n - (self.filled - self.framed)).max(READ);
            if self.buf.len() < self.filled + want + READ_ALIGN {
                self.buf.resize(self.filled + want + READ_ALIGN, 0);
            }
            self.place();
            let into = self
                .buf
                .get_mut(self.filled..self.filled + want)
                .unwrap_or_default();
            match self.input.read(into) {
                Ok(0) => self.eof = true,
                Ok(got) => self.filled += got,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(source) => {
                    let offset = self.framer.offset() + (self.filled - self.framed) as u64;
                    return Err(fb_format::Error::Io { offset, source });
                }
            }
        }
        Ok(())
    }
}
