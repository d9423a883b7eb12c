//! The last text the validator found valid, kept whole: a loop whose
//! contexts do not change (one context for every user, or the actions
//! alone) sends the same bytes event after event, and a text identical to
//! one found valid is valid.

use crate::caches::MemoRate;
use crate::same::same_bytes;

/// Longest text kept. Longer ones are checked every time; a copy of them
/// would cost more than it might save.
const LIMIT: usize = 4096;

#[derive(Clone, Default)]
pub(super) struct LastValidText {
    text: Vec<u8>,
    /// Comparisons and matches; a turn is a text. Resting, neither a
    /// comparison nor a copy is made: where every context differs, neither
    /// is worth its cost.
    pub(super) rate: MemoRate,
}

impl LastValidText {
    /// Whether `text` is the last text remembered (and so valid).
    #[inline(always)]
    pub(super) fn matches(&mut self, text: &[u8]) -> bool {
        if self.rate.rests() {
            return false;
        }
        // Nothing remembered is an empty text, which is not JSON.
        let hit = !text.is_empty() && same_bytes(text, &self.text);
        self.rate.count(hit);
        hit
    }

    /// Remembers `text`, just found valid.
    #[inline(always)]
    pub(super) fn keep(&mut self, text: &[u8]) {
        if !self.rate.is_resting() && text.len() <= LIMIT {
            self.text.clear();
            self.text.extend_from_slice(text);
        }
    }
}
