//! Running metrics over joined events (the reference's extra metrics, and
//! more).

use fb_schema::TimeStamp;

use crate::event::{Decision, JoinedEvent};
use crate::Problem;

/// Figures per problem type.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct KindMetrics {
    /// Joined events.
    pub events: u64,
    /// Events that are learnable (not skip-learn).
    pub learnable: u64,
    /// Sum of rewards used for learning.
    pub reward_sum: f64,
    /// Sum of original rewards.
    pub original_reward_sum: f64,
}

/// Metrics of one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metrics {
    /// Events inside the REGULAR messages read (whatever became of them).
    pub events_read: u64,
    /// Events (decisions, outcomes) of loops whose problem type
    /// [`crate::Options::only`] leaves out: read, not joined.
    pub not_selected: u64,
    /// Joined events written.
    pub joined: u64,
    /// Events not to be learned from (deferred, never activated).
    pub skipped_learn: u64,
    /// Outcomes that count for joined events (activations included; see
    /// [`JoinedEvent::counted_outcomes`]).
    pub outcomes: u64,
    /// Activations among them.
    pub activations: u64,
    /// Sum of original costs (-original reward; CCB: over all slots).
    pub original_cost_sum: f64,
    /// Sum of costs used for learning (CCB: over all slots).
    pub cost_sum: f64,
    /// First event id and time seen.
    pub first: Option<(String, TimeStamp)>,
    /// Last event id and time seen.
    pub last: Option<(String, TimeStamp)>,
    /// Decisions with no actions (CCB/Slates: a slot without actions).
    pub zero_actions: u64,
    /// CB: original cost summed where the chosen action is the baseline (1).
    pub cb_baseline_original_cost_sum: f64,
    /// CB: events whose chosen action is the baseline.
    pub cb_baseline_count: u64,
    /// CCB/Slates: first-slot original cost sum.
    pub first_slot_original_cost_sum: f64,
    /// CCB/Slates: first slot's chosen action equals the baseline.
    pub first_slot_equal_baseline: u64,
    /// CCB/Slates: first slot's chosen action differs from the baseline.
    pub first_slot_not_equal_baseline: u64,
    /// CCB/Slates: first-slot original cost sum where equal to baseline.
    pub first_slot_equal_baseline_cost_sum: f64,
    /// Per problem type, indexed by [`Problem`]: an array, not a map,
    /// because every event adds to it.
    kinds: [KindMetrics; KINDS.len()],
}

/// What one joined event adds to the float sums of [`Metrics`] (and the
/// counts that go with them): [`Metrics::record`] is
/// [`Metrics::count`] and these, added in order. Float sums depend on
/// the order of their terms, so a sink that counts events on several
/// threads keeps their additions and adds them in log order.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Addition {
    /// A reward used for learning and its original reward, to the
    /// totals (as costs) and to the problem type's sums: one per event,
    /// one per slot of a CCB decision.
    Reward {
        /// The event's problem type.
        kind: Problem,
        /// Reward used for learning.
        reward: f32,
        /// Original reward.
        original: f32,
    },
    /// CB: the original reward of a decision whose chosen action is the
    /// baseline (1).
    CbBaseline {
        /// Original reward.
        original: f32,
    },
    /// CCB and Slates: the first slot's original reward (Slates: the
    /// decision's), and whether its chosen action is the baseline.
    FirstSlot {
        /// Original reward.
        original: f32,
        /// The chosen action is the slot's baseline.
        baseline: bool,
    },
}

/// Every kind, in the order of their names.
const KINDS: [Problem; 5] = [
    Problem::Ca,
    Problem::Cb,
    Problem::Ccb,
    Problem::Multistep,
    Problem::Slates,
];

fn slot(kind: Problem) -> usize {
    match kind {
        Problem::Ca => 0,
        Problem::Cb => 1,
        Problem::Ccb => 2,
        Problem::Multistep => 3,
        Problem::Slates => 4,
        // A problem type added later has no slot until it gets one: its
        // events count in the totals only.
        _ => KINDS.len(),
    }
}

impl KindMetrics {
    fn merge(&mut self, o: &KindMetrics) {
        self.events += o.events;
        self.learnable += o.learnable;
        self.reward_sum += o.reward_sum;
        self.original_reward_sum += o.original_reward_sum;
    }
}

impl Metrics {
    /// Figures per problem type, for the kinds seen, by name.
    pub fn by_kind(&self) -> impl Iterator<Item = (&'static str, &KindMetrics)> {
        KINDS
            .iter()
            .zip(&self.kinds)
            .filter(|(_, m)| m.events > 0)
            .map(|(k, m)| (k.name(), m))
    }

    /// Adds the metrics of events that came after ours.
    pub fn merge(&mut self, o: &Metrics) {
        self.events_read += o.events_read;
        self.not_selected += o.not_selected;
        self.joined += o.joined;
        self.skipped_learn += o.skipped_learn;
        self.outcomes += o.outcomes;
        self.activations += o.activations;
        self.original_cost_sum += o.original_cost_sum;
        self.cost_sum += o.cost_sum;
        if self.first.is_none() {
            self.first.clone_from(&o.first);
        }
        if o.last.is_some() {
            self.last.clone_from(&o.last);
        }
        self.zero_actions += o.zero_actions;
        self.cb_baseline_original_cost_sum += o.cb_baseline_original_cost_sum;
        self.cb_baseline_count += o.cb_baseline_count;
        self.first_slot_original_cost_sum += o.first_slot_original_cost_sum;
        self.first_slot_equal_baseline += o.first_slot_equal_baseline;
        self.first_slot_not_equal_baseline += o.first_slot_not_equal_baseline;
        self.first_slot_equal_baseline_cost_sum += o.first_slot_equal_baseline_cost_sum;
        for (mine, theirs) in self.kinds.iter_mut().zip(&o.kinds) {
            mine.merge(theirs);
        }
    }

    /// Adds one joined event.
    pub fn record(&mut self, ev: &JoinedEvent) {
        self.record_with(ev, Self::add);
    }

    /// Counts one joined event and hands each of its float additions to
    /// `to`, in the order [`Metrics::record`] adds them: `record` is this
    /// with [`Metrics::add`]. Counts merge exactly, but float sums depend
    /// on the order of their terms, so a batch counted on another thread
    /// keeps its events' [`Addition`]s for the sink to add in log order.
    /// One pass over the event, so that `record` costs what it did
    /// before the additions were apart.
    #[inline]
    pub fn record_with(&mut self, ev: &JoinedEvent, mut to: impl FnMut(&mut Self, Addition)) {
        self.joined += 1;
        self.skipped_learn += u64::from(ev.skip_learn);
        for o in ev.counted_outcomes() {
            self.outcomes += 1;
            self.activations += u64::from(o.action_taken);
        }
        if self.first.is_none() {
            self.first = Some((ev.event_id.clone(), ev.time));
        }
        // Refilled in place: this runs once per event.
        match &mut self.last {
            Some((id, time)) => {
                id.clear();
                id.push_str(&ev.event_id);
                *time = ev.time;
            }
            None => self.last = Some((ev.event_id.clone(), ev.time)),
        }
        let Some(per) = self.kinds.get_mut(slot(ev.kind)) else {
            return;
        };
        per.events += 1;
        per.learnable += u64::from(!ev.skip_learn);
        let kind = ev.kind;
        let whole = Addition::Reward {
            kind,
            reward: ev.reward,
            original: ev.original_reward,
        };
        match &ev.decision {
            Decision::Cb { actions, .. } => {
                to(self, whole);
                self.zero_actions += u64::from(actions.is_empty());
                if kind == Problem::Cb && actions.first() == Some(&1) {
                    to(
                        self,
                        Addition::CbBaseline {
                            original: ev.original_reward,
                        },
                    );
                }
            }
            Decision::Ca { .. } => to(self, whole),
            Decision::MultiSlot { slots, baseline } => {
                if kind == Problem::Slates {
                    to(self, whole);
                } else {
                    for s in slots {
                        to(
                            self,
                            Addition::Reward {
                                kind,
                                reward: s.reward,
                                original: s.original_reward,
                            },
                        );
                    }
                }
                self.zero_actions += u64::from(slots.iter().any(|s| s.actions.is_empty()));
                if let Some(first) = slots.first() {
                    let original = if kind == Problem::Slates {
                        ev.original_reward
                    } else {
                        first.original_reward
                    };
                    // The baseline of the first slot: the logged baseline
                    // action when there is one, else action 0 (the default
                    // policy's first choice).
                    let base = baseline.first().copied().unwrap_or(0);
                    let baseline =
                        first.actions.first().map(|a| i64::from(*a)) == Some(i64::from(base));
                    to(self, Addition::FirstSlot { original, baseline });
                }
            }
        }
    }

    /// Adds one of an event's [`Addition`]s. Float sums depend on the
    /// order of their terms: added in log order, they are the same to
    /// the last bit however the events were counted.
    #[inline]
    pub fn add(&mut self, a: Addition) {
        match a {
            Addition::Reward {
                kind,
                reward,
                original,
            } => {
                self.original_cost_sum -= f64::from(original);
                self.cost_sum -= f64::from(reward);
                if let Some(per) = self.kinds.get_mut(slot(kind)) {
                    per.reward_sum += f64::from(reward);
                    per.original_reward_sum += f64::from(original);
                }
            }
            Addition::CbBaseline { original } => {
                self.cb_baseline_count += 1;
                self.cb_baseline_original_cost_sum -= f64::from(original);
            }
            Addition::FirstSlot { original, baseline } => {
                let cost = -f64::from(original);
                self.first_slot_original_cost_sum += cost;
                if baseline {
                    self.first_slot_equal_baseline += 1;
                    self.first_slot_equal_baseline_cost_sum += cost;
                } else {
                    self.first_slot_not_equal_baseline += 1;
                }
            }
        }
    }
}
