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

mod bloom;
mod build;
mod checksum;
mod format;
mod log_index;
mod micros;
mod parts;
mod query;
mod records;
mod source;
#[cfg(test)]
mod windowed_tests;

pub use build::{is_decision, BLOCK_BYTES};
pub use format::{file_version, MAGIC, SUMMARY_HEAD, VERSION};
pub use log_index::{Index, LogStamp, HASHED};
pub use micros::micros;
pub use query::span;
pub use records::{Block, Checkpoint, Shared, TableEntries};
pub use source::{read_exact_at, read_full, FileLog, LogSource, ReadFrom};
