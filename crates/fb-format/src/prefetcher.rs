//! Asking the CPU early for the bytes a reader of a whole log wants next.
//!
//! A log read through a memory map lies in memory that no cache holds yet.
//! Where the next message starts is known only once this one's header is
//! read, so each header is a cache miss that waits for the one before:
//! a chain of misses, one per message. The hardware prefetchers do not see
//! it coming (messages differ in size), and a log of small messages (about
//! 1 KB for CCB, 800 bytes for the generated CB log) spends more time
//! waiting than working. [`Prefetcher`] asks for every cache line a little
//! beyond the message being read, so the lines stream in while the message
//! is worked on (bench/NOTES.md: `fb index` 1.6 times faster).
//!
//! ```text
//!   message read         requested now        not yet
//! |=======[start,end)==|~~~~~ AHEAD ~~~~~|...............
//!                      ^ lines already requested are not asked again
//! ```

use std::ops::Range;

/// How far beyond the end of the message being read lines are asked
/// for: far enough that they arrive before they are wanted (1 and 2 KiB
/// measured alike, 8 KiB slower: the lines fall out of the first-level
/// cache before they are read).
const AHEAD: usize = 2 << 10;

/// At most this far from a message's start: a large message is read for a
/// while, and lines asked for too early fall out of the cache again; its
/// own reading is a stream the hardware prefetchers follow.
const MOST: usize = 4 << 10;

/// The size of the cache line asked for at once.
const LINE: usize = 64;

/// Where the lines asked for end, for a reader of one slice.
#[derive(Debug, Clone, Default)]
pub(crate) struct Prefetcher {
    /// Offset in the slice up to which lines were asked for; `usize::MAX`
    /// for a prefetcher made off.
    asked: usize,
}

impl Prefetcher {
    /// A prefetcher that asks for nothing: as if it had asked for every
    /// line there is, each window it is asked for is empty (decided here
    /// once, not tested per message).
    pub(crate) fn off() -> Self {
        Self { asked: usize::MAX }
    }

    /// The bytes to ask for once the message at `start..end` of a slice of
    /// `len` bytes is framed: from where the last request stopped (or the
    /// message's start, after a jump) to [`AHEAD`] beyond its end, at most
    /// [`MOST`] beyond its start and never beyond the slice.
    fn window(&mut self, len: usize, start: usize, end: usize) -> Range<usize> {
        let from = self.asked.max(start);
        let to = end
            .saturating_add(AHEAD)
            .min(start.saturating_add(MOST))
            .min(len);
        if from >= to {
            return from..from;
        }
        // A request covers a line: continue from the line after the last.
        let asked = from + (to - from).div_ceil(LINE) * LINE;
        self.asked = asked;
        from..to
    }

    /// Where the lines asked for end: 0 when none was.
    pub(crate) fn asked(&self) -> usize {
        match self.asked {
            usize::MAX => 0,
            asked => asked,
        }
    }

    /// Asks for the lines after the message at `start..end` of `data`.
    #[inline]
    pub(crate) fn fetch(&mut self, data: &[u8], start: usize, end: usize) {
        lines(data, self.window(data.len(), start, end));
    }
}

/// Asks the CPU for the first bytes of `bytes` (at most 4 KiB): for a
/// reader that knows which bytes it reads next, such as a worker given a
/// batch of messages that lie in a map.
#[inline]
pub fn prefetch(bytes: &[u8]) {
    lines(bytes, 0..bytes.len().min(MOST));
}

/// Asks for the cache lines of `data[range]`.
#[inline(always)]
fn lines(data: &[u8], Range { start: mut at, end }: Range<usize>) {
    // A plain loop: `step_by` adds a checked step per line.
    while at < end {
        line(data, at);
        at += LINE;
    }
}

/// Asks for the cache line holding `data[at]`.
#[inline(always)]
fn line(data: &[u8], at: usize) {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse"))]
    {
        let ptr = data.as_ptr().wrapping_add(at).cast::<i8>();
        // SAFETY: `_mm_prefetch` is `unsafe` for two reasons, both met
        // whatever safe code does. It needs SSE, which this block is only
        // compiled with (part of every x86_64 CPU). And it takes a raw
        // pointer: but a prefetch is a hint that reads nothing the program
        // sees and never faults, whatever the address; this one points
        // into `data` besides (`window` stops at its length).
        unsafe { std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(ptr) };
    }
    #[cfg(not(all(target_arch = "x86_64", target_feature = "sse")))]
    let _ = (data, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One case: the messages framed, one after another, in a slice of
    /// `len` bytes, and the windows asked for after each.
    struct Case {
        name: &'static str,
        len: usize,
        messages: &'static [(usize, usize)],
        windows: &'static [Range<usize>],
    }

    const CASES: &[Case] = &[
        Case {
            name: "small messages: the window moves on, no line asked twice",
            len: 1 << 20,
            messages: &[(0, 8), (8, 1000), (1000, 2000)],
            windows: &[0..2056, 2112..3048, 3072..4048],
        },
        Case {
            name: "a large message: its first MOST bytes only",
            len: 1 << 20,
            messages: &[(0, 100), (100, 50_000), (50_000, 50_800)],
            windows: &[0..2148, 2176..4196, 50_000..52_848],
        },
        Case {
            name: "the slice's end bounds every window",
            len: 3000,
            messages: &[(0, 100), (100, 2900), (2900, 3000)],
            windows: &[0..2148, 2176..3000, 3008..3008],
        },
        Case {
            name: "a message inside lines already asked for asks nothing",
            len: 1 << 20,
            messages: &[(0, 10), (10, 20), (20, 30)],
            windows: &[0..2058, 2112..2112, 2112..2112],
        },
        Case {
            name: "a jump ahead (a reader moved on) starts at the message",
            len: 1 << 20,
            messages: &[(0, 100), (500_000, 500_100)],
            windows: &[0..2148, 500_000..502_148],
        },
    ];

    #[test]
    fn a_prefetcher_made_off_asks_for_nothing() {
        let mut off = Prefetcher::off();
        for case in CASES {
            for &(start, end) in case.messages {
                assert!(off.window(case.len, start, end).is_empty(), "{}", case.name);
            }
        }
        assert_eq!(off.asked(), 0);
    }

    #[test]
    fn the_window_runs_ahead_of_the_reader_and_within_the_slice() {
        for case in CASES {
            let mut ahead = Prefetcher::default();
            let got: Vec<Range<usize>> = case
                .messages
                .iter()
                .map(|&(start, end)| ahead.window(case.len, start, end))
                .collect();
            assert_eq!(got, case.windows, "{}", case.name);
            for w in &got {
                assert!(
                    w.end <= case.len || w.is_empty(),
                    "{}: past the end",
                    case.name
                );
            }
        }
    }
}
