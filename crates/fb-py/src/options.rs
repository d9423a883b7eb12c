//! The keyword arguments of `read`, `convert` and `stats` (one dict from
//! the Python layer), checked and turned into the same join options and
//! filters as the `fb` command's flags. Errors name the option, never a
//! flag of the command.

use std::str::FromStr;

use fb_cli::joinargs::{FilterArgs, JoinArgs};
use fb_join::{Compat, LearningMode, Problem, RewardFunction, StepTransform};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString};

/// Everything a call can set.
pub struct Opts {
    /// How to join.
    pub join: JoinArgs,
    /// Which joined events to keep.
    pub filter: FilterArgs,
    /// Replace dedup references in contexts with the actions they stand
    /// for.
    pub inline_dedup: bool,
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
    "inline_dedup",
    "recover",
    "batch_rows",
    "threads",
    "columns",
];

/// A value out of range, or not one of the names an option takes.
fn bad(what: &str, why: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("{what}: {why}"))
}

/// A value of the wrong type.
fn wrong_type(what: &str, expected: &str, value: &Bound<'_, PyAny>) -> PyErr {
    let type_name = value
        .get_type()
        .name()
        .map_or_else(|_| "?".to_string(), |n| n.to_string());
    PyTypeError::new_err(format!("{what}: expected {expected}, not {type_name}"))
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

/// The options dict, read value by value with the type each takes: a
/// wrong type is a `TypeError` naming the option (a string is never
/// taken as a boolean, nor a boolean as a number), a value out of range
/// a `ValueError`.
struct Given<'a, 'py>(&'a Bound<'py, PyDict>);

impl<'py> Given<'_, 'py> {
    /// The value of `key`; `None` when absent or None.
    fn value(&self, key: &str) -> PyResult<Option<Bound<'py, PyAny>>> {
        Ok(self.0.get_item(key)?.filter(|v| !v.is_none()))
    }

    fn flag(&self, key: &str) -> PyResult<bool> {
        match self.value(key)? {
            None => Ok(false),
            Some(v) => match v.cast::<PyBool>() {
                Ok(b) => Ok(b.is_true()),
                Err(_) => Err(wrong_type(key, "True or False", &v)),
            },
        }
    }

    fn text(&self, key: &str) -> PyResult<Option<String>> {
        match self.value(key)? {
            None => Ok(None),
            Some(v) if v.is_instance_of::<PyString>() => Ok(Some(v.extract()?)),
            Some(v) => Err(wrong_type(key, "a string", &v)),
        }
    }

    fn texts(&self, key: &str) -> PyResult<Option<Vec<String>>> {
        let Some(v) = self.value(key)? else {
            return Ok(None);
        };
        let list = v
            .cast::<PyList>()
            .map_err(|_| wrong_type(key, "a list of strings", &v))?;
        list.iter()
            .map(|item| match item.is_instance_of::<PyString>() {
                true => item.extract::<String>(),
                false => Err(wrong_type(key, "a list of strings", &item)),
            })
            .collect::<PyResult<Vec<_>>>()
            .map(Some)
    }

    /// A whole number from `min` to `max`.
    fn count(&self, key: &str, min: u64, max: u64) -> PyResult<Option<u64>> {
        let Some(v) = self.value(key)? else {
            return Ok(None);
        };
        if v.is_instance_of::<PyBool>() || !v.is_instance_of::<PyInt>() {
            return Err(wrong_type(key, "an int", &v));
        }
        match v.extract::<u64>() {
            Ok(n) if (min..=max).contains(&n) => Ok(Some(n)),
            // Negative, beyond u64, or out of bounds.
            _ => Err(bad(key, format!("{} is not from {min} to {max}", v.str()?))),
        }
    }

    fn number(&self, key: &str) -> PyResult<Option<f32>> {
        let Some(v) = self.value(key)? else {
            return Ok(None);
        };
        if v.is_instance_of::<PyBool>()
            || !(v.is_instance_of::<PyFloat>() || v.is_instance_of::<PyInt>())
        {
            return Err(wrong_type(key, "a number", &v));
        }
        // Finite as the float32 a reward is: nan, inf and 1e39 would be
        // written as `null`, which VW cannot read.
        let n = v.extract::<f64>()? as f32;
        if !n.is_finite() {
            return Err(bad(
                key,
                format!("{v} is not a finite number (as a 32-bit float)"),
            ));
        }
        Ok(Some(n))
    }
}

/// Most rows `batch_rows` takes: more than any batch can hold.
const MAX_BATCH_ROWS: u64 = u32::MAX as u64;

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
    let given = Given(d);
    let compat = match given.text("compat")? {
        Some(c) => named::<Compat>("compat", &c, Compat::NAMES)?,
        None => Compat::default(),
    };
    let multistep_reward = match given.text("multistep_reward")? {
        Some(s) => named::<StepTransform>("multistep_reward", &s, StepTransform::NAMES)?,
        None => StepTransform::default(),
    };
    let join = JoinArgs {
        compat,
        reward_function: given
            .text("reward_function")?
            .map(|s| named::<RewardFunction>("reward_function", &s, RewardFunction::NAMES))
            .transpose()?,
        default_reward: given.number("default_reward")?,
        learning_mode: given
            .text("learning_mode")?
            .map(|s| named::<LearningMode>("learning_mode", &s, LearningMode::NAMES))
            .transpose()?,
        problem_type: given
            .text("problem_type")?
            .map(|s| named::<Problem>("problem_type", &s, Problem::NAMES))
            .transpose()?,
        use_client_time: given.flag("use_client_time")?,
        multistep: given.flag("multistep")?,
        multistep_reward,
        no_caches: false,
    };
    let time = |key: &str| -> PyResult<Option<(String, i64)>> {
        given
            .text(key)?
            .map(|s| match fb_cli::joinargs::parse_time(&s) {
                Ok(t) => Ok((s, t)),
                Err(e) => Err(bad(key, e)),
            })
            .transpose()
    };
    let skip_learn = match given.text("skip_learn")?.as_deref() {
        None | Some("include") => "include",
        Some("exclude") => "exclude",
        Some(other) => {
            return Err(bad(
                "skip_learn",
                format!("`{other}` is not one of include, exclude"),
            ))
        }
    };
    let only = given
        .texts("only")?
        .unwrap_or_default()
        .iter()
        .map(|s| named::<Problem>("only", s, Problem::NAMES))
        .collect::<PyResult<Vec<_>>>()?;
    let (since, until) = (time("since")?, time("until")?);
    if let (Some((s, since)), Some((u, until))) = (&since, &until) {
        if since >= until {
            return Err(bad(
                "since",
                format!("`{s}` is not before until `{u}`: no event could be kept"),
            ));
        }
    }
    let filter = FilterArgs {
        skip_learn: skip_learn.into(),
        since: since.map(|(_, t)| t),
        until: until.map(|(_, t)| t),
        only,
        // vwlogs reads every message (drive.rs); `fb index` serves the CLI.
        no_index: true,
    };
    let batch_rows = given
        .count("batch_rows", 1, MAX_BATCH_ROWS)?
        .unwrap_or(65_536);
    let threads = given
        .count("threads", 1, fb_cli::convert::MAX_THREADS as u64)?
        .unwrap_or(1);
    let columns = match given.texts("columns")? {
        None => fb_arrow::Columns::all(),
        Some(names) => fb_arrow::Columns::named(&names).map_err(|e| match e {
            // The error names the option itself.
            fb_arrow::Error::Columns(why) => bad("columns", why),
            other => bad("columns", other),
        })?,
    };
    Ok(Opts {
        join,
        filter,
        inline_dedup: given.flag("inline_dedup")?,
        recover: given.flag("recover")?,
        // Both fit: checked against their bounds above.
        batch_rows: usize::try_from(batch_rows).unwrap_or(usize::MAX),
        threads: usize::try_from(threads).unwrap_or(1),
        columns,
    })
}

impl Opts {
    /// The joiner's options.
    pub fn options(&self) -> fb_join::Options {
        let mut opts = self.join.options();
        opts.only = self.filter.only.clone();
        opts.inline_dedup = self.inline_dedup;
        opts
    }
}
