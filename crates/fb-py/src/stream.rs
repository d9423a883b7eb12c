//! The reader behind `vwlogs.read`: a thread joins the sources into
//! record batches and hands them over a bounded channel; the consumer
//! (pyarrow, Polars, DuckDB) pulls them through the Arrow C stream
//! interface, without a copy.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use fb_arrow::{ArrowSink, BatchWriter};
use fb_cli::joinargs::RunReport;
use fb_join::{JoinedEvent, Pipeline};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::drive::{self, Stop};
use crate::options::Opts;
use crate::source::Src;

/// Batches in flight between the joining thread and the consumer: enough
/// to keep both busy, few enough to bound memory.
const IN_FLIGHT: usize = 4;

/// What the joining thread sends.
enum Item {
    Batch(RecordBatch),
    /// The end: how the run went, and the events skipped, by reason.
    Done(Box<RunReport>, Option<Stop>, Vec<(String, u64)>),
}

/// A [`BatchWriter`] that sends each batch to the consumer.
struct ToChannel(SyncSender<Item>);

impl BatchWriter for ToChannel {
    type Output = ();

    fn write(&mut self, batch: &RecordBatch) -> Result<(), fb_arrow::Error> {
        self.0.send(Item::Batch(batch.clone())).map_err(|_| {
            // The consumer dropped the reader: stop, quietly.
            fb_arrow::Error::Arrow(ArrowError::IoError(
                "the reader was closed".into(),
                std::io::Error::from(std::io::ErrorKind::BrokenPipe),
            ))
        })
    }

    fn finish(self) -> Result<(), fb_arrow::Error> {
        Ok(())
    }
}

/// How the run ended, once it has: for the Python layer to raise the
/// right exception and report what was read.
#[derive(Default)]
pub struct Outcome {
    /// The run's report (messages, bytes, damaged inputs).
    pub report: Option<RunReport>,
    /// Why it stopped early, if it did.
    pub stop: Option<Stop>,
    /// Rows handed out.
    pub rows: u64,
    /// Events the joiner skipped, by reason.
    pub skipped: Vec<(String, u64)>,
}

/// Starts joining `sources` on a thread of its own.
fn start(sources: Vec<Src>, opts: Opts) -> Receiver<Item> {
    let (tx, rx) = sync_channel(IN_FLIGHT);
    std::thread::spawn(move || {
        let filter = opts.filter.clone();
        let keep = move |ev: &JoinedEvent<'_>| filter.keep(ev);
        // The consumer often keeps every batch (`read_all`, a DataFrame)
        // and waits on this thread meanwhile: its core makes memory ready.
        let sink = ArrowSink::new(ToChannel(tx.clone()), opts.batch_rows)
            .with_prepared_memory()
            .with_columns(opts.columns.clone());
        let threads = if opts.recover { 1 } else { opts.threads };
        let mut pipeline = Pipeline::new(opts.options(), keep, sink, threads);
        let mut report = RunReport::silent();
        let mut stop = drive::feed(&sources, &mut pipeline, opts.recover, &mut report).err();
        // Rows joined before a stop are handed out before it is told.
        let (joiner, sink) = pipeline.finish();
        if let Err(e) = sink.finish() {
            stop.get_or_insert(Stop::Io(e.to_string()));
        }
        let _ = tx.send(Item::Done(Box::new(report), stop, crate::skipped(&joiner)));
    });
    rx
}

/// The consumer's end, as an Arrow `RecordBatchReader`.
pub struct Batches {
    rx: Option<Receiver<Item>>,
    /// Pull with the interpreter's lock released: a source that is a
    /// Python file object needs it on the joining thread.
    release_gil: bool,
    outcome: Arc<Mutex<Outcome>>,
    /// The chosen columns' schema.
    schema: SchemaRef,
}

impl Batches {
    fn recv(&mut self) -> Option<Item> {
        let rx = self.rx.take()?;
        let (rx, item) = if self.release_gil {
            Python::attach(|py| {
                py.detach(move || {
                    let item = rx.recv().ok();
                    (rx, item)
                })
            })
        } else {
            let item = rx.recv().ok();
            (rx, item)
        };
        self.rx = Some(rx);
        item
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = self.recv();
        let mut outcome = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        match item {
            Some(Item::Batch(b)) => {
                outcome.rows += b.num_rows() as u64;
                Some(Ok(b))
            }
            Some(Item::Done(report, stop, skipped)) => {
                self.rx = None;
                outcome.report = Some(*report);
                outcome.skipped = skipped;
                let message = stop.as_ref().map(|s| s.to_string());
                outcome.stop = stop;
                message.map(|m| {
                    Err(ArrowError::ExternalError(Box::new(std::io::Error::other(
                        m,
                    ))))
                })
            }
            None if self.rx.is_some() => {
                self.rx = None;
                let why =
                    "vwlogs: the joining thread ended without a result (a bug: please report it)";
                outcome.stop = Some(Stop::Io(why.into()));
                Some(Err(ArrowError::ExternalError(why.into())))
            }
            None => None,
        }
    }
}

impl RecordBatchReader for Batches {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }
}

/// The native reader: one stream of batches, taken once.
#[pyclass(module = "vwlogs._native", name = "NativeReader")]
pub struct NativeReader {
    batches: Mutex<Option<Batches>>,
    outcome: Arc<Mutex<Outcome>>,
    schema: SchemaRef,
}

impl NativeReader {
    /// Starts reading `sources`.
    pub fn new(sources: Vec<Src>, opts: Opts) -> Self {
        let release_gil = sources.iter().any(Src::needs_gil);
        let outcome = Arc::new(Mutex::new(Outcome::default()));
        let schema = opts.columns.schema();
        let batches = Batches {
            rx: Some(start(sources, opts)),
            release_gil,
            outcome: Arc::clone(&outcome),
            schema: Arc::clone(&schema),
        };
        Self {
            batches: Mutex::new(Some(batches)),
            outcome,
            schema,
        }
    }

    /// How the run ended (once the stream was read to its end).
    pub fn outcome(&self) -> std::sync::MutexGuard<'_, Outcome> {
        self.outcome.lock().unwrap_or_else(|p| p.into_inner())
    }
}

#[pymethods]
impl NativeReader {
    /// The Arrow C stream of the joined events (PyCapsule
    /// "arrow_array_stream"); it can be taken once.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is fixed (docs/arrow-schema.md); a requested one is
        // a hint the producer may ignore.
        let _ = requested_schema;
        let batches = self
            .batches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .take()
            .ok_or_else(|| {
                pyo3::exceptions::PyRuntimeError::new_err(
                    "this reader was already read: call vwlogs.read again for another pass",
                )
            })?;
        let stream = FFI_ArrowArrayStream::new(Box::new(batches));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// The Arrow C schema of the rows (PyCapsule "arrow_schema").
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        crate::capsule_of(py, &self.schema)
    }

    /// Whether the stream was taken already.
    #[getter]
    fn consumed(&self) -> bool {
        self.batches
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_none()
    }
}
