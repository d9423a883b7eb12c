//! Target policies: what probability a policy gives the action the log
//! took, and how much it puts where the logging policy never went.
//!
//! Action ids are those of the DSJSON `fb convert` writes: CB and
//! multistep actions count from 1 (`"a"`), CCB actions are indices into
//! the event's actions and Slates actions indices into the slot's, both
//! from 0 (`"_a"`).

use std::fmt;
use std::io::BufRead;
use std::path::PathBuf;
use std::str::FromStr;

use crate::Error;

/// A target policy, as the command line names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Spec {
    /// The logging policy itself (its own probabilities).
    Logged,
    /// The baseline action: action 1 for CB and multistep, the slot's
    /// `_ba` action (0 where the log records none) for CCB and Slates.
    Baseline,
    /// Every offered action equally likely.
    Uniform,
    /// Always CB action K (counted from 1) where offered, else action 1;
    /// for CA (with CATS parameters) the action value K.
    Constant(u64),
    /// Always the CA action of this value (the bits of an `f64`, so that
    /// the spec compares whole): `constant:VALUE` where VALUE is not a
    /// whole number from 1.
    ConstantValue(u64),
    /// A VW prediction file (`vw -p`), one example per event in the order
    /// `fb convert` writes them.
    Predictions(PathBuf),
    /// Probabilities the caller gives decision by decision
    /// ([`crate::evaluate::Evaluation::add_given`]), named as it says.
    Given(String),
}

impl Spec {
    /// The names a policy can be given, for help and errors.
    pub const FORMS: &'static str =
        "baseline, uniform, constant:K (constant:VALUE for CA) or predictions:FILE";

    /// The CA action a constant policy takes.
    pub fn constant_value(&self) -> Option<f64> {
        match self {
            Self::Constant(k) => Some(*k as f64),
            Self::ConstantValue(bits) => Some(f64::from_bits(*bits)),
            _ => None,
        }
    }
}

impl FromStr for Spec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "logged" => return Ok(Self::Logged),
            "baseline" => return Ok(Self::Baseline),
            "uniform" => return Ok(Self::Uniform),
            _ => {}
        }
        if let Some(k) = s.strip_prefix("constant:") {
            return match (k.parse::<u64>(), k.parse::<f64>()) {
                (Ok(k), _) if k >= 1 => Ok(Self::Constant(k)),
                (_, Ok(v)) if v.is_finite() => Ok(Self::ConstantValue(v.to_bits())),
                _ => Err(format!(
                    "`{s}`: K of constant:K is an action number from 1 (as in DSJSON's \"a\"), \
                     or for CA a finite action value"
                )),
            };
        }
        if let Some(f) = s.strip_prefix("predictions:") {
            if f.is_empty() {
                return Err("predictions: names no file (predictions:FILE)".into());
            }
            return Ok(Self::Predictions(f.into()));
        }
        Err(format!("`{s}` is not a policy: expected {}", Self::FORMS))
    }
}

impl fmt::Display for Spec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Logged => write!(f, "logged"),
            Self::Baseline => write!(f, "baseline"),
            Self::Uniform => write!(f, "uniform"),
            Self::Constant(k) => write!(f, "constant:{k}"),
            Self::ConstantValue(bits) => write!(f, "constant:{}", f64::from_bits(*bits)),
            Self::Predictions(p) => write!(f, "predictions:{}", p.display()),
            Self::Given(name) => write!(f, "{name}"),
        }
    }
}

/// One decision (or slot) as a policy sees it: the offered actions with
/// the logged one first, their logged probabilities, the baseline action.
#[derive(Debug, Clone, Copy)]
pub struct Choice<'a> {
    /// Action ids, the logged one first.
    pub actions: &'a [u64],
    /// Their logged probabilities.
    pub probabilities: &'a [f32],
    /// The baseline action's id.
    pub baseline: u64,
}

/// What a target policy does at one decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// Its probability of the logged action.
    pub p: f64,
    /// Its probability on actions the logger gave probability 0.
    pub unsupported: f64,
}

impl Choice<'_> {
    fn logged_p(&self, action: u64) -> Option<f64> {
        let i = self.actions.iter().position(|&a| a == action)?;
        self.probabilities.get(i).map(|&p| f64::from(p))
    }

    /// A policy that always takes `action`.
    pub fn always(&self, action: u64) -> Target {
        Target {
            p: f64::from(u8::from(self.actions.first() == Some(&action))),
            unsupported: match self.logged_p(action) {
                Some(p) if p > 0.0 => 0.0,
                _ => 1.0,
            },
        }
    }

    /// The logging policy.
    pub fn logged(&self) -> Target {
        Target {
            p: self.probabilities.first().map_or(0.0, |&p| f64::from(p)),
            unsupported: 0.0,
        }
    }

    /// Every offered action equally likely.
    pub fn uniform(&self) -> Target {
        let k = self.actions.len().max(1) as f64;
        let zero = self.probabilities.iter().filter(|&&p| p <= 0.0).count() as f64;
        Target {
            p: 1.0 / k,
            unsupported: zero / k,
        }
    }

    /// A distribution over actions: `(action, probability)` pairs (an
    /// action listed twice counts twice).
    pub fn distribution(&self, dist: &[(u64, f64)]) -> Target {
        let logged = self.actions.first().copied();
        let mut t = Target {
            p: 0.0,
            unsupported: 0.0,
        };
        for &(a, q) in dist {
            if Some(a) == logged {
                t.p += q;
            }
            if q > 0.0 && !matches!(self.logged_p(a), Some(p) if p > 0.0) {
                t.unsupported += q;
            }
        }
        t
    }
}

/// How far probabilities may sum from 1: VW writes six significant
/// digits.
pub const SUM_TOLERANCE: f64 = 1e-3;

/// A VW prediction file read along the events.
pub struct Predictions {
    reader: Box<dyn BufRead + Send + Sync>,
    path: String,
    line: u64,
    buf: String,
    /// Examples read.
    examples: u64,
}

impl Predictions {
    /// Opens `path`.
    pub fn open(path: &std::path::Path) -> Result<Self, Error> {
        let f = std::fs::File::open(path).map_err(|e| {
            Error::Msg(format!(
                "cannot open the predictions file {}: {e}",
                path.display()
            ))
        })?;
        Ok(Self::new(
            Box::new(std::io::BufReader::new(f)),
            path.display().to_string(),
        ))
    }

    /// Predictions read from `reader`, called `path` in errors.
    pub fn new(reader: Box<dyn BufRead + Send + Sync>, path: String) -> Self {
        Self {
            reader,
            path,
            line: 0,
            buf: String::new(),
            examples: 0,
        }
    }

    /// The next line, without its end; `None` at the end of the file.
    fn next_line(&mut self) -> Result<Option<&str>, Error> {
        self.buf.clear();
        // A line longer than this is not a prediction; reading it whole
        // would let a damaged file take any amount of memory.
        const LONGEST: u64 = 1 << 24;
        let reader: &mut Box<dyn BufRead + Send + Sync> = &mut self.reader;
        let n = std::io::Read::take(reader, LONGEST)
            .read_line(&mut self.buf)
            .map_err(|e| Error::Msg(format!("reading {}: {e}", self.path)))?;
        if n == 0 {
            return Ok(None);
        }
        self.line += 1;
        if n as u64 == LONGEST && !self.buf.ends_with('\n') {
            return Err(Error::Msg(format!(
                "{} line {}: longer than {LONGEST} bytes: not a VW prediction file",
                self.path, self.line
            )));
        }
        Ok(Some(self.buf.trim_end_matches(['\n', '\r'])))
    }

    /// The next example's lines (one per slot; one for CB), read into
    /// `out` as `(action, probability)` lists; blank lines separate
    /// examples. `id` and `index` name the event in errors.
    pub fn next_example(
        &mut self,
        id: &str,
        index: u64,
        slots: usize,
        out: &mut Vec<Vec<(u64, f64)>>,
    ) -> Result<u64, Error> {
        out.clear();
        let path = self.path.clone();
        let first_line;
        loop {
            match self.next_line()? {
                None => {
                    return Err(Error::Msg(format!(
                        "{path} has fewer examples than the log: it ends after {} examples, \
                         before event {id} (event {} of the log); predict from the DSJSON that \
                         `fb convert` writes with the same filters",
                        self.examples,
                        index + 1
                    )))
                }
                Some(l) if l.trim().is_empty() => continue,
                Some(_) => {
                    first_line = self.line;
                    break;
                }
            }
        }
        loop {
            let line = self.line;
            let text = self.buf.trim_end_matches(['\n', '\r']).to_string();
            out.push(parse_line(&text, &path, line, id)?);
            if out.len() == slots {
                break;
            }
            match self.next_line()? {
                Some(l) if !l.trim().is_empty() => {}
                _ => {
                    return Err(Error::Msg(format!(
                        "{path} line {first_line}: the example for event {id} has {} line{}, the \
                         event has {slots} slots",
                        out.len(),
                        if out.len() == 1 { "" } else { "s" }
                    )))
                }
            }
        }
        self.examples += 1;
        Ok(first_line)
    }

    /// The next CA example's predicted action: VW's `--cats` `-p` line
    /// `action,pdf_value` (a tag after a space must be the event id).
    /// `id` and `index` name the event in errors.
    pub fn next_action(&mut self, id: &str, index: u64) -> Result<f64, Error> {
        let path = self.path.clone();
        let examples = self.examples;
        let text = loop {
            match self.next_line()? {
                None => {
                    return Err(Error::Msg(format!(
                        "{path} has fewer examples than the log: it ends after {examples} \
                         examples, before event {id} (event {} of the log); predict from the \
                         DSJSON that `fb convert` writes with the same filters",
                        index + 1
                    )))
                }
                Some(l) if l.trim().is_empty() => continue,
                Some(l) => break l.trim().to_string(),
            }
        };
        let line = self.line;
        let (pair, tag) = text.split_once(char::is_whitespace).unwrap_or((&text, ""));
        let tag = tag.trim();
        if !tag.is_empty() && tag != id {
            return Err(Error::Msg(format!(
                "{path} line {line}: the example is tagged {tag}, the log's event there is {id}: \
                 the predictions are of other events or in another order"
            )));
        }
        let parsed = pair.split_once(',').and_then(|(a, pdf)| {
            let a = a.trim().parse::<f64>().ok()?;
            let pdf = pdf.trim().parse::<f64>().ok()?;
            (a.is_finite() && pdf.is_finite() && pdf >= 0.0).then_some(a)
        });
        let Some(action) = parsed else {
            return Err(Error::Msg(format!(
                "{path} line {line} (event {id}): `{pair}` is not action,pdf_value (VW's -p \
                 output of --cats)"
            )));
        };
        self.examples += 1;
        Ok(action)
    }

    /// Checks that nothing but blank lines is left once the log ends.
    pub fn finish(&mut self, events: u64) -> Result<(), Error> {
        while let Some(l) = self.next_line()? {
            if !l.trim().is_empty() {
                return Err(Error::Msg(format!(
                    "{} has more examples than the log: line {} is past the log's last event \
                     ({events} events); predict from the DSJSON that `fb convert` writes with \
                     the same filters",
                    self.path, self.line
                )));
            }
        }
        Ok(())
    }

    /// The file, as named.
    pub fn path(&self) -> &str {
        &self.path
    }
}

/// `a:p,a:p,...` (VW's action scores), optionally followed by a space and
/// the example's tag, which must then be the event id.
fn parse_line(text: &str, path: &str, line: u64, id: &str) -> Result<Vec<(u64, f64)>, Error> {
    let (scores, tag) = match text.trim().split_once(char::is_whitespace) {
        Some((s, t)) => (s, t.trim()),
        None => (text.trim(), ""),
    };
    if !tag.is_empty() && tag != id {
        return Err(Error::Msg(format!(
            "{path} line {line}: the example is tagged {tag}, the log's event there is {id}: \
             the predictions are of other events or in another order"
        )));
    }
    let mut out = Vec::new();
    let mut sum = 0.0;
    for tok in scores.split(',') {
        let parsed = tok.split_once(':').and_then(|(a, p)| {
            let a = a.trim().parse::<u64>().ok()?;
            let p = p.trim().parse::<f64>().ok()?;
            (p.is_finite() && (0.0..=1.0 + SUM_TOLERANCE).contains(&p)).then_some((a, p))
        });
        let Some((a, p)) = parsed else {
            return Err(Error::Msg(format!(
                "{path} line {line} (event {id}): `{tok}` is not action:probability (VW's -p \
                 output of --cb_explore_adf, --ccb_explore_adf or --slates)"
            )));
        };
        sum += p;
        out.push((a, p));
    }
    if (sum - 1.0).abs() > SUM_TOLERANCE {
        return Err(Error::Msg(format!(
            "{path} line {line} (event {id}): the probabilities sum to {sum}, not 1: not the \
             output of an exploring policy (--cb_explore_adf, --ccb_explore_adf, --slates)"
        )));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse() {
        for (text, want) in [
            ("baseline", Ok(Spec::Baseline)),
            ("uniform", Ok(Spec::Uniform)),
            ("constant:3", Ok(Spec::Constant(3))),
            ("predictions:p.txt", Ok(Spec::Predictions("p.txt".into()))),
            ("constant:0", Ok(Spec::ConstantValue(0f64.to_bits()))),
            ("constant:2.5", Ok(Spec::ConstantValue(2.5f64.to_bits()))),
            ("constant:-1", Ok(Spec::ConstantValue((-1f64).to_bits()))),
            ("constant:nan", Err(())),
            ("constant:x", Err(())),
            ("predictions:", Err(())),
            ("greedy", Err(())),
        ] {
            assert_eq!(text.parse::<Spec>().map_err(|_| ()), want, "{text}");
        }
    }

    #[test]
    fn targets_of_builtin_policies() {
        let c = Choice {
            actions: &[2, 1, 3],
            probabilities: &[0.5, 0.5, 0.0],
            baseline: 1,
        };
        assert_eq!(c.logged().p, 0.5);
        assert_eq!(
            c.always(1),
            Target {
                p: 0.0,
                unsupported: 0.0
            }
        );
        assert_eq!(
            c.always(2),
            Target {
                p: 1.0,
                unsupported: 0.0
            }
        );
        assert_eq!(
            c.always(3),
            Target {
                p: 0.0,
                unsupported: 1.0
            }
        );
        assert_eq!(c.always(9).unsupported, 1.0);
        let u = c.uniform();
        assert_eq!((u.p, u.unsupported), (1.0 / 3.0, 1.0 / 3.0));
        let d = c.distribution(&[(2, 0.25), (3, 0.75)]);
        assert_eq!((d.p, d.unsupported), (0.25, 0.75));
    }

    /// Per example, per slot, (action, probability).
    type Examples = Vec<Vec<Vec<(u64, f64)>>>;

    fn read(text: &str, slots: &[usize]) -> Result<Examples, String> {
        let mut p = Predictions::new(
            Box::new(std::io::Cursor::new(text.as_bytes().to_vec())),
            "p.txt".into(),
        );
        let mut all = Vec::new();
        for (i, &s) in slots.iter().enumerate() {
            let mut out = Vec::new();
            p.next_example(&format!("e{i}"), i as u64, s, &mut out)
                .map_err(|e| e.to_string())?;
            all.push(out);
        }
        p.finish(slots.len() as u64).map_err(|e| e.to_string())?;
        Ok(all)
    }

    #[test]
    fn prediction_files() {
        let ok = read("0:0.9,1:0.1\n\n1:1\n", &[1, 1]).expect("two CB examples");
        assert_eq!(ok[1], vec![vec![(1, 1.0)]]);
        let ccb = read("0:0.5,1:0.5\n1:1\n\n2:1\n\n", &[2, 1]).expect("CCB blocks");
        assert_eq!(ccb[0].len(), 2);
        read("0:1 e0\n", &[1]).expect("a matching tag");
        for (name, text, slots, says) in [
            ("fewer", "0:1\n", &[1usize, 1][..], "fewer examples"),
            ("more", "0:1\n0:1\n", &[1][..], "more examples"),
            ("sum", "0:0.5,1:0.4\n", &[1][..], "sum to"),
            ("syntax", "0-0.5\n", &[1][..], "not action:probability"),
            (
                "slots",
                "0:1\n\n0:1\n",
                &[2, 1][..],
                "the event has 2 slots",
            ),
            ("tag", "0:1 other\n", &[1][..], "tagged other"),
        ] {
            let e = read(text, slots).expect_err(name);
            assert!(e.contains(says), "{name}: {e}");
        }
    }
}
