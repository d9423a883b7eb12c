//! Target policies on the page (`fb report --policy`): `fb evaluate`'s
//! own evaluation, run in the same pass beside the health sink, with
//! windows of an hour and of a day (the page's span, known only at the
//! end, chooses which are shown; one evaluation keeps both, so the targets
//! and the whole log's tallies are computed once), and the page's section
//! for it. Its figures are
//! `fb evaluate --json --by hour|day`'s: `data-eval` names their path in
//! that report, which the page embeds (`#fb-evaluate`).

use std::fmt::Write as _;

use std::sync::{Arc, Mutex};

use fb_join::JoinedEvent;
use serde_json::Value;

use super::html::{at, esc, missing, script_json, show_value, Chart, Kind, Series};
use super::{Health, HealthMaker, HealthSink};
use crate::error::Error;
use crate::evaluate::records::{RecordMaker, Records};
use crate::evaluate::report::report_json;
use crate::evaluate::{By, Evaluation, Spec};

/// The health sink, and the policies' evaluations beside it.
///
/// The evaluations take their records in batches (a batch of records
/// grows with the events), and so does the health sink on several
/// threads. On one thread the report's sums are added as `fb stats` adds
/// them: each event to the running sums. The one-thread pipeline makes a
/// maker per input and asks for its first batch
/// ([`fb_join::Sink::first_batch`]): the maker then gets the health
/// sink's running total to add its input's events to, whatever batches
/// of records it hands over meanwhile, and leaves the total here when it
/// is dropped, at the input's end.
pub struct PageSink {
    health: HealthSink,
    /// What each maker gathered, left when it is dropped (one per input,
    /// in order).
    gathered: Arc<Mutex<Vec<Health>>>,
    /// With windows per hour and per day; none without target policies.
    evaluation: Option<Evaluation>,
}

/// What a [`PageSink`] gathered over a run.
pub struct Gathered {
    /// The report's aggregates.
    pub health: Health,
    /// The policies' evaluation, with windows per hour and per day
    /// ([`Evaluation::show_by`] picks which it reports).
    pub evaluation: Option<Evaluation>,
    /// Whether every prediction file was read to its end.
    pub finished: Result<(), Error>,
}

/// Fills the batches of records (with target policies) and its own
/// report's aggregates.
pub struct PageMaker {
    health: HealthMaker,
    /// The health sink's running total, lent to one thread's loop.
    own: Option<Health>,
    gathered: Arc<Mutex<Vec<Health>>>,
    records: Option<RecordMaker>,
}

impl Drop for PageMaker {
    fn drop(&mut self) {
        if let (Some(own), Ok(mut g)) = (self.own.take(), self.gathered.lock()) {
            g.push(own);
        }
    }
}

/// A batch of a [`PageSink`]: the policies' records, and on several
/// threads the health batch.
pub struct PageBatch {
    records: Records,
    health: Health,
}

impl PageSink {
    /// The health sink (join window in microseconds), with an evaluation
    /// of `specs` when there are any. Prediction files are opened here.
    pub fn new(window: Option<i64>, specs: &[Spec]) -> Result<Self, Error> {
        let evaluation = match specs.is_empty() {
            true => None,
            false => Some(Evaluation::new(specs, Some(By::Hour))?.also_by(By::Day)),
        };
        Ok(Self {
            health: HealthSink::new(window),
            gathered: Arc::default(),
            evaluation,
        })
    }

    /// What stopped an evaluation (a prediction file that does not match
    /// the log), taken.
    pub fn failure(&self) -> Option<Error> {
        self.evaluation
            .iter()
            .find_map(|e| e.failure().lock().ok().and_then(|mut f| f.take()))
    }

    /// Takes what the makers of the inputs so far left, in input order
    /// (one maker per input): the health sink's total is whole again.
    fn settle(&mut self) {
        let gathered = match self.gathered.lock() {
            Ok(mut g) => std::mem::take(&mut *g),
            Err(_) => Vec::new(),
        };
        for mut h in gathered {
            self.health.absorb(&mut h);
        }
    }

    /// Its parts, once the pipeline (and so its makers) is gone: the
    /// report's aggregates, and the evaluation (per hour, per day) after
    /// checking that every prediction file was read to its end.
    pub fn finish(mut self) -> Result<Gathered, Error> {
        self.settle();
        let (health, mut evaluation) = (self.health, self.evaluation);
        let finished = evaluation.iter_mut().try_for_each(Evaluation::finish);
        Ok(Gathered {
            health: health.into_health(),
            evaluation,
            finished,
        })
    }
}

impl fb_join::Maker for PageMaker {
    type Batch = PageBatch;

    fn batch(&mut self) -> PageBatch {
        PageBatch {
            records: Records::default(),
            health: self.health.batch(),
        }
    }

    fn add(&mut self, batch: &mut PageBatch, ev: &JoinedEvent<'_>) {
        let health = self.own.as_mut().unwrap_or(&mut batch.health);
        self.health.add(health, ev);
        if let Some(r) = &mut self.records {
            r.add(&mut batch.records, ev);
        }
    }

    fn full(&self, batch: &PageBatch) -> bool {
        self.records
            .as_ref()
            .is_some_and(|r| r.full(&batch.records))
            || self.health.full(&batch.health)
    }

    fn clear(&mut self, batch: &mut PageBatch) {
        if let Some(r) = &mut self.records {
            r.clear(&mut batch.records);
        }
        self.health.clear(&mut batch.health);
    }
}

impl fb_join::Sink for PageSink {
    type Batch = PageBatch;
    type Maker = PageMaker;

    fn maker(&self) -> PageMaker {
        PageMaker {
            health: self.health.maker(),
            own: None,
            gathered: Arc::clone(&self.gathered),
            records: self.evaluation.as_ref().map(|_| RecordMaker),
        }
    }

    fn first_batch(&mut self, maker: &mut PageMaker) -> PageBatch {
        // The maker adds its input's events to the running total, whole
        // once the inputs before this one are taken.
        self.settle();
        maker.own = Some(fb_join::Sink::first_batch(
            &mut self.health,
            &mut maker.health,
        ));
        fb_join::Maker::batch(maker)
    }

    fn batches_may_join(&self) -> bool {
        // On several threads the health batch keeps each event's float
        // additions, added in log order, and the records are taken in
        // order: the same figures however events are cut into batches.
        true
    }

    fn work_is_light(&self) -> bool {
        true
    }

    fn take(&mut self, batch: &mut PageBatch) -> Result<(), fb_join::Error> {
        // A one-thread loop's total, left at its input's end, comes
        // before this batch.
        self.settle();
        self.health.absorb(&mut batch.health);
        match &mut self.evaluation {
            Some(e) => e.take(&mut batch.records),
            None => Ok(()),
        }
    }
}

/// The windows the page shows estimates in for windows of `width`
/// seconds: hours for windows of an hour or less, else days.
pub fn by_for(width: i64) -> By {
    match width <= By::Hour.seconds() {
        true => By::Hour,
        false => By::Day,
    }
}

/// The `--by` name of `by`.
fn by_name(by: By) -> &'static str {
    match by {
        By::Hour => "hour",
        By::Day => "day",
    }
}

/// Where a policy's headline estimate and its interval are in its
/// report: IPS with the Gaussian interval (CCB: of the first slot), the
/// pseudo-inverse for Slates.
fn headline(kind: &str) -> (&'static str, &'static str) {
    match kind {
        "ccb" => ("first_slot.ips", "first_slot.gaussian_ci95"),
        "slates" => ("pseudo_inverse", "pseudo_inverse_gaussian_ci95"),
        _ => ("ips", "gaussian_ci95"),
    }
}

/// A figure of the evaluation report, in an element that names it: the
/// checks compare `data-value` with `fb evaluate --json` at `data-eval`.
fn figure(report: &Value, path: &str) -> String {
    let v = at(report, path);
    format!(
        "<span data-eval=\"{}\" data-value=\"{}\">{}</span>",
        esc(path),
        esc(&v.to_string()),
        esc(&show_value(v))
    )
}

/// An estimate and its interval: one figure for an interval that is
/// undefined.
fn estimate(report: &Value, value: &str, ci: &str) -> String {
    match at(report, ci).is_null() {
        true => format!("{} ({})", figure(report, value), figure(report, ci)),
        false => format!(
            "{} ({} .. {})",
            figure(report, value),
            figure(report, &format!("{ci}.0")),
            figure(report, &format!("{ci}.1"))
        ),
    }
}

const COLORS: [&str; 6] = [
    "#3a6fb0", "#d9822b", "#2e8b57", "#8e44ad", "#c0392b", "#16a085",
];

/// The target policies' part of the reward section: per problem type, a
/// chart of each policy's estimate per window (with its interval) and a
/// table of the whole log's estimates; `by` is the windows' width.
pub fn section(out: &mut String, charts: &mut Vec<Chart>, evaluation: &Evaluation, by: By) {
    let r = report_json(evaluation);
    let _ = write!(
        out,
        "<h3 data-eval-by=\"{}\">Target policies (fb evaluate)</h3><p class=\"note\">The \
         figures of <code>fb evaluate --json --by {}</code> with the same policies and options \
         (the report is below, as JSON). Method: {}.</p>",
        by_name(by),
        by_name(by),
        esc(at(&r, "method").as_str().unwrap_or(""))
    );
    let kinds: Vec<String> = at(&r, "by_problem_type")
        .as_object()
        .map_or(Vec::new(), |m| m.keys().cloned().collect());
    if kinds.is_empty() {
        missing(
            out,
            "No learnable CB, CCB, Slates or multistep decision: no policy to estimate.",
        );
    }
    let names: Vec<String> = at(&r, "policies")
        .as_array()
        .map_or(Vec::new(), |p| p.iter().map(show_value).collect());
    let windows = at(&r, "windows").as_array().cloned().unwrap_or_default();
    for kind in &kinds {
        let (value, ci) = headline(kind);
        let mut series = Vec::new();
        for (i, name) in names.iter().enumerate() {
            let color = COLORS.get(i % COLORS.len()).copied().unwrap_or("#3a6fb0");
            let pick = |path: &str| -> Vec<Option<f64>> {
                windows
                    .iter()
                    .map(|w| at(w, &format!("by_problem_type.{kind}.policies.{i}.{path}")).as_f64())
                    .collect()
            };
            series.push(Series {
                label: name.clone(),
                values: pick(value),
                color,
                dashed: false,
            });
            for (end, what) in [(0, "low"), (1, "high")] {
                series.push(Series {
                    label: format!("{name} {what}"),
                    values: pick(&format!("{ci}.{end}")),
                    color,
                    dashed: true,
                });
            }
        }
        let starts: Vec<i64> = windows
            .iter()
            .map(|w| {
                at(w, "start")
                    .as_str()
                    .and_then(|s| s.parse::<jiff::Timestamp>().ok())
                    .map_or(0, |t| t.as_second())
            })
            .collect();
        let chart = Chart {
            id: format!("policies-{kind}"),
            kind: Kind::Time,
            title: format!(
                "{kind}: each policy's estimated reward per {} ({}, 95% interval, dashed)",
                by_name(by),
                match kind.as_str() {
                    "ccb" => "first slot, IPS",
                    "slates" => "pseudo-inverse",
                    _ => "IPS",
                }
            ),
            labels: windows
                .iter()
                .map(|w| at(w, "start").as_str().unwrap_or("").to_string())
                .collect(),
            x: starts.iter().map(|&s| s as f64).collect(),
            series,
            mark: None,
        };
        chart.html(out);
        if windows.len() >= 2 {
            charts.push(chart);
        }
        out.push_str(
            "<table><thead><tr><th>over the whole log</th><th>decisions</th><th>estimate \
             (95% interval)</th><th>SNIPS (95% interval)</th></tr></thead><tbody>",
        );
        let base = format!("by_problem_type.{kind}");
        for (i, name) in names.iter().enumerate() {
            let p = format!("{base}.policies.{i}");
            let snips = match kind.as_str() {
                "slates" => "-".to_string(),
                "ccb" => estimate(
                    &r,
                    &format!("{p}.first_slot.snips"),
                    &format!("{p}.first_slot.snips_ci95"),
                ),
                _ => estimate(&r, &format!("{p}.snips"), &format!("{p}.snips_ci95")),
            };
            let _ = write!(
                out,
                "<tr><td>{kind}: {}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                esc(name),
                figure(&r, &format!("{base}.decisions")),
                estimate(&r, &format!("{p}.{value}"), &format!("{p}.{ci}")),
                snips
            );
        }
        out.push_str("</tbody></table>");
    }
    let _ = write!(
        out,
        "<script type=\"application/json\" id=\"fb-evaluate\">{}</script>",
        script_json(&r)
    );
}
