//! The names of a loop's configuration: its problem type and reward
//! function, one enum each, shared by every crate and the CLI.
//!
//! ```
//! use fb_format::{Problem, RewardFunction};
//!
//! let p: Problem = "ccb".parse().unwrap();
//! assert_eq!(p.to_string(), "ccb");
//! assert_eq!(Problem::from_wire(p.to_wire()), Some(p));
//! assert!("bandit".parse::<Problem>().is_err());
//! assert_eq!("median".parse::<RewardFunction>().unwrap(), RewardFunction::Median);
//! ```

use fb_schema::{ProblemType, RewardFunctionType};

/// A name that is none of a configuration enum's values.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{given}` is not a {what}: expected one of {expected}")]
pub struct UnknownName {
    /// What was given.
    pub given: String,
    /// What it should have named (`problem type`, ...).
    pub what: &'static str,
    /// The names accepted, comma-separated.
    pub expected: String,
}

/// The value `s` names in `table` (case-insensitive, `-` read as `_`), or
/// an error listing the names `shown`: the one parser of every name the
/// command line takes.
pub fn parse_name<T: Copy>(
    s: &str,
    table: &[(&str, T)],
    what: &'static str,
    shown: &[&str],
) -> Result<T, UnknownName> {
    let wanted = s.trim().to_ascii_lowercase().replace('-', "_");
    table
        .iter()
        .find(|(name, _)| *name == wanted)
        .map(|(_, value)| *value)
        .ok_or_else(|| UnknownName {
            given: s.to_string(),
            what,
            expected: shown.join(", "),
        })
}

/// Implements `ALL`, `NAMES`, `name`, `Display` and `FromStr`
/// (case-insensitive, `-` read as `_`, through [`parse_name`]) for a
/// fieldless enum, from one table of names: `named!(Enum, "what it is",
/// [Variant = "name" | "alias", ...])`.
#[macro_export]
macro_rules! named {
    ($ty:ident, $what:literal, [$($variant:ident = $name:literal $(| $alias:literal)*),+ $(,)?]) => {
        impl $ty {
            /// Every value, in the order of [`Self::NAMES`].
            pub const ALL: &'static [Self] = &[$(Self::$variant),+];

            /// The names the command line takes, one per value.
            pub const NAMES: &'static [&'static str] = &[$($name),+];

            /// Lower-case name, as the command line spells it.
            pub fn name(self) -> &'static str {
                match self {
                    $(Self::$variant => $name),+
                }
            }
        }

        impl ::std::fmt::Display for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $ty {
            type Err = $crate::UnknownName;

            fn from_str(s: &str) -> ::std::result::Result<Self, $crate::UnknownName> {
                $crate::parse_name(s, &[$(($name, Self::$variant) $(, ($alias, Self::$variant))*),+], $what, Self::NAMES)
            }
        }
    };
}

/// The problem type of a loop, and so of the decisions it logs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[non_exhaustive]
pub enum Problem {
    /// Contextual bandit.
    Cb,
    /// Conditional contextual bandit (slots).
    Ccb,
    /// Slates.
    Slates,
    /// Continuous actions.
    Ca,
    /// Multistep episodes (each step CB-shaped).
    Multistep,
}

named!(
    Problem,
    "problem type",
    [
        Cb = "cb",
        Ccb = "ccb",
        Slates = "slates",
        Ca = "ca",
        Multistep = "multistep",
    ]
);

impl Problem {
    /// From the wire enum; `None` for UNKNOWN or a value out of range.
    pub fn from_wire(raw: ProblemType) -> Option<Self> {
        Some(match raw {
            ProblemType::CB => Self::Cb,
            ProblemType::CCB => Self::Ccb,
            ProblemType::SLATES => Self::Slates,
            ProblemType::CA => Self::Ca,
            ProblemType::MULTISTEP => Self::Multistep,
            _ => return None,
        })
    }

    /// The wire enum.
    pub fn to_wire(self) -> ProblemType {
        match self {
            Self::Cb => ProblemType::CB,
            Self::Ccb => ProblemType::CCB,
            Self::Slates => ProblemType::SLATES,
            Self::Ca => ProblemType::CA,
            Self::Multistep => ProblemType::MULTISTEP,
        }
    }

    /// Upper-case name, as the schema spells it.
    pub fn schema_name(self) -> &'static str {
        match self {
            Self::Cb => "CB",
            Self::Ccb => "CCB",
            Self::Slates => "SLATES",
            Self::Ca => "CA",
            Self::Multistep => "MULTISTEP",
        }
    }
}

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

named!(
    RewardFunction,
    "reward function",
    [
        Earliest = "earliest",
        Average = "average",
        Median = "median",
        Sum = "sum",
        Min = "min",
        Max = "max",
    ]
);

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

    /// The wire enum.
    pub fn to_wire(self) -> RewardFunctionType {
        match self {
            Self::Earliest => RewardFunctionType::Earliest,
            Self::Average => RewardFunctionType::Average,
            Self::Median => RewardFunctionType::Median,
            Self::Sum => RewardFunctionType::Sum,
            Self::Min => RewardFunctionType::Min,
            Self::Max => RewardFunctionType::Max,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_wire_values_too() {
        for p in Problem::ALL {
            assert_eq!(p.name().parse::<Problem>(), Ok(*p));
            assert_eq!(p.to_string().to_uppercase(), p.schema_name());
            assert_eq!(Problem::from_wire(p.to_wire()), Some(*p));
        }
        for f in RewardFunction::ALL {
            assert_eq!(f.name().to_uppercase().parse::<RewardFunction>(), Ok(*f));
            assert_eq!(RewardFunction::from_wire(f.to_wire()), Some(*f));
        }
        assert_eq!(Problem::from_wire(ProblemType::UNKNOWN), None);
        let err = "bandit".parse::<Problem>().unwrap_err();
        assert_eq!(
            err.to_string(),
            "`bandit` is not a problem type: expected one of cb, ccb, slates, ca, multistep"
        );
    }
}
