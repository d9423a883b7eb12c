//! The loop configuration: what CHECKPOINT messages set and callers pin.

use fb_format::{Problem, RewardFunction};
use fb_schema::{CheckpointInfo, LearningModeType};

/// Learning mode of the loop (and of each decision).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum LearningMode {
    /// Learn from the policy's own decisions.
    Online,
    /// Learn to imitate a baseline.
    Apprentice,
    /// Log only.
    LoggingOnly,
    /// A value this schema does not know (never matches a known one).
    Other(u8),
}

impl LearningMode {
    /// From the wire enum.
    pub fn from_wire(raw: LearningModeType) -> Self {
        match raw {
            LearningModeType::Online => Self::Online,
            LearningModeType::Apprentice => Self::Apprentice,
            LearningModeType::LoggingOnly => Self::LoggingOnly,
            other => Self::Other(other.0),
        }
    }

    /// The names the command line takes.
    pub const NAMES: &'static [&'static str] = &["online", "apprentice", "loggingonly"];
}

impl std::str::FromStr for LearningMode {
    type Err = fb_format::UnknownName;

    /// Parses `online`, `apprentice` or `loggingonly` (also
    /// `logging_only`), case-insensitively.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let table = [
            ("online", Self::Online),
            ("apprentice", Self::Apprentice),
            ("loggingonly", Self::LoggingOnly),
            ("logging_only", Self::LoggingOnly),
        ];
        fb_format::parse_name(s, &table, "learning mode", Self::NAMES)
    }
}

/// Values given by the caller; each one is sticky: no CHECKPOINT changes it.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overrides {
    /// Reward function.
    pub reward_function: Option<RewardFunction>,
    /// Reward of a decision without outcomes.
    pub default_reward: Option<f32>,
    /// Learning mode.
    pub learning_mode: Option<LearningMode>,
    /// Problem type.
    pub problem_type: Option<Problem>,
    /// Use the client's timestamps instead of the enqueued ones.
    pub use_client_time: Option<bool>,
}

/// The configuration in force for the messages being read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct LoopConfig {
    /// Reward function.
    pub reward_function: RewardFunction,
    /// Reward of a decision without outcomes.
    pub default_reward: f32,
    /// Learning mode.
    pub learning_mode: LearningMode,
    /// Problem type; `None` until a checkpoint or override sets it, or
    /// while a checkpoint sets one this schema does not name.
    pub problem_type: Option<Problem>,
    /// A checkpoint set the problem type to UNKNOWN (or a value out of
    /// range): every interaction mismatches.
    pub problem_type_unknown: bool,
    /// Use the client's timestamps.
    pub use_client_time: bool,
}

impl LoopConfig {
    /// The initial configuration with `overrides` applied.
    pub fn new(overrides: &Overrides) -> Self {
        let mut config = Self {
            reward_function: RewardFunction::Earliest,
            default_reward: 0.0,
            learning_mode: LearningMode::Online,
            problem_type: None,
            problem_type_unknown: false,
            use_client_time: false,
        };
        config.pin(overrides);
        config
    }

    fn pin(&mut self, o: &Overrides) {
        if let Some(v) = o.reward_function {
            self.reward_function = v;
        }
        if let Some(v) = o.default_reward {
            self.default_reward = v;
        }
        if let Some(v) = o.learning_mode {
            self.learning_mode = v;
        }
        if let Some(v) = o.problem_type {
            self.problem_type = Some(v);
            self.problem_type_unknown = false;
        }
        if let Some(v) = o.use_client_time {
            self.use_client_time = v;
        }
    }

    /// Applies a CHECKPOINT: replaces every value not pinned by `overrides`.
    /// An out-of-range reward function leaves the current one.
    pub fn apply_checkpoint(&mut self, info: &CheckpointInfo<'_>, overrides: &Overrides) {
        if let Some(rf) = RewardFunction::from_wire(info.reward_function_type()) {
            self.reward_function = rf;
        }
        self.default_reward = info.default_reward();
        self.learning_mode = LearningMode::from_wire(info.learning_mode_config());
        self.problem_type = Problem::from_wire(info.problem_type_config());
        self.problem_type_unknown = self.problem_type.is_none();
        self.use_client_time = info.use_client_time();
        self.pin(overrides);
    }

    /// True once a problem type is known.
    pub fn is_ready(&self) -> bool {
        self.problem_type.is_some() || self.problem_type_unknown
    }
}

/// A configuration a CHECKPOINT put in force, and where: what `fb report`
/// shows as the loop's configuration over time.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConfigChange {
    /// Byte offset of the CHECKPOINT message in its input.
    pub offset: u64,
    /// Index of that message in its input.
    pub message: u64,
    /// Decisions the joiner had joined before it (on one thread, every
    /// one before it in the log).
    pub decisions_before: u64,
    /// Time of the last decision joined before it, if any.
    pub last_before: Option<fb_schema::TimeStamp>,
    /// The configuration from then on.
    pub config: LoopConfig,
}

/// Changes kept at most: a log that changes its configuration at every
/// message must not make the history grow with it.
pub const MAX_CHANGES: usize = 256;

/// The configurations checkpoints put in force, in log order: the first
/// checkpoint, and every one that changed something; the first
/// [`MAX_CHANGES`] kept, the rest counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigHistory {
    /// The changes kept.
    pub changes: Vec<ConfigChange>,
    /// Checkpoints read (whether they changed anything or not).
    pub checkpoints: u64,
    /// Changes after the first [`MAX_CHANGES`], not kept.
    pub left_out: u64,
}

impl ConfigHistory {
    /// Notes a checkpoint that put `change.config` in force; `before` is
    /// the configuration it replaced.
    pub(crate) fn note(&mut self, before: &LoopConfig, change: ConfigChange) {
        self.checkpoints += 1;
        if self.checkpoints > 1 && *before == change.config {
            return;
        }
        if self.changes.len() < MAX_CHANGES {
            self.changes.push(change);
        } else {
            self.left_out += 1;
        }
    }
}

#[cfg(test)]
mod history_tests {
    use super::*;

    fn change(config: LoopConfig, offset: u64) -> ConfigChange {
        ConfigChange {
            offset,
            message: offset,
            decisions_before: 0,
            last_before: None,
            config,
        }
    }

    #[test]
    fn keeps_the_first_checkpoint_and_changes_bounded() {
        let base = LoopConfig::new(&Overrides::default());
        let mut h = ConfigHistory::default();
        // The first checkpoint is kept even when it changes nothing.
        h.note(&base, change(base, 1));
        h.note(&base, change(base, 2));
        assert_eq!((h.changes.len(), h.checkpoints), (1, 2));
        let mut other = base;
        other.default_reward = 1.0;
        h.note(&base, change(other, 3));
        assert_eq!(h.changes.last().map(|c| c.offset), Some(3));
        for i in 0..(MAX_CHANGES as u64 + 10) {
            let (before, after) = match i % 2 {
                0 => (other, base),
                _ => (base, other),
            };
            h.note(&before, change(after, 10 + i));
        }
        assert_eq!(h.changes.len(), MAX_CHANGES);
        assert_eq!(h.left_out, 12);
    }
}
