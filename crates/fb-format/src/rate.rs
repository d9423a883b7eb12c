//! How often a table of things met before pays: the decoder's tables
//! (zstd frames, `recent.rs`; outcome parts, `known.rs`) look at their hit
//! rate every [`SAMPLE`] lookups, and rest for [`REST`] turns when fewer
//! than one lookup in `POOR` hit, since where nothing repeats the looking
//! up costs more than it saves.

/// Lookups between two looks at the hit rate.
pub(crate) const SAMPLE: u32 = 256;
/// Turns a table passes without a lookup after a poor rate.
pub(crate) const REST: u32 = 16 * 1024;

/// Lookups and hits since the last look, and the turns left to rest.
#[derive(Default, Clone, Copy)]
pub(crate) struct Rate<const POOR: u32> {
    tries: u32,
    hits: u32,
    resting: u32,
}

impl<const POOR: u32> Rate<POOR> {
    /// True (and one turn of rest spent) while the table rests.
    #[inline(always)]
    pub(crate) fn resting(&mut self) -> bool {
        if self.resting > 0 {
            self.resting -= 1;
            return true;
        }
        false
    }

    /// Counts a lookup, and rests the table after too few hits.
    #[inline(always)]
    pub(crate) fn count(&mut self, hit: bool) {
        self.tries += 1;
        self.hits += u32::from(hit);
        if self.tries >= SAMPLE {
            self.sampled();
        }
    }

    #[cold]
    fn sampled(&mut self) {
        if self.hits < self.tries / POOR {
            self.resting = REST;
        }
        self.tries = 0;
        self.hits = 0;
    }
}
