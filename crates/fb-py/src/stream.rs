//! The reader behind `vwlogs.read`: once a consumer asks for the stream,
//! a thread joins the sources into record batches and hands them over a
//! bounded channel; the consumer (pyarrow, Polars, DuckDB) pulls them
//! through the Arrow C stream interface, without a copy, and looks for
//! signals (Ctrl-C) while it waits.

use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Arc, Mutex, MutexGuard};

use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{RecordBatch, RecordBatchReader};
use arrow_schema::{ArrowError, SchemaRef};
use fb_arrow::{join_ahead, AheadReceiver, AheadSender, ArrowSink, BatchWriter, Handed, Pieces};
use fb_join::{JoinedEvent, Pipeline};
use fb_run::report::RunReport;
use pyo3::prelude::*;
use pyo3::types::PyCapsule;

use crate::drive::{self, Stop};
use crate::interrupt::{self, Cancel, CHECK_EVERY};
use crate::options::Opts;
use crate::source::Src;

/// Batches in flight between the joining thread and the consumer, where
/// the consumer joins their pieces: enough to keep both busy, few enough
/// to bound memory.
const IN_FLIGHT: usize = 4;

/// Threads that join a batch's pieces (copy them into one) for the
/// consumer, on `threads` joining threads: on several, that copy is a
/// good part of the joining, and on the consumer's thread it made that
/// thread the busiest of a read on four threads or more (bench/NOTES.md).
/// Only where the machine has cores for them (`join_lanes_for`).
///
/// `FB_JOIN_LANES` in the environment sets how many (at most
/// [`fb_arrow::MAX_JOIN_LANES`], 0 for none), whatever the cores: for the
/// tests of either path on any machine, and for benches.
fn join_lanes(threads: usize) -> usize {
    let forced = std::env::var("FB_JOIN_LANES")
        .ok()
        .and_then(|n| n.trim().parse::<usize>().ok());
    if let Some(n) = forced {
        return n.min(fb_arrow::MAX_JOIN_LANES);
    }
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    fb_arrow::join_lanes_for(threads, cores)
}

/// The end of a run, after its batches: how it went, and the events
/// skipped, by reason.
struct Done(Box<RunReport>, Option<Stop>, Vec<(String, u64)>);

/// The joining thread's end of the stream, shared by the sink and the
/// run that sends [`Done`] after it.
type Sender = Arc<Mutex<AheadSender<Done>>>;

/// The consumer went away.
fn closed() -> fb_arrow::Error {
    fb_arrow::Error::Arrow(ArrowError::IoError(
        "the reader was closed".into(),
        std::io::Error::from(std::io::ErrorKind::BrokenPipe),
    ))
}

fn send(tx: &Sender, pieces: Pieces) -> Result<(), fb_arrow::Error> {
    lock(tx).send_pieces(pieces).map_err(|_| closed())
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A [`BatchWriter`] that hands each batch to the consumer, in the pieces
/// it was cut from (several threads' chunks end elsewhere than batches):
/// lanes of their own or the consumer's thread join them while the
/// joining thread goes on.
struct ToChannel(Sender);

impl BatchWriter for ToChannel {
    type Output = ();

    // Both fail once the consumer dropped the reader: the run stops.
    fn write(&mut self, batch: &RecordBatch) -> Result<(), fb_arrow::Error> {
        send(&self.0, Pieces::one(batch.clone()))
    }

    fn write_pieces(&mut self, pieces: Pieces) -> Result<(), fb_arrow::Error> {
        send(&self.0, pieces)
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
    /// What a signal's handler raised while the consumer waited.
    pub interrupt: Option<PyErr>,
    /// Rows handed out.
    pub rows: u64,
    /// Events the joiner skipped, by reason.
    pub skipped: Vec<(String, u64)>,
}

/// Starts joining `sources` on a thread of its own, until the end or
/// `cancel`.
fn start(sources: Vec<Src>, opts: Opts, cancel: Cancel) -> PyResult<AheadReceiver<Done>> {
    let threads = if opts.recover { 1 } else { opts.threads };
    let (tx, rx) = join_ahead(join_lanes(threads), IN_FLIGHT);
    let tx: Sender = Arc::new(Mutex::new(tx));
    let run = move || {
        let filter = opts.filter.clone();
        let keep = move |ev: &JoinedEvent<'_>| filter.keep(ev);
        // The consumer often keeps every batch (`read_all`, a DataFrame)
        // and waits on this thread meanwhile: its core makes memory ready.
        // Batches of exactly `batch_rows` rows, the last fewer, across
        // inputs, so a folder of small files makes as few batches as one
        // file, and its short inputs' runs join on threads.
        let sink = ArrowSink::new(ToChannel(Arc::clone(&tx)), opts.batch_rows)
            .with_prepared_memory()
            .with_columns(opts.columns.clone());
        let mut pipeline = Pipeline::new(opts.options(), keep, sink, threads);
        let mut report = RunReport::default();
        // All the sources in one feed: on several threads one session,
        // whose threads start once. Every batch joined is taken before the
        // feed returns, so the rows joined before a stop are handed out
        // (by the sink's finish) before it is told.
        let fed = drive::feed(&sources, &mut pipeline, opts.recover, &mut report, &cancel);
        let mut stop = fed.err();
        let (joiner, sink) = pipeline.finish();
        // A consumer that went away makes the last batches' sends fail; it
        // gets no `Done` either, and its side records the stop.
        if let Err(e) = sink.finish() {
            stop.get_or_insert(Stop::Io(e.to_string()));
        }
        let done = Done(Box::new(report), stop, crate::skipped(&joiner));
        let _ = lock(&tx).send_other(done);
    };
    std::thread::Builder::new()
        .name("vwlogs-read".into())
        .spawn(run)
        .map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("cannot start a thread: {e}")))?;
    Ok(rx)
}

/// The consumer's end, as an Arrow `RecordBatchReader`.
pub struct Batches {
    rx: Option<AheadReceiver<Done>>,
    /// Wait with the interpreter's lock released: a source that is a
    /// Python file object needs it on the joining thread.
    release_gil: bool,
    /// The consumer is not the Python layer (pyarrow, Polars, DuckDB
    /// straight on the reader): it would make an interrupt an error of
    /// its own.
    foreign: bool,
    /// Stops the joining thread.
    cancel: Cancel,
    outcome: Arc<Mutex<Outcome>>,
    /// The chosen columns' schema.
    schema: SchemaRef,
}

impl Batches {
    /// The next item; the exception a signal's handler raised meanwhile
    /// (checked once per item and every [`CHECK_EVERY`] of waiting).
    fn recv(&mut self) -> PyResult<Option<Handed<Done>>> {
        let Some(mut rx) = self.rx.take() else {
            return Ok(None);
        };
        // The lock is taken to wait only where it may be held: on the main
        // thread (for the signals), and for a file object's reads.
        let release = self.release_gil || interrupt::on_main_thread();
        let wait = |mut rx: AheadReceiver<Done>| {
            let got = rx.recv_timeout(CHECK_EVERY);
            (rx, got)
        };
        loop {
            // On a handler's exception the receiver is dropped: the
            // stream ends.
            interrupt::check()?;
            let (back, got) = match release {
                true => Python::attach(|py| py.detach(move || wait(rx))),
                false => wait(rx),
            };
            rx = back;
            match got {
                Ok(item) => {
                    self.rx = Some(rx);
                    return Ok(Some(item));
                }
                // Kept: `next` tells this from the end it was sent.
                Err(RecvTimeoutError::Disconnected) => {
                    self.rx = Some(rx);
                    return Ok(None);
                }
                Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// Stops the run for a signal's exception `err`: the stream ends.
    fn interrupted(&mut self, err: PyErr) -> Option<Result<RecordBatch, ArrowError>> {
        self.cancel.set();
        self.rx = None;
        // Asked before the lock is taken: it takes the interpreter's.
        let keyboard = interrupt::is_keyboard_interrupt(&err);
        let message = format!("vwlogs: interrupted ({})", interrupt::describe(&err));
        {
            let mut outcome = lock(&self.outcome);
            outcome.stop = Some(Stop::Interrupted);
            outcome.interrupt = Some(err);
        }
        if self.foreign && keyboard {
            // The stream ends as if complete, and the interpreter raises
            // KeyboardInterrupt as soon as the consumer returns: the
            // statement is interrupted, as Ctrl-C does in Python code.
            interrupt::interrupt_again();
            return None;
        }
        Some(Err(ArrowError::ExternalError(message.into())))
    }
}

impl Drop for Batches {
    fn drop(&mut self) {
        // A consumer that stops early (a LIMIT, an error) stops the run.
        self.cancel.set();
    }
}

impl Iterator for Batches {
    type Item = Result<RecordBatch, ArrowError>;

    fn next(&mut self) -> Option<Self::Item> {
        let item = match self.recv() {
            Ok(item) => item,
            Err(err) => return self.interrupted(err),
        };
        match item {
            Some(Handed::Batch(joined)) => {
                // Joined (by a lane or by `recv`) before the outcome's
                // lock is taken.
                let joined = joined.map_err(|e| match e {
                    fb_arrow::Error::Arrow(e) => e,
                    other => ArrowError::ExternalError(Box::new(other)),
                });
                if let Ok(b) = &joined {
                    lock(&self.outcome).rows += b.num_rows() as u64;
                }
                Some(joined)
            }
            Some(Handed::Other(Done(report, stop, skipped))) => {
                let mut outcome = lock(&self.outcome);
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
                lock(&self.outcome).stop = Some(Stop::Io(why.into()));
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

/// The native reader: one stream of batches, taken once; nothing is
/// read before it is taken.
#[pyclass(module = "vwlogs._native", name = "NativeReader")]
pub struct NativeReader {
    /// What to read, until the stream is taken.
    pending: Mutex<Option<(Vec<Src>, Opts)>>,
    outcome: Arc<Mutex<Outcome>>,
    schema: SchemaRef,
}

impl NativeReader {
    /// A reader of `sources`, started when its stream is taken.
    pub fn new(sources: Vec<Src>, opts: Opts) -> Self {
        let schema = opts.columns.schema();
        Self {
            pending: Mutex::new(Some((sources, opts))),
            outcome: Arc::new(Mutex::new(Outcome::default())),
            schema,
        }
    }

    /// How the run ended (once the stream was read to its end).
    pub fn outcome(&self) -> MutexGuard<'_, Outcome> {
        lock(&self.outcome)
    }

    /// Starts the run, and gives the stream as a PyCapsule.
    fn take<'py>(&self, py: Python<'py>, foreign: bool) -> PyResult<Bound<'py, PyCapsule>> {
        interrupt::note_thread(py)?;
        let (sources, opts) = lock(&self.pending).take().ok_or_else(|| {
            pyo3::exceptions::PyRuntimeError::new_err(
                "this reader was already read, and its source (a file object) cannot be \
                 read again: call vwlogs.read again for another pass",
            )
        })?;
        let release_gil = sources.iter().any(Src::needs_gil);
        let cancel = Cancel::default();
        let batches = Batches {
            rx: Some(start(sources, opts, cancel.clone())?),
            release_gil,
            foreign,
            cancel,
            outcome: Arc::clone(&self.outcome),
            schema: Arc::clone(&self.schema),
        };
        let stream = FFI_ArrowArrayStream::new(Box::new(batches));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
}

#[pymethods]
impl NativeReader {
    /// The Arrow C stream of the joined events (PyCapsule
    /// "arrow_array_stream"), for a consumer other than the Python layer;
    /// it can be taken once.
    #[pyo3(signature = (requested_schema=None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        // The schema is fixed (docs/arrow-schema.md); a requested one is
        // a hint the producer may ignore.
        let _ = requested_schema;
        self.take(py, true)
    }

    /// The stream, for the Python layer, which raises an interrupt's
    /// exception itself (`reader_error`).
    fn own_stream<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        self.take(py, false)
    }

    /// The Arrow C schema of the rows (PyCapsule "arrow_schema").
    fn __arrow_c_schema__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyCapsule>> {
        crate::capsule_of(py, &self.schema)
    }

    /// Whether the stream was taken already.
    #[getter]
    fn consumed(&self) -> bool {
        lock(&self.pending).is_none()
    }
}
