//! Diagnostics: what was skipped or looked wrong, and where.

use std::collections::BTreeMap;
use std::fmt;

/// What kind of problem a diagnostic reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// A REGULAR message read before any problem type was known: skipped.
    NotReady,
    /// A REGULAR payload that failed verification: the message was skipped.
    InvalidJoinedPayload,
    /// An event without `event`/`timestamp`/`meta`/`id`, or failing
    /// verification: the rest of its message was dropped.
    BadEvent,
    /// Events dropped with the rest of their message.
    EventsDropped,
    /// A DedupInfo with ids and values of different lengths: message dropped.
    DedupMismatch,
    /// An Episode event outside multistep mode: rest of message dropped.
    EpisodeOutsideMultistep,
    /// An outcome with no accepted interaction before it: dropped.
    OutcomeWithoutInteraction,
    /// An interaction whose type is not the configured problem type.
    ProblemTypeMismatch,
    /// An interaction whose learning mode is not the configured one.
    LearningModeMismatch,
    /// A payload that failed to decompress or verify.
    InvalidPayload,
    /// An interaction missing a required field.
    MissingField,
    /// An id whose group had no accepted interaction: skipped.
    NoInteraction,
    /// A second interaction with the same id in a group: ignored.
    DuplicateInteraction,
    /// A CCB outcome naming a slot id no slot carries: ignored.
    UnknownSlotId,
    /// A CCB outcome whose numeric index is out of range: ignored.
    SlotIndexOutOfRange,
    /// A CCB outcome without index: ignored.
    OutcomeWithoutIndex,
    /// Apprentice CCB with baseline count different from slot count: skipped.
    BaselineMismatch,
    /// Apprentice mode where it is not implemented: default reward used.
    ApprenticeUnsupported,
    /// Client time requested but absent: enqueued time used.
    ClientTimeMissing,
    /// A context that is not valid JSON: skipped.
    InvalidContext,
    /// An interaction with no actions: skipped.
    ZeroActions,
    /// A payload type this schema does not know: ignored.
    UnknownPayloadType,
    /// A message of unknown type: skipped.
    UnknownMessageType,
    /// A multistep step id seen twice: the repeat was skipped.
    DuplicateStep,
    /// An `__aid` reference to an action not in the dedup cache: skipped.
    MissingDedupAction,
    /// A subsecond field above 9,999,999 (not 100 ns ticks): treated as 0.
    InvalidSubsecond,
    /// The log ended with a framing error (truncation, bad version, ...).
    Framing,
}

impl DiagnosticKind {
    /// A short stable name (used in summaries and JSON).
    pub fn name(self) -> &'static str {
        match self {
            Self::NotReady => "not_ready",
            Self::InvalidJoinedPayload => "invalid_joined_payload",
            Self::BadEvent => "bad_event",
            Self::EventsDropped => "events_dropped",
            Self::DedupMismatch => "dedup_mismatch",
            Self::EpisodeOutsideMultistep => "episode_outside_multistep",
            Self::OutcomeWithoutInteraction => "outcome_without_interaction",
            Self::ProblemTypeMismatch => "problem_type_mismatch",
            Self::LearningModeMismatch => "learning_mode_mismatch",
            Self::InvalidPayload => "invalid_payload",
            Self::MissingField => "missing_field",
            Self::NoInteraction => "no_interaction",
            Self::DuplicateInteraction => "duplicate_interaction",
            Self::UnknownSlotId => "unknown_slot_id",
            Self::SlotIndexOutOfRange => "slot_index_out_of_range",
            Self::OutcomeWithoutIndex => "outcome_without_index",
            Self::BaselineMismatch => "baseline_mismatch",
            Self::ApprenticeUnsupported => "apprentice_unsupported",
            Self::ClientTimeMissing => "client_time_missing",
            Self::InvalidContext => "invalid_context",
            Self::ZeroActions => "zero_actions",
            Self::UnknownPayloadType => "unknown_payload_type",
            Self::UnknownMessageType => "unknown_message_type",
            Self::DuplicateStep => "duplicate_step",
            Self::MissingDedupAction => "missing_dedup_action",
            Self::InvalidSubsecond => "invalid_subsecond",
            Self::Framing => "framing",
        }
    }
}

/// One problem, with where it happened.
#[derive(Debug, Clone, PartialEq)]
pub struct Diagnostic {
    /// What happened.
    pub kind: DiagnosticKind,
    /// Byte offset of the message.
    pub offset: u64,
    /// Index of the message.
    pub message: u64,
    /// The event id, when one is known.
    pub event_id: Option<String>,
    /// Details in words.
    pub detail: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "message {} at byte {}", self.message, self.offset)?;
        if let Some(id) = &self.event_id {
            write!(f, ", event `{id}`")?;
        }
        write!(f, ": {} ({})", self.detail, self.kind.name())
    }
}

/// Every diagnostic counted by kind; the first `limit` kept in full.
#[derive(Debug, Clone, Default)]
pub struct Diagnostics {
    counts: BTreeMap<DiagnosticKind, u64>,
    /// The sum of `counts`, kept as they grow: the joiner asks for it
    /// twice a message (`joiner/read_whole.rs`).
    total: u64,
    kept: Vec<Diagnostic>,
    limit: usize,
}

impl Diagnostics {
    /// Keeps at most `limit` diagnostics in full (all are counted).
    pub fn with_limit(limit: usize) -> Self {
        Self {
            limit,
            ..Self::default()
        }
    }

    /// Records one diagnostic.
    pub fn push(&mut self, d: Diagnostic) {
        self.add(d.kind, 1);
        if self.kept.len() < self.limit {
            self.kept.push(d);
        }
    }

    /// Counts `n` occurrences of `kind` without details.
    pub fn add(&mut self, kind: DiagnosticKind, n: u64) {
        if n > 0 {
            *self.counts.entry(kind).or_default() += n;
            self.total += n;
        }
    }

    /// Adds `other`'s counts and kept diagnostics (after ours).
    pub fn merge(&mut self, other: &Diagnostics) {
        for (kind, n) in &other.counts {
            self.add(*kind, *n);
        }
        let room = self.limit.saturating_sub(self.kept.len());
        self.kept.extend(other.kept.iter().take(room).cloned());
    }

    /// Count per kind.
    pub fn counts(&self) -> &BTreeMap<DiagnosticKind, u64> {
        &self.counts
    }

    /// Count of one kind.
    pub fn count(&self, kind: DiagnosticKind) -> u64 {
        self.counts.get(&kind).copied().unwrap_or(0)
    }

    /// Total count.
    pub fn total(&self) -> u64 {
        self.total
    }

    /// The diagnostics kept in full, in order.
    pub fn kept(&self) -> &[Diagnostic] {
        &self.kept
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The running total is the sum of the counts, whatever way they grew.
    #[test]
    fn the_total_is_the_sum_of_the_counts() {
        let mut a = Diagnostics::with_limit(1);
        a.add(DiagnosticKind::BadEvent, 3);
        a.add(DiagnosticKind::EventsDropped, 0);
        a.add(DiagnosticKind::NotReady, 2);
        let mut b = Diagnostics::with_limit(0);
        b.add(DiagnosticKind::BadEvent, 4);
        b.add(DiagnosticKind::MissingField, 1);
        a.merge(&b);
        let sum: u64 = a.counts().values().sum();
        assert_eq!((a.total(), sum), (10, 10));
        assert_eq!(a.count(DiagnosticKind::BadEvent), 7);
        assert_eq!(Diagnostics::default().total(), 0);
    }
}
