//! The batches the reading thread hands to the workers of a parallel
//! conversion: REGULAR messages read out of a stream, or the span of a log
//! in memory they lie in, with the ordered state they start from.

use fb_format::{Caches, Framer, Message, MessageKind, Position, SliceReader};

use crate::config::LoopConfig;
use crate::dedup::DedupCache;

/// A batch's REGULAR messages, consecutive in the log: the span of a log
/// in memory they lie in (borrowed, nothing copied), or bytes read out of
/// a stream straight into a buffer this batch owns (`data`; see
/// `chunked.rs`). The worker frames them again either way.
///
/// A span holds no list of its messages: writing one, 56 bytes a message,
/// cost the reading thread a tenth of a two-thread CCB conversion, each
/// line of the list fetched back from the worker's core that read it last
/// (its stores sat waiting on those fetches). Framing the span again costs
/// the worker less than reading that list.
#[derive(Default)]
pub(crate) struct Messages<'m> {
    /// A buffer read into from a stream; its bytes `own.start..own.end`
    /// are the batch's messages. Its length is what was ever written to
    /// it, kept when it is reused, so that reading into it never zeroes
    /// memory again.
    data: Vec<u8>,
    /// Where the messages are: in `data` (`bytes` empty) or borrowed.
    span: Span<'m>,
    /// The range of `data` that holds the messages, when they are owned.
    own: std::ops::Range<usize>,
    /// Payload bytes in the batch, either way.
    pub(crate) bytes: usize,
}

/// Consecutive REGULAR messages: `bytes` holds them whole (from `start`
/// in the log, when borrowed from it), the first at `first`, `count` in
/// all.
#[derive(Default)]
struct Span<'m> {
    bytes: &'m [u8],
    start: usize,
    first: Position,
    count: u64,
    max_payload: u32,
}

impl<'m> Messages<'m> {
    pub(crate) fn is_empty(&self) -> bool {
        self.span.count == 0
    }

    /// A batch that owns `data`, whose bytes `own` hold `count` REGULAR
    /// messages with `bytes` payload bytes, the first at `first`.
    pub(crate) fn owned(
        data: Vec<u8>,
        own: std::ops::Range<usize>,
        first: Position,
        (count, bytes): (u64, usize),
        max_payload: u32,
    ) -> Self {
        Self {
            data,
            span: Span {
                first,
                count,
                max_payload,
                ..Span::default()
            },
            own,
            bytes,
        }
    }

    /// The bytes the batch holds: its buffer's, or the payloads it
    /// borrows.
    pub(crate) fn held(&self) -> usize {
        self.data.capacity().max(self.bytes)
    }

    /// The buffer of a batch done with, to read into again.
    pub(crate) fn into_buffer(self) -> Vec<u8> {
        self.data
    }

    /// No messages, with `data` to read into when reused (the inverse of
    /// [`Messages::into_buffer`]).
    pub(crate) fn spare(data: Vec<u8>) -> Self {
        Self {
            data,
            ..Self::default()
        }
    }

    /// Adds `msg`, which starts at `at` in `log` and follows the span's
    /// last message there, if the span has any.
    pub(crate) fn extend(&mut self, log: &'m [u8], at: usize, msg: &Message<'_>, max_payload: u32) {
        self.bytes += msg.payload.len();
        let span = &mut self.span;
        if span.count == 0 {
            *span = Span {
                start: at,
                first: Position::new(msg.offset, msg.index),
                max_payload,
                ..Span::default()
            };
        }
        // The reading thread closes a batch at any message that is not
        // REGULAR, so the span's messages follow one another.
        debug_assert_eq!(span.start + span.bytes.len(), at);
        span.bytes = log.get(span.start..at + msg.len).unwrap_or_default();
        span.count += 1;
    }

    /// Each message in order, whichever way it is held. A span that does
    /// not frame again as it did (a log changed under the map: see
    /// fb-run's `mapped.rs`) ends where it stops doing so, and says so.
    /// The messages are read with `caches` (the prefetcher).
    pub(crate) fn each(
        &self,
        caches: Caches,
        mut f: impl FnMut(&Message<'_>),
    ) -> fb_format::Result<()> {
        let span = &self.span;
        let bytes = match span.bytes.is_empty() {
            true => self.data.get(self.own.clone()).unwrap_or_default(),
            false => span.bytes,
        };
        let framer = Framer::with_max_payload(span.max_payload).starting_at(span.first);
        let mut reader = SliceReader::with_framer(bytes, framer).with_caches(caches);
        for _ in 0..span.count {
            match reader.next_message()? {
                Some(msg) if msg.kind == MessageKind::Regular => f(&msg),
                _ => {
                    let source = std::io::Error::new(
                        std::io::ErrorKind::InvalidData,
                        format!(
                            "the log changed while it was read: the REGULAR messages from byte \
                             {} on (message {}) are no longer there; convert it again once \
                             nothing writes to it",
                            reader.offset(),
                            reader.index()
                        ),
                    );
                    return Err(fb_format::Error::Io {
                        offset: reader.offset(),
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// Empties the batch, keeping its buffer.
    pub(crate) fn clear(&mut self) {
        self.span = Span::default();
        self.own = 0..0;
        self.bytes = 0;
    }
}

/// A batch of messages for a worker, and the state it starts from.
pub(crate) struct Batch<'m> {
    pub(crate) config: LoopConfig,
    pub(crate) dedup: DedupCache,
    pub(crate) messages: Messages<'m>,
    /// Every input byte before this offset is read once this batch is
    /// done: its messages, and those the reading thread took itself.
    pub(crate) end: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use fb_format::{DEFAULT_MAX_PAYLOAD, TYPE_CHECKPOINT};
    use fb_writer::synth::{generate, GenConfig, Limit};

    /// A generated log, and the offsets of its REGULAR messages (which
    /// follow one another after its first checkpoint).
    fn log() -> (Vec<u8>, Vec<u64>) {
        let config = GenConfig {
            limit: Limit::Events(12),
            seed: 3,
            ..GenConfig::default()
        };
        let mut bytes = Vec::new();
        generate(&config, &mut bytes).unwrap();
        let regular = SliceReader::new(&bytes)
            .map(Result::unwrap)
            .filter(|m| m.kind == MessageKind::Regular)
            .map(|m| m.offset)
            .collect();
        (bytes, regular)
    }

    /// A batch of every REGULAR message of `log`, made as the reading
    /// thread makes it.
    fn span_of(log: &[u8]) -> Messages<'_> {
        let mut batch = Messages::default();
        let mut reader = SliceReader::new(log);
        loop {
            let at = reader.offset() as usize;
            match reader.next_message().unwrap() {
                Some(msg) if msg.kind == MessageKind::Regular => {
                    batch.extend(log, at, &msg, DEFAULT_MAX_PAYLOAD)
                }
                Some(_) => {}
                None => break,
            }
        }
        batch
    }

    /// (offset, index, payload) of each message `each` hands over, and
    /// whether it ended in an error.
    fn handed(batch: &Messages<'_>) -> (Vec<(u64, u64, Vec<u8>)>, bool) {
        let mut seen = Vec::new();
        let ended = batch.each(Caches::On, |m| {
            seen.push((m.offset, m.index, m.payload.to_vec()))
        });
        (seen, ended.is_err())
    }

    #[test]
    fn a_span_hands_over_its_messages_as_first_framed() {
        let (bytes, regular) = log();
        assert!(regular.len() >= 10, "{} REGULAR messages", regular.len());
        let batch = span_of(&bytes);
        assert_eq!(batch.span.count, regular.len() as u64);
        let expected: Vec<_> = SliceReader::new(&bytes)
            .map(Result::unwrap)
            .filter(|m| m.kind == MessageKind::Regular)
            .map(|m| (m.offset, m.index, m.payload.to_vec()))
            .collect();
        let payloads: usize = expected.iter().map(|m| m.2.len()).sum();
        assert_eq!(batch.bytes, payloads);
        assert_eq!(handed(&batch), (expected, false));
    }

    #[test]
    fn a_span_that_no_longer_frames_says_so() {
        // Each case changes the log under a span made from it, from the
        // fifth REGULAR message on: the four before are handed over, then
        // the error.
        type Change = fn(&mut Vec<u8>, usize);
        let cases: &[(&str, Change)] = &[
            ("a checkpoint now", |log, at| {
                log[at..at + 4].copy_from_slice(&TYPE_CHECKPOINT.to_le_bytes())
            }),
            ("a size past the limit", |log, at| {
                log[at + 4..at + 8].copy_from_slice(&u32::MAX.to_le_bytes())
            }),
            ("cut in the middle", |log, at| log.truncate(at + 12)),
        ];
        let (bytes, regular) = log();
        let fifth = regular[4] as usize;
        let whole = span_of(&bytes);
        let before = handed(&whole).0[..4].to_vec();
        for (name, change) in cases {
            let mut changed = bytes.clone();
            change(&mut changed, fifth);
            let start = regular[0] as usize;
            let end = (start + whole.span.bytes.len()).min(changed.len());
            let mut batch = span_of(&bytes);
            batch.span.bytes = &changed[start..end];
            assert_eq!(handed(&batch), (before.clone(), true), "{name}");
        }
    }
}
