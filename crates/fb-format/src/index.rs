//! A sidecar index of a joined log (`LOG.fbidx`), built once, so that
//! readers can jump to the part of a log they need.
//!
//! The log is cut into **blocks** of whole messages, about 256 KiB of log
//! each, never across a CHECKPOINT (so every block has one configuration).
//! For each block the index keeps where it starts and ends, its messages,
//! decisions and events, the earliest and latest time of its events
//! (enqueued and client times alike: either may be the event's time, as
//! the loop is configured), and a Bloom filter of its decisions' ids (10 bits per id, three
//! probes: about 1% false positives, no false negatives), and another of
//! the dedup ids its DedupInfo events define. It also lists every
//! CHECKPOINT (offset and length: a reader takes its configuration from
//! the log).
//!
//! Dedup entries are filtered per block rather than listed: an id is 8
//! random bytes, and a log that defines a few actions per decision would
//! need more than 1% of its size for the list alone. The message that
//! defines an id is found by reading the blocks whose filter says so.
//!
//! Per block rather than per message: generated logs hold one decision per
//! message of under a kilobyte, where 32 bytes per message would be 4% of
//! the log. Per block the index stays well under 1% of the log.
//!
//! **Tied to its log.** The index records the log's size, an FNV-1a
//! hash of its first and last 64 KiB, and what the file system said of the
//! log when it was indexed ([`LogStamp`]: inode, modification and change
//! times). [`Index::check_log`] refuses an index whose log was appended
//! to, truncated or rewritten at its ends, and [`Index::check_stamp`] one
//! whose log was written anywhere since (its change time moves with every
//! write, and no process can set it back), replaced or copied; readers then
//! rebuild it or read the log whole, never trusting it.
//!
//! **File format** (version 6, little-endian; sizes in bytes). Two parts,
//! each with its own checksum: the *summary* (counts, offsets, times,
//! checkpoints), which is all a time window needs and is read alone for
//! one (2.5 MB for a 10 GiB log), then the *detail* (Bloom filters and
//! message tables), read by lookups and samples.
//!
//! | field | size |
//! |---|---|
//! | magic `FBIDX\r\n\x1a` | 8 |
//! | version (5) | 4 |
//! | flags (0) | 4 |
//! | log size | 8 |
//! | hash of the log's first 64 KiB | 8 |
//! | hash of the log's last 64 KiB | 8 |
//! | the log's inode, modification and change times (ns since 1970); all 0: not known | 3 × 8 |
//! | blocks, checkpoints (counts) | 2 × 4 |
//! | length of the detail part | 8 |
//! | per block: start, end (8 each), messages, decisions, events, dedup ids (4 each), earliest, latest time (µs since 1970, 8 each), the lengths of its two Bloom filters (decision ids, dedup ids) and of its message table (4 each) | 60 |
//! | per checkpoint: offset (8), length (4), flags (4: bit 0, it decodes and so applies; bit 1, its reward function is in range and so replaces the one before) | 16 |
//! | checksum of the summary: every byte before it | 8 |
//! | detail: per block, its two Bloom filters and its message table | n |
//! | checksum of the detail | 8 |
//!
//! The message table holds, per message of the block, its length and its
//! decisions as two LEB128 varints (3 bytes for a typical small message):
//! a sample reads only the messages that hold its decisions, and the table
//! is checked against the block's counts when it is used.
//!
//! The checksum runs four lanes over 8-byte little-endian words (word `i`
//! in lane `i % 4`; each lane starts at the FNV-1a offset basis xor its
//! number, and takes a word as `lane = rotl((lane ^ word) × FNV prime,
//! 31)`), folds the lanes and then the leftover bytes and the length in
//! with FNV-1a. A Bloom filter has 10 bits per key (64 at least) and
//! 3 probes per key, computed as `probes` describes. Versions 1 to 5 (1
//! and 2 in one part, 1 with FNV-1a over every byte; 3 without checkpoint
//! flags; 4 with Bloom probes from FNV-1a; 5 without the log's stamp) are
//! rebuilt on use.
//!
//! ```
//! use fb_format::index::Index;
//!
//! let log = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/average_reward_100_interactions.fb"
//! ))
//! .unwrap();
//! let index = Index::build(&log).unwrap();
//! assert_eq!(index.decisions(), 100);
//! let bytes = index.to_bytes();
//! let again = Index::from_bytes(&bytes).unwrap();
//! assert_eq!(again, index);
//! again.check_log(&log).unwrap();
//! ```

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use fb_schema::{PayloadType, TimeStamp};

use crate::decode::{EventView, Payload, PayloadDecoder};
use crate::error::{Error, Result};
use crate::framer::{Framer, Message};
use crate::kind::MessageKind;
use crate::reader::SliceReader;

/// The bytes an index read from a file keeps, shared by its blocks: the
/// file read into memory, or a map of it that its owner keeps unchanged
/// for as long as the index lives.
pub type Shared = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// No bytes, for blocks that hold none (yet).
fn empty() -> Shared {
    Arc::new(Vec::<u8>::new())
}

/// The first bytes of every index file.
pub const MAGIC: [u8; 8] = *b"FBIDX\r\n\x1a";
/// The format version this code writes and reads.
pub const VERSION: u32 = 6;
/// A block ends after each message that reaches a multiple of this many
/// bytes of the log, and before each checkpoint.
pub const BLOCK_BYTES: u64 = 256 << 10;
/// Bytes at each end of the log that the index hashes.
pub const HASHED: usize = 64 << 10;
/// Bloom filter bits per decision id.
const BLOOM_BITS: usize = 10;
/// Probes per id.
const PROBES: u64 = 3;

/// Fixed part of the file before the blocks.
const HEADER_LEN: usize = 80;
/// Bytes of an index file that say how long its summary is.
pub const SUMMARY_HEAD: usize = HEADER_LEN;
/// A block's record in the summary.
const BLOCK_LEN: usize = 60;
/// A checkpoint's record in the summary.
const CHECKPOINT_LEN: usize = 16;

/// One block of whole messages.
#[derive(Clone)]
pub struct Block {
    /// Log offset of its first message.
    pub start: u64,
    /// Log offset after its last message.
    pub end: u64,
    /// Messages in it.
    pub messages: u32,
    /// Decisions (interactions) in it.
    pub decisions: u32,
    /// Events in it (decisions, outcomes, dedup, episodes).
    pub events: u32,
    /// Earliest enqueued time of its events, µs since 1970 (`i64::MAX`
    /// when it has none).
    pub earliest: i64,
    /// Latest enqueued time of its events (`i64::MIN` when none).
    pub latest: i64,
    /// Dedup ids its DedupInfo events define.
    pub dedup: u32,
    /// The two Bloom filters (decision ids, dedup ids) and the message
    /// table (per message, its length and its decisions, as varints), at
    /// `parts` in `data`: a buffer of their own for a block being built,
    /// the whole file, shared by every block, for an index read from one
    /// (60 MB for a 10 GiB log, read without a copy per block).
    data: Shared,
    parts: [(usize, usize); 3],
}

/// What [`regular`] adds to a block: events, earliest, latest, decisions
/// and dedup entries.
type Counts = (u32, i64, i64, u32, u32);

impl Block {
    fn clone_counts(&self) -> Counts {
        (
            self.events,
            self.earliest,
            self.latest,
            self.decisions,
            self.dedup,
        )
    }

    fn set_counts(&mut self, counts: Counts) {
        (
            self.events,
            self.earliest,
            self.latest,
            self.decisions,
            self.dedup,
        ) = counts;
    }

    fn new(start: u64) -> Self {
        Self {
            start,
            end: start,
            messages: 0,
            decisions: 0,
            events: 0,
            earliest: i64::MAX,
            latest: i64::MIN,
            dedup: 0,
            data: empty(),
            parts: [(0, 0); 3],
        }
    }

    fn part(&self, k: usize) -> &[u8] {
        let Some(&(from, to)) = self.parts.get(k) else {
            return &[];
        };
        (*self.data).as_ref().get(from..to).unwrap_or_default()
    }

    fn bloom(&self) -> &[u8] {
        self.part(0)
    }

    fn dedup_bloom(&self) -> &[u8] {
        self.part(1)
    }

    fn table(&self) -> &[u8] {
        self.part(2)
    }

    /// The fields compared and shown: everything but where the bytes live.
    #[allow(clippy::type_complexity)]
    fn key(&self) -> ((u64, u64, u32, u32, u32, i64, i64, u32), [&[u8]; 3]) {
        (
            (
                self.start,
                self.end,
                self.messages,
                self.decisions,
                self.events,
                self.earliest,
                self.latest,
                self.dedup,
            ),
            [self.bloom(), self.dedup_bloom(), self.table()],
        )
    }

    /// Each message of the block: its log offset, length and decisions.
    /// Empty when the table does not add up to the block's range and
    /// message count: only a bug, or a file made to pass the checksum,
    /// could make it so, and callers then say the index is damaged.
    pub fn messages(&self) -> Vec<(u64, u64, u32)> {
        // Two varints per message: the count cannot ask for more.
        let mut out = Vec::with_capacity((self.messages as usize).min(self.table().len() / 2));
        let mut table = self.table_entries();
        out.extend(&mut table);
        if !table.rest.is_empty() || table.at != self.end || out.len() != self.messages as usize {
            return Vec::new();
        }
        out
    }

    /// The entries of the message table, in order, read as they are asked
    /// for (a reader that needs the first few stops there). Unchecked:
    /// where an entry points is for the caller to bound, as
    /// [`Block::messages`] does.
    pub fn table_entries(&self) -> TableEntries<'_> {
        TableEntries {
            rest: self.table(),
            at: self.start,
        }
    }

    /// Whether a decision with this id may be in the block (no false
    /// negatives; about 1% false positives).
    pub fn may_hold(&self, id: &str) -> bool {
        tests(self.bloom(), id.as_bytes())
    }

    /// Whether a DedupInfo of the block may define this action id.
    pub fn may_define(&self, id: u64) -> bool {
        tests(self.dedup_bloom(), &id.to_le_bytes())
    }

    /// Whether some event of the block may lie in `[since, until)` (µs).
    pub fn overlaps(&self, since: i64, until: i64) -> bool {
        self.events > 0 && self.earliest < until && self.latest >= since
    }
}

/// The entries of a block's message table: each message's log offset,
/// length and decisions. See [`Block::table_entries`].
#[derive(Debug, Clone)]
pub struct TableEntries<'a> {
    rest: &'a [u8],
    at: u64,
}

impl Iterator for TableEntries<'_> {
    type Item = (u64, u64, u32);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        let (len, decisions) = match short_pair(self.rest) {
            Some((len, decisions, used)) => {
                self.rest = self.rest.get(used..).unwrap_or_default();
                (len, decisions)
            }
            None => {
                let mut rest = self.rest;
                let len = take_varint(&mut rest)?;
                let decisions = take_varint(&mut rest)?;
                self.rest = rest;
                (len, decisions)
            }
        };
        let at = self.at;
        self.at = at.saturating_add(len);
        Some((at, len, u32::try_from(decisions).unwrap_or(u32::MAX)))
    }
}

impl PartialEq for Block {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Block {}

impl std::fmt::Debug for Block {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (counts, [bloom, dedup_bloom, table]) = self.key();
        f.debug_struct("Block")
            .field(
                "start, end, messages, decisions, events, earliest, latest, dedup",
                &counts,
            )
            .field("bloom bytes", &bloom.len())
            .field("dedup bloom bytes", &dedup_bloom.len())
            .field("table", &table)
            .finish()
    }
}

/// The bits a key sets (format 5): double hashing, `h1 + i·h2` for `i` in
/// 0..3, each mapped onto the filter's bits by `(h × bits) >> 64`. The
/// key is read as 8-byte little-endian words (the last zero-padded), each
/// taken in as `h = rotl((h ^ word) × K, 29)` from a start that holds the
/// key's length; `h1` and `h2` are two finalizations of `h`. Version 4
/// hashed every byte twice with FNV-1a: a fifth of `fb index`'s time.
fn probes(key: &[u8], bits: u64) -> impl Iterator<Item = u64> {
    let (h1, h2) = key_hashes(key);
    (0..PROBES).map(move |i| {
        let h = h1.wrapping_add(i.wrapping_mul(h2));
        ((u128::from(h) * u128::from(bits)) >> 64) as u64
    })
}

const KEY_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

fn key_hashes(key: &[u8]) -> (u64, u64) {
    let step = |h: u64, word: u64| (h ^ word).wrapping_mul(KEY_MUL).rotate_left(29);
    let mut h = FNV_OFFSET ^ (key.len() as u64).wrapping_mul(KEY_MUL);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        h = step(h, u64::from_le_bytes(word.try_into().unwrap_or_default()));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        for (to, from) in last.iter_mut().zip(rest) {
            *to = *from;
        }
        h = step(h, u64::from_le_bytes(last));
    }
    (finalize(h), finalize(h ^ KEY_MUL) | 1)
}

/// MurmurHash3's 64-bit finalizer: every input bit reaches every output
/// bit.
fn finalize(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Whether every bit `key` sets is set in `bloom`.
fn tests(bloom: &[u8], key: &[u8]) -> bool {
    let bits = bloom.len() as u64 * 8;
    bits > 0
        && probes(key, bits).all(|bit| {
            bloom
                .get((bit / 8) as usize)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0)
        })
}

/// A filter of `keys`, 10 bits each (64 at least).
fn filter<'k>(keys: impl ExactSizeIterator<Item = &'k [u8]>) -> Vec<u8> {
    let bits = (keys.len() * BLOOM_BITS).next_multiple_of(8).max(64);
    let mut bloom = vec![0u8; bits / 8];
    for key in keys {
        for bit in probes(key, bits as u64) {
            if let Some(byte) = bloom.get_mut((bit / 8) as usize) {
                *byte |= 1 << (bit % 8);
            }
        }
    }
    bloom
}

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits: enough to tell a stale or damaged index, not a
/// defence against forgery.
fn fnv(bytes: &[u8], seed: u64) -> u64 {
    bytes
        .iter()
        .fold(seed, |h, b| (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME))
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The checksum of an index file's body (described in the module docs):
/// FNV-1a's step over words in four independent lanes, so that a 60 MB
/// index is checked in milliseconds.
fn checksum(bytes: &[u8]) -> u64 {
    let mut lanes = [0u64, 1, 2, 3].map(|n| FNV_OFFSET ^ n);
    let mut quads = bytes.chunks_exact(32);
    for quad in &mut quads {
        for (lane, word) in lanes.iter_mut().zip(quad.chunks_exact(8)) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            *lane = ((*lane ^ word).wrapping_mul(FNV_PRIME)).rotate_left(31);
        }
    }
    let mut h = FNV_OFFSET;
    for lane in lanes {
        h = fnv(&lane.to_le_bytes(), h);
    }
    h = fnv(quads.remainder(), h);
    fnv(&(bytes.len() as u64).to_le_bytes(), h)
}

/// The format version of an index file, if it starts as one: a version
/// other than [`VERSION`] is for rebuilding, not an error.
pub fn file_version(bytes: &[u8]) -> Option<u32> {
    if bytes.get(..8) != Some(&MAGIC[..]) {
        return None;
    }
    let v = bytes.get(8..12)?;
    Some(u32::from_le_bytes(v.try_into().ok()?))
}

/// Whether an event of this payload type is a decision (an interaction or
/// a multistep step): what the index counts, and what a sample draws.
pub fn is_decision(kind: PayloadType) -> bool {
    !matches!(
        kind,
        PayloadType::Outcome | PayloadType::Episode | PayloadType::DedupInfo
    )
}

/// `log[start..end]`, `None` when the range is not inside it (an index
/// that does not belong to the log).
pub fn span(log: &[u8], start: u64, end: u64) -> Option<&[u8]> {
    let (start, end) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    log.get(start..end)
}

/// A CHECKPOINT of the log.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Checkpoint {
    /// Log offset of the message.
    pub offset: u64,
    /// Its length (frame included).
    pub len: u32,
    /// It decodes, and so sets the configuration (a joiner leaves the
    /// configuration as it was after one that does not).
    pub applies: bool,
    /// Its reward function is in range (one out of range leaves the
    /// reward function as it was, and sets the other values).
    pub sets_reward_function: bool,
}

impl Checkpoint {
    /// The log offset after it.
    pub fn end(&self) -> u64 {
        self.offset + u64::from(self.len)
    }
}

/// What the file system says of a log file, as far as it tells whether
/// the file was written since: a write anywhere in it moves its change
/// time (which only the kernel sets), a replacement or a copy has another
/// inode. All zero: not known (an index built from bytes alone), which no
/// file matches.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogStamp {
    /// The file's inode number.
    pub inode: u64,
    /// Its last modification, in nanoseconds since 1970.
    pub modified_ns: i64,
    /// Its last change (data or metadata), in nanoseconds since 1970.
    pub changed_ns: i64,
}

impl LogStamp {
    /// Whether the stamp says anything.
    pub fn is_known(&self) -> bool {
        *self != Self::default()
    }
}

/// The index of one log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Index {
    /// The log's size when indexed.
    pub log_size: u64,
    head_hash: u64,
    tail_hash: u64,
    /// What the file system said of the log when it was indexed (set by
    /// whoever reads the log from a file, before building).
    pub stamp: LogStamp,
    /// Its blocks, in log order.
    pub blocks: Vec<Block>,
    /// Its CHECKPOINT messages, in log order.
    pub checkpoints: Vec<Checkpoint>,
    /// Whether the blocks hold their Bloom filters and message tables (not
    /// when read with [`Index::from_summary`]).
    detail: bool,
}

/// The hashes of the two ends of a log.
fn ends(log: &[u8]) -> (u64, u64) {
    let head = log.get(..HASHED.min(log.len())).unwrap_or_default();
    let tail = log
        .get(log.len().saturating_sub(HASHED)..)
        .unwrap_or_default();
    (fnv(head, FNV_OFFSET), fnv(tail, FNV_OFFSET))
}

/// Microseconds since 1970 of a timestamp (subseconds as the writers
/// store them: tenths of a microsecond).
pub fn micros(t: &TimeStamp) -> i64 {
    from_day(day_seconds(t), t)
}

/// Seconds since 1970 of the start of `t`'s day.
fn day_seconds(t: &TimeStamp) -> i64 {
    let days = fb_schema::calendar::days_from_civil(
        i64::from(t.year()),
        u32::from(t.month()),
        u32::from(t.day()),
    );
    days * 86_400
}

/// [`micros`] of `t`, given the seconds of the start of its day.
fn from_day(day: i64, t: &TimeStamp) -> i64 {
    (day + i64::from(t.hour()) * 3_600 + i64::from(t.minute()) * 60 + i64::from(t.second()))
        .saturating_mul(1_000_000)
        .saturating_add(i64::from(t.subsecond() / 10))
}

/// [`micros`], remembering the last day met: the calendar was 8% of what
/// `fb index` computed. A day, not a minute: an outcome comes minutes
/// after its decision, often in the same message, and the two alternate.
#[derive(Default)]
struct Micros {
    /// Year, month and day of the last timestamp, and the seconds of
    /// that day's start.
    last: Option<(u32, i64)>,
}

impl Micros {
    fn of(&mut self, t: &TimeStamp) -> i64 {
        let key = u32::from(t.year()) << 16 | u32::from(t.month()) << 8 | u32::from(t.day());
        let day = match self.last {
            Some((k, day)) if k == key => day,
            _ => {
                let day = day_seconds(t);
                self.last = Some((key, day));
                day
            }
        };
        from_day(day, t)
    }
}

/// Parts of a log smaller than this are not worth a thread.
const PART_BYTES: u64 = 32 << 20;

/// Parts of a log per thread indexing it (when it is large enough): two
/// parts on two threads ended up to 15% apart on the 10 GiB log, the
/// first thread working alone meanwhile.
const PARTS_PER_THREAD: usize = 16;

/// Whether a block ends after the message at `offset..end`: it reaches a
/// multiple of [`BLOCK_BYTES`]. Decided by the message alone, so a part of
/// the log indexed on its own ends its blocks where the whole log does.
fn ends_block(offset: u64, end: u64) -> bool {
    end / BLOCK_BYTES > offset / BLOCK_BYTES
}

/// The blocks and checkpoints of a part of a log.
struct Part {
    blocks: Vec<Block>,
    checkpoints: Vec<Checkpoint>,
    /// Where it stopped, when at its stop: the offset, and the messages
    /// read from its start.
    stopped: Option<(u64, u64)>,
}

/// Indexes `log` from message `start.1` at byte `start.0`, to the end or
/// to the first block end at or after `stop`.
/// Bytes of a part indexed between two calls of its `done`.
const DONE_EVERY: u64 = 8 << 20;

/// What a build tells as it goes: bytes `from..to` of the log are indexed
/// and referenced no more.
type Done<'d> = &'d (dyn Fn(u64, u64) + Sync);

fn build_part(log: &[u8], start: (u64, u64), stop: Option<u64>, done: Done<'_>) -> Result<Part> {
    let mut part = Part {
        blocks: Vec::new(),
        checkpoints: Vec::new(),
        stopped: None,
    };
    let from = usize::try_from(start.0).unwrap_or(usize::MAX);
    let data = log.get(from..).unwrap_or_default();
    let mut reader = SliceReader::with_framer(data, Framer::new().starting_at(start.0, start.1));
    let mut decoder = PayloadDecoder::default();
    let mut block = Block::new(start.0);
    let mut ids = Ids::default();
    // Bytes before this are told done. A closed block keeps nothing of
    // the log (its ids are hashed into its filters).
    let mut told = start.0;
    while let Some(msg) = reader.next_message()? {
        let end = msg.offset + msg.len as u64;
        if msg.kind == MessageKind::Checkpoint {
            // A checkpoint starts a block: the configuration it sets
            // holds for the whole block.
            close(&mut part.blocks, &mut block, &mut ids, msg.offset);
            let info = msg.checkpoint().ok();
            part.checkpoints.push(Checkpoint {
                offset: msg.offset,
                len: u32::try_from(msg.len).unwrap_or(u32::MAX),
                applies: info.is_some(),
                sets_reward_function: info.is_some_and(|i| {
                    crate::RewardFunction::from_wire(i.reward_function_type()).is_some()
                }),
            });
        }
        block.messages += 1;
        block.end = end;
        let before = block.decisions;
        if msg.kind == MessageKind::Regular {
            regular(&msg, &mut block, &mut ids, &mut decoder)?;
        }
        put_varint(&mut ids.table, msg.len as u64);
        put_varint(&mut ids.table, u64::from(block.decisions - before));
        if ends_block(msg.offset, end) {
            close(&mut part.blocks, &mut block, &mut ids, end);
            if end - told >= DONE_EVERY {
                done(told, end);
                told = end;
            }
            if stop.is_some_and(|stop| end >= stop) {
                done(told, end);
                part.stopped = Some((end, reader.index() - start.1));
                return Ok(part);
            }
        }
    }
    // Not stopped: the last part (the part after would start at the stop,
    // found by the same rule), which ends with the log, trailing bytes that
    // frame no message included, as a single pass ends it.
    close(&mut part.blocks, &mut block, &mut ids, log.len() as u64);
    done(told, log.len() as u64);
    Ok(part)
}

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

/// Where a part that should start at `target` may start: the end of the
/// first message that ends a block, counted from the first place at or
/// after `target` where [`CHAIN`] messages frame in a row as
/// [`block_end_from`] asks. A guess, found without framing the log from its
/// start: bytes inside a payload may look like messages. The part before
/// confirms it (see [`parts_from`]); `None` when nothing is found.
fn guess_start(log: &[u8], target: u64) -> Option<u64> {
    let from = usize::try_from(target).ok()?;
    let window = log.get(from..)?;
    let window = window.get(..GUESS_WINDOW).unwrap_or(window);
    let mut budget = GUESS_BUDGET;
    for (i, raw) in window.windows(4).enumerate() {
        let kind = u32::from_le_bytes(raw.try_into().ok()?);
        if kind != crate::kind::TYPE_REGULAR && kind != crate::kind::TYPE_CHECKPOINT {
            continue;
        }
        match block_end_from(log, target + i as u64, &mut budget) {
            Ok(found) => return Some(found),
            Err(Spent::Tried) => continue,
            Err(Spent::Out) => return None,
        }
    }
    None
}

/// Why a place tried by [`guess_start`] was not taken.
enum Spent {
    /// No message starts there.
    Tried,
    /// The verification budget ran out.
    Out,
}

/// The end of the first message that ends a block, framing from `at`, if
/// the first [`CHAIN`] messages from there (fewer where the log ends
/// cleanly) are CHECKPOINT messages or REGULAR ones whose payloads verify;
/// the payloads verified are taken from `budget`.
fn block_end_from(log: &[u8], at: u64, budget: &mut usize) -> std::result::Result<u64, Spent> {
    let data = usize::try_from(at)
        .ok()
        .and_then(|at| log.get(at..))
        .ok_or(Spent::Tried)?;
    let mut reader = SliceReader::with_framer(data, Framer::new().starting_at(at, 0));
    let mut framed = 0;
    let mut first_end = None;
    loop {
        let msg = match reader.next_message() {
            Ok(Some(msg)) => msg,
            // The log's end before the chain is whole: taken if it ends
            // cleanly after a block end.
            Ok(None) => return first_end.ok_or(Spent::Tried),
            Err(_) => return Err(Spent::Tried),
        };
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
fn parts_from(log: &[u8], starts: &[u64], threads: usize, done: Done<'_>) -> Vec<Result<Part>> {
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
            built.push((k, build_part(log, (start, 0), stop, done)));
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
    // The confirmed start of the next part: offset and message index.
    let mut at = (0u64, 0u64);
    for (&(start, stop), part) in bounds.iter().zip(guessed) {
        let part = if start != at.0 {
            build_part(log, at, None, done)
        } else if part.is_err() && start > 0 {
            build_part(log, at, stop, done)
        } else {
            part
        };
        let next = match &part {
            Ok(Part {
                stopped: Some((end, read)),
                ..
            }) => Some((*end, at.1 + read)),
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

/// Adds the events of a REGULAR message to `block` and its keys.
fn regular<'a>(
    msg: &Message<'a>,
    block: &mut Block,
    ids: &mut Ids<'a>,
    decoder: &mut PayloadDecoder,
) -> Result<()> {
    let kept = (block.clone_counts(), ids.decisions.len(), ids.dedup.len());
    if let Ok(true) = skimmed(msg, block, ids, decoder) {
        return Ok(());
    }
    // A message the skim does not take, or one of whose DedupInfos fails:
    // what it added is dropped, and the verifiers read the message, in
    // order, and say what is wrong first.
    block.set_counts(kept.0);
    ids.decisions.truncate(kept.1);
    ids.dedup.truncate(kept.2);
    verified(msg, block, ids, decoder)
}

/// [`regular`] through the verifiers. Out of line: the event iterator is
/// inlined where it is called, and here it would weigh on the skim's loop.
#[cold]
#[inline(never)]
fn verified<'a>(
    msg: &Message<'a>,
    block: &mut Block,
    ids: &mut Ids<'a>,
    decoder: &mut PayloadDecoder,
) -> Result<()> {
    for view in msg.events()? {
        let view = view?;
        add_event(
            block,
            ids,
            decoder,
            view.payload_type(),
            view.id.as_bytes(),
            [Some(view.enqueued), view.client_time()],
            || Ok(view),
        )?;
    }
    Ok(())
}

/// [`regular`] reading of each event only what the index keeps
/// ([`fb_schema::SkimmedEvents`]): false where that walk does not take
/// the message.
fn skimmed<'a>(
    msg: &Message<'a>,
    block: &mut Block,
    ids: &mut Ids<'a>,
    decoder: &mut PayloadDecoder,
) -> Result<bool> {
    for (position, event) in fb_schema::SkimmedEvents::new(msg.payload).enumerate() {
        let Some(e) = event else {
            return Ok(false);
        };
        let client = e.client_time.filter(|t| !t.is_zero());
        add_event(
            block,
            ids,
            decoder,
            e.payload_type,
            e.id,
            [Some(e.enqueued), client],
            || EventView::from_parts(e.event, e.enqueued, msg.offset, msg.index, position),
        )?;
    }
    Ok(true)
}

/// Adds one event to `block` and its keys: its kind, id, and times
/// (enqueued, and client time when present); `view` gives the whole event
/// when its payload must be read (dedup entries).
fn add_event<'a>(
    block: &mut Block,
    ids: &mut Ids<'a>,
    decoder: &mut PayloadDecoder,
    kind: PayloadType,
    id: &'a [u8],
    times: [Option<TimeStamp>; 2],
    view: impl FnOnce() -> Result<EventView<'a>>,
) -> Result<()> {
    block.events += 1;
    // An event's time is its enqueued time, or its client time when the
    // loop says so: the range covers both. Each kind of time has its own
    // memo: a client's clock may be minutes off the joiner's.
    for (t, memo) in times.iter().zip(ids.micros.iter_mut()) {
        let Some(t) = t else { continue };
        let t = memo.of(t);
        block.earliest = block.earliest.min(t);
        block.latest = block.latest.max(t);
    }
    match kind {
        PayloadType::DedupInfo => {
            if let Payload::Dedup(info) = decoder.payload(&view()?)? {
                for id in info.ids().into_iter().flatten() {
                    ids.dedup.push(id.to_le_bytes());
                    block.dedup += 1;
                }
            }
        }
        kind if is_decision(kind) => {
            block.decisions += 1;
            ids.decisions.push(id);
        }
        _ => {}
    }
    Ok(())
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
    /// [`BLOCK_BYTES`]), not where a part does, so the index is the same
    /// for every thread count. Of several damaged parts, the first one's
    /// error is given.
    pub fn build_with_threads(log: &[u8], threads: usize) -> Result<Self> {
        Self::build_in_parts(log, threads, PART_BYTES, &|_, _| {})
    }

    /// [`Index::build_with_threads`], calling `done(from, to)` when the
    /// build is through with the bytes `from..to` of the log for the
    /// moment, every few MiB, from any of its threads: a caller that mapped
    /// the log may give those pages back, and keep memory flat in the log's
    /// size. Where a guessed start of a part proves wrong, the build comes
    /// back to the bytes after it, reading them from the file again; every
    /// byte is told at least once.
    pub fn build_releasing(
        log: &[u8],
        threads: usize,
        done: &(dyn Fn(u64, u64) + Sync),
    ) -> Result<Self> {
        Self::build_in_parts(log, threads, PART_BYTES, done)
    }

    fn build_in_parts(log: &[u8], threads: usize, part_bytes: u64, done: Done<'_>) -> Result<Self> {
        let (head_hash, tail_hash) = ends(log);
        let len = log.len() as u64;
        let most = usize::try_from(len / part_bytes.max(1)).unwrap_or(usize::MAX);
        // Several parts a thread, taken in turn: a thread that finishes
        // early takes the next, rather than waiting for the slowest.
        let parts = if threads <= 1 {
            1
        } else {
            threads.saturating_mul(PARTS_PER_THREAD).min(most.max(1))
        };
        let results: Vec<Result<Part>> = if parts == 1 {
            vec![build_part(log, (0, 0), None, done)]
        } else {
            // Each part after the first starts where a guess says, near an
            // even share of the log, so that no thread waits for framing
            // to get there; the part before it confirms the guess.
            let mut starts: Vec<u64> = Vec::new();
            for k in 1..parts as u64 {
                let target = (len / parts as u64 * k).max(starts.last().map_or(0, |s| s + 1));
                if let Some(start) = guess_start(log, target) {
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

    /// Decisions in the log.
    pub fn decisions(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(b.decisions)).sum()
    }

    /// The blocks that may hold a decision with this id.
    pub fn blocks_for_id<'s>(&'s self, id: &'s str) -> impl Iterator<Item = &'s Block> + 's {
        self.blocks.iter().filter(move |b| b.may_hold(id))
    }

    /// The checkpoints to apply, in order, to have the configuration in
    /// force at `offset`: the last one before it that decodes and, when
    /// its reward function is out of range (which keeps the reward
    /// function from before), first the last earlier one whose reward
    /// function is in range. Empty before the first checkpoint.
    pub fn checkpoints_in_force(&self, offset: u64) -> Vec<Checkpoint> {
        let at = self.checkpoints.partition_point(|c| c.offset < offset);
        let mut before = self.checkpoints.get(..at).unwrap_or_default().iter().rev();
        let Some(last) = before.find(|c| c.applies).copied() else {
            return Vec::new();
        };
        if last.sets_reward_function {
            return vec![last];
        }
        match before.find(|c| c.applies && c.sets_reward_function) {
            Some(reward) => vec![*reward, last],
            None => vec![last],
        }
    }

    /// The blocks with events in `[since, until)` (µs since 1970).
    pub fn blocks_between(&self, since: i64, until: i64) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(move |b| b.overlaps(since, until))
    }

    /// Refuses the index unless `log` is the log it was built from, as far
    /// as its size and the hashes of its two ends tell.
    pub fn check_log(&self, log: &[u8]) -> std::result::Result<(), String> {
        let head = log.get(..HASHED.min(log.len())).unwrap_or_default();
        let tail = log
            .get(log.len().saturating_sub(HASHED)..)
            .unwrap_or_default();
        self.check_ends(log.len() as u64, head, tail)
    }

    /// [`Index::check_log`] for a log that is not in memory: its size,
    /// its first [`HASHED`] bytes and its last (all of it when smaller).
    pub fn check_ends(
        &self,
        size: u64,
        head: &[u8],
        tail: &[u8],
    ) -> std::result::Result<(), String> {
        if size != self.log_size {
            return Err(format!(
                "the log has {size} bytes, the index was built for {}: it was appended to, \
                 truncated or replaced",
                self.log_size
            ));
        }
        if (fnv(head, FNV_OFFSET), fnv(tail, FNV_OFFSET)) != (self.head_hash, self.tail_hash) {
            return Err("the log's bytes differ from those indexed: it was rewritten".into());
        }
        Ok(())
    }

    /// Refuses the index unless the log file, as the file system now
    /// describes it (`now`), is the one indexed and was not written since.
    pub fn check_stamp(&self, now: &LogStamp) -> std::result::Result<(), String> {
        if !self.stamp.is_known() {
            return Err("it does not record its log's file-system stamp".into());
        }
        if now.inode != self.stamp.inode {
            return Err("the log is another file than the one indexed (replaced or copied)".into());
        }
        if (now.modified_ns, now.changed_ns) != (self.stamp.modified_ns, self.stamp.changed_ns) {
            return Err("the log was written since it was indexed".into());
        }
        Ok(())
    }

    /// The index as its file holds it.
    pub fn to_bytes(&self) -> Vec<u8> {
        let detail: usize = self
            .blocks
            .iter()
            .map(|b| b.parts.iter().map(|(from, to)| to - from).sum::<usize>())
            .sum();
        let mut out = Vec::with_capacity(
            HEADER_LEN
                + self.blocks.len() * BLOCK_LEN
                + self.checkpoints.len() * CHECKPOINT_LEN
                + detail
                + 16,
        );
        out.extend_from_slice(&MAGIC);
        out.extend_from_slice(&VERSION.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        for v in [self.log_size, self.head_hash, self.tail_hash] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.stamp.inode.to_le_bytes());
        out.extend_from_slice(&self.stamp.modified_ns.to_le_bytes());
        out.extend_from_slice(&self.stamp.changed_ns.to_le_bytes());
        for n in [self.blocks.len(), self.checkpoints.len()] {
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
        out.extend_from_slice(&(detail as u64 + 8).to_le_bytes());
        for b in &self.blocks {
            out.extend_from_slice(&b.start.to_le_bytes());
            out.extend_from_slice(&b.end.to_le_bytes());
            for n in [b.messages, b.decisions, b.events, b.dedup] {
                out.extend_from_slice(&n.to_le_bytes());
            }
            out.extend_from_slice(&b.earliest.to_le_bytes());
            out.extend_from_slice(&b.latest.to_le_bytes());
            for bytes in [b.bloom(), b.dedup_bloom(), b.table()] {
                out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            }
        }
        for c in &self.checkpoints {
            out.extend_from_slice(&c.offset.to_le_bytes());
            out.extend_from_slice(&c.len.to_le_bytes());
            let flags = u32::from(c.applies) | u32::from(c.sets_reward_function) << 1;
            out.extend_from_slice(&flags.to_le_bytes());
        }
        let sum = checksum(&out);
        out.extend_from_slice(&sum.to_le_bytes());
        let summary = out.len();
        for b in &self.blocks {
            for bytes in [b.bloom(), b.dedup_bloom(), b.table()] {
                out.extend_from_slice(bytes);
            }
        }
        let sum = checksum(out.get(summary..).unwrap_or_default());
        out.extend_from_slice(&sum.to_le_bytes());
        out
    }

    /// The length of an index file's summary, from its first
    /// [`SUMMARY_HEAD`] bytes: what to read for [`Index::from_summary`].
    pub fn summary_len(head: &[u8]) -> Result<u64> {
        let mut r = Cursor { bytes: head, at: 8 };
        if head.get(..8) != Some(&MAGIC[..]) {
            return Err(Error::BadIndex {
                offset: 0,
                what: "not an fb index (no FBIDX magic)".into(),
            });
        }
        let _version = r.u32()?;
        let _flags = r.u32()?;
        let _ = (r.u64()?, r.u64()?, r.u64()?);
        let _ = (r.u64()?, r.u64()?, r.u64()?);
        let (blocks, checkpoints) = (u64::from(r.u32()?), u64::from(r.u32()?));
        Ok(HEADER_LEN as u64 + blocks * BLOCK_LEN as u64 + checkpoints * CHECKPOINT_LEN as u64 + 8)
    }

    /// Reads an index file. Damage is an error that says where; nothing in
    /// the file is trusted to size an allocation beyond the file itself.
    pub fn from_bytes(bytes: &[u8]) -> Result<Self> {
        Self::from_vec(bytes.to_vec())
    }

    /// [`Index::from_bytes`] keeping the file's bytes, which the blocks
    /// then share.
    pub fn from_vec(bytes: Vec<u8>) -> Result<Self> {
        Self::from_shared(Arc::new(bytes))
    }

    /// [`Index::from_vec`] over bytes held elsewhere, such as a map of
    /// the file that its owner keeps unchanged while the index lives.
    pub fn from_shared(data: Shared) -> Result<Self> {
        let bytes: &[u8] = (*data).as_ref();
        let (mut index, lengths, summary) = Self::summary(bytes)?;
        let detail = bytes.get(summary..).unwrap_or_default();
        let bad = |offset: usize, what: &str| Error::BadIndex {
            offset: offset as u64,
            what: what.to_string(),
        };
        let body_len = detail
            .len()
            .checked_sub(8)
            .ok_or_else(|| bad(summary, "the detail part is missing: the file is cut"))?;
        let (body, sum) = detail.split_at(body_len);
        if sum != checksum(body).to_le_bytes() {
            return Err(bad(
                summary + body_len,
                "the checksum of its detail part does not match: the file is damaged",
            ));
        }
        let mut at = summary;
        for (b, lens) in index.blocks.iter_mut().zip(lengths) {
            for (part, len) in b.parts.iter_mut().zip(lens) {
                let end = at
                    .checked_add(len as usize)
                    .filter(|&e| e <= summary + body_len);
                let end = end.ok_or_else(|| bad(at, "a block's detail runs past the file"))?;
                *part = (at, end);
                at = end;
            }
            b.data = Arc::clone(&data);
        }
        if at != summary + body_len {
            return Err(bad(at, "bytes after the last block's detail"));
        }
        index.detail = true;
        Ok(index)
    }

    /// Reads an index file's summary alone (its first
    /// [`Index::summary_len`] bytes): blocks and checkpoints without their
    /// Bloom filters and message tables, which is what a time window
    /// needs. Lookups and samples need [`Index::from_vec`].
    pub fn from_summary(bytes: &[u8]) -> Result<Self> {
        Ok(Self::summary(bytes)?.0)
    }

    /// Whether the blocks hold their Bloom filters and message tables.
    pub fn has_detail(&self) -> bool {
        self.detail
    }

    /// The summary: the index without detail, each block's detail lengths,
    /// and where the summary ends.
    #[allow(clippy::type_complexity)]
    fn summary(bytes: &[u8]) -> Result<(Self, Vec<[u32; 3]>, usize)> {
        let bad = |offset: usize, what: &str| Error::BadIndex {
            offset: offset as u64,
            what: what.to_string(),
        };
        let head = bytes
            .get(..HEADER_LEN)
            .ok_or_else(|| bad(0, "too short to be an fb index"))?;
        let len = Self::summary_len(head)?;
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l <= bytes.len())
            .ok_or_else(|| bad(bytes.len(), "its summary runs past the file: it is cut"))?;
        let (summary, sum) = bytes
            .get(..len)
            .ok_or_else(|| bad(0, "too short"))?
            .split_at(len - 8);
        if sum != checksum(summary).to_le_bytes() {
            return Err(bad(
                len - 8,
                "the checksum of its summary does not match: the file is damaged",
            ));
        }
        let mut r = Cursor {
            bytes: summary,
            at: 8,
        };
        let version = r.u32()?;
        if version != VERSION {
            return Err(bad(
                8,
                &format!("version {version}; this fb reads version {VERSION}"),
            ));
        }
        let _flags = r.u32()?;
        let (log_size, head_hash, tail_hash) = (r.u64()?, r.u64()?, r.u64()?);
        let stamp = LogStamp {
            inode: r.u64()?,
            modified_ns: r.u64()? as i64,
            changed_ns: r.u64()? as i64,
        };
        let (blocks, checkpoints) = (r.u32()? as usize, r.u32()? as usize);
        let _detail = r.u64()?;
        let mut index = Self {
            log_size,
            head_hash,
            tail_hash,
            stamp,
            // The summary's length was checked against the file: the
            // counts are as large as the bytes allow.
            blocks: Vec::with_capacity(blocks),
            checkpoints: Vec::with_capacity(checkpoints),
            detail: false,
        };
        let mut lengths = Vec::with_capacity(blocks);
        let empty = empty();
        for _ in 0..blocks {
            let mut b = Block::new(r.u64()?);
            b.data = Arc::clone(&empty);
            b.end = r.u64()?;
            (b.messages, b.decisions, b.events) = (r.u32()?, r.u32()?, r.u32()?);
            b.dedup = r.u32()?;
            (b.earliest, b.latest) = (r.u64()? as i64, r.u64()? as i64);
            lengths.push([r.u32()?, r.u32()?, r.u32()?]);
            index.blocks.push(b);
        }
        for _ in 0..checkpoints {
            let (offset, len, flags) = (r.u64()?, r.u32()?, r.u32()?);
            index.checkpoints.push(Checkpoint {
                offset,
                len,
                applies: flags & 1 != 0,
                sets_reward_function: flags & 2 != 0,
            });
        }
        Ok((index, lengths, len))
    }
}

/// The keys of the block being built.
#[derive(Default)]
struct Ids<'a> {
    /// Enqueued and client times of the events, converted.
    micros: [Micros; 2],
    decisions: Vec<&'a [u8]>,
    dedup: Vec<[u8; 8]>,
    /// The block's message table.
    table: Vec<u8>,
}

/// Ends `block` at `end` (if it holds anything) and starts the next there.
fn close(blocks: &mut Vec<Block>, block: &mut Block, ids: &mut Ids<'_>, end: u64) {
    if block.messages > 0 {
        let mut data = filter(ids.decisions.iter().copied());
        let blooms = data.len();
        data.extend(filter(ids.dedup.iter().map(|id| &id[..])));
        let both = data.len();
        data.extend_from_slice(&ids.table);
        block.parts = [(0, blooms), (blooms, both), (both, data.len())];
        block.data = Arc::new(data);
        blocks.push(std::mem::replace(block, Block::new(end)));
    } else {
        *block = Block::new(end);
    }
    ids.decisions.clear();
    ids.dedup.clear();
    ids.table.clear();
}

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The two varints `rest` starts with, and the bytes they take, when each
/// takes one or two bytes and eight bytes follow: a message's length under
/// 16 KiB and its decisions under 128, the common entry of a message table,
/// decoded from one word without a loop (a sample walks millions).
#[inline(always)]
fn short_pair(rest: &[u8]) -> Option<(u64, u64, usize)> {
    let word = u64::from_le_bytes(*rest.first_chunk::<8>()?);
    let (first, used) = short_varint(word)?;
    let (second, more) = short_varint(word >> (8 * used))?;
    Some((first, second, used + more))
}

/// The varint of one or two bytes at the low end of `word`, and its
/// length; `None` for a longer one.
#[inline(always)]
fn short_varint(word: u64) -> Option<(u64, usize)> {
    if word & 0x80 == 0 {
        Some((word & 0x7f, 1))
    } else if word & 0x8000 == 0 {
        Some(((word & 0x7f) | ((word >> 1) & 0x3f80), 2))
    } else {
        None
    }
}

fn take_varint(rest: &mut &[u8]) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let (&b, tail) = rest.split_first()?;
        *rest = tail;
        v |= u64::from(b & 0x7f) << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
    }
    None
}

/// Reads an index file's fields in order, each bounds-checked.
struct Cursor<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8]> {
        let end = self.at.checked_add(n);
        let got = end.and_then(|e| self.bytes.get(self.at..e));
        match (got, end) {
            (Some(b), Some(e)) => {
                self.at = e;
                Ok(b)
            }
            _ => Err(Error::BadIndex {
                offset: self.at as u64,
                what: "a record runs past the end of the file: it is cut or damaged".into(),
            }),
        }
    }

    fn u32(&mut self) -> Result<u32> {
        let b = self.take(4)?;
        Ok(u32::from_le_bytes(b.try_into().unwrap_or_default()))
    }

    fn u64(&mut self) -> Result<u64> {
        let b = self.take(8)?;
        Ok(u64::from_le_bytes(b.try_into().unwrap_or_default()))
    }
}

impl Index {
    /// Dedup ids defined in the log (counted as the DedupInfo events list
    /// them).
    pub fn dedup_ids(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(b.dedup)).sum()
    }

    /// The blocks that may define this dedup id.
    pub fn blocks_defining(&self, id: u64) -> impl Iterator<Item = &Block> {
        self.blocks.iter().filter(move |b| b.may_define(id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn message_tables_read_back_whatever_their_varints_lengths() {
        // Values at each varint length's edges: one byte, two (the short
        // path), three and more, and the widest.
        let values = [
            0u64,
            1,
            127,
            128,
            300,
            16_383,
            16_384,
            2_097_151,
            2_097_152,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let mut pairs = Vec::new();
        for &len in &values {
            for &decisions in &values {
                pairs.push((len, decisions));
            }
        }
        // Every pair at the end of a table too, where fewer than eight
        // bytes follow it.
        for cut in 0..pairs.len() {
            let pairs = &pairs[cut..];
            let mut table = Vec::new();
            for &(len, decisions) in pairs {
                put_varint(&mut table, len);
                put_varint(&mut table, decisions);
            }
            let entries = TableEntries {
                rest: &table,
                at: 7,
            };
            let mut at = 7u64;
            let expected: Vec<(u64, u64, u32)> = pairs
                .iter()
                .map(|&(len, decisions)| {
                    let entry = (at, len, u32::try_from(decisions).unwrap_or(u32::MAX));
                    at = at.saturating_add(len);
                    entry
                })
                .collect();
            assert_eq!(entries.collect::<Vec<_>>(), expected, "from pair {cut}");
        }
    }

    #[test]
    fn remembered_days_give_the_calendar_s_micros() {
        // Runs within a minute, across minutes, hours, days, months and
        // years, and fields no calendar has (month 0 or 13, hour 25):
        // whatever they mean, the memo must mean the same.
        let mut times = Vec::new();
        for (y, mo, d, h, mi) in [
            (2024u16, 1u8, 1u8, 0u8, 0u8),
            (2024, 1, 1, 0, 1),
            (2024, 1, 1, 0, 1),
            (2024, 12, 31, 23, 59),
            (2025, 1, 1, 0, 0),
            (2024, 2, 29, 12, 30),
            (1970, 1, 1, 0, 0),
            (1, 1, 1, 0, 0),
            (65535, 13, 40, 25, 61),
            (2024, 0, 0, 0, 0),
            (2024, 1, 1, 0, 0),
        ] {
            for (sec, sub) in [(0u8, 0u32), (59, 9_999_999), (7, 12_345), (255, u32::MAX)] {
                times.push(TimeStamp::new(y, mo, d, h, mi, sec, sub));
            }
        }
        let mut memo = Micros::default();
        for t in times.iter().chain(times.iter().rev()) {
            assert_eq!(memo.of(t), micros(t), "{t:?}");
        }
    }

    fn corpus(name: &str) -> Vec<u8> {
        std::fs::read(format!(
            "{}/../../tests/data/valid_joined_logs/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    /// Every key put in a filter tests positive; of keys not put in, about
    /// as few as 10 bits and 3 probes per key allow (1.7% in theory), for
    /// ids shaped like the logs' (UUIDs, short ids) and for dedup ids.
    #[test]
    fn bloom_filters_have_no_false_negatives_and_few_false_positives() {
        type Key = fn(u64) -> Vec<u8>;
        let cases: [(&str, Key); 3] = [
            ("uuid-like ids", |i| {
                format!("{:08x}-4e2b-4c1a-9f3d-{:012x}", i * 7919, i).into_bytes()
            }),
            ("short ids", |i| format!("ev{i}").into_bytes()),
            ("dedup ids", |i| {
                (i.wrapping_mul(0x9e37_79b9) ^ 0x55).to_le_bytes().to_vec()
            }),
        ];
        for (name, key) in cases {
            let inside: Vec<Vec<u8>> = (0..20_000).map(key).collect();
            let bloom = filter(inside.iter().map(|k| &k[..]));
            assert!(
                inside.iter().all(|k| tests(&bloom, k)),
                "{name}: a key put in is missing"
            );
            let false_positives = (20_000..40_000)
                .map(key)
                .filter(|k| tests(&bloom, k))
                .count();
            assert!(
                false_positives < 600,
                "{name}: {false_positives} false positives of 20000"
            );
            assert!(
                false_positives > 40,
                "{name}: {false_positives}: the filter is not 10 bits a key"
            );
        }
    }

    /// A log of a few MB: the corpus log's first checkpoint, then its
    /// other messages over and over, with the checkpoint again now and then.
    fn repeated_log() -> Vec<u8> {
        let base = corpus("average_reward_100_interactions.fb");
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
            assert_eq!(guess_start(&log, target), first, "target {target}");
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
                let results = parts_from(&log, &starts, threads, &|_, _| {});
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
        let results = parts_from(&damaged, &[ends[ends.len() / 2]], 2, &|_, _| {});
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
        assert_eq!(guess_start(&junk, 1000), None);
        let mut budget = 100;
        assert!(matches!(
            block_end_from(&junk, 0, &mut budget),
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
            let parts = Index::build_in_parts(&log, threads, 256 << 10, &done).unwrap();
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
            let got = Index::build_in_parts(&damaged, threads, 256 << 10, &|_, _| {}).unwrap_err();
            assert_eq!(got.to_string(), want, "{threads} threads");
        }
    }

    /// The summary read alone gives the blocks (without detail) and
    /// checkpoints of the whole file; damage in either part is found by
    /// the reader of that part, and named.
    #[test]
    fn the_summary_reads_alone_and_each_part_has_its_checksum() {
        let index = Index::build(&corpus("average_reward_100_interactions.fb")).unwrap();
        let bytes = index.to_bytes();
        let len = Index::summary_len(&bytes[..SUMMARY_HEAD]).unwrap() as usize;
        assert!(len < bytes.len());
        let summary = Index::from_summary(&bytes[..len]).unwrap();
        let whole = Index::from_bytes(&bytes).unwrap();
        assert!(!summary.has_detail() && whole.has_detail());
        assert_eq!(whole, index);
        assert_eq!(summary.checkpoints, index.checkpoints);
        let counts = |i: &Index| -> Vec<(u64, u64, u32, u32, i64, i64)> {
            i.blocks
                .iter()
                .map(|b| {
                    (
                        b.start,
                        b.end,
                        b.messages,
                        b.decisions,
                        b.earliest,
                        b.latest,
                    )
                })
                .collect()
        };
        assert_eq!(counts(&summary), counts(&index));
        summary
            .check_log(&corpus("average_reward_100_interactions.fb"))
            .unwrap();
        // (case, byte flipped, summary reader fails, whole reader fails)
        for (case, at, in_summary) in [
            ("a block record", SUMMARY_HEAD + 3, true),
            ("the summary's checksum", len - 2, true),
            ("a Bloom filter", len + 1, false),
            ("the detail's checksum", bytes.len() - 1, false),
        ] {
            let mut damaged = bytes.clone();
            damaged[at] ^= 0x10;
            let summary = Index::from_summary(&damaged[..len]);
            assert_eq!(summary.is_err(), in_summary, "{case}");
            let err = Index::from_bytes(&damaged).unwrap_err();
            assert!(err.to_string().contains("checksum"), "{case}: {err}");
        }
        // Cut in the detail: the summary still reads, the whole does not.
        assert!(Index::from_summary(&bytes[..len]).is_ok());
        assert!(Index::from_bytes(&bytes[..len + 3]).is_err());
        assert!(Index::from_bytes(&bytes[..len - 3]).is_err());
    }
}
