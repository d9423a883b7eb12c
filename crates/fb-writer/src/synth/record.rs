//! What was generated: every decision with its outcomes, as the tests'
//! model of the joiner reads it, and the counts of a run.

use fb_schema::{LearningModeType, TimeStamp};

use super::Problem;

/// What a generated log holds, counted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GenSummary {
    /// Bytes written.
    pub bytes: u64,
    /// Messages written (all types).
    pub messages: u64,
    /// REGULAR messages.
    pub regular_messages: u64,
    /// CHECKPOINT messages.
    pub checkpoints: u64,
    /// Decisions (episodes for multistep).
    pub decisions: u64,
    /// `JoinedEvent`s (interactions, outcomes, dedup and episode events).
    pub events: u64,
}

/// The index of an outcome.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutcomeIndex {
    /// No index.
    None,
    /// A slot number.
    Numeric(i32),
    /// A slot id or step id.
    Literal(String),
}

/// One outcome as written.
#[derive(Debug, Clone, PartialEq)]
pub struct OutcomeRecord {
    /// The numeric value; `None` for an activation (no value written).
    pub value: Option<f32>,
    /// The index.
    pub index: OutcomeIndex,
    /// An activation.
    pub action_taken: bool,
    /// `JoinedEvent.timestamp` of the outcome.
    pub enqueued: TimeStamp,
    /// `Metadata.client_time_utc` of the outcome.
    pub client_time: TimeStamp,
}

/// One slot of a CCB or slates decision.
#[derive(Debug, Clone, PartialEq)]
pub struct SlotRecord {
    /// The slot id, when it has one.
    pub id: Option<String>,
    /// Action ids, chosen first.
    pub actions: Vec<u32>,
    /// Probabilities, in the order of `actions`.
    pub probabilities: Vec<f32>,
}

/// One step of a multistep episode.
#[derive(Debug, Clone, PartialEq)]
pub struct StepRecord {
    /// The step id (`MultiStepEvent.event_id`).
    pub id: String,
    /// The step it follows.
    pub previous_id: Option<String>,
    /// Action ids, 1-based, chosen first.
    pub actions: Vec<u64>,
    /// Probabilities, in the order of `actions`.
    pub probabilities: Vec<f32>,
    /// The context JSON.
    pub context: String,
    /// `deferred_action`.
    pub deferred: bool,
    /// An activation outcome (indexed by the step id) was written.
    pub activated: bool,
    /// `JoinedEvent.timestamp` of the step.
    pub enqueued: TimeStamp,
    /// `Metadata.client_time_utc` of the step.
    pub client_time: TimeStamp,
}

/// The decision-specific part of a [`GenRecord`].
#[derive(Debug, Clone, PartialEq)]
pub enum Decision {
    /// A CB decision.
    Cb {
        /// Action ids, 1-based, chosen first (baseline: action 1).
        actions: Vec<u64>,
        /// Probabilities, in the order of `actions`.
        probabilities: Vec<f32>,
    },
    /// A CCB decision.
    Ccb {
        /// The slots.
        slots: Vec<SlotRecord>,
        /// `baseline_actions`, one per slot.
        baseline: Vec<i32>,
    },
    /// A slates decision.
    Slates {
        /// The slots.
        slots: Vec<SlotRecord>,
        /// `baseline_actions`, one per slot.
        baseline: Vec<i32>,
    },
    /// A continuous-action decision.
    Ca {
        /// The action.
        action: f32,
        /// Its density.
        pdf_value: f32,
    },
    /// A multistep episode.
    MultiStep {
        /// The steps, in file order.
        steps: Vec<StepRecord>,
    },
}

/// What was generated for one decision (one episode for multistep).
#[derive(Debug, Clone, PartialEq)]
pub struct GenRecord {
    /// Index of the REGULAR message holding it.
    pub message_index: u64,
    /// Byte offset of that message.
    pub message_offset: u64,
    /// `meta.id` of every event of the decision (the episode id).
    pub event_id: String,
    /// Its kind.
    pub problem: Problem,
    /// `JoinedEvent.timestamp` of the interaction (of the episode event).
    pub enqueued: TimeStamp,
    /// `Metadata.client_time_utc` of the interaction.
    pub client_time: TimeStamp,
    /// `pass_probability` of every event.
    pub pass_probability: f32,
    /// `deferred_action` (multistep: see the steps).
    pub deferred: bool,
    /// An activation outcome was written (multistep: see the steps).
    pub activated: bool,
    /// `learning_mode` of the interaction and the CHECKPOINT.
    pub learning_mode: LearningModeType,
    /// `model_id` of the interaction.
    pub model_id: String,
    /// The context JSON (empty for multistep: see the steps).
    pub context: String,
    /// The dedup entries the context refers to, in order of first use
    /// (empty without dedup).
    pub dedup: Vec<(u64, String)>,
    /// Actions, probabilities, slots or steps.
    pub decision: Decision,
    /// Outcomes and activations, in file order.
    pub outcomes: Vec<OutcomeRecord>,
}
