//! The index file: writing it, and reading it back (whole, or its
//! summary alone), every part under its checksum.

use std::sync::Arc;

use super::checksum::checksum;
use super::log_index::{Index, LogStamp};
use super::records::{empty, Block, Checkpoint, Shared};
use crate::error::{Error, Result};

/// The first bytes of every index file.
pub const MAGIC: [u8; 8] = *b"FBIDX\r\n\x1a";
/// The format version this code writes and reads.
pub const VERSION: u32 = 6;

/// Fixed part of the file before the blocks.
const HEADER_LEN: usize = 80;
/// Bytes of an index file that say how long its summary is.
pub const SUMMARY_HEAD: usize = HEADER_LEN;
/// A block's record in the summary.
const BLOCK_LEN: usize = 60;
/// A checkpoint's record in the summary.
const CHECKPOINT_LEN: usize = 16;

/// The format version of an index file, if it starts as one: a version
/// other than [`VERSION`] is for rebuilding, not an error.
pub fn file_version(bytes: &[u8]) -> Option<u32> {
    if bytes.get(..8) != Some(&MAGIC[..]) {
        return None;
    }
    let v = bytes.get(8..12)?;
    Some(u32::from_le_bytes(v.try_into().ok()?))
}

impl Index {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The summary read alone gives the blocks (without detail) and
    /// checkpoints of the whole file; damage in either part is found by
    /// the reader of that part, and named.
    #[test]
    fn the_summary_reads_alone_and_each_part_has_its_checksum() {
        let log = fb_tests::read("valid_joined_logs/average_reward_100_interactions.fb");
        let index = Index::build(&log).unwrap();
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
        summary.check_log(&log).unwrap();
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
