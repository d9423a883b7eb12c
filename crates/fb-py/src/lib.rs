//! `vwlogs._native`: the Rust side of the `vwlogs` Python package. A
//! thin layer: sources and options in, the same pipeline as `fb` runs,
//! Arrow batches (C stream interface), DSJSON files, statistics and
//! message listings out. The interpreter's lock is released while Rust
//! works, and the thread Python called in looks for signals meanwhile
//! (`interrupt.rs`); errors become Python exceptions (`LogError` for
//! damaged input, `TypeError` and `ValueError` for bad options, `OSError`
//! for I/O, `KeyboardInterrupt` for Ctrl-C).
//!
//! The Python layer (`python/vwlogs`) holds the public functions, their
//! docstrings and stubs; this module is not called directly.
// interrupt.rs, source.rs and stream.rs index by hand, which the
// workspace lints deny: allowed here until they are checked.
#![allow(clippy::indexing_slicing)]

mod drive;
mod interrupt;
mod messages;
mod options;
mod source;
mod stream;

use arrow_schema::ffi::FFI_ArrowSchema;
use fb_join::{JoinedEvent, Pipeline};
use fb_run::output::{Compress, Output};
use fb_run::report::Silent;
use pyo3::exceptions::{PyException, PyOSError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use crate::drive::{Damage, Stop};

// Named `vwlogs.LogError` (where the package exports it) so that pickle
// finds it: errors cross from worker processes with their attributes.
pyo3::create_exception!(
    vwlogs,
    LogError,
    PyException,
    "A log is damaged or is not a joined log: `.path`, `.offset` (byte) and \
     `.message_index` say where."
);

/// The exception for a damaged input, with where it is.
fn log_error(py: Python<'_>, d: &Damage) -> PyErr {
    let err = LogError::new_err(d.message.clone());
    let value = err.value(py);
    // Setting attributes on a fresh exception object cannot fail short of
    // memory exhaustion; the message says the same anyway.
    let _ = value.setattr("path", d.path.clone());
    let _ = value.setattr("offset", d.offset);
    let _ = value.setattr("message_index", d.message_index);
    err
}

/// The Python exception for why a run stopped.
fn stop_error(py: Python<'_>, stop: &Stop) -> PyErr {
    match stop {
        Stop::Damaged(d) => log_error(py, d),
        Stop::Io(m) => PyOSError::new_err(m.clone()),
        Stop::Sink(e) => PyOSError::new_err(e.to_string()),
        // The run was cancelled with no exception to raise (the consumer
        // went away): nobody waits for this one.
        Stop::Interrupted => PyOSError::new_err(stop.to_string()),
    }
}

/// The Arrow C schema of joined events (PyCapsule "arrow_schema").
fn schema_capsule(py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
    capsule_of(py, &fb_arrow::schema())
}

/// `schema` as a PyCapsule "arrow_schema".
fn capsule_of<'py>(
    py: Python<'py>,
    schema: &arrow_schema::Schema,
) -> PyResult<Bound<'py, PyCapsule>> {
    let schema =
        FFI_ArrowSchema::try_from(schema).map_err(|e| PyValueError::new_err(e.to_string()))?;
    PyCapsule::new_with_value(py, schema, c"arrow_schema")
}

/// The schema capsule, for `pyarrow.schema(...)`.
#[pyfunction]
#[pyo3(name = "schema_capsule")]
fn schema_capsule_py(py: Python<'_>) -> PyResult<Bound<'_, PyCapsule>> {
    schema_capsule(py)
}

/// A reader, started when its stream is taken; see `vwlogs.read`.
#[pyfunction]
fn read(source: &Bound<'_, PyAny>, options: &Bound<'_, PyDict>) -> PyResult<stream::NativeReader> {
    interrupt::note_thread(source.py())?;
    let opts = options::parse(options)?;
    let sources = source::sources(source)?;
    Ok(stream::NativeReader::new(sources, opts))
}

/// Checks the options dict as `read` does (for the Spark driver).
#[pyfunction]
fn check_options(options: &Bound<'_, PyDict>) -> PyResult<()> {
    options::parse(options).map(|_| ())
}

/// How the stream of `reader` ended: `None` while unread or clean, else
/// the exception to raise (a signal handler's first).
#[pyfunction]
fn reader_error(py: Python<'_>, reader: &stream::NativeReader) -> Option<PyErr> {
    let outcome = reader.outcome();
    if let Some(err) = &outcome.interrupt {
        return Some(err.clone_ref(py));
    }
    outcome.stop.as_ref().map(|s| stop_error(py, s))
}

/// What `reader` read: rows, messages per type, bytes, damaged inputs
/// (with `recover`, the skipped ranges).
#[pyfunction]
fn reader_summary<'py>(
    py: Python<'py>,
    reader: &stream::NativeReader,
) -> PyResult<Bound<'py, PyDict>> {
    let outcome = reader.outcome();
    let d = PyDict::new(py);
    d.set_item("rows", outcome.rows)?;
    if let Some(r) = &outcome.report {
        summary_into(&d, r)?;
        d.set_item(
            "skipped_by_reason",
            outcome
                .skipped
                .iter()
                .cloned()
                .collect::<std::collections::BTreeMap<_, _>>(),
        )?;
    }
    Ok(d)
}

fn summary_into(d: &Bound<'_, PyDict>, r: &fb_run::report::RunReport) -> PyResult<()> {
    d.set_item("logs", r.logs)?;
    d.set_item("bytes", r.bytes)?;
    let kinds = PyDict::new(d.py());
    for (k, v) in r.kinds.by_name() {
        kinds.set_item(k, v)?;
    }
    d.set_item("messages", kinds)?;
    d.set_item(
        "damaged_inputs",
        r.damage.iter().map(ToString::to_string).collect::<Vec<_>>(),
    )?;
    Ok(())
}

/// Events a joiner skipped, by reason (the names of `fb stats`'s
/// `skipped_by_reason`).
fn skipped(joiner: &fb_join::Joiner) -> Vec<(String, u64)> {
    joiner
        .diagnostics()
        .counts()
        .iter()
        .map(|(k, v)| (k.name().to_string(), *v))
        .collect()
}

/// Writes DSJSON; see `vwlogs.convert`.
#[pyfunction]
fn convert<'py>(
    py: Python<'py>,
    source: &Bound<'py, PyAny>,
    out: std::path::PathBuf,
    options: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let opts = options::parse(options)?;
    let sources = source::sources(source)?;
    let inputs: Vec<_> = sources.iter().map(source::Src::input).collect();
    let compress = Compress::ByExtension {
        level: None,
        threads: opts.threads,
    };
    // Python replaces the file it is told to write, as `open(out, "w")`
    // does; the CLI asks for --force.
    let how = fb_run::output::How::text(compress, fb_run::output::Existing::Replace);
    let output =
        Output::create(Some(&out), &inputs, how).map_err(|e| PyOSError::new_err(e.to_string()))?;
    let compat = opts.join.compat;
    let cancel = interrupt::Cancel::default();
    let ((written, report, stop, finished, skipped_events), interrupted) =
        interrupt::run(py, &cancel, || {
            let mut output = output;
            let filter = opts.filter.clone();
            let keep = move |ev: &JoinedEvent<'_>| filter.keep(ev);
            let sink = fb_join::dsjson::LinesSink::new(&mut output, compat);
            let threads = if opts.recover { 1 } else { opts.threads };
            let mut pipeline = Pipeline::new(opts.options(), keep, sink, threads);
            let mut report = fb_run::report::RunReport::default();
            let stop =
                drive::feed(&sources, &mut pipeline, opts.recover, &mut report, &cancel).err();
            let written = pipeline.kept();
            let (joiner, _) = pipeline.finish();
            // As `fb convert`: a run that ends in error never replaces the
            // output, and what it read before the damage goes to
            // OUT.partial; an interrupted run leaves no output (dropped
            // unfinished, the old file stays).
            let finished = match (cancel.is_set(), &stop) {
                (true, _) => Ok(()),
                (false, Some(Stop::Damaged(_))) => output.finish_partial().map(|_| ()),
                (false, _) => output.finish(),
            };
            (written, report, stop, finished, skipped(&joiner))
        })?;
    if let Some(err) = interrupted {
        return Err(err);
    }
    if let Some(stop @ Stop::Sink(_)) = &stop {
        return Err(stop_error(py, stop));
    }
    finished.map_err(|e| PyOSError::new_err(e.to_string()))?;
    if let Some(stop) = &stop {
        return Err(stop_error(py, stop));
    }
    let d = PyDict::new(py);
    d.set_item("lines", written)?;
    summary_into(&d, &report)?;
    d.set_item(
        "skipped_by_reason",
        skipped_events
            .into_iter()
            .collect::<std::collections::BTreeMap<_, _>>(),
    )?;
    Ok(d)
}

/// The `fb stats --json` report, as JSON text; see `vwlogs.stats`.
#[pyfunction]
fn stats(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    options: &Bound<'_, PyDict>,
) -> PyResult<String> {
    let opts = options::parse(options)?;
    let sources = source::sources(source)?;
    let (json, stop, run) = drive::run_job(py, &sources, &opts, |job| {
        Ok(fb_run::stats::run(job, opts.threads, &mut Silent))
    })?;
    let (text, logs) = (json.to_string(), run.logs);
    if let Some(stop) = &stop {
        return Err(stop_error(py, stop));
    }
    if logs == 0 {
        return Err(LogError::new_err(
            "no input is a joined log (all are empty): no statistics to give",
        ));
    }
    Ok(text)
}

/// The `fb report` page and the `fb stats --json` report it shows, as
/// (HTML, JSON text); see `vwlogs.report`. `join_window` in seconds.
#[pyfunction]
#[pyo3(signature = (source, options, join_window=None, policies=Vec::new()))]
fn report(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    options: &Bound<'_, PyDict>,
    join_window: Option<f64>,
    policies: Vec<String>,
) -> PyResult<(String, String)> {
    let window = match join_window {
        None => None,
        Some(w) if (0.0..1e12).contains(&w) => Some((w * 1e6) as i64),
        Some(w) => {
            return Err(PyValueError::new_err(format!(
                "join_window: {w} is not a number of seconds from 0 to 10^12"
            )))
        }
    };
    let opts = options::parse(options)?;
    let sources = source::sources(source)?;
    let page_options = fb_run::health::PageOptions {
        join_window: window,
        policies: specs(&policies)?,
        threads: opts.threads,
    };
    let (page, stop, _) = drive::run_job(py, &sources, &opts, |job| {
        fb_run::health::run(job, &page_options, &mut Silent)
    })?;
    if let Some(e) = page.failure {
        return Err(PyValueError::new_err(e.to_string()));
    }
    // As `stats`: damage raises (with where it is) unless `recover`.
    if let Some(stop) = &stop {
        return Err(stop_error(py, stop));
    }
    page.finished
        .map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok((page.html, page.stats.to_string()))
}

/// The `fb evaluate --json` report and its rows, as JSON text
/// (`{"report": ..., "rows": [...]}`); see `vwlogs.evaluate`.
#[pyfunction]
fn evaluate(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    policies: Vec<String>,
    by: Option<String>,
    options: &Bound<'_, PyDict>,
    cats: Option<String>,
) -> PyResult<String> {
    use fb_run::evaluate::{By, Cats};
    let specs = specs(&policies)?;
    let by = by
        .map(|b| b.parse::<By>().map_err(PyValueError::new_err))
        .transpose()?;
    let opts = options::parse(options)?;
    let sources = source::sources(source)?;
    let cats = cats
        .map(|c| c.parse::<Cats>().map_err(PyValueError::new_err))
        .transpose()?;
    let (evaluated, stop, run) = drive::run_job(py, &sources, &opts, |job| {
        fb_run::evaluate::run(job, &specs, by, cats, opts.threads, &mut Silent)
    })?;
    let logs = run.logs;
    if let Some(e) = evaluated.failure {
        return Err(PyValueError::new_err(e.to_string()));
    }
    if let Some(stop) = &stop {
        return Err(stop_error(py, stop));
    }
    if logs == 0 {
        return Err(LogError::new_err(
            "no input is a joined log (all are empty): nothing to evaluate",
        ));
    }
    let (evaluation, finished) = (evaluated.evaluation, evaluated.finished);
    finished.map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(evaluation_json(&evaluation))
}

/// Policy specs (`"uniform"`, `"predictions:FILE"`, ...), a
/// `ValueError` for one that is not.
fn specs(policies: &[String]) -> PyResult<Vec<fb_run::evaluate::Spec>> {
    policies
        .iter()
        .map(|p| p.parse().map_err(PyValueError::new_err))
        .collect()
}

/// An evaluation's report and its rows, as `vwlogs.evaluate` reads them.
fn evaluation_json(evaluation: &fb_run::evaluate::Evaluation) -> String {
    use fb_run::evaluate::report;
    let json = report::report_json(evaluation);
    let mut rows = Vec::new();
    report::rows("", &json["by_problem_type"], &mut rows);
    for w in json["windows"].as_array().into_iter().flatten() {
        report::rows(
            w["start"].as_str().unwrap_or(""),
            &w["by_problem_type"],
            &mut rows,
        );
    }
    let rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            serde_json::json!({
                "window": r.window, "problem_type": r.problem_type, "policy": r.policy,
                "estimator": r.estimator, "decisions": r.decisions, "value": r.value,
                "low": r.ci.map(|c| c[0]), "high": r.ci.map(|c| c[1]),
            })
        })
        .collect();
    serde_json::json!({"report": json, "rows": rows}).to_string()
}

/// An evaluation of policies whose probabilities Python gives batch by
/// batch (`vwlogs.evaluate` with callables): the same tallies and report
/// as `fb evaluate`.
#[pyclass(module = "vwlogs._native")]
struct GivenEvaluation {
    inner: fb_run::evaluate::Evaluation,
}

#[pymethods]
impl GivenEvaluation {
    #[new]
    #[pyo3(signature = (names, by=None))]
    fn new(names: Vec<String>, by: Option<String>) -> PyResult<Self> {
        use fb_run::evaluate::{By, Spec};
        let specs: Vec<Spec> = names.into_iter().map(Spec::Given).collect();
        let by = by
            .map(|b| b.parse::<By>().map_err(PyValueError::new_err))
            .transpose()?;
        let inner = fb_run::evaluate::Evaluation::new(&specs, by)
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Self { inner })
    }

    /// Adds learnable CB and multistep decisions, column by column;
    /// `given[i]` holds policy i's probabilities of the logged actions.
    fn add(
        &mut self,
        multistep: Vec<bool>,
        seconds: Vec<i64>,
        p_logs: Vec<f32>,
        rewards: Vec<f64>,
        p_drops: Vec<f64>,
        given: Vec<Vec<f64>>,
    ) -> PyResult<()> {
        use fb_run::evaluate::Kind;
        let n = p_logs.len();
        let lengths_ok = [multistep.len(), seconds.len(), rewards.len(), p_drops.len()]
            .iter()
            .chain(given.iter().map(Vec::len).collect::<Vec<_>>().iter())
            .all(|&l| l == n);
        if !lengths_ok {
            return Err(PyValueError::new_err(
                "evaluate: every column and every policy's probabilities must have one value per decision",
            ));
        }
        let mut qs = vec![0.0; given.len()];
        for i in 0..n {
            for (q, g) in qs.iter_mut().zip(&given) {
                *q = g[i];
            }
            let kind = if multistep[i] {
                Kind::Multistep
            } else {
                Kind::Cb
            };
            self.inner
                .add_given(kind, seconds[i], p_logs[i], rewards[i], p_drops[i], &qs)
                .map_err(|e| PyValueError::new_err(e.to_string()))?;
        }
        Ok(())
    }

    /// The report and rows, as `vwlogs.evaluate` reads them.
    fn report(&self) -> String {
        evaluation_json(&self.inner)
    }
}

/// The messages of one log; see `vwlogs.inspect`.
#[pyfunction]
fn inspect(source: &Bound<'_, PyAny>) -> PyResult<messages::Messages> {
    let mut sources = source::sources(source)?;
    if sources.len() != 1 {
        return Err(PyValueError::new_err(format!(
            "inspect: one log at a time ({} given)",
            sources.len()
        )));
    }
    messages::Messages::open(sources.remove(0))
}

/// The native module.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    interrupt::note_thread(m.py())?;
    m.add("LogError", m.py().get_type::<LogError>())?;
    m.add("SCHEMA_VERSION", fb_arrow::SCHEMA_VERSION)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add_class::<stream::NativeReader>()?;
    m.add_class::<messages::Messages>()?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(reader_error, m)?)?;
    m.add_function(wrap_pyfunction!(check_options, m)?)?;
    m.add_function(wrap_pyfunction!(reader_summary, m)?)?;
    m.add_function(wrap_pyfunction!(convert, m)?)?;
    m.add_function(wrap_pyfunction!(stats, m)?)?;
    m.add_function(wrap_pyfunction!(evaluate, m)?)?;
    m.add_class::<GivenEvaluation>()?;
    m.add_function(wrap_pyfunction!(report, m)?)?;
    m.add_function(wrap_pyfunction!(inspect, m)?)?;
    m.add_function(wrap_pyfunction!(schema_capsule_py, m)?)?;
    Ok(())
}
