//! How often a memo pays: the JSON check's (array elements, whole texts)
//! and the DSJSON writer's table of probability arrays look at their hit
//! rate every [`SAMPLE`] tries, and rest for [`REST`] turns when under a
//! quarter hit, since where nothing repeats the looking up costs more than
//! it saves. A memo whose hits and misses differ in worth (the JSON
//! check's shapes) also rests when its sample was worth less than nothing.

/// Tries between two looks at the hit rate.
pub(crate) const SAMPLE: u32 = 1024;
/// Turns a memo passes without looking after a poor rate.
pub(crate) const REST: u32 = 64 * 1024;

#[derive(Clone, Default)]
pub(crate) struct Rate {
    /// Tries and hits since the last look at the rate.
    tries: u32,
    hits: u32,
    /// What the tries since the last look were worth, where a hit can
    /// pay or cost more than another ([`Rate::tally`]): below zero, the
    /// memo rests as after a poor rate.
    worth: i32,
    /// Turns still to pass without a try, after a poor rate.
    resting: u32,
    /// Whether a poor rate rests the memo (always, but in tests).
    fixed: bool,
    total_tries: u64,
    total_hits: u64,
}

impl Rate {
    /// A rate that never rests its memo.
    pub(crate) fn fixed() -> Self {
        Self {
            fixed: true,
            ..Self::default()
        }
    }

    /// A rate that keeps its memo resting (for tests of other memos).
    #[cfg(test)]
    pub(crate) fn off() -> Self {
        Self {
            resting: u32::MAX,
            fixed: true,
            ..Self::default()
        }
    }

    /// Whether the memo is resting (no try this turn).
    #[inline(always)]
    pub(crate) fn resting(&self) -> bool {
        self.resting > 0
    }

    /// One turn passed without a try.
    #[inline(always)]
    pub(crate) fn pass(&mut self) {
        self.resting = self.resting.saturating_sub(1);
    }

    /// Counts a try, and rests the memo after too few hits.
    #[inline(always)]
    pub(crate) fn count(&mut self, hit: bool) {
        self.tries += 1;
        self.hits += u32::from(hit);
        if self.tries >= SAMPLE {
            self.sampled();
        }
    }

    /// Counts a try worth `worth` (in units of the best outcome's
    /// saving; a loss below zero), and rests the memo after too few hits
    /// or a sample worth less than nothing.
    #[inline(always)]
    pub(crate) fn tally(&mut self, hit: bool, worth: i32) {
        self.worth += worth;
        self.count(hit);
    }

    #[cold]
    fn sampled(&mut self) {
        if !self.fixed && (self.hits < self.tries / 4 || self.worth < 0) {
            self.resting = REST;
        }
        self.worth = 0;
        self.total_tries += u64::from(self.tries);
        self.total_hits += u64::from(self.hits);
        self.tries = 0;
        self.hits = 0;
    }

    /// Tries and hits so far.
    pub(crate) fn totals(&self) -> (u64, u64) {
        (
            self.total_tries + u64::from(self.tries),
            self.total_hits + u64::from(self.hits),
        )
    }
}
