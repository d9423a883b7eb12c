//! The CCB multislot estimator (vw-estimators' `ccb.multislot`): per
//! slot id, the per-decision importance weights multiplied along the
//! slots feed a Cressie-Read estimate and interval of that slot; from
//! them, how often the slot is shown (its impression, with a
//! Clopper-Pearson interval), its reward when shown, their product, and
//! the reward over all slots pooled.
//!
//! A slot's id is the log's slot id; a slot without one is named by its
//! position, `#0`, `#1`, ... (the DSJSON `fb convert` writes gives such a
//! slot the event id, which differs from event to event).

use std::collections::HashMap;

use super::estimators::{clopper_pearson, CressieReadPair};

/// Distinct slot ids tallied; later ones are left out (a damaged or odd
/// log could give every decision ids of its own, and memory must stay
/// bounded).
pub const MAX_SLOT_IDS: usize = 256;

/// One slot id's tallies.
#[derive(Debug, Clone, Default, PartialEq)]
struct Slot {
    id: String,
    cressie_read: CressieReadPair,
}

/// The multislot tallies of one target policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Multislot {
    /// Decisions added (each counted once, drops or not, as
    /// vw-estimators counts them).
    examples: u64,
    /// Per slot id, in the order first seen.
    slots: Vec<Slot>,
    /// Where each id is in `slots`: a log with many ids would otherwise
    /// compare an event's ids with each of them.
    at: HashMap<String, usize, foldhash::fast::FixedState>,
    /// Slots not tallied: their id came past [`MAX_SLOT_IDS`].
    left_out: u64,
}

/// One slot id's figures (`None` where undefined).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MultislotSlot {
    /// The slot id (`#N` for the slot at position N without one).
    pub id: String,
    /// Decisions that showed this slot.
    pub decisions: f64,
    /// The share of decisions that showed it.
    pub impression: Option<f64>,
    /// Its Clopper-Pearson 95% interval (decisions counted
    /// 1/pass_probability times, out of the decisions counted once, as
    /// vw-estimators counts them; undefined where the first exceed the
    /// second by more than 1).
    pub impression_ci: Option<[f64; 2]>,
    /// The Cressie-Read estimate of the slot's reward when shown.
    pub r_given_impression: Option<f64>,
    /// Its 95% interval.
    pub r_given_impression_ci: Option<[f64; 2]>,
    /// `impression × r_given_impression`.
    pub r: Option<f64>,
    /// The product of the two intervals' ends.
    pub r_ci: Option<[f64; 2]>,
}

/// The multislot figures of one target policy.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MultislotFigures {
    /// Per slot id, in the order first seen.
    pub slots: Vec<MultislotSlot>,
    /// The Cressie-Read estimate over every slot's weights and rewards
    /// pooled.
    pub r_overall: Option<f64>,
    /// Its 95% interval.
    pub r_overall_ci: Option<[f64; 2]>,
    /// Slots left out: ids past [`MAX_SLOT_IDS`].
    pub left_out: u64,
}

impl Multislot {
    /// Adds one decision: per slot `(id, p_log, r, p_pred)` in slot
    /// order, and the drop probability.
    pub fn add<'a>(&mut self, slots: impl Iterator<Item = (&'a str, f64, f64, f64)>, p_drop: f64) {
        self.examples += 1;
        let mut w = 1.0;
        for (n, (id, p_log, r, p_pred)) in slots.enumerate() {
            w *= p_pred / p_log;
            // Events mostly list their slots in the order first seen: the
            // n-th slot's id is most often the n-th id kept.
            let hint = self.slots.get(n).filter(|s| s.id == id).map(|_| n);
            let at = match hint.or_else(|| self.at.get(id).copied()) {
                Some(i) => i,
                None if self.slots.len() < MAX_SLOT_IDS => {
                    self.slots.push(Slot {
                        id: id.to_string(),
                        ..Slot::default()
                    });
                    self.at.insert(id.to_string(), self.slots.len() - 1);
                    self.slots.len() - 1
                }
                None => {
                    self.left_out += 1;
                    continue;
                }
            };
            if let Some(s) = self.slots.get_mut(at) {
                s.cressie_read.add(w, r, p_drop);
            }
        }
    }

    /// The figures.
    pub fn finish(&self) -> MultislotFigures {
        let n = self.examples as f64;
        let mut pooled = CressieReadPair::default();
        let slots = self
            .slots
            .iter()
            .map(|s| {
                pooled.merge(&s.cressie_read);
                let est = s.cressie_read.estimate();
                let impression = (n > 0.0).then(|| est.count() / n);
                let impression_ci =
                    (n > 0.0).then(|| impression_interval(s.cressie_read.interval_count(), n));
                let r_given_impression = est.get();
                let r_given_impression_ci = s.cressie_read.ci();
                MultislotSlot {
                    id: s.id.clone(),
                    decisions: est.count(),
                    impression,
                    impression_ci: impression_ci.flatten(),
                    r_given_impression,
                    r_given_impression_ci,
                    r: impression.zip(r_given_impression).map(|(a, b)| a * b),
                    r_ci: impression_ci
                        .flatten()
                        .zip(r_given_impression_ci)
                        .map(|(a, b)| [a[0] * b[0], a[1] * b[1]]),
                }
            })
            .collect::<Vec<_>>();
        let any = !slots.is_empty();
        MultislotFigures {
            slots,
            r_overall: pooled.estimate().get().filter(|_| any),
            r_overall_ci: pooled.ci().filter(|_| any),
            left_out: self.left_out,
        }
    }
}

/// The Clopper-Pearson interval of `shown` of `n` decisions; `None`
/// where a Beta parameter is not positive (`shown` counts dropped
/// decisions, `n` does not: scipy's quantile is then NaN).
fn impression_interval(shown: f64, n: f64) -> Option<[f64; 2]> {
    (shown <= 0.0 || n - shown + 1.0 > 0.0).then(|| clopper_pearson(shown, n))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::evaluate::estimators::CressieRead;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn two_slots_by_hand() {
        // Two decisions: slots a, b then a alone; every weight 1 (the
        // logged policy), so each slot's Cressie-Read estimate is its
        // mean reward.
        let mut m = Multislot::default();
        m.add(
            [("a", 0.5, 1.0, 0.5), ("b", 0.25, 0.0, 0.25)].into_iter(),
            0.0,
        );
        m.add([("a", 0.5, 0.0, 0.5)].into_iter(), 0.0);
        let f = m.finish();
        let ids: Vec<&str> = f.slots.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        let (a, b) = (&f.slots[0], &f.slots[1]);
        assert_eq!((a.impression, b.impression), (Some(1.0), Some(0.5)));
        assert!(close(a.r_given_impression.unwrap(), 0.5));
        assert!(close(b.r_given_impression.unwrap(), 0.0));
        assert!(close(a.r.unwrap(), 0.5));
        // Shown in both decisions: the interval's top is 1.
        assert_eq!(a.impression_ci.unwrap()[1], 1.0);
        // Pooled: rewards 1, 0, 0 with weight 1.
        assert!(close(f.r_overall.unwrap(), 1.0 / 3.0));
        assert!(f.r_overall_ci.is_some());
    }

    #[test]
    fn weights_multiply_along_slots() {
        // Slot x has weight 2 or 0.5, slot y 1 on its own: y's estimate
        // is the Cressie-Read of the products, not of weight 1.
        let mut m = Multislot::default();
        let (mut want, mut alone) = (CressieRead::default(), CressieRead::default());
        for i in 0..10 {
            let r = f64::from(i % 3 == 0);
            let (q, w) = if r > 0.0 { (1.0, 2.0) } else { (0.25, 0.5) };
            m.add([("x", 0.5, 1.0, q), ("y", 0.5, r, 0.5)].into_iter(), 0.0);
            want.add(w, r);
            alone.add(1.0, r);
        }
        let got = m.finish().slots[1].r_given_impression.unwrap();
        assert!(close(got, want.get().unwrap()), "{got}");
        assert!(!close(got, alone.get().unwrap()), "{got}");
    }

    #[test]
    fn slot_ids_are_bounded() {
        let mut m = Multislot::default();
        let ids: Vec<String> = (0..MAX_SLOT_IDS + 5).map(|i| format!("s{i}")).collect();
        for id in &ids {
            m.add([(id.as_str(), 1.0, 1.0, 1.0)].into_iter(), 0.0);
        }
        let f = m.finish();
        assert_eq!(f.slots.len(), MAX_SLOT_IDS);
        assert_eq!(f.left_out, 5);
    }

    #[test]
    fn dropped_decisions_can_leave_the_impression_interval_undefined() {
        // With pass_probability 0.5 every decision counts twice in the
        // interval's tally: 2n shown of n, past what Clopper-Pearson
        // takes.
        let mut m = Multislot::default();
        for _ in 0..4 {
            m.add([("a", 0.5, 1.0, 0.5)].into_iter(), 0.5);
        }
        let f = m.finish();
        assert_eq!(f.slots[0].impression, Some(1.0));
        assert_eq!(f.slots[0].impression_ci, None);
        assert_eq!(f.slots[0].r_ci, None);
    }

    #[test]
    fn empty() {
        let f = Multislot::default().finish();
        assert!(f.slots.is_empty());
        assert_eq!((f.r_overall, f.r_overall_ci), (None, None));
    }
}
