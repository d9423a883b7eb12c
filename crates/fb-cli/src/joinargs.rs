//! Flags shared by the commands that join (convert, stats, export, ...),
//! and what they become: `fb_join::Options` and `fb_run::options::Filter`.

use fb_join::{
    Caches, Compat, LearningMode, Options, Overrides, Problem, RewardFunction, StepTransform,
};
use fb_run::options::{parse_finite_f32, parse_time, Filter, SkipLearn};

/// How to join: the reference's overrides and our options.
#[derive(Debug, Clone, clap::Args)]
pub struct JoinArgs {
    /// `sane` fixes the reference's quirks (README); `reference` joins,
    /// computes rewards and writes exactly as the reference does, quirks
    /// included.
    #[arg(long, value_name = "MODE", default_value = "sane", value_parser = named::<Compat>(Compat::NAMES))]
    pub compat: Compat,

    /// Reward function for every checkpoint.
    #[arg(long, value_name = "F", value_parser = named::<RewardFunction>(RewardFunction::NAMES))]
    pub reward_function: Option<RewardFunction>,

    /// Reward of a decision without outcomes, for every checkpoint.
    #[arg(long, value_name = "R", allow_negative_numbers = true, value_parser = parse_finite_f32)]
    pub default_reward: Option<f32>,

    /// Learning mode for every checkpoint.
    #[arg(long, value_name = "MODE", value_parser = named::<LearningMode>(LearningMode::NAMES))]
    pub learning_mode: Option<LearningMode>,

    /// Problem type for every checkpoint.
    #[arg(long, value_name = "TYPE", value_parser = named::<Problem>(Problem::NAMES))]
    pub problem_type: Option<Problem>,

    /// Use client timestamps instead of enqueued ones, for every
    /// checkpoint (without it, each checkpoint says).
    #[arg(long)]
    pub use_client_time: bool,

    /// Join multistep episodes whatever the checkpoint says (by default
    /// they are joined where it says MULTISTEP; `--compat reference`
    /// needs this flag, as the reference does).
    #[arg(long)]
    pub multistep: bool,

    /// Multistep reward transform.
    #[arg(long, value_name = "HOW", default_value = "suffix_mean", value_parser = named::<StepTransform>(StepTransform::NAMES))]
    pub multistep_reward: StepTransform,

    /// Turn every speed cache, memo and shortcut off, write Parquet with
    /// parquet-rs alone on one thread (its own page buffers, its own
    /// context pages; a partitioned export's rows filtered into each
    /// partition, each file finished before the next), and join a batch's
    /// pieces before arrow-ipc writes it (the same bytes out, slower): for
    /// comparing outputs.
    #[arg(long, hide = true)]
    pub no_caches: bool,
}

/// Which joined events to keep: the same flags for every command that
/// joins.
#[derive(Debug, Clone, clap::Args)]
pub struct FilterArgs {
    /// Whether to write deferred events that were never activated (they
    /// carry "_skipLearn":true).
    #[arg(long, value_name = "WHAT", default_value = "include", value_parser = named::<SkipLearn>(SkipLearn::NAMES))]
    pub skip_learn: SkipLearn,

    /// Only events at or after this time (event time): `2021-05-18`,
    /// `2021-05-18T13:28:29Z` or `2021-05-18T15:28:29+02:00` (no offset:
    /// UTC).
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub since: Option<i64>,

    /// Only events before this time (event time), written as for --since.
    #[arg(long, value_name = "TIME", value_parser = parse_time)]
    pub until: Option<i64>,

    /// Only events of these problem types (comma-separated).
    #[arg(long, value_name = "TYPES", value_delimiter = ',', value_parser = named::<Problem>(Problem::NAMES))]
    pub only: Vec<Problem>,

    /// With --since/--until, read every message even where the log has a
    /// fresh index (`fb index`); by default only the blocks of the index
    /// that hold events in the range are read.
    #[arg(long)]
    pub no_index: bool,
}

impl FilterArgs {
    /// The filter the flags say, refused when it can keep nothing.
    pub fn filter(&self) -> Result<Filter, fb_run::Error> {
        let filter = Filter {
            skip_learn: self.skip_learn,
            since: self.since,
            until: self.until,
            only: self.only.clone(),
            no_index: self.no_index,
        };
        filter.check().map_err(|_| {
            fb_run::Error::Usage("--since is not before --until: no event could be kept".into())
        })?;
        Ok(filter)
    }
}

/// A parser that takes exactly `names` (listed in --help and in errors)
/// and turns the one given into a value with its `FromStr`.
pub fn named<T>(names: &'static [&'static str]) -> impl clap::builder::TypedValueParser<Value = T>
where
    T: std::str::FromStr + Clone + Send + Sync + 'static,
    T::Err: std::fmt::Display,
{
    use clap::builder::TypedValueParser as _;
    clap::builder::PossibleValuesParser::new(names)
        .try_map(|s: String| s.parse::<T>().map_err(|e| e.to_string()))
}

impl JoinArgs {
    /// Joiner options from the flags.
    pub fn options(&self) -> Options {
        Options::default()
            .overrides(Overrides {
                reward_function: self.reward_function,
                default_reward: self.default_reward,
                learning_mode: self.learning_mode,
                problem_type: self.problem_type,
                use_client_time: self.use_client_time.then_some(true),
            })
            .compat(self.compat)
            .multistep(self.multistep)
            .multistep_reward(self.multistep_reward)
            .caches(match self.no_caches {
                true => Caches::Off,
                false => Caches::On,
            })
    }
}

/// How to read logs.
#[derive(Debug, Clone, clap::Args)]
pub struct ReadArgs {
    /// Map the logs into memory instead of reading them: faster, and the
    /// commands that hold a whole log in memory (join, --recover) then
    /// use no memory for it. Only for logs
    /// that no other process writes or truncates while fb reads them
    /// (closed, rotated logs): a map shows such changes, and a lease holds
    /// a writer back for a limited time only (README, "Memory maps").
    #[arg(long)]
    pub mmap: bool,
}

impl ReadArgs {
    /// The map policy the flag says.
    pub fn maps(&self) -> fb_run::input::Maps {
        match self.mmap {
            true => fb_run::input::Maps::WhereSafe,
            false => fb_run::input::Maps::Never,
        }
    }
}
