//! Decisions, outcomes and rewards per time window: the report's charts
//! over time. Windows start a minute wide and grow (ten minutes, an hour,
//! a day, a week, ...) whenever there would be more than [`MAX_WINDOWS`]
//! of them, so memory and the page stay bounded whatever the log's span
//! or its times; the page then shows the narrowest width that gives at
//! most [`SHOWN_WINDOWS`] over the span (hours for a few days, days
//! beyond).

use std::collections::BTreeMap;

use fb_join::JoinedEvent;

use crate::stats::Estimators;

/// Windows kept at most; past it they are merged into wider ones.
pub const MAX_WINDOWS: usize = 400;

/// Windows shown at most: the narrowest width that gives no more.
pub const SHOWN_WINDOWS: i64 = 120;

/// Window widths in seconds, narrowest first, each a multiple of the one
/// before; past the last, widths double.
const WIDTHS: [i64; 7] = [60, 600, 3600, 86_400, 7 * 86_400, 28 * 86_400, 364 * 86_400];

/// What one window holds.
#[derive(Default)]
pub struct Window {
    /// Decisions kept.
    pub decisions: u64,
    /// Learnable ones among them.
    pub learnable: u64,
    /// Decisions with at least one outcome that counts.
    pub with_outcomes: u64,
    /// Outcomes that count (activations included), as `fb stats` counts.
    pub outcomes: u64,
    /// Sum of the rewards used for learning (CCB: over all slots), as
    /// `fb stats`'s `reward_sum`.
    pub reward_sum: f64,
    /// The counterfactual estimators of the window's decisions, those
    /// the page charts ([`Estimators::put_charted`]).
    pub estimators: Estimators,
}

/// What one kept event adds to its window, but its estimators' samples.
#[derive(Debug, Clone, Copy)]
pub struct Counted {
    learnable: bool,
    outcomes: u64,
    reward: f64,
}

impl Counted {
    /// What `ev` adds.
    pub fn of(ev: &JoinedEvent<'_>) -> Self {
        Self {
            learnable: !ev.skip_learn,
            outcomes: ev.counted_outcome_count() as u64,
            reward: reward(ev),
        }
    }
}

impl Window {
    /// Counts one kept event, and adds its reward: all but its
    /// estimators' samples, which the caller puts in
    /// [`Window::estimators`] as it makes them for the whole log's.
    pub fn count(&mut self, c: Counted) {
        self.decisions += 1;
        self.learnable += u64::from(c.learnable);
        self.outcomes += c.outcomes;
        self.with_outcomes += u64::from(c.outcomes > 0);
        self.reward_sum += c.reward;
    }

    fn merge(&mut self, o: &Window) {
        self.decisions += o.decisions;
        self.learnable += o.learnable;
        self.with_outcomes += o.with_outcomes;
        self.outcomes += o.outcomes;
        self.reward_sum += o.reward_sum;
        self.estimators.merge(&o.estimators);
    }
}

/// The reward `fb stats` sums for an event (CCB: its slots' rewards).
fn reward(ev: &JoinedEvent<'_>) -> f64 {
    match (&ev.kind, &ev.decision) {
        (fb_join::Problem::Ccb, fb_join::Decision::MultiSlot { slots, .. }) => {
            slots.iter().map(|s| f64::from(s.reward)).sum()
        }
        _ => f64::from(ev.reward),
    }
}

/// Windows of one width, by their start (seconds since 1970).
pub struct Timeline {
    width: i64,
    windows: BTreeMap<i64, Window>,
    /// The window events were last added to, out of the map: events
    /// come mostly in time order, so most of them land here without a
    /// search of the map. Taken out and put back whole (never merged), so
    /// each window adds its events in log order as before.
    open: Option<(i64, Window)>,
}

impl Default for Timeline {
    fn default() -> Self {
        Self {
            width: WIDTHS[0],
            windows: BTreeMap::new(),
            open: None,
        }
    }
}

/// The width after `width`.
fn wider(width: i64) -> i64 {
    WIDTHS
        .iter()
        .copied()
        .find(|&w| w > width)
        .unwrap_or_else(|| width.saturating_mul(2))
}

impl Timeline {
    /// Adds one kept event with `add`, to the window of its time:
    /// `secs`, seconds since 1970 ([`fb_join::time::key`]), which the
    /// caller has already.
    pub fn add(&mut self, secs: i64, add: impl FnOnce(&mut Window)) {
        let start = secs.div_euclid(self.width) * self.width;
        if let Some((s, w)) = &mut self.open {
            if *s == start {
                add(w);
                return;
            }
        }
        self.settle();
        let mut w = self.windows.remove(&start).unwrap_or_default();
        add(&mut w);
        self.open = Some((start, w));
        if self.windows.len() + 1 > MAX_WINDOWS {
            self.widen(wider(self.width));
        }
    }

    /// Puts the open window back in the map.
    fn settle(&mut self) {
        if let Some((start, w)) = self.open.take() {
            self.windows.insert(start, w);
        }
    }

    /// Merges the windows into windows `width` wide (a wider one).
    fn widen(&mut self, width: i64) {
        self.settle();
        if width <= self.width {
            return;
        }
        let old = std::mem::take(&mut self.windows);
        self.width = width;
        for (start, w) in old {
            let start = start.div_euclid(width) * width;
            self.windows.entry(start).or_default().merge(&w);
        }
        // Times spread wider than a width holds: widen again.
        if self.windows.len() > MAX_WINDOWS {
            self.widen(wider(width));
        }
    }

    /// Adds the windows of another timeline (at the wider of the two
    /// widths).
    pub fn merge(&mut self, o: &Timeline) {
        if o.windows.is_empty() && o.open.is_none() {
            return;
        }
        self.settle();
        // Widths come from one ladder, each a multiple of the one before:
        // a narrower window lies within one wider window.
        if o.width > self.width {
            self.widen(o.width);
        }
        let width = self.width;
        let open = o.open.iter().map(|(s, w)| (s, w));
        for (start, w) in o.windows.iter().chain(open) {
            let start = start.div_euclid(width) * width;
            self.windows.entry(start).or_default().merge(w);
        }
        if self.windows.len() > MAX_WINDOWS {
            self.widen(wider(self.width));
        }
    }

    /// The windows to show: the narrowest width that gives at most
    /// [`SHOWN_WINDOWS`] over the span (minutes for an hour, hours for a
    /// few days, days beyond).
    pub fn shown(mut self) -> (i64, BTreeMap<i64, Window>) {
        self.settle();
        let span = match (self.windows.keys().next(), self.windows.keys().next_back()) {
            (Some(a), Some(b)) => b.saturating_sub(*a),
            _ => 0,
        };
        let mut width = self.width;
        while span / width >= SHOWN_WINDOWS {
            width = wider(width);
        }
        self.widen(width);
        (self.width, self.windows)
    }

    /// The width of the windows now.
    pub fn width(&self) -> i64 {
        self.width
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use fb_join::Decision;
    use fb_schema::TimeStamp;

    /// A CB decision at `minute` of 2024-01-01 with `reward`.
    fn at(minute: u8, reward: f32) -> JoinedEvent<'static> {
        JoinedEvent {
            kind: fb_join::Problem::Cb,
            event_id: String::new(),
            time: TimeStamp::new(2024, 1, 1, minute / 60, minute % 60, 0, 0),
            client_time: None,
            learning_mode: fb_join::LearningMode::Online,
            episode_id: None,
            model_id: String::new(),
            context: std::borrow::Cow::Borrowed(&[]),
            pass_probability: 1.0,
            deferred: false,
            skip_learn: false,
            outcomes: Vec::new(),
            decision: Decision::Cb {
                actions: vec![1, 2],
                probabilities: vec![0.5, 0.5],
            },
            reward,
            original_reward: reward,
            offset: 0,
            message: 0,
        }
    }

    /// Events back and forth in time: each window holds its own, its
    /// rewards added in log order (to the last bit), whether the window
    /// was the open one or not, and a merge takes the open window too.
    #[test]
    fn events_out_of_time_order_land_in_their_windows() {
        let minutes = [0u8, 0, 5, 1, 0, 5, 5, 2, 1, 0, 7, 7];
        let rewards: Vec<f32> = (0..minutes.len()).map(|i| 0.1 + i as f32 / 7.0).collect();
        let mut t = Timeline::default();
        for (&m, &r) in minutes.iter().zip(&rewards) {
            let ev = at(m, r);
            t.add(fb_join::time::key(&ev.time).0, |w| {
                w.count(Counted::of(&ev))
            });
        }
        let mut merged = Timeline::default();
        merged.merge(&t);
        let base = fb_join::time::key(&TimeStamp::new(2024, 1, 1, 0, 0, 0, 0)).0;
        for (name, timeline) in [("added", t), ("merged", merged)] {
            let (width, shown) = timeline.shown();
            assert_eq!(width, 60, "{name}");
            assert_eq!(shown.len(), 5, "{name}: minutes 0 to 7, gaps apart");
            for m in [0u8, 1, 2, 5, 7] {
                let mine: Vec<f32> = minutes
                    .iter()
                    .zip(&rewards)
                    .filter(|(x, _)| **x == m)
                    .map(|(_, r)| *r)
                    .collect();
                let sum = mine.iter().fold(0.0f64, |a, r| a + f64::from(*r));
                let w = &shown[&(base + i64::from(m) * 60)];
                assert_eq!(w.decisions, mine.len() as u64, "{name}: minute {m}");
                assert_eq!(w.reward_sum.to_bits(), sum.to_bits(), "{name}: minute {m}");
            }
        }
    }

    #[test]
    fn widths_grow_on_a_ladder_then_double() {
        assert_eq!(wider(60), 600);
        assert_eq!(wider(3600), 86_400);
        assert_eq!(wider(86_400), 7 * 86_400);
        assert_eq!(wider(364 * 86_400), 728 * 86_400);
    }

    #[test]
    fn many_windows_are_merged_into_wider_ones_keeping_the_counts() {
        let mut t = Timeline::default();
        for minute in 0..(MAX_WINDOWS as i64 + 50) {
            let w = t.windows.entry(minute * 60).or_default();
            w.decisions = 1;
        }
        t.widen(wider(t.width));
        assert_eq!(t.width(), 600);
        let total: u64 = t.windows.values().map(|w| w.decisions).sum();
        assert_eq!(total, MAX_WINDOWS as u64 + 50);
        assert!(t.windows.len() <= MAX_WINDOWS);
        let (width, shown) = t.shown();
        assert_eq!(width, 600, "450 minutes are shown by 10 minutes");
        assert_eq!(shown.len(), 45);
    }
}
