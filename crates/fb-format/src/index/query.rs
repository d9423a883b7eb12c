//! What readers ask of an index: which blocks may hold a decision id,
//! which checkpoints are in force, how many decisions and dedup ids the
//! log holds, and where a block's bytes lie in its log.

use super::log_index::Index;
use super::records::{Block, Checkpoint};

/// `log[start..end]`, `None` when the range is not inside it (an index
/// that does not belong to the log).
pub fn span(log: &[u8], start: u64, end: u64) -> Option<&[u8]> {
    let (start, end) = (usize::try_from(start).ok()?, usize::try_from(end).ok()?);
    log.get(start..end)
}

impl Index {
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

    /// Dedup ids defined in the log (counted as the DedupInfo events list
    /// them).
    pub fn dedup_ids(&self) -> u64 {
        self.blocks.iter().map(|b| u64::from(b.dedup)).sum()
    }
}
