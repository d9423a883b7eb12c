//! The keyword arguments of `read`, `convert` and `stats` (one dict from
//! the Python layer), checked and turned into the same join options and
//! filters as the `fb` command's flags.

use std::str::FromStr;

use fb_cli::joinargs::{FilterArgs, JoinArgs};
use fb_join::{Compat, LearningMode, Problem, RewardFunction, StepTransform};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// Everything a call can set.
pub struct Opts {
    /// How to join.
    pub join: JoinArgs,
    /// Which joined events to keep.
    pub filter: FilterArgs,
    /// Read on past damage.
    pub recover: bool,
    /// Rows per record batch.
    pub batch_rows: usize,
    /// Worker threads.
    pub threads: usize,
    /// The columns `read` builds.
    pub columns: fb_arrow::Columns,
}

/// The keys `options` takes.
const KEYS: &[&str] = &[
    "problem_type",
    "reward_function",
    "default_reward",
    "learning_mode",
    "use_client_time",
    "multistep",
    "multistep_reward",
    "compat",
    "since",
    "until",
    "skip_learn",
    "only",
    "recover",
    "batch_rows",
    "threads",
    "columns",
];

fn bad(what: &str, why: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{what}: {why}"))
}

/// A name among `names`, parsed with its `FromStr`.
fn named<T: FromStr>(what: &str, value: &str, names: &[&str]) -> PyResult<T> {
    value.parse().map_err(|_| {
        bad(
            what,
            format!("`{value}` is not one of {}", names.join(", ")),
        )
    })
}

/// The value of `key` in `d` as a `$t`; `None` when absent or None.
macro_rules! get {
    ($d:expr, $key:expr, $t:ty) => {
        match $d.get_item($key)? {
            None => None,
            Some(v) if v.is_none() => None,
            Some(v) => Some(v.extract::<$t>().map_err(|e| bad($key, PyErr::from(e)))?),
        }
    };
}

/// Checks and converts the options dict.
pub fn parse(d: &Bound<'_, PyDict>) -> PyResult<Opts> {
    for key in d.keys() {
        let key: String = key.extract()?;
        if !KEYS.contains(&key.as_str()) {
            return Err(bad(
                &key,
                format!("no such option; the options are {}", KEYS.join(", ")),
            ));
        }
    }
    let text = |key: &str| -> PyResult<Option<String>> { Ok(get!(d, key, String)) };
    let compat = match text("compat")? {
        Some(c) => named::<Compat>("compat", &c, Compat::NAMES)?,
        None => Compat::default(),
    };
    let multistep_reward = match text("multistep_reward")? {
        Some(s) => named::<StepTransform>("multistep_reward", &s, StepTransform::NAMES)?,
        None => StepTransform::default(),
    };
    let join = JoinArgs {
        compat,
        reward_function: text("reward_function")?
            .map(|s| named::<RewardFunction>("reward_function", &s, RewardFunction::NAMES))
            .transpose()?,
        default_reward: get!(d, "default_reward", f32),
        learning_mode: text("learning_mode")?
            .map(|s| named::<LearningMode>("learning_mode", &s, LearningMode::NAMES))
            .transpose()?,
        problem_type: text("problem_type")?
            .map(|s| named::<Problem>("problem_type", &s, Problem::NAMES))
            .transpose()?,
        use_client_time: get!(d, "use_client_time", bool).unwrap_or(false),
        multistep: get!(d, "multistep", bool).unwrap_or(false),
        multistep_reward,
    };
    let time = |key: &str| -> PyResult<Option<i64>> {
        text(key)?
            .map(|s| fb_cli::joinargs::parse_time(&s).map_err(|e| bad(key, e)))
            .transpose()
    };
    let skip_learn = match text("skip_learn")?.as_deref() {
        None | Some("include") => "include",
        Some("exclude") => "exclude",
        Some(other) => {
            return Err(bad(
                "skip_learn",
                format!("`{other}` is not one of include, exclude"),
            ))
        }
    };
    let only = get!(d, "only", Vec<String>)
        .unwrap_or_default()
        .iter()
        .map(|s| named::<Problem>("only", s, Problem::NAMES))
        .collect::<PyResult<Vec<_>>>()?;
    let filter = FilterArgs {
        skip_learn: skip_learn.into(),
        since: time("since")?,
        until: time("until")?,
        only,
        // vwlogs reads every message (drive.rs); `fb index` serves the CLI.
        no_index: true,
    };
    filter.check().map_err(|e| bad("since/until", e))?;
    let batch_rows = get!(d, "batch_rows", usize).unwrap_or(65_536);
    if batch_rows == 0 {
        return Err(bad("batch_rows", "must be at least 1"));
    }
    let threads = get!(d, "threads", usize).unwrap_or(1);
    if !(1..=fb_cli::convert::MAX_THREADS).contains(&threads) {
        return Err(bad(
            "threads",
            format!("expected 1 to {}", fb_cli::convert::MAX_THREADS),
        ));
    }
    let columns = match get!(d, "columns", Vec<String>) {
        None => fb_arrow::Columns::all(),
        Some(names) => fb_arrow::Columns::named(&names).map_err(|e| bad("columns", e))?,
    };
    Ok(Opts {
        join,
        filter,
        recover: get!(d, "recover", bool).unwrap_or(false),
        batch_rows,
        threads,
        columns,
    })
}

impl Opts {
    /// The joiner's options.
    pub fn options(&self) -> fb_join::Options {
        let mut opts = self.join.options();
        opts.only = self.filter.only.clone();
        opts
    }
}
