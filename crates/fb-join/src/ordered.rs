//! One ordered worker pool: jobs go to a few interchangeable worker
//! threads, and their results come back in the order the jobs were
//! given, with a bound on the jobs in flight.
//!
//! Compressed output (`fb-run`'s `compress.rs`: packers) and `fb validate`
//! (`fb-run`'s `validate.rs`: one input per job) run on it, so that the
//! parts easy to get wrong are right once: a worker that panics is an
//! error, not a wait for a result that never comes; memory stays bounded
//! when the consumer is slower than the workers; the threads are joined
//! whenever the pool goes.
//!
//! The contract:
//! - Each worker is a `FnMut(J) -> R` of its own that owns its state (a
//!   compressor, a joiner), made by the caller, one per thread. Any
//!   worker may take any job.
//! - Jobs are numbered in the order they are submitted; results are
//!   handed back strictly in that order, whatever order the workers
//!   finish in.
//! - At most `limit` jobs are between submission and being handed back:
//!   [`Ordered::submit`] hands results on (waiting for them) while the
//!   pool is full.
//! - A job's own failure is part of its result `R`, handed back in its
//!   place like any other. A worker that panics (or no worker left) makes
//!   this and every later call fail with [`Error::Worker`].
//! - Dropping the pool (as [`Ordered::finish`] does) closes the queue,
//!   drops the jobs not started, and joins every thread once its current
//!   job is done.
//! - Threads are scoped ([`Ordered::scoped`]: workers may borrow the
//!   caller's data) or owned ([`Ordered::owned`]: a pool kept in a
//!   long-lived value, such as a `Write`).
//!
//! The parallel pipeline (`parallel.rs`) is not on it: its jobs are
//! submitted on the reading thread and handed on on the writer's, marks
//! that no worker sees go between them, and a batch's credit comes back
//! only once the sink has written it.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::thread::{Builder, JoinHandle, Scope, ScopedJoinHandle};

use crossbeam_channel::{Receiver, Sender, TryRecvError};

use crate::reorder::Reorder;
use crate::Error;

/// What a worker sends back.
enum Back<R> {
    /// The result of job `.0`.
    Done(u64, R),
    /// The worker panicked on job `.0` with this message, and stopped.
    Panicked(u64, String),
}

/// A worker thread, owned or scoped.
enum Handle<'scope> {
    Owned(JoinHandle<()>),
    Scoped(ScopedJoinHandle<'scope, ()>),
}

/// A thread's body, boxed so that owned and scoped threads start alike.
type Body<'scope> = Box<dyn FnOnce() + Send + 'scope>;

/// Worker threads taking jobs `J` from one queue, their results `R`
/// handed back in submission order (see the module's doc).
pub struct Ordered<'scope, J, R> {
    /// Closed (`None`) when the pool goes: the workers then end.
    jobs: Option<Sender<(u64, J)>>,
    /// The queue's other end, kept to empty it when the pool goes.
    queue: Receiver<(u64, J)>,
    done: Receiver<Back<R>>,
    threads: Vec<Handle<'scope>>,
    /// Jobs submitted: the next job's number.
    sent: u64,
    in_order: Reorder<R>,
    limit: u64,
    /// The job a worker stopped on, and why: every call fails from then.
    broken: Option<(u64, String)>,
}

impl<'scope, J: Send + 'scope, R: Send + 'scope> Ordered<'scope, J, R> {
    /// Starts one scoped thread per worker of `workers`, named
    /// `{name}-{index}`, with at most `limit` jobs in flight (at least one).
    /// A thread that cannot start is [`Error::Spawn`] (those started are
    /// joined).
    pub fn scoped<'env, W>(
        scope: &'scope Scope<'scope, 'env>,
        name: &str,
        limit: usize,
        workers: impl IntoIterator<Item = W>,
    ) -> Result<Self, Error>
    where
        W: FnMut(J) -> R + Send + 'scope,
    {
        Self::start(limit, workers, |index, body| {
            Builder::new()
                .name(format!("{name}-{index}"))
                .spawn_scoped(scope, body)
                .map(Handle::Scoped)
        })
    }

    fn start<W>(
        limit: usize,
        workers: impl IntoIterator<Item = W>,
        mut spawn: impl FnMut(usize, Body<'scope>) -> std::io::Result<Handle<'scope>>,
    ) -> Result<Self, Error>
    where
        W: FnMut(J) -> R + Send + 'scope,
    {
        let (jobs, queue) = crossbeam_channel::unbounded();
        let (back, done) = crossbeam_channel::unbounded();
        // Dropped on a failed start: the threads started are joined.
        let mut pool = Self {
            jobs: Some(jobs),
            queue,
            done,
            threads: Vec::new(),
            sent: 0,
            in_order: Reorder::default(),
            limit: limit.max(1) as u64,
            broken: None,
        };
        for (index, worker) in workers.into_iter().enumerate() {
            let (queue, back) = (pool.queue.clone(), back.clone());
            let body: Body<'scope> = Box::new(move || serve(worker, &queue, &back));
            let handle = spawn(index, body).map_err(|source| Error::Spawn { index, source })?;
            pool.threads.push(handle);
        }
        Ok(pool)
    }

    /// Whether as many jobs as the limit are in flight.
    pub fn full(&self) -> bool {
        self.in_flight() >= self.limit
    }

    /// Jobs submitted and not yet handed back.
    pub fn in_flight(&self) -> u64 {
        self.sent - self.in_order.next()
    }

    /// Hands results to `take`, in order, waiting for them, until the pool
    /// is not full.
    pub fn make_room<E: From<Error>>(
        &mut self,
        take: &mut impl FnMut(R) -> Result<(), E>,
    ) -> Result<(), E> {
        while self.full() {
            match self.next()? {
                Some(result) => take(result)?,
                None => break,
            }
        }
        Ok(())
    }

    /// Submits `job` as the next one, once there is room ([`make_room`]),
    /// then hands to `take` every result already back whose turn it is.
    ///
    /// [`make_room`]: Ordered::make_room
    pub fn submit<E: From<Error>>(
        &mut self,
        job: J,
        mut take: impl FnMut(R) -> Result<(), E>,
    ) -> Result<(), E> {
        self.make_room(&mut take)?;
        self.check()?;
        let queued = self
            .jobs
            .as_ref()
            .is_some_and(|jobs| jobs.send((self.sent, job)).is_ok());
        if !queued {
            return Err(self.stopped("the pool's queue is closed").into());
        }
        self.sent += 1;
        while let Some(result) = self.try_next()? {
            take(result)?;
        }
        Ok(())
    }

    /// The next result in order, waiting for it; `None` when no job is in
    /// flight.
    #[allow(clippy::should_implement_trait)] // fallible, and it waits
    pub fn next(&mut self) -> Result<Option<R>, Error> {
        self.receive(true)
    }

    /// The next result in order if it is back; `None` when it is not (or
    /// no job is in flight).
    pub fn try_next(&mut self) -> Result<Option<R>, Error> {
        self.receive(false)
    }

    /// Hands every result still to come to `take`, in order, then joins
    /// the threads.
    pub fn finish<E: From<Error>>(
        mut self,
        mut take: impl FnMut(R) -> Result<(), E>,
    ) -> Result<(), E> {
        while let Some(result) = self.next()? {
            take(result)?;
        }
        Ok(())
    }

    fn receive(&mut self, wait: bool) -> Result<Option<R>, Error> {
        loop {
            self.check()?;
            if self.in_flight() == 0 {
                return Ok(None);
            }
            if let Some(result) = self.in_order.pop() {
                return Ok(Some(result));
            }
            let back = match wait {
                true => self.done.recv().ok(),
                false => match self.done.try_recv() {
                    Ok(back) => Some(back),
                    Err(TryRecvError::Empty) => return Ok(None),
                    Err(TryRecvError::Disconnected) => None,
                },
            };
            match back {
                Some(Back::Done(seq, result)) => self.in_order.put(seq, result),
                Some(Back::Panicked(seq, message)) => self.broken = Some((seq, message)),
                // Every worker is gone (or none started): nothing will come.
                None => return Err(self.stopped("no worker thread is left")),
            }
        }
    }

    /// Fails once a worker stopped.
    fn check(&self) -> Result<(), Error> {
        match &self.broken {
            Some((job, message)) => Err(Error::Worker {
                job: *job,
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }

    /// The pool cannot go on, for `why`, while waiting for the next job.
    fn stopped(&mut self, why: &str) -> Error {
        let broken = (self.in_order.next(), why.to_string());
        let (job, message) = self.broken.get_or_insert(broken).clone();
        Error::Worker { job, message }
    }
}

impl<J: Send + 'static, R: Send + 'static> Ordered<'static, J, R> {
    /// As [`Ordered::scoped`], on threads of their own (the workers own
    /// what they use).
    pub fn owned<W>(
        name: &str,
        limit: usize,
        workers: impl IntoIterator<Item = W>,
    ) -> Result<Self, Error>
    where
        W: FnMut(J) -> R + Send + 'static,
    {
        Self::start(limit, workers, |index, body| {
            Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(body)
                .map(Handle::Owned)
        })
    }
}

impl<J, R> Drop for Ordered<'_, J, R> {
    fn drop(&mut self) {
        // Closing the queue and taking out what no worker started ends
        // every thread once its current job is done.
        self.jobs = None;
        while self.queue.try_recv().is_ok() {}
        for handle in self.threads.drain(..) {
            // A worker's panic was caught and told as a result.
            let _ = match handle {
                Handle::Owned(h) => h.join(),
                Handle::Scoped(h) => h.join(),
            };
        }
    }
}

/// A worker thread's loop: jobs from `queue` done by `work`, results to
/// `back`, until the queue closes, the pool is gone or `work` panics.
fn serve<J, R>(mut work: impl FnMut(J) -> R, queue: &Receiver<(u64, J)>, back: &Sender<Back<R>>) {
    for (seq, job) in queue.iter() {
        // The worker's state may be half changed by the panic: it is not
        // used again.
        let sent = match catch_unwind(AssertUnwindSafe(|| work(job))) {
            Ok(result) => back.send(Back::Done(seq, result)),
            Err(panic) => {
                let _ = back.send(Back::Panicked(seq, panic_message(&*panic)));
                return;
            }
        };
        if sent.is_err() {
            return;
        }
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    match (panic.downcast_ref::<&str>(), panic.downcast_ref::<String>()) {
        (Some(s), _) => format!("it panicked: {s}"),
        (_, Some(s)) => format!("it panicked: {s}"),
        _ => "it panicked".into(),
    }
}

#[cfg(test)]
#[allow(clippy::panic, clippy::unwrap_used)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    /// What the jobs gave, in the order handed back: job `i`'s value
    /// `i * 10`, or its own error `i`.
    type Results = Vec<Result<u64, u64>>;

    /// How a job behaves on its worker.
    #[derive(Clone, Copy)]
    enum Act {
        /// Its number times ten, after this many milliseconds.
        Value(u64),
        /// An error of its own, as its result.
        Fail,
        /// A panic.
        Panic,
    }

    /// Runs `jobs` (job `i` acts as `jobs[i]`) on `threads` scoped
    /// workers: the results handed back, in order, or the pool's error.
    fn run(threads: usize, limit: usize, jobs: &[Act]) -> Result<Results, Error> {
        std::thread::scope(|scope| {
            let workers = (0..threads).map(|_| {
                |(i, act): (u64, Act)| match act {
                    Act::Value(ms) => {
                        std::thread::sleep(Duration::from_millis(ms));
                        Ok(i * 10)
                    }
                    Act::Fail => Err(i),
                    Act::Panic => panic!("job {i} panics"),
                }
            });
            let mut pool = Ordered::scoped(scope, "test", limit, workers)?;
            let mut out = Vec::new();
            for (i, act) in jobs.iter().enumerate() {
                pool.submit((i as u64, *act), |r| -> Result<(), Error> {
                    out.push(r);
                    Ok(())
                })?;
            }
            pool.finish(|r| -> Result<(), Error> {
                out.push(r);
                Ok(())
            })?;
            Ok(out)
        })
    }

    #[test]
    fn results_come_back_in_submission_order() {
        // (case, threads, limit, how each job acts, results expected or
        // None for the pool's error at the panicking job)
        let cases = [
            ("zero jobs", 3, 6, vec![], Some(vec![])),
            (
                "in order",
                3,
                6,
                vec![Act::Value(0); 5],
                Some(vec![Ok(0), Ok(10), Ok(20), Ok(30), Ok(40)]),
            ),
            (
                // The first jobs take longest: they finish last.
                "reversed completion",
                4,
                4,
                vec![
                    Act::Value(60),
                    Act::Value(40),
                    Act::Value(20),
                    Act::Value(0),
                ],
                Some(vec![Ok(0), Ok(10), Ok(20), Ok(30)]),
            ),
            (
                "one thread",
                1,
                2,
                vec![Act::Value(1), Act::Value(0), Act::Value(0)],
                Some(vec![Ok(0), Ok(10), Ok(20)]),
            ),
            (
                "a worker's error in its place",
                2,
                4,
                vec![Act::Value(5), Act::Fail, Act::Value(0)],
                Some(vec![Ok(0), Err(1), Ok(20)]),
            ),
            (
                "a worker's panic",
                2,
                4,
                vec![Act::Value(0), Act::Panic, Act::Value(0), Act::Value(0)],
                None,
            ),
            (
                "a panic on the only thread",
                1,
                1,
                vec![Act::Panic, Act::Value(0)],
                None,
            ),
        ];
        for (case, threads, limit, jobs, want) in cases {
            let got = run(threads, limit, &jobs);
            match (got, want) {
                (Ok(got), Some(want)) => assert_eq!(got, want, "{case}"),
                (Err(Error::Worker { job, message }), None) => {
                    assert!(message.contains("panics"), "{case}: {message}");
                    assert!(matches!(jobs.get(job as usize), Some(Act::Panic)), "{case}");
                }
                (got, _) => panic!("{case}: {got:?}"),
            }
        }
    }

    #[test]
    fn no_more_than_the_limit_is_in_flight() {
        // (case, threads, limit)
        for (case, threads, limit) in [
            ("limit below threads", 4, 2),
            ("limit of one", 2, 1),
            ("twice the threads", 3, 6),
        ] {
            // Jobs started and not yet handed back, at most.
            let started = AtomicU64::new(0);
            let taken = AtomicU64::new(0);
            let most = AtomicU64::new(0);
            std::thread::scope(|scope| {
                let workers = (0..threads).map(|_| {
                    |i: u64| {
                        let n = started.fetch_add(1, Ordering::SeqCst) + 1;
                        let ahead = n.saturating_sub(taken.load(Ordering::SeqCst));
                        most.fetch_max(ahead, Ordering::SeqCst);
                        std::thread::sleep(Duration::from_millis(2));
                        i
                    }
                });
                let mut pool = Ordered::scoped(scope, "test", limit, workers).unwrap();
                let mut got = Vec::new();
                let mut take = |i: u64| -> Result<(), Error> {
                    taken.fetch_add(1, Ordering::SeqCst);
                    got.push(i);
                    Ok(())
                };
                for i in 0..20 {
                    pool.submit(i, &mut take).unwrap();
                    assert!(pool.in_flight() <= limit as u64, "{case}");
                }
                pool.finish(&mut take).unwrap();
                assert_eq!(got, (0..20).collect::<Vec<_>>(), "{case}");
            });
            let most = most.load(Ordering::SeqCst);
            assert!(most <= limit as u64, "{case}: {most} in flight");
        }
    }

    #[test]
    fn owned_threads_are_joined_when_the_pool_goes() {
        let (tx, rx) = mpsc::channel::<u64>();
        let workers = (0..2).map(|_| {
            let tx = tx.clone();
            move |i: u64| {
                let _ = tx.send(i);
                i
            }
        });
        let mut pool = Ordered::owned("test", 4, workers).unwrap();
        drop(tx);
        let mut got = Vec::new();
        let mut take = |r: u64| -> Result<(), Error> {
            got.push(r);
            Ok(())
        };
        for i in 0..3 {
            pool.submit(i, &mut take).unwrap();
        }
        pool.finish(&mut take).unwrap();
        assert_eq!(got, [0, 1, 2]);
        // Joined: every worker is gone, and its sender with it.
        let mut seen = 0;
        let end = loop {
            match rx.try_recv() {
                Ok(_) => seen += 1,
                Err(end) => break end,
            }
        };
        assert_eq!(seen, 3);
        assert_eq!(end, mpsc::TryRecvError::Disconnected);
    }

    #[test]
    fn no_worker_is_an_error_not_a_hang() {
        let workers: Vec<fn(u64) -> u64> = Vec::new();
        let mut pool = Ordered::owned("test", 2, workers).unwrap();
        let err = pool
            .submit(0, |_| -> Result<(), Error> { Ok(()) })
            .and_then(|()| pool.next().map(|_| ()));
        assert!(matches!(err, Err(Error::Worker { job: 0, .. })), "{err:?}");
    }
}
