//! Propensity health: a histogram of the logged probabilities of the
//! chosen actions, their effective sample size, and the smallest ones.

use fb_join::{Decision, JoinedEvent};
use fb_schema::TimeStamp;

/// Upper ends of the histogram's bins (each bin holds the probabilities
/// above the end before it, up to its own): fine at the small end, where
/// probabilities are dangerous.
pub const EDGES: [f64; 13] = [
    0.001, 0.01, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
];

/// The smallest probabilities kept, with their decisions.
pub const SMALLEST: usize = 10;

/// One of the smallest probabilities.
#[derive(Debug, Clone)]
pub struct Small {
    /// The probability.
    pub probability: f32,
    /// The decision's event id.
    pub event_id: String,
    /// Its slot (CCB, Slates), counted from 0.
    pub slot: Option<usize>,
    /// Its time.
    pub time: TimeStamp,
}

/// What the report keeps of the chosen actions' probabilities.
#[derive(Debug, Clone, Default)]
pub struct Propensities {
    /// Counts per bin of [`EDGES`].
    pub bins: [u64; EDGES.len()],
    /// Probabilities counted in the bins.
    pub count: u64,
    /// Probabilities not in (0, 1] (0, negative, above 1, not a number):
    /// no weight can be made of them.
    pub invalid: u64,
    /// Continuous-action decisions: they log a density, not a
    /// probability, and are not counted here.
    pub densities: u64,
    /// Σ w and Σ w² of the weights w = 1 / (p · pass_probability).
    sum_w: f64,
    sum_w2: f64,
    /// The smallest probabilities, smallest first (the earliest first
    /// among equals).
    pub smallest: Vec<Small>,
}

impl Propensities {
    /// Adds the chosen actions of one kept event: one probability for CB
    /// and multistep, one per slot for CCB and Slates.
    pub fn add(&mut self, ev: &JoinedEvent<'_>) {
        self.add_with(ev, Self::weigh);
    }

    /// [`Propensities::add`], but each inverse-propensity weight is handed
    /// to `weigh` (`add` is this with [`Propensities::weigh`]): their sums
    /// are floats, whose last digits depend on the order of their terms,
    /// so a batch made on a worker thread keeps its weights for the sink
    /// to add in log order. Everything else merges exactly.
    #[inline]
    pub fn add_with(&mut self, ev: &JoinedEvent<'_>, mut weigh: impl FnMut(&mut Self, f64)) {
        match &ev.decision {
            Decision::Cb { probabilities, .. } => {
                if let Some(&p) = probabilities.first() {
                    self.one(p, None, ev, &mut weigh);
                }
            }
            Decision::MultiSlot { slots, .. } => {
                for (i, slot) in slots.iter().enumerate() {
                    if let Some(&p) = slot.probabilities.first() {
                        self.one(p, Some(i), ev, &mut weigh);
                    }
                }
            }
            Decision::Ca { .. } => self.densities += 1,
        }
    }

    /// Adds one inverse-propensity weight to the sums of the effective
    /// sample size.
    #[inline]
    pub fn weigh(&mut self, w: f64) {
        self.sum_w += w;
        self.sum_w2 += w * w;
    }

    #[inline]
    fn one(
        &mut self,
        p: f32,
        slot: Option<usize>,
        ev: &JoinedEvent<'_>,
        weigh: &mut impl FnMut(&mut Self, f64),
    ) {
        let x = f64::from(p);
        if !(x > 0.0 && x <= 1.0) {
            self.invalid += 1;
            return;
        }
        // The first edge at or above x (a binary search of the sorted
        // edges); x is at most the last.
        let bin = EDGES.partition_point(|&e| e < x).min(EDGES.len() - 1);
        if let Some(b) = self.bins.get_mut(bin) {
            *b += 1;
        }
        self.count += 1;
        let pass = f64::from(ev.pass_probability);
        let w = if pass > 0.0 {
            1.0 / (x * pass)
        } else {
            1.0 / x
        };
        weigh(self, w);
        let full = self.smallest.len() >= SMALLEST;
        if full && self.smallest.last().is_some_and(|s| s.probability <= p) {
            return;
        }
        self.keep_small(p, slot, ev);
    }

    /// Keeps `p` among the smallest, where it is one of them.
    #[inline(never)]
    fn keep_small(&mut self, p: f32, slot: Option<usize>, ev: &JoinedEvent<'_>) {
        let at = self.smallest.partition_point(|s| s.probability <= p);
        self.smallest.insert(
            at,
            Small {
                probability: p,
                event_id: ev.event_id.clone(),
                slot,
                time: ev.time,
            },
        );
        self.smallest.truncate(SMALLEST);
    }

    /// Adds the probabilities of events that came after ours.
    pub fn merge(&mut self, o: &Propensities) {
        for (a, b) in self.bins.iter_mut().zip(o.bins) {
            *a += b;
        }
        self.count += o.count;
        self.invalid += o.invalid;
        self.densities += o.densities;
        self.sum_w += o.sum_w;
        self.sum_w2 += o.sum_w2;
        for s in &o.smallest {
            let at = self
                .smallest
                .partition_point(|m| m.probability <= s.probability);
            if at < SMALLEST {
                self.smallest.insert(at, s.clone());
                self.smallest.truncate(SMALLEST);
            }
        }
    }

    /// Kish's effective sample size of the inverse-propensity weights,
    /// (Σw)² / Σw²: as many decisions as the log is worth to an estimate
    /// that reweights by 1/p. It equals the count when every probability
    /// is the same, and falls as a few small probabilities dominate.
    pub fn effective_sample_size(&self) -> Option<f64> {
        (self.sum_w2 > 0.0).then(|| self.sum_w * self.sum_w / self.sum_w2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cb(p: f32, id: &str) -> JoinedEvent<'static> {
        JoinedEvent {
            decision: Decision::Cb {
                actions: vec![1, 2],
                probabilities: vec![p, 1.0 - p],
            },
            event_id: id.into(),
            ..blank()
        }
    }

    fn blank() -> JoinedEvent<'static> {
        JoinedEvent {
            kind: fb_join::Problem::Cb,
            event_id: String::new(),
            time: TimeStamp::default(),
            client_time: None,
            learning_mode: fb_join::LearningMode::Online,
            episode_id: None,
            model_id: String::new(),
            context: std::borrow::Cow::Borrowed(&[]),
            pass_probability: 1.0,
            deferred: false,
            skip_learn: false,
            outcomes: Vec::new(),
            decision: Decision::Ca {
                action: 0.0,
                pdf_value: 1.0,
            },
            reward: 0.0,
            original_reward: 0.0,
            offset: 0,
            message: 0,
        }
    }

    /// Each edge, the probabilities next to it, and the ends: in the bin
    /// of the first edge at or above them, as a linear search finds it.
    #[test]
    fn bins_are_the_first_edge_at_or_above() {
        let mut ps = vec![f32::MIN_POSITIVE, 1e-9, 0.25, 0.999_999];
        for e in EDGES {
            let e = e as f32;
            ps.extend([
                e,
                f32::from_bits(e.to_bits() - 1),
                f32::from_bits(e.to_bits() + 1),
            ]);
        }
        for p in ps.into_iter().filter(|&p| p <= 1.0) {
            let mut one = Propensities::default();
            one.add(&cb(p, "e"));
            let x = f64::from(p);
            let want = EDGES.iter().position(|&e| x <= e).unwrap();
            assert_eq!(one.bins[want], 1, "{p}");
            assert_eq!(one.bins.iter().sum::<u64>(), 1, "{p}");
        }
    }

    #[test]
    fn bins_ess_and_smallest() {
        let mut p = Propensities::default();
        for (i, x) in [0.5f32, 0.5, 0.0005, 1.0, 0.0, 0.25].iter().enumerate() {
            p.add(&cb(*x, &format!("e{i}")));
        }
        p.add(&blank());
        assert_eq!(p.count, 5);
        assert_eq!(p.invalid, 1);
        assert_eq!(p.densities, 1);
        assert_eq!(p.bins[0], 1, "0.0005 is in the first bin");
        assert_eq!(p.bins[7], 2, "0.5 is in (0.4, 0.5]");
        assert_eq!(p.bins[12], 1, "1.0 is in the last bin");
        assert_eq!(p.smallest[0].event_id, "e2");
        assert_eq!(p.smallest.len(), 5);
        let mut same = Propensities::default();
        for i in 0..4 {
            same.add(&cb(0.25, &format!("s{i}")));
        }
        let ess = same.effective_sample_size().unwrap();
        assert!((ess - 4.0).abs() < 1e-9, "{ess}");
        let ess = p.effective_sample_size().unwrap();
        assert!(ess < 1.1, "one tiny probability dominates: {ess}");
    }
}
