//! How often a cache pays, for the caches that stop looking things up
//! where nothing repeats: the decoder's (zstd frames, outcome parts) here,
//! and fb-join's (the JSON check's memos, the DSJSON writer's probability
//! arrays).
//!
//! A cache looks at its hit rate every `SAMPLE` lookups, and rests for
//! `REST` turns (looks nothing up, keeps nothing) when fewer than one
//! lookup in `POOR` hit: where nothing repeats, looking up costs more than
//! it saves. A cache whose hits and misses differ in worth (the JSON
//! check's shapes) also rests when its sample was worth less than nothing
//! ([`HitRate::tally`]).
//!
//! The three numbers are constants of the type, so that a lookup's count
//! compares with a constant, as each cache's own counter did.

/// Lookups and hits since the last look at the rate, the turns left to
/// rest, and the totals so far.
#[derive(Debug, Clone, Copy)]
pub struct HitRate<const SAMPLE: u32, const REST: u32, const POOR: u32> {
    tries: u32,
    hits: u32,
    /// What the tries since the last look were worth, where a hit can
    /// pay or cost more than another: below zero, the cache rests as
    /// after a poor rate.
    worth: i32,
    /// Turns still to pass without a lookup. `u64` so that a rate made
    /// [`HitRate::off`] never wakes: more turns than any process lives.
    resting: u64,
    /// Whether a poor rate leaves the cache looking up (for tests that
    /// must see every lookup).
    fixed: bool,
    total_tries: u64,
    total_hits: u64,
}

impl<const SAMPLE: u32, const REST: u32, const POOR: u32> Default for HitRate<SAMPLE, REST, POOR> {
    fn default() -> Self {
        Self {
            tries: 0,
            hits: 0,
            worth: 0,
            resting: 0,
            fixed: false,
            total_tries: 0,
            total_hits: 0,
        }
    }
}

impl<const SAMPLE: u32, const REST: u32, const POOR: u32> HitRate<SAMPLE, REST, POOR> {
    /// Lookups between two looks at the rate.
    pub const SAMPLE: u32 = SAMPLE;
    /// Turns a cache passes without a lookup after a poor rate.
    pub const REST: u32 = REST;

    /// A rate that never rests its cache.
    pub fn fixed() -> Self {
        Self {
            fixed: true,
            ..Self::default()
        }
    }

    /// A rate that keeps its cache resting for good: nothing is looked up
    /// or kept.
    pub fn off() -> Self {
        Self {
            resting: u64::MAX,
            fixed: true,
            ..Self::default()
        }
    }

    /// Whether the cache rests this turn (the turn not spent: see
    /// [`HitRate::pass`]).
    #[inline(always)]
    pub fn is_resting(&self) -> bool {
        self.resting > 0
    }

    /// One turn passed without a lookup.
    #[inline(always)]
    pub fn pass(&mut self) {
        self.resting = self.resting.saturating_sub(1);
    }

    /// True, and one turn of rest spent, while the cache rests.
    #[inline(always)]
    pub fn rests(&mut self) -> bool {
        if self.resting > 0 {
            self.resting -= 1;
            return true;
        }
        false
    }

    /// Counts a lookup, and rests the cache after too few hits.
    #[inline(always)]
    pub fn count(&mut self, hit: bool) {
        self.tries += 1;
        self.hits += u32::from(hit);
        if self.tries >= SAMPLE {
            self.sampled();
        }
    }

    /// Counts a lookup worth `worth` (in units of the best outcome's
    /// saving; a loss below zero), and rests the cache after too few hits
    /// or a sample worth less than nothing.
    #[inline(always)]
    pub fn tally(&mut self, hit: bool, worth: i32) {
        self.worth += worth;
        self.count(hit);
    }

    #[cold]
    fn sampled(&mut self) {
        if !self.fixed && (self.hits < self.tries / POOR || self.worth < 0) {
            self.resting = u64::from(REST);
        }
        self.worth = 0;
        self.total_tries += u64::from(self.tries);
        self.total_hits += u64::from(self.hits);
        self.tries = 0;
        self.hits = 0;
    }

    /// Lookups and hits so far.
    pub fn totals(&self) -> (u64, u64) {
        (
            self.total_tries + u64::from(self.tries),
            self.total_hits + u64::from(self.hits),
        )
    }
}

/// The decoder's tables (zstd frames, outcome parts): a look at the rate
/// every 256 lookups, 16 K turns of rest after a poor one, which is fewer
/// than one hit in `POOR`.
pub(crate) type DecoderRate<const POOR: u32> = HitRate<256, { 16 * 1024 }, POOR>;

#[cfg(test)]
mod tests {
    use super::*;

    type Rate = HitRate<8, 20, 4>;

    /// One case: lookups, each a hit or not, and what the rate says after.
    struct Case {
        name: &'static str,
        rate: fn() -> Rate,
        /// `(hit, worth)` of each lookup made while not resting.
        lookups: &'static [(bool, i32)],
        resting: bool,
    }

    const HIT: (bool, i32) = (true, 0);
    const MISS: (bool, i32) = (false, 0);

    const CASES: &[Case] = &[
        Case {
            name: "two hits in eight: a quarter, not poor",
            rate: Rate::default,
            lookups: &[HIT, HIT, MISS, MISS, MISS, MISS, MISS, MISS],
            resting: false,
        },
        Case {
            name: "one hit in eight: poor",
            rate: Rate::default,
            lookups: &[HIT, MISS, MISS, MISS, MISS, MISS, MISS, MISS],
            resting: true,
        },
        Case {
            name: "a sample not yet full",
            rate: Rate::default,
            lookups: &[MISS; 7],
            resting: false,
        },
        Case {
            name: "hits, but worth less than nothing",
            rate: Rate::default,
            lookups: &[
                (true, 1),
                (true, 1),
                (true, 1),
                (false, -5),
                (true, 1),
                (true, 1),
                (true, 1),
                (false, -5),
            ],
            resting: true,
        },
        Case {
            name: "fixed: never rests",
            rate: Rate::fixed,
            lookups: &[MISS; 16],
            resting: false,
        },
    ];

    #[test]
    fn a_poor_sample_rests_the_cache() {
        for case in CASES {
            let mut rate = (case.rate)();
            for &(hit, worth) in case.lookups {
                rate.tally(hit, worth);
            }
            assert_eq!(rate.is_resting(), case.resting, "{}", case.name);
            let hits = case.lookups.iter().filter(|l| l.0).count() as u64;
            assert_eq!(
                rate.totals(),
                (case.lookups.len() as u64, hits),
                "{}",
                case.name
            );
        }
    }

    #[test]
    fn a_rest_lasts_its_turns_and_off_lasts_for_good() {
        let mut rate = Rate::default();
        for _ in 0..Rate::SAMPLE {
            rate.count(false);
        }
        let rested = (0..Rate::REST + 5).take_while(|_| rate.rests()).count();
        assert_eq!(rested, Rate::REST as usize);
        let mut off = Rate::off();
        assert!((0..10_000).all(|_| off.rests()));
        for _ in 0..1000 {
            off.pass();
        }
        assert!(off.is_resting());
    }
}
