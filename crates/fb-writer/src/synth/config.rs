//! What to generate: the settings of a synthetic log.

use std::str::FromStr;

use fb_format::splitmix::SplitMix64;
use fb_schema::{LearningModeType, RewardFunctionType};

use super::Problem;
use crate::error::{Error, Result};
use crate::spec::CheckpointConfig;

/// When to stop generating.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// After this many decisions (episodes for multistep).
    Events(u64),
    /// After the first REGULAR message that brings the log to at least this
    /// many bytes (the EOF message follows).
    Bytes(u64),
}

/// How outcome values are drawn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum RewardDist {
    /// Always this value.
    Constant(f32),
    /// Uniform in `[low, high)`.
    Uniform {
        /// Lower bound.
        low: f32,
        /// Upper bound.
        high: f32,
    },
    /// 1.0 with probability `p`, else 0.0.
    Bernoulli {
        /// Probability of a 1.0.
        p: f64,
    },
}

impl RewardDist {
    /// Draws one value.
    pub fn sample(&self, rng: &mut SplitMix64) -> f32 {
        match *self {
            Self::Constant(value) => value,
            Self::Uniform { low, high } => low + (high - low) * rng.unit_f32(),
            Self::Bernoulli { p } => {
                if rng.chance(p) {
                    1.0
                } else {
                    0.0
                }
            }
        }
    }
}

impl std::fmt::Display for RewardDist {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Constant(v) => write!(f, "constant:{v}"),
            Self::Uniform { low, high } => write!(f, "uniform:{low}:{high}"),
            Self::Bernoulli { p } => write!(f, "bernoulli:{p}"),
        }
    }
}

impl FromStr for RewardDist {
    type Err = String;

    /// `constant[:V]` (default 1), `uniform[:LOW:HIGH]` (default 0:1),
    /// `bernoulli[:P]` (default 0.5).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let mut parts = s.split(':');
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let params: Vec<&str> = parts.collect();
        // Finite as the float32 the log stores (`1e40` is not).
        let num = |text: &str| {
            text.parse::<f64>()
                .ok()
                .filter(|v| (*v as f32).is_finite())
                .ok_or_else(|| format!("`{text}` in reward distribution `{s}` is not a number"))
        };
        let dist = match (name.as_str(), params.as_slice()) {
            ("constant", []) => Self::Constant(1.0),
            ("constant", [v]) => Self::Constant(num(v)? as f32),
            ("uniform", []) => Self::Uniform {
                low: 0.0,
                high: 1.0,
            },
            ("uniform", [low, high]) => Self::Uniform {
                low: num(low)? as f32,
                high: num(high)? as f32,
            },
            ("bernoulli", []) => Self::Bernoulli { p: 0.5 },
            ("bernoulli", [p]) => Self::Bernoulli { p: num(p)? },
            _ => {
                return Err(format!(
                    "unknown reward distribution `{s}`: expected constant[:V], \
                     uniform[:LOW:HIGH] or bernoulli[:P]"
                ))
            }
        };
        Ok(dist)
    }
}

/// Everything that shapes a synthetic log.
#[derive(Debug, Clone, PartialEq)]
pub struct GenConfig {
    /// Kind of decisions.
    pub problem: Problem,
    /// When to stop.
    pub limit: Limit,
    /// Actions per decision (CB, CCB, multistep), per slot (slates).
    pub actions: usize,
    /// Distinct actions the decisions draw from (per slot for slates),
    /// each with its own text; 0 for four times `actions`, at least 16.
    /// A pool far larger than the log's decisions makes actions that
    /// hardly ever repeat.
    pub action_pool: u64,
    /// Slots per decision (CCB, slates).
    pub slots: usize,
    /// Steps per episode (multistep).
    pub steps: usize,
    /// Outcomes per decision (per step for multistep), activations apart.
    pub outcomes: usize,
    /// Outcome values.
    pub reward: RewardDist,
    /// Fraction of decisions (steps) with `deferred_action`.
    pub deferred: f64,
    /// Fraction of decisions (steps) that get an activation outcome
    /// (`action_taken`), deferred or not.
    pub activated: f64,
    /// Apprentice learning mode (events and CHECKPOINT), else online.
    pub apprentice: bool,
    /// `pass_probability` of every event.
    pub pass_probability: f32,
    /// Actions as `{"__aid":N}` references into a `DedupInfo`.
    pub dedup: bool,
    /// zstd-compress every payload.
    pub zstd: bool,
    /// Decisions per REGULAR message (multistep: always 1 episode).
    pub events_per_message: usize,
    /// A CHECKPOINT before every this many REGULAR messages (0: only one,
    /// at the start).
    pub checkpoint_every: u64,
    /// Reward function of the CHECKPOINTs.
    pub reward_function: RewardFunctionType,
    /// Default reward of the CHECKPOINTs.
    pub default_reward: f32,
    /// `use_client_time` of the CHECKPOINTs.
    pub use_client_time: bool,
    /// Seed of the PRNG: same config and seed, same bytes.
    pub seed: u64,
}

impl Default for GenConfig {
    fn default() -> Self {
        Self {
            problem: Problem::Cb,
            limit: Limit::Events(1000),
            actions: 4,
            action_pool: 0,
            slots: 2,
            steps: 3,
            outcomes: 1,
            reward: RewardDist::Bernoulli { p: 0.5 },
            deferred: 0.0,
            activated: 0.0,
            apprentice: false,
            pass_probability: 1.0,
            dedup: false,
            zstd: false,
            events_per_message: 1,
            checkpoint_every: 0,
            reward_function: RewardFunctionType::Earliest,
            default_reward: 0.0,
            use_client_time: false,
            seed: 0,
        }
    }
}

impl GenConfig {
    /// Checks that the settings can produce a log.
    pub fn validate(&self) -> Result<()> {
        let bad = |msg: String| Err(Error::Config(msg));
        if !Problem::ALL.contains(&self.problem) {
            return bad(format!("{} logs cannot be generated yet", self.problem));
        }
        let needs_actions = !matches!(self.problem, Problem::Ca);
        if needs_actions && self.actions == 0 {
            return bad(format!("{} needs at least one action", self.problem));
        }
        if matches!(self.problem, Problem::Ccb | Problem::Slates) && self.slots == 0 {
            return bad(format!("{} needs at least one slot", self.problem));
        }
        if self.problem == Problem::Ccb && self.slots > self.actions {
            return bad(format!(
                "ccb gives every slot a different action: {} slots need at least {} actions, not {}",
                self.slots, self.slots, self.actions
            ));
        }
        if self.problem == Problem::Multistep && self.steps == 0 {
            return bad("multistep needs at least one step per episode".into());
        }
        if self.events_per_message == 0 {
            return bad("events per message must be at least 1".into());
        }
        for (name, value) in [("deferred", self.deferred), ("activated", self.activated)] {
            if !(0.0..=1.0).contains(&value) {
                return bad(format!("the {name} fraction {value} is not within 0..=1"));
            }
        }
        if !(0.0..=1.0).contains(&self.pass_probability) {
            return bad(format!(
                "pass probability {} is not within 0..=1",
                self.pass_probability
            ));
        }
        match self.reward {
            RewardDist::Bernoulli { p } if !(0.0..=1.0).contains(&p) => {
                bad(format!("bernoulli probability {p} is not within 0..=1"))
            }
            RewardDist::Uniform { low, high }
                if !(low.is_finite() && high.is_finite()) || low > high =>
            {
                bad(format!("uniform reward bounds {low}..{high}"))
            }
            RewardDist::Constant(v) if !v.is_finite() => bad(format!("constant reward {v}")),
            _ => Ok(()),
        }
    }

    /// The CHECKPOINT settings of the log.
    pub fn checkpoint_config(&self) -> CheckpointConfig {
        CheckpointConfig {
            reward_function: self.reward_function,
            default_reward: self.default_reward,
            learning_mode: self.learning_mode(),
            problem_type: self.problem.to_wire(),
            use_client_time: self.use_client_time,
        }
    }

    /// Learning mode of the events and CHECKPOINTs.
    pub fn learning_mode(&self) -> LearningModeType {
        if self.apprentice {
            LearningModeType::Apprentice
        } else {
            LearningModeType::Online
        }
    }
}
