//! A uniform random sample (`fb sample`) of a log's decisions, reading only
//! the blocks of its index that hold them.
//!
//! The sample is a set of decision ordinals (the k-th decision of the log,
//! counted as the index counts them), drawn from a generator seeded by
//! `--seed`: by Floyd's algorithm when the sample is small (its cost is
//! that of the sample, not of the log), by selection sampling (Knuth's
//! Algorithm S) when it is an eighth of the log or more (no set of ordinals
//! to keep). Either way every set of that size is equally likely, and the
//! same seed and log give the same sample. The
//! index's message tables say which messages hold the chosen ordinals;
//! only those are read: their decisions counted in order to find the
//! chosen ones' ids, then joined (each after the checkpoint in force)
//! keeping those ids.

use std::collections::HashSet;
use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;

use fb_format::index::{Index, LogSource};
use fb_format::splitmix::SplitMix64;
use fb_format::{Framer, MessageKind, SliceReader};
use fb_join::dsjson::LinesSink;
use fb_join::{JoinedEvent, Pipeline, Source};
use fb_schema::PayloadType;

use crate::error::Error;
use crate::input::{Input, OpenLog};
use crate::output::Output;
use crate::report::{Note, Observer};

/// A set of ids or ordinals hashed fast: the keys are not chosen by an
/// adversary who could flood one bucket.
type FastSet<T> = HashSet<T, foldhash::fast::FixedState>;

/// `k` of the ordinals `0..total`, in order, each set of `k` equally
/// likely.
pub fn choose(total: u64, k: u64, seed: u64) -> Vec<u64> {
    let k = k.min(total);
    let mut rng = SplitMix64::new(seed);
    if k < total / 8 {
        // Floyd: for j in total-k..total, take a uniform t in 0..=j, or j
        // itself when t is taken already.
        let mut set = FastSet::default();
        set.reserve(k as usize);
        for j in total - k..total {
            let t = rng.below(j + 1);
            if !set.insert(t) {
                set.insert(j);
            }
        }
        let mut out: Vec<u64> = set.into_iter().collect();
        out.sort_unstable();
        return out;
    }
    let mut out = Vec::with_capacity(usize::try_from(k).unwrap_or(0).min(1 << 24));
    let mut i = 0u64;
    while (out.len() as u64) < k && i < total {
        let left = (k - out.len() as u64) as f64;
        if ((total - i) as f64) * rng.unit() < left {
            out.push(i);
        }
        i += 1;
    }
    out
}

/// A message holding drawn decisions: where it is, and which of its
/// decisions (counted from 0 in the message) were drawn.
struct Wanted {
    start: u64,
    len: u64,
    ordinals: Vec<u64>,
}

/// Wanted messages handed from the table walk to the reader at a time.
const WANTED_BATCH: usize = 1024;

/// The messages that hold the `chosen` ordinals (sorted), found through
/// each block's message table without reading the log, handed to `each`
/// in batches, in log order. The number of messages.
fn wanted(
    index: &Index,
    chosen: &[u64],
    mut each: impl FnMut(Vec<Wanted>) -> Result<(), Error>,
) -> Result<u64, Error> {
    let mut out = Vec::with_capacity(WANTED_BATCH);
    let mut messages = 0u64;
    let mut first = 0u64;
    let mut next = chosen.iter().copied().peekable();
    for block in &index.blocks {
        let block_end = first + u64::from(block.decisions);
        if next.peek().is_none_or(|&o| o >= block_end) {
            first = block_end;
            continue;
        }
        // The table is read only as far as the block's last drawn decision,
        // and between two drawn decisions a message costs a table entry
        // and a compare: at 1%, a sample passes over 99 messages for each
        // one it reads.
        let mut entries = block.table_entries();
        while let Some(&o) = next.peek().filter(|&&o| o < block_end) {
            let (start, len, end) = loop {
                let Some((start, len, decisions)) = entries.next() else {
                    return Err(Error::Msg(
                        "the index's message table does not add up: run fb index".into(),
                    ));
                };
                let end = first.saturating_add(u64::from(decisions));
                if end > o {
                    break (start, len, end.min(block_end));
                }
                first = end;
            };
            if start.saturating_add(len) > block.end {
                return Err(Error::Msg(
                    "the index's message table runs past its block: run fb index".into(),
                ));
            }
            let mut ordinals = Vec::new();
            while let Some(o) = next.next_if(|&o| o < end) {
                ordinals.push(o - first);
            }
            first = end;
            out.push(Wanted {
                start,
                len,
                ordinals,
            });
            messages += 1;
            if out.len() == WANTED_BATCH {
                each(std::mem::replace(
                    &mut out,
                    Vec::with_capacity(WANTED_BATCH),
                ))?;
            }
        }
        first = block_end;
    }
    if !out.is_empty() {
        each(out)?;
    }
    Ok(messages)
}

/// Walks the message tables on a thread of its own (a tenth of a 1%
/// sample's time on a 10 GiB log), handing the wanted messages to `read`
/// as they are found; `read` gets them in log order. What `read` gives,
/// and the number of wanted messages.
fn walking<T>(
    index: &Index,
    chosen: &[u64],
    read: impl FnOnce(&mut (dyn Iterator<Item = Wanted> + Send)) -> Result<T, Error>,
) -> Result<(T, u64), Error> {
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::sync_channel::<Vec<Wanted>>(64);
        let walker = scope.spawn(move || {
            // A closed channel means the reader stopped: its error is told.
            wanted(index, chosen, |batch| {
                tx.send(batch).map_err(|_| Error::Msg(String::new()))
            })
        });
        let read = read(&mut rx.into_iter().flatten());
        let walked = walker
            .join()
            .map_err(|_| Error::Msg("the sample's table walk failed".into()))?;
        let read = read?;
        Ok((read, walked?))
    })
}

/// Appends the bytes `start..end` of `log` to `out`.
fn append(log: &OpenLog, start: u64, end: u64, out: &mut Vec<u8>) -> Result<(), Error> {
    let at = out.len();
    out.resize(
        at + usize::try_from(end.saturating_sub(start)).unwrap_or(0),
        0,
    );
    let dst = out.get_mut(at..).unwrap_or_default();
    read_into(log, start, end, dst)
}

/// Reads the bytes `start..end` of `log` into `dst` (as long).
fn read_into(log: &OpenLog, start: u64, end: u64, dst: &mut [u8]) -> Result<(), Error> {
    if start > end || end > log.len() || dst.len() as u64 != end - start {
        return Err(Error::Msg(format!(
            "the index points past the log ({start}..{end})"
        )));
    }
    fb_format::index::read_exact_at(log, start, dst)
        .map_err(|e| Error::Msg(format!("reading bytes {start}..{end}: {e}")))
}

/// Bytes of drawn messages read and filtered at a time: memory stays
/// bounded whatever the size of the sample.
const CHUNK: usize = 8 << 20;

/// Reads the wanted messages in chunks and writes each as a REGULAR
/// holding only its drawn decisions, their outcomes and its DedupInfo
/// events (which their contexts may use), each after the checkpoint in
/// force when that changes. `emit` gets every chunk of the filtered log
/// (and may keep it, leaving another buffer in its place). The number of
/// bytes read.
fn filtered(
    log: &OpenLog,
    index: &Index,
    wanted: &mut (dyn Iterator<Item = Wanted> + Send),
    mut emit: impl FnMut(&mut Vec<u8>) -> Result<(), Error>,
) -> Result<u64, Error> {
    let mut read = 0u64;
    let mut config = None;
    let mut buf = Vec::new();
    let mut out = Vec::new();
    let mut spare = Vec::new();
    // Runs of wanted messages of about CHUNK bytes.
    let mut chunk: Vec<Wanted> = Vec::new();
    let mut size = 0usize;
    let mut wanted = wanted.peekable();
    while let Some(w) = wanted.next() {
        size += w.len as usize;
        chunk.push(w);
        let more = wanted
            .peek()
            .is_some_and(|next| size + next.len as usize <= CHUNK);
        if more {
            continue;
        }
        read += filter_chunk(
            log,
            index,
            &chunk,
            &mut config,
            &mut buf,
            &mut out,
            &mut spare,
        )?;
        emit(&mut out)?;
        out.clear();
        chunk.clear();
        size = 0;
    }
    Ok(read)
}

/// Reads one run of wanted messages into `buf` and writes them, filtered,
/// to `out` (see [`filtered`]); `config` is the checkpoint last written.
/// The number of bytes read.
fn filter_chunk(
    log: &OpenLog,
    index: &Index,
    chunk: &[Wanted],
    config: &mut Option<u64>,
    buf: &mut Vec<u8>,
    out: &mut Vec<u8>,
    spare: &mut Vec<u8>,
) -> Result<u64, Error> {
    // Each message to write, checkpoints included, and where its bytes go
    // in `buf`, one after another.
    let mut parts = Vec::with_capacity(chunk.len());
    let mut at = 0usize;
    let mut place = |start: u64, end: u64| -> Result<std::ops::Range<usize>, Error> {
        // Checked before `buf` is sized: its memory stays bounded by the
        // log's size whatever the index says.
        if start > end || end > log.len() {
            return Err(Error::Msg(format!(
                "the index points past the log ({start}..{end})"
            )));
        }
        let from = at;
        at += (end - start) as usize;
        Ok(from..at)
    };
    for w in chunk {
        let force = index.checkpoints_in_force(w.start);
        let last = force.last().map(|c| c.offset);
        if last != *config {
            for c in force {
                parts.push((c.offset, place(c.offset, c.end())?, None));
            }
            *config = last;
        }
        let range = place(w.start, w.start.saturating_add(w.len))?;
        parts.push((w.start, range, Some(&w.ordinals)));
    }
    // Every byte of `..at` is read over; only growth is zeroed (zeroing
    // each chunk cost as much as a tenth of the sample's reads).
    if buf.len() < at {
        buf.resize(at, 0);
    }
    let buf = buf.get_mut(..at).unwrap_or_default();
    // From a file, the second half of the bytes is read and filtered on a
    // thread of its own: a sample's reads are many small `pread`s, mostly
    // the kernel's time (bench/NOTES.md), and each message is
    // decoded once more to filter it; two cores share both. Messages are
    // written one by one, so the halves' outputs, one after the other,
    // are the bytes one pass writes.
    let mut k = 0;
    if matches!(log, OpenLog::File(..)) && at >= 1 << 20 {
        k = parts.partition_point(|p| p.1.start < at / 2);
    }
    let halves = parts
        .get(k)
        .filter(|_| k > 0)
        .map(|p| p.1.start)
        .zip(parts.split_at_checked(k));
    match halves {
        None => read_and_filter(log, &parts, buf, 0, out)?,
        Some((split, (first, second))) => {
            let (front, back) = buf.split_at_mut(split);
            spare.clear();
            std::thread::scope(|scope| {
                let back = scope.spawn(|| read_and_filter(log, second, back, split, spare));
                let front = read_and_filter(log, first, front, 0, out);
                let back = back
                    .join()
                    .unwrap_or_else(|_| Err(Error::Msg("a reading thread failed".into())));
                front.and(back)
            })?;
            out.extend_from_slice(spare);
        }
    }
    Ok(at as u64)
}

/// A message to write: its log offset, its bytes' range in the chunk's
/// buffer, and for a REGULAR the ordinals of its drawn decisions.
type Part<'w> = (u64, std::ops::Range<usize>, Option<&'w Vec<u64>>);

/// Reads the `parts` of the log into `buf` (which starts at byte `base`
/// of the chunk's buffer), then writes them to `out`: a checkpoint as it
/// is, a REGULAR with only its drawn decisions, their outcomes and its
/// DedupInfo events.
fn read_and_filter(
    log: &OpenLog,
    parts: &[Part<'_>],
    buf: &mut [u8],
    base: usize,
    out: &mut Vec<u8>,
) -> Result<(), Error> {
    let failed = |e: fb_writer::Error| Error::Msg(format!("writing the sample: {e}"));
    for (offset, range, _) in parts {
        let dst = buf
            .get_mut(range.start - base..range.end - base)
            .ok_or_else(|| Error::Msg(format!("no room for the message at byte {offset}")))?;
        read_into(log, *offset, *offset + dst.len() as u64, dst)?;
    }
    let buf: &[u8] = buf;
    let mut ids: Vec<&str> = Vec::new();
    let mut events: Vec<(&str, bool)> = Vec::new();
    let mut writer = fb_writer::LogWriter::new(&mut *out);
    for (offset, range, ordinals) in parts {
        let offset = *offset;
        let bytes = buf
            .get(range.start - base..range.end - base)
            .unwrap_or_default();
        let msg = SliceReader::with_framer(
            bytes,
            Framer::default().starting_at(fb_format::Position::new(offset, 0)),
        )
        .next_message()
        .map_err(|e| Error::Msg(e.to_string()))?
        .ok_or_else(|| Error::Msg(format!("no message at byte {offset}: run fb index")))?;
        let Some(ordinals) = ordinals else {
            writer
                .message(msg.kind.type_id(), msg.payload)
                .map_err(failed)?;
            continue;
        };
        // One pass over the events: the drawn decisions' ids, and
        // which events are DedupInfo.
        ids.clear();
        events.clear();
        let mut ordinal = 0u64;
        let mut want = ordinals.iter().peekable();
        for view in msg.events().map_err(|e| Error::Msg(e.to_string()))? {
            let view = view.map_err(|e| Error::Msg(e.to_string()))?;
            let kind = view.payload_type();
            if fb_format::index::is_decision(kind) {
                if want.next_if(|&&o| o == ordinal).is_some() {
                    ids.push(view.id);
                }
                ordinal += 1;
            }
            events.push((view.id, kind == PayloadType::DedupInfo));
        }
        // Kept: DedupInfo, and every event of a drawn decision.
        let kept = |&(id, dedup): &(&str, bool)| dedup || ids.contains(&id);
        if events.iter().all(kept) {
            // Every event stays (a message of drawn decisions only, as
            // in logs of one decision per message): the message as it is.
            writer
                .message(msg.kind.type_id(), msg.payload)
                .map_err(failed)?;
            continue;
        }
        let (_, list) = fb_format::skim::event_list(msg.payload)
            .ok_or_else(|| Error::Msg(format!("message at byte {offset}: no event list")))?;
        for (position, event) in events.iter().enumerate() {
            if kept(event) {
                let (_, raw, stamp) = fb_format::skim::listed_event(msg.payload, list, position)
                    .map_err(|why| {
                        Error::Msg(format!("event {position} at byte {offset}: {why}"))
                    })?;
                writer
                    .push_raw_event(Some(raw), Some(stamp))
                    .map_err(failed)?;
            }
        }
        writer.end_regular().map_err(failed)?;
    }
    drop(writer);
    Ok(())
}

/// What to draw and how to write it.
#[derive(Debug, Clone)]
pub struct Request {
    /// The generator's seed: the same seed gives the same sample.
    pub seed: u64,
    /// DSJSON lines or a joined log.
    pub format: Format,
    /// How to join (DSJSON).
    pub join: fb_join::Options,
    /// Threads that join (DSJSON): the sample is the same bytes for any
    /// number.
    pub threads: usize,
}

/// What a sample is written as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// DSJSON lines, as `fb convert` writes them.
    Dsjson,
    /// A valid joined log holding the drawn decisions and their outcomes.
    Log,
}

impl Format {
    /// The names `FromStr` takes.
    pub const NAMES: &'static [&'static str] = &["dsjson", "log"];
}

impl std::str::FromStr for Format {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "dsjson" => Ok(Self::Dsjson),
            "log" => Ok(Self::Log),
            _ => Err(format!("`{s}` is not a sample format: give dsjson or log")),
        }
    }
}

/// How a sample went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Drawn {
    /// Decisions drawn.
    pub drawn: u64,
    /// Decisions in the log.
    pub total: u64,
    /// Messages read.
    pub messages: u64,
    /// Log bytes read.
    pub read: u64,
    /// The log's size.
    pub log_bytes: u64,
}

/// A log opened for sampling: read in pieces through a fresh index, or
/// whole, and its index.
pub struct Opened {
    log: OpenLog,
    index: Index,
}

impl Opened {
    /// Decisions in the log.
    pub fn decisions(&self) -> u64 {
        self.index.decisions()
    }
}

/// How many decisions `decisions` or `fraction` (a share from 0 to 1)
/// ask of a log of `total`.
pub fn how_many(decisions: Option<u64>, fraction: Option<f64>, total: u64) -> u64 {
    match (decisions, fraction) {
        (Some(n), _) => n,
        (None, Some(f)) => (f.clamp(0.0, 1.0) * total as f64).round() as u64,
        (None, None) => 0,
    }
}

/// The log (read in pieces through a fresh index, or whole) and its
/// index.
/// An index missing or stale is built on `threads` threads.
pub fn open(
    input: &Input,
    maps: crate::input::Maps,
    threads: usize,
    observer: &mut dyn Observer,
) -> Result<Opened, Error> {
    // Read at offsets (whole for standard input and pipes), and mapped
    // below only where the whole log must be read: through a fresh index a
    // sample reads scattered messages, which `pread` reads alone where a
    // map would fault in and unmap their neighbours.
    let log = OpenLog::open(input, crate::input::Maps::Never).map_err(Error::Msg)?;
    let head = log
        .head()
        .map_err(|e| Error::Msg(format!("cannot read {}: {e}", input.name())))?;
    crate::input::is_log(input, &head)?;
    let build = |log: &OpenLog| {
        Index::build_from(log, threads.max(1), &|_, _| {})
            .map_err(|e| Error::Msg(format!("{}: {e}", input.name())))
    };
    let (Input::File(path), OpenLog::File(file, _)) = (input, &log) else {
        let index = build(&log)?;
        return Ok(Opened { log, index });
    };
    let log = match crate::sidecar::load_unmapped(path, file, maps, observer)? {
        Some(index) => {
            advise_random(file);
            return Ok(Opened { log, index });
        }
        None => {
            observer.note(Note::Info {
                input: &input.name(),
                what: "no index: reading it through to count its decisions (`fb index` \
                       keeps one beside it)",
            });
            match crate::input::map(input, maps) {
                Some(mapped) => OpenLog::InMemory(crate::input::Whole::Mapped(mapped)),
                // Read in windows: memory stays flat in the log's size.
                None => log,
            }
        }
    };
    let index = build(&log)?;
    if let OpenLog::File(file, _) = &log {
        advise_random(file);
    }
    Ok(Opened { log, index })
}

/// Tells the kernel that `file` is read in scattered messages: readahead
/// would fetch 128 KiB around each one that is not cached (a log on
/// disk, or pages the system let go), a hundred times what is used.
fn advise_random(file: &File) {
    // SAFETY: posix_fadvise on a descriptor we own, with integer arguments;
    // it only advises, and a failure changes nothing.
    let _ = unsafe { libc::posix_fadvise(file.as_raw_fd(), 0, 0, libc::POSIX_FADV_RANDOM) };
}

/// Writes the `chosen` decisions of `log` to `out`.
pub fn draw(
    request: &Request,
    input: &Input,
    Opened { log, index }: Opened,
    chosen: &[u64],
    mut out: Output,
) -> Result<Drawn, Error> {
    let total = index.decisions();
    let (read, messages) = walking(&index, chosen, |wanted| match request.format {
        Format::Log => write_log(&log, &index, wanted, &mut out),
        Format::Dsjson => write_lines(&log, &index, wanted, request, &mut out),
    })?;
    // The index may be a map (`index::load_unmapped`; the log too, while
    // a stale index is rebuilt): one cut short by another process while
    // it was read gave replacement bytes. A writer that opens the index
    // meanwhile waits for the lease until this process ends.
    if crate::mapped::tripped() {
        return Err(Error::Msg(format!(
            "{} or its index was cut short while it was read (another process \
             truncated it): nothing written; run again",
            input.name()
        )));
    }
    out.finish()?;
    Ok(Drawn {
        drawn: chosen.len() as u64,
        total,
        messages,
        read,
        log_bytes: log.len(),
    })
}

/// The sample as DSJSON: the filtered log joined as `fb convert` joins.
fn write_lines(
    log: &OpenLog,
    index: &Index,
    wanted: &mut (dyn Iterator<Item = Wanted> + Send),
    request: &Request,
    out: &mut Output,
) -> Result<u64, Error> {
    let opts = request.join.clone();
    let compat = opts.compat;
    let target = out.target().to_string();
    let threads = request.threads.max(1);
    let mut pipeline = Pipeline::new(
        opts,
        |_: &JoinedEvent<'_>| true,
        LinesSink::new(&mut *out, compat),
        threads,
    );
    // Reading (mostly the kernel's work) on a thread of its own, joining
    // on this one: two chunks in flight, their buffers handed back.
    std::thread::scope(|scope| {
        let (full, chunks) = std::sync::mpsc::sync_channel::<Vec<u8>>(1);
        let (recycle, spare) = std::sync::mpsc::channel::<Vec<u8>>();
        let reader = scope.spawn(move || {
            filtered(log, index, wanted, |chunk| {
                let next = spare.try_recv().unwrap_or_default();
                full.send(std::mem::replace(chunk, next))
                    .map_err(|_| Error::Msg("the sample's writer stopped".into()))
            })
        });
        let joined = if threads == 1 {
            let mut joined = Ok(());
            for mut chunk in &chunks {
                let fed = pipeline.feed(
                    Source::Slice(&chunk),
                    fb_format::Position::START,
                    &|| false,
                    &mut |_| {},
                );
                if let Err(e) = fed {
                    joined = Err(Error::joining(&target, e));
                    break;
                }
                chunk.clear();
                let _ = recycle.send(chunk);
            }
            joined
        } else {
            // Several: one session, its workers joining the chunks before
            // while the next one is framed; each chunk goes to it whole.
            pipeline
                .session(|session| -> Result<(), fb_join::Error> {
                    for chunk in &chunks {
                        let chunk = Box::new(std::io::Cursor::new(chunk));
                        session.feed(
                            Source::Stream(chunk),
                            fb_format::Position::START,
                            &|| false,
                            &mut |_| {},
                        )?;
                    }
                    Ok(())
                })
                .and_then(|(fed, _)| fed)
                .map_err(|e| Error::joining(&target, e))
        };
        // A failed join stops the reader at its next chunk.
        drop(chunks);
        let read = reader
            .join()
            .map_err(|_| Error::Msg("the sample's reading thread failed".into()))?;
        joined?;
        read
    })
}

/// The sample as a joined log: the file magic, the log's HEADER, then the
/// filtered messages.
fn write_log(
    log: &OpenLog,
    index: &Index,
    wanted: &mut (dyn Iterator<Item = Wanted> + Send),
    out: &mut Output,
) -> Result<u64, Error> {
    let target = out.target().to_string();
    let failed = |e: fb_writer::Error| Error::writing(&target, e);
    let mut writer = fb_writer::LogWriter::new(&mut *out);
    writer.file_magic(1).map_err(failed)?;
    // The log's HEADER, when it has one, before its first REGULAR: looked
    // for in the first block.
    let mut head = Vec::new();
    if let Some(first) = index.blocks.first() {
        append(log, first.start, first.end, &mut head)?;
    }
    for msg in SliceReader::new(&head) {
        let Ok(msg) = msg else { break };
        match msg.kind {
            MessageKind::Header => {
                writer
                    .message(msg.kind.type_id(), msg.payload)
                    .map_err(failed)?;
                break;
            }
            MessageKind::Regular | MessageKind::Checkpoint => break,
            _ => {}
        }
    }
    writer.flush().map_err(failed)?;
    drop(writer);
    let read = filtered(log, index, wanted, |chunk| out.put(chunk))?;
    let mut writer = fb_writer::LogWriter::new(&mut *out);
    writer.eof().map_err(failed)?;
    writer.flush().map_err(failed)?;
    drop(writer);
    out.flush().map_err(|e| out.error(e))?;
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn choose_draws_k_distinct_sorted_ordinals_the_same_for_a_seed() {
        // (total, k)
        for (total, k) in [(0, 5), (10, 0), (10, 10), (10, 20), (1000, 37)] {
            let a = choose(total, k, 3);
            assert_eq!(a.len() as u64, k.min(total), "{total} {k}");
            assert!(a.windows(2).all(|w| w[0] < w[1]), "{total} {k}");
            assert!(a.iter().all(|&o| o < total));
            assert_eq!(a, choose(total, k, 3));
        }
        assert_ne!(choose(1000, 37, 3), choose(1000, 37, 4));
    }

    /// Positions drawn from 100,000 decisions fall evenly over the log: a
    /// chi-square test over 20 equal parts, deterministic for its seed,
    /// for each way of drawing.
    #[test]
    fn the_sample_is_uniform() {
        let total = 100_000u64;
        // (how, k, seed)
        for (how, k, seed) in [
            ("Floyd, 2%", 2_000, 42),
            ("Floyd, 10%", 10_000, 42),
            ("Algorithm S, 12.5%", 12_500, 42),
        ] {
            let chosen = choose(total, k, seed);
            assert_eq!(chosen.len() as u64, k, "{how}");
            let mut counts = [0f64; 20];
            for o in &chosen {
                counts[(o * 20 / total) as usize] += 1.0;
            }
            let expected = chosen.len() as f64 / 20.0;
            let chi2: f64 = counts
                .iter()
                .map(|c| (c - expected).powi(2) / expected)
                .sum();
            // 19 degrees of freedom: 43.82 is the 0.1% critical value.
            assert!(chi2 < 43.82, "{how}: chi-square {chi2:.1} over {counts:?}");
            // And not suspiciously even either (1st percentile: 7.63).
            assert!(
                chi2 > 7.63,
                "{how}: chi-square {chi2:.1}: too even to be random"
            );
        }
    }
}
