//! Ctrl-C while Rust works. The interpreter runs signal handlers (the
//! one that raises `KeyboardInterrupt` above all) only on its main thread
//! and only when asked, and nothing asks while Rust holds that thread:
//! so the thread Python called in waits, with the lock released, and
//! asks at least every [`CHECK_EVERY`] (and once per record batch
//! handed over). A handler's exception sets a [`Cancel`] flag that the
//! joining stops at (before the next message, between the chunks of a
//! read), and is raised once the work has stopped.

use std::io::{self, Read};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{channel, RecvTimeoutError};
use std::sync::{Arc, OnceLock};
use std::thread::ThreadId;
use std::time::Duration;

use pyo3::exceptions::{PyKeyboardInterrupt, PyOSError};
use pyo3::prelude::*;

/// How long a waiting thread goes without looking for signals: short
/// against a person's patience, long against the cost of taking the
/// interpreter's lock.
pub const CHECK_EVERY: Duration = Duration::from_millis(50);

/// The most bytes one read asks of a source: a whole input read for
/// `recover` stops this soon after it is cancelled.
const READ_CHUNK: usize = 8 << 20;

/// The interpreter's main thread, once a call from Python came on it.
static MAIN_THREAD: OnceLock<ThreadId> = OnceLock::new();

/// Notes the current thread if it is the interpreter's main thread (the
/// module may be imported elsewhere; each entry point calls this).
pub fn note_thread(py: Python<'_>) -> PyResult<()> {
    if MAIN_THREAD.get().is_some() {
        return Ok(());
    }
    let threading = py.import("threading")?;
    let main = threading.call_method0("main_thread")?;
    if main.is(&threading.call_method0("current_thread")?) {
        let _ = MAIN_THREAD.set(std::thread::current().id());
    }
    Ok(())
}

/// Whether this is the interpreter's main thread: the only one on which
/// signal handlers run, so the only one worth taking the lock on for
/// them (a consumer's worker thread must not wait for the lock).
pub fn on_main_thread() -> bool {
    MAIN_THREAD.get() == Some(&std::thread::current().id())
}

/// Runs the handlers of pending signals when on the main thread; the
/// exception one raised (`KeyboardInterrupt` for Ctrl-C), if any.
pub fn check() -> PyResult<()> {
    if !on_main_thread() {
        return Ok(());
    }
    Python::attach(|py| py.check_signals())
}

/// Whether `err` is the `KeyboardInterrupt` of Ctrl-C.
pub fn is_keyboard_interrupt(err: &PyErr) -> bool {
    Python::attach(|py| err.is_instance_of::<PyKeyboardInterrupt>(py))
}

/// What `err` is, for a message: its type, and its text if it has one.
pub fn describe(err: &PyErr) -> String {
    Python::attach(|py| {
        let name = err
            .get_type(py)
            .name()
            .map_or_else(|_| "an exception".to_string(), |n| n.to_string());
        match err.value(py).str().map(|s| s.to_string()) {
            Ok(text) if !text.is_empty() => format!("{name}: {text}"),
            _ => name,
        }
    })
}

/// Has the interpreter raise `KeyboardInterrupt` again as soon as control
/// comes back to Python code: for a consumer of the stream that is not
/// ours (pyarrow, Polars), which would otherwise turn the interrupt into
/// an error of its own, or never see it.
pub fn interrupt_again() {
    Python::attach(|py| {
        // `_thread.interrupt_main` simulates the signal; it cannot fail
        // short of a broken interpreter, and then there is nobody to tell.
        let _ = py
            .import("_thread")
            .and_then(|t| t.call_method0("interrupt_main"));
    });
}

/// Asks a run to stop; shared by the waiting thread, the joining one and
/// the readers of its sources.
#[derive(Clone, Default, Debug)]
pub struct Cancel(Arc<AtomicBool>);

impl Cancel {
    /// Asks the run to stop.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the run was asked to stop.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// A source's reader that fails once its run is cancelled, and reads at
/// most [`READ_CHUNK`] bytes at a time so that it looks often.
pub struct Cancellable<R> {
    inner: R,
    cancel: Cancel,
}

impl<R> Cancellable<R> {
    /// Wraps `inner`.
    pub fn new(inner: R, cancel: Cancel) -> Self {
        Self { inner, cancel }
    }
}

impl<R: Read> Read for Cancellable<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.cancel.is_set() {
            // Not `ErrorKind::Interrupted`: `read_to_end` retries that.
            return Err(io::Error::other("interrupted"));
        }
        let len = buf.len().min(READ_CHUNK);
        self.inner.read(&mut buf[..len])
    }
}

/// Runs `work` on a thread of its own while this one, the lock released,
/// checks for signals every [`CHECK_EVERY`]. A handler's exception sets
/// `cancel`, which `work` must heed; it comes back beside `work`'s result
/// once `work` has returned.
pub fn run<T, F>(py: Python<'_>, cancel: &Cancel, work: F) -> PyResult<(T, Option<PyErr>)>
where
    T: Send,
    F: FnOnce() -> T + Send,
{
    note_thread(py)?;
    py.detach(|| {
        std::thread::scope(|scope| {
            let (done_tx, done_rx) = channel::<()>();
            let worker = std::thread::Builder::new()
                .name("vwlogs".into())
                .spawn_scoped(scope, move || {
                    let out = work();
                    // The waiting thread may have gone only by panicking.
                    let _ = done_tx.send(());
                    out
                })
                .map_err(|e| PyOSError::new_err(format!("cannot start a thread: {e}")))?;
            let mut interrupt = None;
            loop {
                match done_rx.recv_timeout(CHECK_EVERY) {
                    Ok(()) | Err(RecvTimeoutError::Disconnected) => break,
                    Err(RecvTimeoutError::Timeout) if interrupt.is_none() => {
                        if let Err(e) = check() {
                            cancel.set();
                            interrupt = Some(e);
                        }
                    }
                    Err(RecvTimeoutError::Timeout) => {}
                }
            }
            let out = match worker.join() {
                Ok(out) => out,
                Err(panic) => std::panic::resume_unwind(panic),
            };
            Ok((out, interrupt))
        })
    })
}
