//! The loop configuration: what CHECKPOINT messages set and callers pin.

use fb_schema::{CheckpointInfo, LearningModeType, ProblemType, RewardFunctionType};

/// How a decision's reward is computed from its outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RewardFunction {
    /// The value of the earliest outcome.
    Earliest,
    /// Arithmetic mean.
    Average,
    /// Median (mean of the two middle values for an even count).
    Median,
    /// Sum.
    Sum,
    /// Minimum.
    Min,
    /// Maximum.
    Max,
}

impl RewardFunction {
    /// From the wire enum; `None` when out of range.
    pub fn from_wire(raw: RewardFunctionType) -> Option<Self> {
        Some(match raw {
            RewardFunctionType::Earliest => Self::Earliest,
            RewardFunctionType::Average => Self::Average,
            RewardFunctionType::Median => Self::Median,
            RewardFunctionType::Sum => Self::Sum,
            RewardFunctionType::Min => Self::Min,
            RewardFunctionType::Max => Self::Max,
            _ => return None,
        })
    }

    /// Parses a name as the reference's command line spells it.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "earliest" => Self::Earliest,
            "average" => Self::Average,
            "median" => Self::Median,
            "sum" => Self::Sum,
            "min" => Self::Min,
            "max" => Self::Max,
            _ => return None,
        })
    }

    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Earliest => "earliest",
            Self::Average => "average",
            Self::Median => "median",
            Self::Sum => "sum",
            Self::Min => "min",
            Self::Max => "max",
        }
    }
}

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

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "online" => Self::Online,
            "apprentice" => Self::Apprentice,
            "loggingonly" | "logging_only" | "logging-only" => Self::LoggingOnly,
            _ => return None,
        })
    }
}

/// The problem type of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Problem {
    /// Set, but to UNKNOWN: every interaction mismatches.
    Unknown,
    /// Contextual bandit.
    Cb,
    /// Conditional contextual bandit.
    Ccb,
    /// Slates.
    Slates,
    /// Continuous actions.
    Ca,
    /// Multistep episodes.
    Multistep,
}

impl Problem {
    /// From the wire enum (out-of-range values count as UNKNOWN).
    pub fn from_wire(raw: ProblemType) -> Self {
        match raw {
            ProblemType::CB => Self::Cb,
            ProblemType::CCB => Self::Ccb,
            ProblemType::SLATES => Self::Slates,
            ProblemType::CA => Self::Ca,
            ProblemType::MULTISTEP => Self::Multistep,
            _ => Self::Unknown,
        }
    }

    /// Parses a command-line name.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s.to_ascii_lowercase().as_str() {
            "cb" => Self::Cb,
            "ccb" => Self::Ccb,
            "slates" => Self::Slates,
            "ca" => Self::Ca,
            "multistep" => Self::Multistep,
            "unknown" => Self::Unknown,
            _ => return None,
        })
    }

    /// Upper-case name, as the schema spells it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Unknown => "UNKNOWN",
            Self::Cb => "CB",
            Self::Ccb => "CCB",
            Self::Slates => "SLATES",
            Self::Ca => "CA",
            Self::Multistep => "MULTISTEP",
        }
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
    /// Problem type; `None` until a checkpoint or override sets it.
    pub problem_type: Option<Problem>,
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
        self.problem_type = Some(Problem::from_wire(info.problem_type_config()));
        self.use_client_time = info.use_client_time();
        self.pin(overrides);
    }

    /// True once a problem type is known.
    pub fn is_ready(&self) -> bool {
        self.problem_type.is_some()
    }
}
