//! What to write: configuration of a CHECKPOINT and typed event specs.
//!
//! Specs borrow everything they carry, so building one costs no
//! allocation. Vector fields the joiner requires are `Option`s: `None`
//! leaves the field out of the flatbuffer (a broken event), while
//! `Some(&[])` writes an empty vector.

use fb_schema::{
    LearningModeType, OutcomeEventArgs, PayloadType, ProblemType, RewardFunctionType, TimeStamp,
};

/// The five settings of a CHECKPOINT message (`CheckpointInfo`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointConfig {
    /// How outcomes become one reward.
    pub reward_function: RewardFunctionType,
    /// Reward of a decision without outcomes.
    pub default_reward: f32,
    /// Online, apprentice or logging-only.
    pub learning_mode: LearningModeType,
    /// The problem type the joiner expects.
    pub problem_type: ProblemType,
    /// Use the client time instead of the enqueued time.
    pub use_client_time: bool,
}

impl Default for CheckpointConfig {
    /// Earliest, 0.0, Online, CB, enqueued time.
    fn default() -> Self {
        Self {
            reward_function: RewardFunctionType::Earliest,
            default_reward: 0.0,
            learning_mode: LearningModeType::Online,
            problem_type: ProblemType::CB,
            use_client_time: false,
        }
    }
}

/// How an event's payload is stored.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Encoding {
    /// As is (`EventEncoding::Identity`).
    #[default]
    Identity,
    /// One zstd frame with the content size in its header
    /// (`EventEncoding::Zstd`).
    Zstd,
    /// Declares `EventEncoding::Zstd` but stores the payload as is: a
    /// broken event whose decompression fails.
    ClaimsZstd,
}

/// The `Metadata` of an event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MetaSpec<'a> {
    /// The event id (`None` writes an event without id: broken).
    pub id: Option<&'a str>,
    /// Client time; `None` leaves the field out.
    pub client_time: Option<TimeStamp>,
    /// Application id; `None` leaves the field out.
    pub app_id: Option<&'a str>,
    /// Declared payload type; `None` takes the one that matches the payload.
    pub payload_type: Option<PayloadType>,
    /// Probability the event passed sampling (`pdrop = 1 - this`).
    pub pass_probability: f32,
    /// How the payload is stored.
    pub encoding: Encoding,
}

impl<'a> MetaSpec<'a> {
    /// Metadata with this id, pass probability 1, nothing else set.
    pub fn new(id: &'a str) -> Self {
        Self {
            id: Some(id),
            client_time: None,
            app_id: None,
            payload_type: None,
            pass_probability: 1.0,
            encoding: Encoding::Identity,
        }
    }
}

/// One event of a REGULAR message: a `JoinedEvent` holding an `Event`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct JoinedEventSpec<'a> {
    /// The event's metadata.
    pub meta: MetaSpec<'a>,
    /// When the joiner enqueued the event (`JoinedEvent.timestamp`).
    pub enqueued: TimeStamp,
    /// The typed payload.
    pub payload: PayloadSpec<'a>,
}

impl<'a> JoinedEventSpec<'a> {
    /// An event with [`MetaSpec::new`] metadata.
    pub fn new(id: &'a str, enqueued: TimeStamp, payload: PayloadSpec<'a>) -> Self {
        Self {
            meta: MetaSpec::new(id),
            enqueued,
            payload,
        }
    }

    /// The same event with its payload zstd-compressed.
    pub fn zstd(mut self) -> Self {
        self.meta.encoding = Encoding::Zstd;
        self
    }
}

/// The typed payload of an event.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum PayloadSpec<'a> {
    /// A contextual-bandit decision (`CbEvent`).
    Cb(CbSpec<'a>),
    /// A CCB decision (`MultiSlotEvent`).
    Ccb(MultiSlotSpec<'a>),
    /// A slates decision (`MultiSlotEvent`).
    Slates(MultiSlotSpec<'a>),
    /// A continuous-action decision (`CaEvent`).
    Ca(CaSpec<'a>),
    /// An outcome or activation (`OutcomeEvent`).
    Outcome(OutcomeEventArgs<'a>),
    /// Action texts for deduplicated contexts (`DedupInfo`).
    Dedup(DedupSpec<'a>),
    /// One step of a multistep episode (`MultiStepEvent`).
    MultiStep(MultiStepSpec<'a>),
    /// The start of a multistep episode (`EpisodeEvent`).
    Episode {
        /// The episode id; `None` leaves the field out.
        episode_id: Option<&'a str>,
    },
    /// Bytes stored as the payload unchanged, with this payload type.
    Raw {
        /// The payload type to declare.
        payload_type: PayloadType,
        /// The payload bytes (need not be a flatbuffer).
        bytes: &'a [u8],
    },
}

impl PayloadSpec<'_> {
    /// The payload type that matches this payload.
    pub fn payload_type(&self) -> PayloadType {
        match self {
            Self::Cb(_) => PayloadType::CB,
            Self::Ccb(_) => PayloadType::CCB,
            Self::Slates(_) => PayloadType::Slates,
            Self::Ca(_) => PayloadType::CA,
            Self::Outcome(_) => PayloadType::Outcome,
            Self::Dedup(_) => PayloadType::DedupInfo,
            Self::MultiStep(_) => PayloadType::MultiStep,
            Self::Episode { .. } => PayloadType::Episode,
            Self::Raw { payload_type, .. } => *payload_type,
        }
    }
}

/// Fields of a `CbEvent`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CbSpec<'a> {
    /// The action is deferred until activated.
    pub deferred_action: bool,
    /// Action ids, 1-based, the chosen one first.
    pub action_ids: Option<&'a [u64]>,
    /// The context: UTF-8 JSON.
    pub context: Option<&'a [u8]>,
    /// Probabilities, in the order of `action_ids`.
    pub probabilities: Option<&'a [f32]>,
    /// The model that decided.
    pub model_id: Option<&'a str>,
    /// The learning mode the event was made in.
    pub learning_mode: LearningModeType,
}

/// One slot of a `MultiSlotEvent` (`SlotEvent`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct SlotSpec<'a> {
    /// Action indices (0-based), the chosen one first.
    pub action_ids: &'a [u32],
    /// Probabilities, in the order of `action_ids`.
    pub probabilities: &'a [f32],
    /// The slot id; `None` leaves the field out.
    pub id: Option<&'a str>,
}

/// Fields of a `MultiSlotEvent` (CCB and Slates).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MultiSlotSpec<'a> {
    /// The context: UTF-8 JSON with `_multi` and `_slots`.
    pub context: Option<&'a [u8]>,
    /// The slots.
    pub slots: Option<&'a [SlotSpec<'a>]>,
    /// The model that decided.
    pub model_id: Option<&'a str>,
    /// The action is deferred until activated.
    pub deferred_action: bool,
    /// Baseline action of each slot.
    pub baseline_actions: Option<&'a [i32]>,
    /// The learning mode the event was made in.
    pub learning_mode: LearningModeType,
}

/// Fields of a `CaEvent`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct CaSpec<'a> {
    /// The action is deferred until activated.
    pub deferred_action: bool,
    /// The continuous action chosen.
    pub action: f32,
    /// The context: UTF-8 JSON.
    pub context: Option<&'a [u8]>,
    /// The density of the chosen action.
    pub pdf_value: f32,
    /// The model that decided.
    pub model_id: Option<&'a str>,
    /// The learning mode the event was made in.
    pub learning_mode: LearningModeType,
}

/// Fields of a `DedupInfo`: parallel vectors.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DedupSpec<'a> {
    /// Dedup ids.
    pub ids: &'a [u64],
    /// JSON text of one action per id.
    pub values: &'a [&'a str],
}

/// Fields of a `MultiStepEvent`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MultiStepSpec<'a> {
    /// This step's id.
    pub event_id: Option<&'a str>,
    /// The id of the step this one follows; `None` for a root.
    pub previous_id: Option<&'a str>,
    /// Action ids, 1-based, the chosen one first.
    pub action_ids: Option<&'a [u64]>,
    /// The context: UTF-8 JSON.
    pub context: Option<&'a [u8]>,
    /// Probabilities, in the order of `action_ids`.
    pub probabilities: Option<&'a [f32]>,
    /// The model that decided.
    pub model_id: Option<&'a str>,
    /// The action is deferred until activated.
    pub deferred_action: bool,
}
