//! One ordered worker pool: jobs go to a few interchangeable worker
//! threads, and their results come back in the order the jobs were
//! given, with a bound on the jobs in flight.
//!
//! The parallel pipeline's workers (`parallel.rs`: batches joined),
//! compressed output (`fb-run`'s `compress.rs`: pieces packed) and `fb
//! validate` (`fb-run`'s `validate.rs`: one input per job) run on it, so
//! that the parts easy to get wrong are right once: a worker that panics
//! is an error, not a wait for a result that never comes; memory stays
//! bounded when the consumer is slower than the workers; the threads are
//! joined whenever the pool goes.
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
//! - A pool may be split ([`Ordered::scoped_split`]) when jobs are
//!   submitted on one thread and their results taken on another, as the
//!   parallel pipeline does: the [`Feed`] also passes results that need
//!   no worker into the sequence (the pipeline's marks between batches),
//!   and the caller bounds the jobs in flight (the pipeline's credits come
//!   back only once a batch is written).

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

/// Starts bodies as threads of `scope` named `{name}-{index}`.
fn in_scope<'scope, 'env, 'n>(
    scope: &'scope Scope<'scope, 'env>,
    name: &'n str,
) -> impl FnMut(usize, Body<'scope>) -> std::io::Result<Handle<'scope>> + use<'scope, 'env, 'n> {
    move |index, body| {
        Builder::new()
            .name(format!("{name}-{index}"))
            .spawn_scoped(scope, body)
            .map(Handle::Scoped)
    }
}

/// Worker threads taking jobs `J` from one queue, their results `R`
/// handed back in submission order (see the module's doc).
pub struct Ordered<'scope, J, R> {
    /// `None` once the pool goes: the queue closes and the workers end.
    feed: Option<Feed<J, R>>,
    /// The queue's other end, kept to empty it when the pool goes.
    queue: Receiver<(u64, J)>,
    results: Results<'scope, R>,
    limit: u64,
}

/// The submitting half of a pool split with [`Ordered::scoped_split`]:
/// jobs, and results that need no worker, numbered in one sequence.
/// Dropping it closes the queue.
pub struct Feed<J, R> {
    jobs: Sender<(u64, J)>,
    /// For [`Feed::pass`]; `None` in an unsplit pool, whose results half
    /// must see when every worker is gone.
    back: Option<Sender<Back<R>>>,
    /// Items submitted or passed: the next one's number.
    sent: u64,
}

/// The receiving half of a pool: results in order. Dropping it joins the
/// threads (once the feed is gone too).
pub struct Results<'scope, R> {
    done: Receiver<Back<R>>,
    in_order: Reorder<R>,
    threads: Vec<Handle<'scope>>,
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
        Self::start(limit, None, workers, in_scope(scope, name))
    }

    /// As [`Ordered::scoped`], in two halves for two threads: one submits
    /// (its queue holds at most `queue` jobs not yet started: submitting
    /// waits while it is full), the other takes the results. The halves
    /// bound nothing else: the caller bounds the jobs in flight (the
    /// parallel pipeline's credits come back only once a batch is
    /// written).
    pub fn scoped_split<'env, W>(
        scope: &'scope Scope<'scope, 'env>,
        name: &str,
        queue: usize,
        workers: impl IntoIterator<Item = W>,
    ) -> Result<(Feed<J, R>, Results<'scope, R>), Error>
    where
        W: FnMut(J) -> R + Send + 'scope,
    {
        let pool = Self::start(1, Some(queue.max(1)), workers, in_scope(scope, name))?;
        Ok(pool.split())
    }

    /// `queue`: a bound on the jobs queued, and a split pool (its feed can
    /// pass results).
    fn start<W>(
        limit: usize,
        queue: Option<usize>,
        workers: impl IntoIterator<Item = W>,
        mut spawn: impl FnMut(usize, Body<'scope>) -> std::io::Result<Handle<'scope>>,
    ) -> Result<Self, Error>
    where
        W: FnMut(J) -> R + Send + 'scope,
    {
        let (jobs, taken) = match queue {
            Some(n) => crossbeam_channel::bounded(n),
            None => crossbeam_channel::unbounded(),
        };
        let (back, done) = crossbeam_channel::unbounded();
        // Dropped on a failed start: the threads started are joined.
        let mut pool = Self {
            feed: Some(Feed {
                jobs,
                back: queue.map(|_| back.clone()),
                sent: 0,
            }),
            queue: taken,
            results: Results {
                done,
                in_order: Reorder::default(),
                threads: Vec::new(),
                broken: None,
            },
            limit: limit.max(1) as u64,
        };
        for (index, worker) in workers.into_iter().enumerate() {
            let (queue, back) = (pool.queue.clone(), back.clone());
            let body: Body<'scope> = Box::new(move || serve(worker, &queue, &back));
            let handle = spawn(index, body).map_err(|source| Error::Spawn { index, source })?;
            pool.results.threads.push(handle);
        }
        Ok(pool)
    }

    /// The two halves; the pool's own end of the queue goes, so that a
    /// job submitted once every worker is gone is refused.
    fn split(mut self) -> (Feed<J, R>, Results<'scope, R>) {
        let results = Results {
            done: crossbeam_channel::never(),
            in_order: Reorder::default(),
            threads: Vec::new(),
            broken: None,
        };
        let results = std::mem::replace(&mut self.results, results);
        let feed = self.feed.take();
        // What is left of the pool is dropped: a queue end and nothing to
        // join. The feed was just made.
        drop(self);
        match feed {
            Some(feed) => (feed, results),
            None => (Feed::closed(), results),
        }
    }

    /// Whether as many jobs as the limit are in flight.
    pub fn full(&self) -> bool {
        self.in_flight() >= self.limit
    }

    /// Jobs submitted and not yet handed back.
    pub fn in_flight(&self) -> u64 {
        let sent = self.feed.as_ref().map_or(0, |f| f.sent);
        sent.saturating_sub(self.results.in_order.next())
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
        self.results.check()?;
        // The pool holds an end of the queue: sending cannot fail.
        if let Some(feed) = &mut self.feed {
            feed.submit(job);
        }
        while let Some(result) = self.try_next()? {
            take(result)?;
        }
        Ok(())
    }

    /// The next result in order, waiting for it; `None` when no job is in
    /// flight.
    #[allow(clippy::should_implement_trait)] // fallible, and it waits
    pub fn next(&mut self) -> Result<Option<R>, Error> {
        if self.in_flight() == 0 {
            return self.results.check().map(|()| None);
        }
        match self.results.receive(true)? {
            Some(result) => Ok(Some(result)),
            // Every worker is gone (or none started): nothing will come.
            None => Err(self.results.stopped("no worker thread is left")),
        }
    }

    /// The next result in order if it is back; `None` when it is not (or
    /// no job is in flight).
    pub fn try_next(&mut self) -> Result<Option<R>, Error> {
        if self.in_flight() == 0 {
            return self.results.check().map(|()| None);
        }
        self.results.receive(false)
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
        Self::start(limit, None, workers, |index, body| {
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
        // every thread once its current job is done; the results half,
        // dropped next, joins them.
        self.feed = None;
        while self.queue.try_recv().is_ok() {}
    }
}

impl<J, R> Feed<J, R> {
    /// A feed whose queue is closed.
    fn closed() -> Self {
        let (jobs, _) = crossbeam_channel::bounded(0);
        Self {
            jobs,
            back: None,
            sent: 0,
        }
    }

    /// Submits `job` as the next item, waiting while the queue is full.
    /// False when every worker is gone.
    pub fn submit(&mut self, job: J) -> bool {
        let queued = self.jobs.send((self.sent, job)).is_ok();
        self.sent += u64::from(queued);
        queued
    }

    /// Puts `result` in the ordered stream as the next item, with no
    /// worker: what the submitting thread knows itself, in its place
    /// between jobs. False when the results half is gone (or the pool is
    /// not split).
    pub fn pass(&mut self, result: R) -> bool {
        let seq = self.sent;
        let passed = self
            .back
            .as_ref()
            .is_some_and(|back| back.send(Back::Done(seq, result)).is_ok());
        self.sent += u64::from(passed);
        passed
    }

    /// Items submitted or passed so far.
    pub fn sent(&self) -> u64 {
        self.sent
    }
}

impl<R> Results<'_, R> {
    /// The next item in order, waiting for it; `None` once the feed and
    /// every worker are gone and every item was handed back. A worker's
    /// panic, or an item that can no longer come, is [`Error::Worker`].
    #[allow(clippy::should_implement_trait)] // fallible, and it waits
    pub fn next(&mut self) -> Result<Option<R>, Error> {
        match self.receive(true)? {
            Some(result) => Ok(Some(result)),
            None if self.in_order.is_empty() => Ok(None),
            None => Err(self.stopped("a worker thread stopped before its job was done")),
        }
    }

    /// The next item in order: waiting for it with `wait`, else `None`
    /// when it is not back; `None` too once nothing more can come.
    fn receive(&mut self, wait: bool) -> Result<Option<R>, Error> {
        loop {
            self.check()?;
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
                None => return Ok(None),
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

    /// The pool cannot go on, for `why`, while waiting for the next item.
    fn stopped(&mut self, why: &str) -> Error {
        let broken = (self.in_order.next(), why.to_string());
        let (job, message) = self.broken.get_or_insert(broken).clone();
        Error::Worker { job, message }
    }
}

impl<R> Drop for Results<'_, R> {
    fn drop(&mut self) {
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
    fn a_split_pool_hands_jobs_and_passed_items_on_in_one_order() {
        // (case, threads, what the feed does: Some(ms) a job that takes
        // that long, None an item passed, results expected or None for
        // the pool's error)
        let panics = u64::MAX;
        for (case, threads, feed, want) in [
            ("nothing", 2, vec![], Some(vec![])),
            (
                "jobs and passed items interleaved",
                3,
                vec![Some(30), None, Some(0), Some(10), None, Some(0)],
                Some(vec![0, 1001, 2, 3, 1004, 5]),
            ),
            (
                "one thread",
                1,
                vec![Some(0), None, Some(0)],
                Some(vec![0, 1001, 2]),
            ),
            (
                "a worker's panic",
                2,
                vec![Some(0), Some(panics), Some(0)],
                None,
            ),
        ] {
            let items = feed.len() as u64;
            let got = std::thread::scope(|scope| {
                let workers = (0..threads).map(|_| {
                    |(i, ms): (u64, u64)| {
                        if ms == u64::MAX {
                            panic!("job {i} panics");
                        }
                        std::thread::sleep(Duration::from_millis(ms));
                        i
                    }
                });
                let (mut feed_half, mut results) =
                    Ordered::scoped_split(scope, "test", 2, workers).unwrap();
                let submitter = scope.spawn(move || {
                    for (i, act) in feed.iter().enumerate() {
                        let i = i as u64;
                        let fed = match act {
                            Some(ms) => feed_half.submit((i, *ms)),
                            None => feed_half.pass(1000 + i),
                        };
                        assert!(fed, "{case}: item {i}");
                    }
                    feed_half.sent()
                });
                let mut got = Vec::new();
                let end = loop {
                    match results.next() {
                        Ok(Some(r)) => got.push(r),
                        Ok(None) => break Ok(got),
                        Err(e) => break Err(e),
                    }
                };
                let sent = submitter.join().unwrap();
                assert_eq!(sent, items, "{case}");
                end
            });
            match (got, want) {
                (Ok(got), Some(want)) => assert_eq!(got, want, "{case}"),
                (Err(Error::Worker { job: 1, message }), None) => {
                    assert!(message.contains("job 1 panics"), "{case}: {message}")
                }
                (got, _) => panic!("{case}: {got:?}"),
            }
        }
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
