//! The index of one log, and what ties it to that log: its size, the
//! hashes of its ends and its file-system stamp.

use super::checksum::{fnv, FNV_OFFSET};
use super::records::{Block, Checkpoint};

/// Bytes at each end of the log that the index hashes.
pub const HASHED: usize = 64 << 10;

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
    pub(super) head_hash: u64,
    pub(super) tail_hash: u64,
    /// What the file system said of the log when it was indexed (set by
    /// whoever reads the log from a file, before building).
    pub stamp: LogStamp,
    /// Its blocks, in log order.
    pub blocks: Vec<Block>,
    /// Its CHECKPOINT messages, in log order.
    pub checkpoints: Vec<Checkpoint>,
    /// Whether the blocks hold their Bloom filters and message tables (not
    /// when read with [`Index::from_summary`]).
    pub(super) detail: bool,
}

/// The hashes of the two ends of a log.
pub(super) fn ends(log: &dyn super::LogSource) -> crate::error::Result<(u64, u64)> {
    let n = usize::try_from(log.len()).map_or(HASHED, |len| len.min(HASHED));
    let mut end = vec![0; n];
    let mut hash = |at: u64| -> crate::error::Result<u64> {
        let got = super::read_full(log, at, &mut end)
            .map_err(|source| crate::error::Error::Io { offset: at, source })?;
        Ok(fnv(end.get(..got).unwrap_or_default(), FNV_OFFSET))
    };
    Ok((hash(0)?, hash(log.len() - n as u64)?))
}

impl Index {
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

    /// Whether the blocks hold their Bloom filters and message tables.
    pub fn has_detail(&self) -> bool {
        self.detail
    }
}
