//! What the index holds per block and per checkpoint, and the message
//! table's varints.

use std::sync::Arc;

use super::bloom::contains;

/// The bytes an index read from a file keeps, shared by its blocks: the
/// file read into memory, or a map of it that its owner keeps unchanged
/// for as long as the index lives.
pub type Shared = Arc<dyn AsRef<[u8]> + Send + Sync>;

/// No bytes, for blocks that hold none (yet).
pub(super) fn empty() -> Shared {
    Arc::new(Vec::<u8>::new())
}

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
    pub(super) data: Shared,
    pub(super) parts: [(usize, usize); 3],
}

/// What indexing a REGULAR message adds to a block: events, earliest, latest, decisions
/// and dedup entries.
pub(super) type Counts = (u32, i64, i64, u32, u32);

impl Block {
    pub(super) fn clone_counts(&self) -> Counts {
        (
            self.events,
            self.earliest,
            self.latest,
            self.decisions,
            self.dedup,
        )
    }

    pub(super) fn set_counts(&mut self, counts: Counts) {
        (
            self.events,
            self.earliest,
            self.latest,
            self.decisions,
            self.dedup,
        ) = counts;
    }

    pub(super) fn new(start: u64) -> Self {
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

    pub(super) fn bloom(&self) -> &[u8] {
        self.part(0)
    }

    pub(super) fn dedup_bloom(&self) -> &[u8] {
        self.part(1)
    }

    pub(super) fn table(&self) -> &[u8] {
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
        contains(self.bloom(), id.as_bytes())
    }

    /// Whether a DedupInfo of the block may define this action id.
    pub fn may_define(&self, id: u64) -> bool {
        contains(self.dedup_bloom(), &id.to_le_bytes())
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

/// Appends `v` as a LEB128 varint.
pub(super) fn put_varint(out: &mut Vec<u8>, mut v: u64) {
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
}
