//! Outcome delays: the time from a decision to each of its outcomes, in
//! the times the joiner uses (enqueued, or the client's when the
//! configuration says so), as a histogram, with the outcomes later than
//! the loop's join window counted when the window is known.

use fb_join::JoinedEvent;

/// Upper ends of the bins in seconds (each holds delays from the end
/// before it up to, not including, its own); the first bin holds
/// outcomes timed before their decision, the last everything from a week
/// on.
pub const EDGES: [f64; 9] = [
    0.0,
    1.0,
    10.0,
    60.0,
    600.0,
    3600.0,
    6.0 * 3600.0,
    86_400.0,
    7.0 * 86_400.0,
];

/// [`EDGES`] in microseconds, as delays are counted: a delay of `d`
/// microseconds is at or past an edge exactly when `d / 1e6` seconds
/// are (the edges are whole seconds, exact in both).
const EDGES_MICROS: [i64; EDGES.len()] = [
    0,
    1_000_000,
    10_000_000,
    60_000_000,
    600_000_000,
    3_600_000_000,
    6 * 3_600_000_000,
    86_400_000_000,
    7 * 86_400_000_000,
];

/// The bins' names, in order (one more than [`EDGES`]: the last is open).
pub const LABELS: [&str; 10] = [
    "before the decision",
    "under 1 s",
    "1-10 s",
    "10 s-1 min",
    "1-10 min",
    "10 min-1 h",
    "1-6 h",
    "6-24 h",
    "1-7 days",
    "7 days or more",
];

/// Delays of the outcomes that count.
#[derive(Debug, Clone, Default)]
pub struct Delays {
    /// Counts per bin of [`LABELS`].
    pub bins: [u64; LABELS.len()],
    /// Outcomes counted.
    pub count: u64,
    /// Outcomes later than the join window (when one is given).
    pub beyond_window: u64,
    /// The longest delay, in microseconds.
    longest: Option<i64>,
    /// The join window in microseconds, when known.
    window: Option<i64>,
}

impl Delays {
    /// Delays counted against `window` (microseconds), when known.
    pub fn with_window(window: Option<i64>) -> Self {
        Self {
            window,
            ..Self::default()
        }
    }

    /// The join window (microseconds), when known.
    pub fn window(&self) -> Option<i64> {
        self.window
    }

    /// Adds the delays of one kept event's outcomes; `key` is the event's
    /// time ([`fb_join::time::key`]) and `day` its day
    /// ([`fb_join::time::Day::of_key`]), which the caller has already.
    /// Outcomes mostly fall on their decision's day, whose start is then
    /// reused rather than converted again.
    pub fn add(&mut self, ev: &JoinedEvent<'_>, key: (i64, u32), day: &fb_join::time::Day) {
        let at = fb_join::time::micros_of(key);
        ev.each_counted_outcome(|o| self.one(day.micros(&o.time).saturating_sub(at)));
    }

    /// Counts one delay of `d` microseconds.
    fn one(&mut self, d: i64) {
        if let Some(b) = self.bins.get_mut(bin(d)) {
            *b += 1;
        }
        self.count += 1;
        self.longest = Some(self.longest.map_or(d, |l| l.max(d)));
        if self.window.is_some_and(|w| d > w) {
            self.beyond_window += 1;
        }
    }

    /// The longest delay, in seconds.
    pub fn longest(&self) -> Option<f64> {
        self.longest.map(seconds)
    }

    /// Adds the delays of events that came after ours.
    pub fn merge(&mut self, o: &Delays) {
        for (a, b) in self.bins.iter_mut().zip(o.bins) {
            *a += b;
        }
        self.count += o.count;
        self.beyond_window += o.beyond_window;
        self.longest = match (self.longest, o.longest) {
            (Some(a), Some(b)) => Some(a.max(b)),
            (a, b) => a.or(b),
        };
    }

    /// The bin the join window ends in, when known.
    pub fn window_bin(&self) -> Option<usize> {
        let secs = seconds(self.window?);
        Some(1 + EDGES.iter().skip(1).take_while(|&&e| secs >= e).count())
    }
}

/// The bin of a delay of `d` microseconds: the first for a negative one,
/// else one past the edges from 1 s that it reaches.
fn bin(d: i64) -> usize {
    match d < 0 {
        true => 0,
        // The first edge, 0, counts for the bin of negative delays.
        false => EDGES_MICROS.partition_point(|&e| d >= e),
    }
}

/// Microseconds in seconds, as the page shows delays.
fn seconds(d: i64) -> f64 {
    d as f64 / 1e6
}

#[cfg(test)]
mod tests {
    use super::*;
    use fb_schema::TimeStamp;

    #[test]
    fn bins_are_named_and_ordered() {
        assert_eq!(LABELS.len(), EDGES.len() + 1);
        let d = Delays::with_window(Some(600_000_000));
        assert_eq!(d.window_bin(), Some(5), "10 min starts the 10 min-1 h bin");
        for (e, m) in EDGES.iter().zip(EDGES_MICROS) {
            assert_eq!(e * 1e6, m as f64, "{e} s");
        }
    }

    /// The bin as it was found by seconds in floating point.
    fn bin_by_seconds(d: i64) -> usize {
        let secs = d as f64 / 1e6;
        match d < 0 {
            true => 0,
            false => 1 + EDGES.iter().skip(1).take_while(|&&e| secs >= e).count(),
        }
    }

    #[test]
    fn bins_by_microseconds_are_the_bins_by_seconds() {
        for (name, d, want) in [
            ("a microsecond before", -1, 0),
            ("at the decision", 0, 1),
            ("just under 1 s", 999_999, 1),
            ("1 s", 1_000_000, 2),
            ("just under 10 s", 9_999_999, 2),
            ("10 s", 10_000_000, 3),
            ("1 min", 60_000_000, 4),
            ("just under 10 min", 599_999_999, 4),
            ("10 min", 600_000_000, 5),
            ("1 h", 3_600_000_000, 6),
            ("6 h", 21_600_000_000, 7),
            ("just under a day", 86_399_999_999, 7),
            ("a day", 86_400_000_000, 8),
            ("just under a week", 604_799_999_999, 8),
            ("a week", 604_800_000_000, 9),
            ("i64::MAX", i64::MAX, 9),
            ("i64::MIN", i64::MIN, 0),
        ] {
            assert_eq!(bin(d), want, "{name}");
            assert_eq!(bin_by_seconds(d), want, "{name}, by seconds");
        }
        for m in EDGES_MICROS {
            for d in [m - 1, m, m + 1, m * 3 / 2] {
                assert_eq!(bin(d), bin_by_seconds(d), "{d}");
            }
        }
        // Every magnitude: a 64-bit LCG's outputs shifted right by 0 to
        // 63 bits.
        let mut x = 5u64;
        for i in 0..100_000u64 {
            x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            let d = (x >> (i % 64)) as i64;
            assert_eq!(bin(d), bin_by_seconds(d), "{d}");
        }
    }

    /// An event at `at` with outcomes at `times`; CCB with the outcomes
    /// split over two slots, one index out of range.
    fn event(ccb: bool, at: TimeStamp, times: &[TimeStamp]) -> JoinedEvent<'static> {
        let outcomes = times
            .iter()
            .map(|&time| fb_join::Outcome {
                event_id: String::new(),
                value: fb_join::OutcomeValue::None,
                index: fb_join::OutcomeIndex::None,
                action_taken: false,
                time,
            })
            .collect::<Vec<_>>();
        let slot = |outcomes: Vec<usize>| fb_join::SlotDecision {
            id: None,
            actions: vec![1],
            probabilities: vec![1.0],
            outcomes,
            reward: 0.0,
            original_reward: 0.0,
        };
        let n = outcomes.len();
        JoinedEvent {
            kind: match ccb {
                true => fb_join::Problem::Ccb,
                false => fb_join::Problem::Cb,
            },
            event_id: String::new(),
            time: at,
            client_time: None,
            learning_mode: fb_join::LearningMode::Online,
            episode_id: None,
            model_id: String::new(),
            context: std::borrow::Cow::Borrowed(&[]),
            pass_probability: 1.0,
            deferred: false,
            skip_learn: false,
            outcomes,
            decision: match ccb {
                true => fb_join::Decision::MultiSlot {
                    slots: vec![slot((0..n / 2).collect()), slot((n / 2..n + 1).collect())],
                    baseline: Vec::new(),
                },
                false => fb_join::Decision::Cb {
                    actions: vec![1],
                    probabilities: vec![1.0],
                },
            },
            reward: 0.0,
            original_reward: 0.0,
            offset: 0,
            message: 0,
        }
    }

    /// Every counted outcome's delay by `fb_join::time::micros`, binned
    /// by seconds: what `add` must count.
    #[test]
    fn add_counts_each_counted_outcome_by_its_micros() {
        let at = TimeStamp::new(2021, 5, 18, 23, 59, 30, 5_000_000);
        let times = [
            TimeStamp::new(2021, 5, 18, 23, 59, 30, 5_000_010),
            TimeStamp::new(2021, 5, 18, 23, 59, 29, 0),
            TimeStamp::new(2021, 5, 18, 23, 59, 31, 10_000_000),
            TimeStamp::new(2021, 5, 19, 0, 0, 0, 0),
            TimeStamp::new(2021, 6, 18, 0, 0, 0, 0),
            TimeStamp::new(2021, 5, 18, 23, 59, 40, 5_000_000),
        ];
        for ccb in [false, true] {
            let ev = event(ccb, at, &times);
            let mut d = Delays::with_window(Some(10_000_000));
            let key = fb_join::time::key(&at);
            d.add(&ev, key, &fb_join::time::Day::of_key(&at, key));
            let start = fb_join::time::micros(&at);
            let delays: Vec<i64> = ev
                .counted_outcomes()
                .map(|o| fb_join::time::micros(&o.time) - start)
                .collect();
            let mut bins = [0u64; LABELS.len()];
            for &x in &delays {
                bins[bin_by_seconds(x)] += 1;
            }
            assert_eq!(d.bins, bins, "ccb {ccb}");
            assert_eq!(d.count, times.len() as u64, "ccb {ccb}");
            let beyond = delays.iter().filter(|&&x| x > 10_000_000).count() as u64;
            assert_eq!(d.beyond_window, beyond, "ccb {ccb}");
            assert_eq!(beyond, 2, "ccb {ccb}: the next day and a month later");
            let longest = delays
                .iter()
                .map(|&x| x as f64 / 1e6)
                .fold(f64::MIN, f64::max);
            assert_eq!(d.longest(), Some(longest), "ccb {ccb}");
        }
    }
}
