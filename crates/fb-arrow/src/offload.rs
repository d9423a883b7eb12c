//! A writer on a thread of its own. Where several threads join, the
//! thread that takes their batches in order also reads the input (or runs
//! a session's writer): joining the pieces of an even batch and encoding
//! it there made that thread the one the others wait for. An `Offload`
//! moves both to a thread of its own; the file is the same bytes.

use std::sync::mpsc::{sync_channel, SyncSender};
use std::thread::{Scope, ScopedJoinHandle};

use arrow_array::RecordBatch;
use arrow_schema::ArrowError;

use crate::error::Error;
use crate::even::Pieces;
use crate::writers::BatchWriter;

/// Batches waiting for the writer's thread: enough to keep it busy, few
/// enough to bound memory.
const IN_FLIGHT: usize = 2;

/// What the writer's thread is asked to do.
enum Job {
    Pieces(Pieces),
    Finish,
}

/// What the writer's thread ends with: the output once finished, `None`
/// when dropped before.
type Ended<O> = Result<Option<O>, Error>;

/// A [`BatchWriter`] that hands its batches to `B` on a thread of its own
/// (scoped: `B` may borrow the output). A write error of `B` comes back
/// from the next call, with its I/O kind.
pub struct Offload<'scope, B: BatchWriter> {
    tx: Option<SyncSender<Job>>,
    thread: Option<ScopedJoinHandle<'scope, Ended<B::Output>>>,
}

impl<'scope, B> Offload<'scope, B>
where
    B: BatchWriter + Send + 'scope,
    B::Output: Send + 'scope,
{
    /// Starts `writer`'s thread in `scope`.
    pub fn new<'env>(scope: &'scope Scope<'scope, 'env>, writer: B) -> Result<Self, Error> {
        let (tx, rx) = sync_channel::<Job>(IN_FLIGHT);
        let run = move || -> Ended<B::Output> {
            let mut writer = writer;
            for job in rx {
                match job {
                    Job::Pieces(pieces) => writer.write_pieces(pieces)?,
                    Job::Finish => return writer.finish().map(Some),
                }
            }
            // Dropped unfinished (an error or a stop elsewhere): the
            // output is left as it is, to be thrown away.
            Ok(None)
        };
        let thread = std::thread::Builder::new()
            .name("fb-write".into())
            .spawn_scoped(scope, run)
            .map_err(|e| stopped(format!("cannot start the writer's thread: {e}")))?;
        Ok(Self {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    fn send(&mut self, job: Job) -> Result<(), Error> {
        let sent = self.tx.as_ref().is_some_and(|tx| tx.send(job).is_ok());
        if sent {
            return Ok(());
        }
        let why = self.end().err();
        Err(why.unwrap_or_else(|| stopped("the writer's thread ended".into())))
    }

    /// Waits for the thread and gives what it ended with.
    fn end(&mut self) -> Ended<B::Output> {
        self.tx = None;
        match self.thread.take().map(ScopedJoinHandle::join) {
            Some(Ok(ended)) => ended,
            Some(Err(_)) => Err(stopped("the writer's thread panicked".into())),
            None => Err(stopped("the writer's thread ended".into())),
        }
    }
}

fn stopped(why: String) -> Error {
    Error::Arrow(ArrowError::ComputeError(why))
}

impl<'scope, B> BatchWriter for Offload<'scope, B>
where
    B: BatchWriter + Send + 'scope,
    B::Output: Send + 'scope,
{
    type Output = B::Output;

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        self.send(Job::Pieces(Pieces::one(batch.clone())))
    }

    fn write_pieces(&mut self, pieces: Pieces) -> Result<(), Error> {
        self.send(Job::Pieces(pieces))
    }

    fn finish(mut self) -> Result<B::Output, Error> {
        self.send(Job::Finish)?;
        match self.end()? {
            Some(out) => Ok(out),
            None => Err(stopped("the writer's thread ended unfinished".into())),
        }
    }
}

impl<B: BatchWriter> Drop for Offload<'_, B> {
    fn drop(&mut self) {
        // The thread ends after its job in hand; the scope waits for it.
        self.tx = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::{ArrayRef, Int64Array};

    /// Fails every write after the first with a closed pipe.
    struct Failing(usize);

    impl BatchWriter for Failing {
        type Output = usize;
        fn write(&mut self, _: &RecordBatch) -> Result<(), Error> {
            self.0 += 1;
            match self.0 {
                1 => Ok(()),
                _ => Err(Error::Arrow(ArrowError::IoError(
                    "closed".into(),
                    std::io::Error::from(std::io::ErrorKind::BrokenPipe),
                ))),
            }
        }
        fn finish(self) -> Result<usize, Error> {
            Ok(self.0)
        }
    }

    fn batch() -> RecordBatch {
        RecordBatch::try_from_iter([("id", Arc::new(Int64Array::from(vec![1, 2])) as ArrayRef)])
            .unwrap()
    }

    /// The thread's output comes back from `finish`; its error (with its
    /// I/O kind) from a later call.
    #[test]
    fn output_and_errors_come_back() {
        let written = std::thread::scope(|scope| {
            let mut w = Offload::new(scope, Failing(0)).unwrap();
            w.write(&batch()).unwrap();
            w.finish().unwrap()
        });
        assert_eq!(written, 1);
        std::thread::scope(|scope| {
            let mut w = Offload::new(scope, Failing(0)).unwrap();
            let mut kinds = Vec::new();
            for _ in 0..(IN_FLIGHT + 3) {
                if let Err(e) = w.write(&batch()) {
                    kinds.push(e.io_kind());
                    break;
                }
            }
            let kind = match kinds.as_slice() {
                [kind] => *kind,
                [] => w.finish().err().and_then(|e| e.io_kind()),
                _ => None,
            };
            assert_eq!(kind, Some(std::io::ErrorKind::BrokenPipe));
        });
    }
}
