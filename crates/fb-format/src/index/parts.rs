//! Indexing a log in parts on several threads, each part from a start
//! guessed near its share of the log and confirmed by the part before.

use std::sync::atomic::{AtomicUsize, Ordering};

use super::build::{build_part, ends_block, Done, Part};
use super::log_index::{ends, Index, LogStamp};
use super::source::{read_full, LogSource};
use crate::error::Result;
use crate::framer::{Framer, Position, Step};
use crate::kind::MessageKind;

/// Parts of a log smaller than this are not worth a thread.
const PART_BYTES: u64 = 32 << 20;

/// Parts of a log per thread indexing it (when it is large enough): two
/// parts on two threads ended up to 15% apart on the 10 GiB log, the
/// first thread working alone meanwhile.
const PARTS_PER_THREAD: usize = 16;

/// Bytes after a part's share of the log searched for where it may start.
const GUESS_WINDOW: usize = 64 << 20;

/// Payload bytes a search for where a part may start verifies at most,
/// over all the places it tries: bytes made to look like many messages
/// cannot make it slow. When they run out, the part is not started there
/// (the part before reads on).
const GUESS_BUDGET: usize = 64 << 20;

/// Messages that must frame, one after another, from a place where a
/// message may start, for it to be taken as one.
const CHAIN: usize = 4;

/// Bytes of a file first read to guess where a part starts; doubled while
/// the guess needs more, up to [`GUESS_WINDOW`] and the messages that run
/// on past it (at most [`GUESS_READ_MOST`] in all).
const GUESS_READ: usize = 1 << 20;

/// The most bytes of a file read at once to guess where a part starts.
const GUESS_READ_MOST: usize = 2 * GUESS_WINDOW;

/// Where a part that should start at `target` may start: the end of the
/// first message that ends a block, counted from the first place at or
/// after `target` where [`CHAIN`] messages frame in a row as
/// [`block_end_from`] asks. A guess, found without framing the log from its
/// start: bytes inside a payload may look like messages. The part before
/// confirms it (see [`parts_from`]); `None` when nothing is found. A log in
/// memory is looked at where it lies; a file is read from `target` into
/// `window`, more of it as the guess needs.
fn guess_start(log: &dyn LogSource, target: u64, window: &mut Vec<u8>) -> Option<u64> {
    guess_start_reading(log, target, window, GUESS_READ)
}

/// [`guess_start`] reading `first` bytes of a file first.
pub(super) fn guess_start_reading(
    log: &dyn LogSource,
    target: u64,
    window: &mut Vec<u8>,
    first: usize,
) -> Option<u64> {
    if let Some(bytes) = log.in_memory() {
        let rest = usize::try_from(target)
            .ok()
            .and_then(|at| bytes.get(at..))?;
        return match guess_in(rest, target, true) {
            Guess::Found(at) => Some(at),
            Guess::Nothing | Guess::More => None,
        };
    }
    let mut want = first.max(1);
    loop {
        window.resize(want, 0);
        let got = read_full(log, target, window).ok()?;
        let at_end = got < want || target + got as u64 >= log.len();
        match guess_in(window.get(..got)?, target, at_end) {
            Guess::Found(at) => return Some(at),
            Guess::Nothing => return None,
            Guess::More if !at_end && want < GUESS_READ_MOST => want *= 2,
            Guess::More => return None,
        }
    }
}

/// What [`guess_in`] found.
enum Guess {
    Found(u64),
    /// No start found, or the verification budget ran out.
    Nothing,
    /// The bytes given ended before the search did.
    More,
}

/// [`guess_start`] in `bytes`, the log's from `base`, which end with the
/// log when `at_end` says so.
fn guess_in(bytes: &[u8], base: u64, at_end: bool) -> Guess {
    let scanned = bytes.get(..GUESS_WINDOW).unwrap_or(bytes);
    let mut budget = GUESS_BUDGET;
    for (i, raw) in scanned.windows(4).enumerate() {
        let Ok(raw) = <[u8; 4]>::try_from(raw) else {
            return Guess::Nothing;
        };
        let kind = u32::from_le_bytes(raw);
        if kind != crate::kind::TYPE_REGULAR && kind != crate::kind::TYPE_CHECKPOINT {
            continue;
        }
        let from = bytes.get(i..).unwrap_or_default();
        match block_end_from(from, base + i as u64, at_end, &mut budget) {
            Ok(found) => return Guess::Found(found),
            Err(Spent::Tried) => continue,
            Err(Spent::Out) => return Guess::Nothing,
            Err(Spent::More) => return Guess::More,
        }
    }
    // The search stops GUESS_WINDOW bytes after the target, or at the end.
    match scanned.len() < GUESS_WINDOW && !at_end {
        true => Guess::More,
        false => Guess::Nothing,
    }
}

/// Why a place tried by [`guess_start`] was not taken.
enum Spent {
    /// No message starts there.
    Tried,
    /// The verification budget ran out.
    Out,
    /// The bytes given end before the messages from there do.
    More,
}

/// The end of the first message that ends a block, framing `data` (the
/// log's from `at`, to its end when `at_end` says so), if the first
/// [`CHAIN`] messages from there (fewer where the log ends cleanly) are
/// CHECKPOINT messages or REGULAR ones whose payloads verify; the payloads
/// verified are taken from `budget`.
fn block_end_from(
    mut data: &[u8],
    at: u64,
    at_end: bool,
    budget: &mut usize,
) -> std::result::Result<u64, Spent> {
    let mut framer = Framer::new().starting_at(Position::new(at, 0));
    let mut framed = 0;
    let mut first_end = None;
    loop {
        let msg = match framer.next(data, at_end) {
            Ok(Step::Message(msg)) => msg,
            // The log's end before the chain is whole: taken if it ends
            // cleanly after a block end.
            Ok(Step::End) => return first_end.ok_or(Spent::Tried),
            Ok(Step::NeedMore(_)) => return Err(Spent::More),
            Err(_) => return Err(Spent::Tried),
        };
        data = data.get(msg.len..).unwrap_or_default();
        if framed < CHAIN {
            let sound = match msg.kind {
                MessageKind::Regular => {
                    *budget = budget.checked_sub(msg.payload.len()).ok_or(Spent::Out)?;
                    msg.joined_payload().is_ok()
                }
                // A checkpoint whose payload does not verify is still a
                // message (its configuration does not apply).
                MessageKind::Checkpoint => true,
                _ => false,
            };
            if !sound {
                return Err(Spent::Tried);
            }
            framed += 1;
        }
        let end = msg.offset + msg.len as u64;
        if first_end.is_none() && ends_block(msg.offset, end) {
            first_end = Some(end);
        }
        if let (true, Some(end)) = (framed >= CHAIN, first_end) {
            return Ok(end);
        }
    }
}

/// Indexes `log` in parts on `threads` threads, each taking the next part
/// not yet taken: the first from the start, the others from the guessed
/// block ends `starts` (increasing), each to the next. A guess is taken
/// where the part before stops exactly there, as it would framing from
/// the log's start; from a wrong guess on, the rest of the log is read
/// again as one part. A speculative part's error is read again from the
/// confirmed start, so that it names the message index a single pass
/// names.
fn parts_from(
    log: &dyn LogSource,
    starts: &[u64],
    threads: usize,
    done: Done<'_>,
) -> Vec<Result<Part>> {
    let bounds: Vec<(u64, Option<u64>)> = std::iter::once(0)
        .chain(starts.iter().copied())
        .zip(starts.iter().map(|&s| Some(s)).chain([None]))
        .collect();
    let taken = AtomicUsize::new(0);
    // Each thread keeps what it built, with the part's number.
    let work = || {
        let mut built = Vec::new();
        loop {
            let k = taken.fetch_add(1, Ordering::Relaxed);
            let Some(&(start, stop)) = bounds.get(k) else {
                return built;
            };
            built.push((k, build_part(log, Position::new(start, 0), stop, done)));
        }
    };
    let mut built: Vec<(usize, Result<Part>)> = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads.min(bounds.len()))
            .map(|_| scope.spawn(work))
            .collect();
        let mut built = work();
        for h in helpers {
            built.extend(h.join().unwrap_or_else(|p| std::panic::resume_unwind(p)));
        }
        built
    });
    // Every number below `bounds.len()` was taken once.
    built.sort_unstable_by_key(|(k, _)| *k);
    let guessed = built.into_iter().map(|(_, part)| part);
    let mut out = Vec::new();
    // The confirmed start of the next part.
    let mut at = Position::START;
    for (&(start, stop), part) in bounds.iter().zip(guessed) {
        let part = if start != at.offset {
            build_part(log, at, None, done)
        } else if part.is_err() && start > 0 {
            build_part(log, at, stop, done)
        } else {
            part
        };
        let next = match &part {
            Ok(Part {
                stopped: Some(stopped),
                ..
            }) => Some(Position::new(stopped.offset, at.index + stopped.index)),
            _ => None,
        };
        out.push(part);
        match next {
            Some(next) => at = next,
            // An error, or the log's end: what later parts read is not
            // part of a single pass.
            None => break,
        }
    }
    out
}

impl Index {
    /// Indexes a whole log in memory (or mapped). Damage to the framing,
    /// or to what the index reads of each event (its table, id, kind and
    /// times), is an error, as the plain reader gives it: such a log is
    /// not indexed (repair it first). What the index does not read (the
    /// rest of an event's metadata, its payload, except a DedupInfo's) is
    /// left to the readers that read it.
    pub fn build(log: &[u8]) -> Result<Self> {
        Self::build_with_threads(log, 1)
    }

    /// [`Index::build`] on up to `threads` threads: the log is cut at
    /// block boundaries into up to 16 parts per thread, of at least 32 MiB,
    /// which the threads index in turn, each part from a start guessed near
    /// its share of the log and confirmed by the part before (see
    /// `parts_from`). A block ends where the log's layout says (see
    /// [`BLOCK_BYTES`](super::BLOCK_BYTES)), not where a part does, so the
    /// index is the same for every thread count. Of several damaged parts,
    /// the first one's error is given.
    pub fn build_with_threads(log: &[u8], threads: usize) -> Result<Self> {
        Self::build_in_parts(&log, threads, PART_BYTES, &|_, _| {})
    }

    /// [`Index::build_with_threads`] of the log `log` gives: its bytes in
    /// memory or mapped, framed where they lie, or a file read a window at
    /// a time ([`FileLog`](super::FileLog)), each thread holding about the
    /// largest message and a read's worth of the log whatever its size.
    /// The same index either way, and the same error for a damaged log; a
    /// read that fails is an error naming the byte it was at. `done(from,
    /// to)` is called when the build is through with the bytes `from..to`
    /// for the moment, every few MiB, from any of its threads: a caller
    /// that mapped the log may give those pages back. Where a guessed
    /// start of a part proves wrong, the build comes back to the bytes
    /// after it, reading them again; every byte is told at least once.
    pub fn build_from(
        log: &dyn LogSource,
        threads: usize,
        done: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<Self> {
        Self::build_in_parts(log, threads, PART_BYTES, done)
    }

    pub(super) fn build_in_parts(
        log: &dyn LogSource,
        threads: usize,
        part_bytes: u64,
        done: Done<'_>,
    ) -> Result<Self> {
        let (head_hash, tail_hash) = ends(log)?;
        let len = log.len();
        let most = usize::try_from(len / part_bytes.max(1)).unwrap_or(usize::MAX);
        // Several parts a thread, taken in turn: a thread that finishes
        // early takes the next, rather than waiting for the slowest.
        let parts = if threads <= 1 {
            1
        } else {
            threads.saturating_mul(PARTS_PER_THREAD).min(most.max(1))
        };
        let results: Vec<Result<Part>> = if parts == 1 {
            vec![build_part(log, Position::START, None, done)]
        } else {
            // Each part after the first starts where a guess says, near an
            // even share of the log, so that no thread waits for framing
            // to get there; the part before it confirms the guess.
            let mut starts: Vec<u64> = Vec::new();
            let mut window = Vec::new();
            for k in 1..parts as u64 {
                let target = (len / parts as u64 * k).max(starts.last().map_or(0, |s| s + 1));
                if let Some(start) = guess_start(log, target, &mut window) {
                    starts.push(start);
                }
            }
            parts_from(log, &starts, threads, done)
        };
        let mut index = Self {
            log_size: len,
            head_hash,
            tail_hash,
            stamp: LogStamp::default(),
            blocks: Vec::new(),
            checkpoints: Vec::new(),
            detail: true,
        };
        for part in results {
            let part = part?;
            index.blocks.extend(part.blocks);
            index.checkpoints.extend(part.checkpoints);
        }
        Ok(index)
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::reader::SliceReader;

    /// A log of a few MB: the corpus log's first checkpoint, then its
    /// other messages over and over, with the checkpoint again now and then.
    pub(in crate::index) fn repeated_log() -> Vec<u8> {
        let base = fb_tests::read("valid_joined_logs/average_reward_100_interactions.fb");
        let messages: Vec<(MessageKind, &[u8])> = SliceReader::new(&base)
            .map(|m| m.unwrap())
            .map(|m| (m.kind, &base[m.offset as usize..m.offset as usize + m.len]))
            .collect();
        let first = messages
            .iter()
            .position(|m| m.0 == MessageKind::Checkpoint)
            .unwrap();
        let mut log: Vec<u8> = messages[..=first]
            .iter()
            .flat_map(|m| m.1.to_vec())
            .collect();
        let mut round = 0;
        while log.len() < 3 << 20 {
            round += 1;
            for (kind, bytes) in &messages[first + 1..] {
                if *kind == MessageKind::Regular || round % 7 == 0 {
                    log.extend_from_slice(bytes);
                }
            }
            if round % 5 == 0 {
                log.extend_from_slice(messages[first].1);
            }
        }
        log
    }

    /// Guessed starts of parts are found where the framing from the log's
    /// start puts block ends; wrong guesses, wherever they fall, change
    /// nothing but the time taken, and a damaged part is named as a
    /// single pass names it.
    #[test]
    fn wrong_guesses_of_where_parts_start_change_nothing() {
        let log = repeated_log();
        let one = Index::build(&log).unwrap();
        let ends: Vec<u64> = one.blocks.iter().map(|b| b.end).collect();
        let mut messages = Vec::new();
        let mut rule_ends = Vec::new();
        let mut reader = SliceReader::new(&log);
        while let Some(m) = reader.next_message().unwrap() {
            let end = m.offset + m.len as u64;
            messages.push(end);
            if ends_block(m.offset, end) {
                rule_ends.push((m.offset, end));
            }
        }
        for k in 1..8 {
            let target = log.len() as u64 / 8 * k;
            // The end of the first message that starts at or after the
            // target and ends a block.
            let first = rule_ends.iter().find(|m| m.0 >= target).map(|m| m.1);
            assert_eq!(
                guess_start(&&log[..], target, &mut Vec::new()),
                first,
                "target {target}"
            );
        }
        let inside = messages[messages.len() / 2] - 3;
        let not_a_block_end = *messages
            .iter()
            .find(|&&e| e > ends[ends.len() / 3] && !ends.contains(&e))
            .unwrap();
        let cases: [(&str, Vec<u64>); 5] = [
            (
                "right",
                vec![ends[ends.len() / 3], ends[2 * ends.len() / 3]],
            ),
            ("inside a message", vec![ends[ends.len() / 4], inside]),
            ("a message end, not a block end", vec![not_a_block_end]),
            (
                "a block end skipped",
                vec![ends[2], ends[3], ends[ends.len() - 2]],
            ),
            ("the log's end", vec![ends[5], log.len() as u64]),
        ];
        // Fewer threads than parts too: a thread takes the next part
        // when it is done with one.
        for (name, starts) in cases {
            for threads in [1, 2, 3] {
                let results = parts_from(&&log[..], &starts, threads, &|_, _| {});
                let mut parts = Index {
                    blocks: Vec::new(),
                    checkpoints: Vec::new(),
                    ..one.clone()
                };
                for part in results {
                    let part = part.unwrap();
                    parts.blocks.extend(part.blocks);
                    parts.checkpoints.extend(part.checkpoints);
                }
                assert_eq!(
                    parts.to_bytes(),
                    one.to_bytes(),
                    "{name}, {threads} threads"
                );
            }
        }
        // Damage after a right guess: the error names the message index
        // a single pass names, not one counted from the guess.
        let mut damaged = log.clone();
        let at = one.blocks[one.blocks.len() * 3 / 4].start as usize;
        damaged[at..at + 8].copy_from_slice(&[0xff; 8]);
        let want = Index::build(&damaged).unwrap_err().to_string();
        let results = parts_from(&&damaged[..], &[ends[ends.len() / 2]], 2, &|_, _| {});
        let got = results.into_iter().find_map(Result::err).unwrap();
        assert_eq!(got.to_string(), want);
    }

    /// Bytes made of message headers whose payloads never verify: the
    /// search for a part's start gives up, within its budget.
    #[test]
    fn a_start_is_not_guessed_in_headers_that_lead_nowhere() {
        let mut junk = Vec::new();
        while junk.len() < 4 << 20 {
            junk.extend_from_slice(&crate::kind::TYPE_REGULAR.to_le_bytes());
            junk.extend_from_slice(&4096u32.to_le_bytes());
            junk.extend(std::iter::repeat_n(0xFF, 4096));
        }
        assert_eq!(guess_start(&&junk[..], 1000, &mut Vec::new()), None);
        let mut budget = 100;
        assert!(matches!(
            block_end_from(&junk, 0, true, &mut budget),
            Err(Spent::Out)
        ));
    }

    /// Cut into parts on threads, a log gives the index a single pass
    /// gives, byte for byte; a damaged one, the same error.
    #[test]
    fn an_index_built_in_parts_is_the_index_built_in_one_pass() {
        let log = repeated_log();
        let one = Index::build(&log).unwrap();
        assert!(one.blocks.len() > 10 && one.checkpoints.len() > 3);
        for threads in [1, 2, 3, 5, 16] {
            let told = std::sync::Mutex::new(Vec::new());
            let done = |from, to| told.lock().unwrap().push((from, to));
            let parts = Index::build_in_parts(&&log[..], threads, 256 << 10, &done).unwrap();
            assert_eq!(parts, one, "{threads} threads");
            assert_eq!(parts.to_bytes(), one.to_bytes(), "{threads} threads");
            // What is told done covers the log, each byte at most twice
            // (once by the framing ahead of the parts).
            let mut told = told.into_inner().unwrap();
            told.sort_unstable();
            let mut covered = vec![0u8; log.len()];
            for (from, to) in told {
                assert!(from <= to && to <= log.len() as u64, "{threads} threads");
                for c in &mut covered[from as usize..to as usize] {
                    *c += 1;
                }
            }
            assert!(covered.iter().all(|&c| c == 1), "{threads} threads");
        }
        // Damage in the last third: a message header that no longer frames.
        let mut damaged = log.clone();
        let at = one.blocks[one.blocks.len() * 3 / 4].start as usize;
        damaged[at..at + 8].copy_from_slice(&[0xff; 8]);
        let want = Index::build(&damaged).unwrap_err().to_string();
        for threads in [2, 3, 5] {
            let got =
                Index::build_in_parts(&&damaged[..], threads, 256 << 10, &|_, _| {}).unwrap_err();
            assert_eq!(got.to_string(), want, "{threads} threads");
        }
    }
}
