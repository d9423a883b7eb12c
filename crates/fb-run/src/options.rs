//! Plain option types that the command line's flags and Python's keyword
//! arguments both become: which joined events to keep, and how to read
//! numbers and times given as text. How to join is `fb_join::Options`.

use fb_join::{JoinedEvent, Problem};

use crate::error::Error;

/// Whether deferred events that were never activated (`"_skipLearn":true`)
/// are kept.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum SkipLearn {
    /// Kept, marked (the default, as the reference writes them).
    #[default]
    Include,
    /// Left out.
    Exclude,
}

impl SkipLearn {
    /// The names `parse` takes, in the order help lists them.
    pub const NAMES: &'static [&'static str] = &["include", "exclude"];
}

impl std::str::FromStr for SkipLearn {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "include" => Ok(Self::Include),
            "exclude" => Ok(Self::Exclude),
            _ => Err(format!(
                "`{s}` is not a skip-learn choice: give include or exclude"
            )),
        }
    }
}

/// Which joined events to keep, and whether an index may narrow the
/// reading to a time window.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Filter {
    /// Deferred events never activated.
    pub skip_learn: SkipLearn,
    /// Only events at or after this time (seconds since 1970).
    pub since: Option<i64>,
    /// Only events before this time (seconds since 1970).
    pub until: Option<i64>,
    /// Only events of these problem types (all when empty).
    pub only: Vec<Problem>,
    /// Read every message even where a fresh index could narrow a time
    /// window to some of its blocks.
    pub no_index: bool,
}

impl Filter {
    /// The time range an index may narrow the reading to (seconds since
    /// 1970, `[since, until)`), when there is one and the index is not
    /// refused.
    pub fn window(&self) -> Option<(i64, i64)> {
        if self.no_index || (self.since.is_none() && self.until.is_none()) {
            return None;
        }
        Some((
            self.since.unwrap_or(i64::MIN),
            self.until.unwrap_or(i64::MAX),
        ))
    }

    /// Refuses filters that can keep nothing.
    pub fn check(&self) -> Result<(), Error> {
        match (self.since, self.until) {
            (Some(since), Some(until)) if since >= until => Err(Error::Usage(
                "since is not before until: no event could be kept".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Whether `ev` passes every filter.
    pub fn keep(&self, ev: &JoinedEvent) -> bool {
        if self.skip_learn == SkipLearn::Exclude && ev.skip_learn {
            return false;
        }
        if self.since.is_some() || self.until.is_some() {
            let secs = fb_join::time::key(&ev.time).0;
            if self.since.is_some_and(|s| secs < s) || self.until.is_some_and(|u| secs >= u) {
                return false;
            }
        }
        self.only.is_empty() || self.only.contains(&ev.kind)
    }
}

/// Parses a time into seconds since 1970 (UTC): an RFC 3339 time with `Z`
/// or an offset, or a date and time without one (taken as UTC), or a date
/// (its midnight, UTC). Dates are checked against the calendar.
pub fn parse_time(s: &str) -> Result<i64, String> {
    let err = |why: String| {
        format!(
            "`{s}` is not a time ({why}): expected 2021-05-18, 2021-05-18T13:28:29Z or \
             2021-05-18T15:28:29+02:00"
        )
    };
    if let Ok(ts) = s.parse::<jiff::Timestamp>() {
        return Ok(ts.as_second());
    }
    let civil = match s.parse::<jiff::civil::DateTime>() {
        Ok(dt) => dt,
        Err(e) => match s.parse::<jiff::civil::Date>() {
            Ok(d) => d.to_datetime(jiff::civil::Time::midnight()),
            Err(_) => return Err(err(e.to_string())),
        },
    };
    jiff::tz::Offset::UTC
        .to_timestamp(civil)
        .map(|ts| ts.as_second())
        .map_err(|e| err(e.to_string()))
}

/// Checks a number that a reward or a probability can be: finite as a
/// float32 (`nan`, `inf` and `1e400` are refused: VW cannot read the
/// `null` they would become in DSJSON).
pub fn finite_f32(value: f64) -> Result<f32, String> {
    let v = value as f32;
    if v.is_finite() {
        Ok(v)
    } else {
        Err(format!(
            "{value} is not a finite number (as a 32-bit float): give a number such as 0 or -1.5"
        ))
    }
}

/// [`finite_f32`] of a number given as text.
pub fn parse_finite_f32(s: &str) -> Result<f32, String> {
    match s.trim().parse::<f64>() {
        Ok(v) => finite_f32(v).map_err(|_| {
            format!(
                "`{s}` is not a finite number (as a 32-bit float): give a number such as 0 or -1.5"
            )
        }),
        Err(_) => Err(format!("`{s}` is not a number: give one such as 0 or -1.5")),
    }
}

/// Most worker threads a run takes: more than any machine this runs on
/// has cores, few enough that starting them cannot exhaust the system.
pub const MAX_THREADS: usize = 256;

/// The default number of threads: the available cores.
pub fn default_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get().min(MAX_THREADS))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_parse() {
        assert_eq!(parse_time("1970-01-02"), Ok(86_400));
        assert_eq!(parse_time("1970-01-01T00:01:05Z"), Ok(65));
        assert_eq!(parse_time("1970-01-01T00:01"), Ok(60));
        assert_eq!(parse_time("1970-01-01T02:01:05+02:00"), Ok(65));
        assert_eq!(parse_time("1970-01-01T00:01:05.75Z"), Ok(65));
        assert_eq!(parse_time("2021-05-18"), parse_time("2021-05-18T00:00:00Z"));
        for bad in [
            "yesterday",
            "2021-13-01",
            "2021-02-31",
            "2021-02-29",
            "2021-05-18T25:00",
        ] {
            assert!(parse_time(bad).is_err(), "{bad}");
        }
        assert!(parse_time("2021-02-31").unwrap_err().contains("2021-02-31"));
    }

    #[test]
    fn rewards_are_finite_float32s() {
        // (case, text, accepted)
        for (case, text, ok) in [
            ("zero", "0", true),
            ("negative", "-1.5e3", true),
            ("nan", "nan", false),
            ("inf", "inf", false),
            ("past float32", "1e39", false),
            ("past float64", "1e400", false),
            ("not a number", "-3.5e38x", false),
        ] {
            assert_eq!(parse_finite_f32(text).is_ok(), ok, "{case}");
        }
    }

    #[test]
    fn filters_refuse_empty_windows() {
        let f = Filter {
            since: Some(10),
            until: Some(10),
            ..Filter::default()
        };
        assert!(f.check().is_err());
        assert_eq!(f.window(), Some((10, 10)));
        let f = Filter {
            no_index: true,
            ..f
        };
        assert_eq!(f.window(), None);
    }
}
