//! Joined events: one decision with its outcomes and rewards.

use std::borrow::Cow;

use fb_format::Problem;

use crate::config::LearningMode;
use fb_schema::TimeStamp;

/// An outcome's value.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeValue {
    /// None written (counts as 0.0).
    None,
    /// A number.
    Numeric(f32),
    /// Text (counts as 0.0).
    Literal(String),
}

impl OutcomeValue {
    /// The number reward functions use.
    pub fn number(&self) -> f32 {
        match self {
            Self::Numeric(v) => *v,
            Self::None | Self::Literal(_) => 0.0,
        }
    }
}

/// An outcome's index.
#[derive(Debug, Clone, PartialEq)]
pub enum OutcomeIndex {
    /// None written.
    None,
    /// A number (a CCB slot index).
    Numeric(i32),
    /// Text (a CCB slot id or multistep step id).
    Literal(String),
}

/// One outcome or activation.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// The outcome's event id (`meta.id`).
    pub event_id: String,
    /// Its value.
    pub value: OutcomeValue,
    /// Its index.
    pub index: OutcomeIndex,
    /// An activation of a deferred action, not a reward.
    pub action_taken: bool,
    /// Its time (enqueued, or client time when configured).
    pub time: TimeStamp,
}

impl Outcome {
    pub(crate) fn blank() -> Self {
        Self {
            event_id: String::new(),
            value: OutcomeValue::None,
            index: OutcomeIndex::None,
            action_taken: false,
            time: TimeStamp::default(),
        }
    }
}

/// One slot of a CCB or Slates decision.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SlotDecision {
    /// The slot id, when the log has one.
    pub id: Option<String>,
    /// Action ids, chosen first.
    pub actions: Vec<u32>,
    /// Their probabilities.
    pub probabilities: Vec<f32>,
    /// Indices into [`JoinedEvent::outcomes`] of the outcomes of this slot.
    pub outcomes: Vec<usize>,
    /// The slot's reward.
    pub reward: f32,
    /// f(outcomes) whatever the learning mode.
    pub original_reward: f32,
}

/// The decision that was made.
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// CB or multistep step: ranked actions.
    Cb {
        /// Action ids, chosen first.
        actions: Vec<u64>,
        /// Their probabilities.
        probabilities: Vec<f32>,
    },
    /// CCB or Slates.
    MultiSlot {
        /// The slots.
        slots: Vec<SlotDecision>,
        /// Baseline actions, one per slot (apprentice).
        baseline: Vec<i32>,
    },
    /// Continuous action.
    Ca {
        /// The action.
        action: f32,
        /// The density of the action.
        pdf_value: f32,
    },
}

/// One joined event: a decision, its outcomes and computed rewards.
///
/// `'a` is the log the context may borrow from: events handed out by
/// [`Joiner::push_each`](crate::Joiner::push_each) point into the message,
/// events queued for [`Joiner::pop`](crate::Joiner::pop) own their bytes
/// (`JoinedEvent<'static>`).
#[derive(Debug, Clone, PartialEq)]
pub struct JoinedEvent<'a> {
    /// What kind of decision.
    pub kind: Problem,
    /// The event id (the step id for multistep).
    pub event_id: String,
    /// Its time (enqueued, or client time when configured).
    pub time: TimeStamp,
    /// The client's time of the decision, when the log has one (whatever
    /// the configuration uses).
    pub client_time: Option<TimeStamp>,
    /// The learning mode of the loop the decision was made in.
    pub learning_mode: LearningMode,
    /// Multistep: the episode the step belongs to (the metadata id).
    pub episode_id: Option<String>,
    /// Model id, `"N/A"` when absent.
    pub model_id: String,
    /// The context JSON as logged (dedup references inlined on request):
    /// borrowed from the payload when it was stored uncompressed and is
    /// written as logged, owned when it was decompressed or rewritten.
    pub context: Cow<'a, [u8]>,
    /// The probability the event was kept by sampling.
    pub pass_probability: f32,
    /// The action was deferred.
    pub deferred: bool,
    /// Not to be learned from (deferred and never activated).
    pub skip_learn: bool,
    /// Outcomes in file order (for multistep: episodic and the step's own).
    pub outcomes: Vec<Outcome>,
    /// The decision.
    pub decision: Decision,
    /// The reward used for learning (CB, Slates, CA, multistep).
    pub reward: f32,
    /// f(outcomes) whatever the learning mode.
    pub original_reward: f32,
    /// Byte offset of the REGULAR message it came from.
    pub offset: u64,
    /// Index of that message.
    pub message: u64,
}

/// The buffers of a joined event, kept from one event to the next (see
/// [`Joiner::recycle`](crate::Joiner::recycle)): an event is built around
/// them and taken apart again field by field, which moves less than the
/// whole event would.
#[derive(Debug)]
pub(crate) struct Buffers {
    event_id: String,
    model_id: String,
    outcomes: Vec<Outcome>,
    decision: Decision,
}

impl Default for Buffers {
    fn default() -> Self {
        Self {
            event_id: String::new(),
            model_id: String::new(),
            outcomes: Vec::new(),
            decision: Decision::Cb {
                actions: Vec::new(),
                probabilities: Vec::new(),
            },
        }
    }
}

impl JoinedEvent<'static> {
    /// An event with nothing in it yet, whose buffers the joiner fills.
    #[cfg(test)]
    pub(crate) fn blank() -> Self {
        Self::around(Buffers::default())
    }
}

impl<'a> JoinedEvent<'a> {
    /// An event with nothing in it yet around `buffers`, which the joiner
    /// fills.
    #[inline(always)]
    pub(crate) fn around(buffers: Buffers) -> Self {
        let Buffers {
            event_id,
            model_id,
            outcomes,
            decision,
        } = buffers;
        Self {
            kind: Problem::Cb,
            event_id,
            time: TimeStamp::default(),
            client_time: None,
            learning_mode: LearningMode::Online,
            episode_id: None,
            model_id,
            context: Cow::Borrowed(&[]),
            pass_probability: 1.0,
            deferred: false,
            skip_learn: false,
            outcomes,
            decision,
            reward: 0.0,
            original_reward: 0.0,
            offset: 0,
            message: 0,
        }
    }

    /// The event taken apart: its buffers, and its context.
    #[inline(always)]
    pub(crate) fn apart(self) -> (Buffers, Cow<'a, [u8]>) {
        let Self {
            event_id,
            model_id,
            outcomes,
            decision,
            context,
            ..
        } = self;
        (
            Buffers {
                event_id,
                model_id,
                outcomes,
                decision,
            },
            context,
        )
    }
}

impl<'a> JoinedEvent<'a> {
    /// The outcomes that count for the decision, as its DSJSON line lists
    /// them: every one joined to it, but for CCB those of its slots, slot
    /// by slot (an outcome for no slot, such as one with an index out of
    /// range, counts in no reward and the joiner reports it). What `fb
    /// stats` counts as outcomes and the export's `outcomes` column hold.
    pub fn counted_outcomes(&self) -> impl Iterator<Item = &Outcome> + '_ {
        let slotted = match (&self.kind, &self.decision) {
            (Problem::Ccb, Decision::MultiSlot { slots, .. }) => Some(slots),
            _ => None,
        };
        let all = match slotted {
            Some(_) => None,
            None => Some(self.outcomes.iter()),
        };
        let by_slot = slotted.into_iter().flat_map(move |slots| {
            slots.iter().flat_map(move |slot| {
                slot.outcomes
                    .iter()
                    .filter_map(move |&k| self.outcomes.get(k))
            })
        });
        all.into_iter().flatten().chain(by_slot)
    }

    /// Calls `f` with each of [`counted_outcomes`](Self::counted_outcomes),
    /// in its order, with plain loops: for a tally per event, where the
    /// chained iterators cost more than the work.
    #[inline]
    pub fn each_counted_outcome<'s>(&'s self, mut f: impl FnMut(&'s Outcome)) {
        match (&self.kind, &self.decision) {
            (Problem::Ccb, Decision::MultiSlot { slots, .. }) => {
                for slot in slots {
                    for &k in &slot.outcomes {
                        if let Some(o) = self.outcomes.get(k) {
                            f(o);
                        }
                    }
                }
            }
            _ => self.outcomes.iter().for_each(f),
        }
    }

    /// How many [`counted_outcomes`](Self::counted_outcomes) there are,
    /// without walking them where every outcome counts.
    #[inline]
    pub fn counted_outcome_count(&self) -> usize {
        match (&self.kind, &self.decision) {
            (Problem::Ccb, Decision::MultiSlot { slots, .. }) => slots
                .iter()
                .map(|s| {
                    s.outcomes
                        .iter()
                        .filter(|&&k| k < self.outcomes.len())
                        .count()
                })
                .sum(),
            _ => self.outcomes.len(),
        }
    }

    /// The event with a context of its own, no longer tied to the log.
    pub fn into_owned(mut self) -> JoinedEvent<'static> {
        let context = Cow::Owned(std::mem::take(&mut self.context).into_owned());
        self.with_context(context)
    }

    /// The event with `context` in place of its own. (Rebuilt, because the
    /// lifetime changes with it.)
    pub(crate) fn with_context<'b>(mut self, context: Cow<'b, [u8]>) -> JoinedEvent<'b> {
        let episode_id = self.episode_id.take();
        let Self {
            kind,
            time,
            client_time,
            learning_mode,
            pass_probability,
            deferred,
            skip_learn,
            reward,
            original_reward,
            offset,
            message,
            ..
        } = self;
        let (buffers, _) = self.apart();
        JoinedEvent {
            kind,
            time,
            client_time,
            learning_mode,
            episode_id,
            context,
            pass_probability,
            deferred,
            skip_learn,
            reward,
            original_reward,
            offset,
            message,
            ..JoinedEvent::around(buffers)
        }
    }

    /// `1 - pass_probability`.
    pub fn pdrop(&self) -> f32 {
        1.0 - self.pass_probability
    }

    /// Importance weight: 0 when not learnable, else `1 / pass_probability`
    /// (an event kept with probability p stands for 1/p events).
    pub fn weight(&self) -> f32 {
        if self.skip_learn || self.pass_probability <= 0.0 {
            0.0
        } else {
            1.0 / self.pass_probability
        }
    }

    /// Per-slot rewards (CCB/Slates), empty otherwise.
    pub fn slot_rewards(&self) -> Vec<f32> {
        match &self.decision {
            Decision::MultiSlot { slots, .. } => slots.iter().map(|s| s.reward).collect(),
            _ => Vec::new(),
        }
    }

    /// The chosen action of a CB-shaped decision.
    pub fn chosen_action(&self) -> Option<u64> {
        match &self.decision {
            Decision::Cb { actions, .. } => actions.first().copied(),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// CB, CCB and Slates events with four outcomes, the CCB and Slates
    /// ones spread over two slots, one index out of range and one outcome
    /// for no slot.
    #[test]
    fn counted_outcomes_walked_and_counted_alike() {
        let slot = |outcomes: Vec<usize>| SlotDecision {
            id: None,
            actions: vec![1],
            probabilities: vec![1.0],
            outcomes,
            reward: 0.0,
            original_reward: 0.0,
        };
        for (name, kind, slotted) in [
            ("cb", Problem::Cb, false),
            ("ccb", Problem::Ccb, true),
            ("slates", Problem::Slates, true),
            ("ccb without slots", Problem::Ccb, false),
        ] {
            let mut ev = JoinedEvent::blank();
            ev.kind = kind;
            ev.outcomes = (0..4)
                .map(|i| Outcome {
                    event_id: format!("o{i}"),
                    ..Outcome::blank()
                })
                .collect();
            if slotted {
                ev.decision = Decision::MultiSlot {
                    slots: vec![slot(vec![2, 0]), slot(vec![7, 1]), slot(Vec::new())],
                    baseline: Vec::new(),
                };
            }
            let want: Vec<&str> = ev.counted_outcomes().map(|o| o.event_id.as_str()).collect();
            let mut got = Vec::new();
            ev.each_counted_outcome(|o| got.push(o.event_id.as_str()));
            assert_eq!(got, want, "{name}");
            assert_eq!(ev.counted_outcome_count(), want.len(), "{name}");
            let expected = match kind {
                Problem::Ccb if slotted => 3,
                _ => 4,
            };
            assert_eq!(want.len(), expected, "{name}");
        }
    }
}
