//! The last text the validator found valid, kept whole: a loop whose
//! contexts do not change (one context for every user, or the actions
//! alone) sends the same bytes event after event, and a text identical to
//! one found valid is valid.

use super::seen::{same_bytes, REST, SAMPLE};

/// Longest text kept. Longer ones are checked every time; a copy of them
/// would cost more than it might save.
const LIMIT: usize = 4096;

#[derive(Clone, Default)]
pub(super) struct Last {
    text: Vec<u8>,
    /// Comparisons and matches since the last look at the rate.
    tries: u32,
    hits: u32,
    /// Texts still to pass without a comparison or a copy, after a poor
    /// rate: where every context differs, neither is worth its cost.
    resting: u32,
    total_tries: u64,
    total_hits: u64,
}

impl Last {
    /// Whether `text` is the last text remembered (and so valid).
    #[inline(always)]
    pub(super) fn matches(&mut self, text: &[u8]) -> bool {
        if self.resting > 0 {
            self.resting -= 1;
            return false;
        }
        // Nothing remembered is an empty text, which is not JSON.
        let hit = !text.is_empty() && text.len() == self.text.len() && same_bytes(text, &self.text);
        self.tries += 1;
        self.hits += u32::from(hit);
        if self.tries >= SAMPLE {
            self.sampled();
        }
        hit
    }

    /// Remembers `text`, just found valid.
    #[inline(always)]
    pub(super) fn keep(&mut self, text: &[u8]) {
        if self.resting == 0 && text.len() <= LIMIT {
            self.text.clear();
            self.text.extend_from_slice(text);
        }
    }

    /// Comparisons and matches so far.
    pub(super) fn counts(&self) -> (u64, u64) {
        (
            self.total_tries + u64::from(self.tries),
            self.total_hits + u64::from(self.hits),
        )
    }

    #[cold]
    fn sampled(&mut self) {
        if self.hits < self.tries / 4 {
            self.resting = REST;
            self.text.clear();
        }
        self.total_tries += u64::from(self.tries);
        self.total_hits += u64::from(self.hits);
        self.tries = 0;
        self.hits = 0;
    }
}
