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
    /// The longest delay, in seconds.
    pub longest: Option<f64>,
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

    /// Adds the delays of one kept event's outcomes; `at` is the event's
    /// time ([`fb_join::time::micros`]), which the caller has already.
    pub fn add(&mut self, ev: &JoinedEvent<'_>, at: i64) {
        for o in ev.counted_outcomes() {
            let d = fb_join::time::micros(&o.time).saturating_sub(at);
            let secs = d as f64 / 1e6;
            let bin = match d < 0 {
                true => 0,
                false => 1 + EDGES.iter().skip(1).take_while(|&&e| secs >= e).count(),
            };
            if let Some(b) = self.bins.get_mut(bin) {
                *b += 1;
            }
            self.count += 1;
            self.longest = Some(self.longest.map_or(secs, |l| l.max(secs)));
            if self.window.is_some_and(|w| d > w) {
                self.beyond_window += 1;
            }
        }
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
        let secs = self.window? as f64 / 1e6;
        Some(1 + EDGES.iter().skip(1).take_while(|&&e| secs >= e).count())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bins_are_named_and_ordered() {
        assert_eq!(LABELS.len(), EDGES.len() + 1);
        let d = Delays::with_window(Some(600_000_000));
        assert_eq!(d.window_bin(), Some(5), "10 min starts the 10 min-1 h bin");
    }
}
