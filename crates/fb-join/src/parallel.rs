//! Parallel conversion: framing in order, REGULAR messages joined and
//! serialized by workers, output written in the original order.
//!
//! The ordered state — the checkpoint configuration and the dedup cache —
//! is followed by the reading thread ([`Joiner::track`]), which hands each
//! batch of messages to a worker together with a snapshot of that state.
//! A worker's joiner starts every batch from its snapshot, so each message
//! is joined exactly as the serial joiner would join it, and the output is
//! byte-identical whatever the number of threads.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Mutex;

use fb_format::{Frame, Framer, Message, MessageKind, Position, SliceReader};

use crate::batch::{Batch, Messages};
use crate::config::LoopConfig;
use crate::dedup::DedupCache;
use crate::diag::Diagnostics;
use crate::event::JoinedEvent;
use crate::feed::{FeedReport, MessageCounts, Progress, Source};
use crate::joiner::Joiner;
use crate::metrics::Metrics;
use crate::ordered::{self, Feed, Results};
use crate::sink::{Maker, Sink};
use crate::{Error, Options};

mod chunked;
pub(crate) mod session;
mod writer;

use writer::Ordered;

/// Payload bytes gathered into one batch before it goes to a worker.
const BATCH_BYTES: usize = 1 << 20;

/// Jobs a thread may have between being read and being written (the
/// credits).
const BATCHES_PER_THREAD: usize = 3;

/// The flow of a run of `sink` on `threads` threads, the credits of the
/// jobs that may be in flight (three a thread, or the sink's cap,
/// [`Sink::jobs_in_flight`], and never fewer than one), and buffer pools
/// for as many.
fn flow_for<'m, S: Sink + ?Sized>(
    sink: &S,
    threads: usize,
) -> (Coordination, Receiver<()>, Pools<'m, S::Batch>) {
    let per_thread = threads.saturating_mul(BATCHES_PER_THREAD);
    let in_flight = sink
        .jobs_in_flight()
        .map_or(per_thread, |cap| per_thread.min(cap))
        .max(1);
    let (flow, credits) = Coordination::new(in_flight);
    (flow, credits, Pools::new(in_flight))
}

/// Runs a job may gather when the sink lets them join
/// ([`Sink::batches_may_join`]), besides the bounds in bytes.
const RUNS_PER_JOB: usize = 64;

/// Buffers that go round instead of being allocated per batch: the
/// batches' messages (reader → worker → back) and the sink's batches
/// (worker → writer → back). Fresh megabyte buffers cost page faults.
struct Pools<'m, B> {
    messages: Mutex<Vec<Messages<'m>>>,
    lines: Mutex<Vec<B>>,
    /// How many spare message buffers are kept: as many as can be in
    /// flight, a job holding several runs when they join, each in a
    /// buffer of its own (a buffer let go is a fresh one to fault in).
    spare_messages: usize,
}

/// Spare sink batches kept: a few per thread is all that is ever in
/// flight.
const SPARE_LINES: usize = 16;

impl<B> Pools<'_, B> {
    /// Pools for a run of `credits` jobs in flight.
    fn new(credits: usize) -> Self {
        Self {
            messages: Mutex::new(Vec::new()),
            lines: Mutex::new(Vec::new()),
            spare_messages: (credits + 1) * 8,
        }
    }

    fn take<T: Default>(pool: &Mutex<Vec<T>>) -> T {
        Self::reuse(pool).unwrap_or_default()
    }

    fn reuse<T>(pool: &Mutex<Vec<T>>) -> Option<T> {
        pool.lock().ok().and_then(|mut p| p.pop())
    }

    /// Keeps `item` in `pool` unless it holds `keep` already.
    fn give<T>(pool: &Mutex<Vec<T>>, item: T, keep: usize) {
        if let Ok(mut p) = pool.lock() {
            if p.len() < keep {
                p.push(item);
            }
        }
    }
}

/// What the writer takes, in the order the reading thread gave them out
/// (the ordered pool's): a job joined by a worker, or a mark the
/// reading thread put between jobs. One moves per batch of a megabyte
/// of input: boxing the batch would only add an allocation.
#[allow(clippy::large_enum_variant)]
enum Item<B> {
    Done(Done<B>),
    Mark(Mark),
}

/// A job's runs, or what was done of them, and the marks between them,
/// in log order.
enum Part<R> {
    Run(R),
    Mark(Mark),
}

/// A worker's job: runs of REGULAR messages, each with the state it
/// starts from, and the marks the reading thread put between them. A job
/// holds one run, unless the sink lets runs join
/// ([`Sink::batches_may_join`]): runs are then gathered until they hold
/// about a batch's bytes. Each job costs hand-overs between threads and a
/// sink batch of its own (an Arrow sink's arrays are made anew for each),
/// and a folder of small files, or a log whose runs DedupInfo messages
/// cut short, would otherwise make a job of each short run.
type Job<'m> = Vec<Part<Batch<'m>>>;

/// The workers, on the ordered pool: the reading thread's half, which
/// submits jobs and passes marks, and the writer's, which takes them
/// in that order.
type Workers<'scope, 'm, B> = (Feed<Job<'m>, Item<B>>, Results<'scope, Item<B>>);

/// What a session's reading thread puts in the ordered stream besides
/// batches.
enum Mark {
    /// The next input starts here.
    Input,
    /// What the reading thread's joiner reported here (a checkpoint it
    /// could not read, a message of unknown type, the framing error that
    /// ended an input): in log order among the workers' reports.
    Diags(Diagnostics),
    /// The reading thread's joiner noted configuration change number
    /// `.0` here ([`Joiner::config_history`]). It joins no decision, so
    /// the writer tells how many were joined before it, and when the
    /// last was.
    Config(usize),
    /// A message that is not REGULAR, for a sink that sees messages
    /// ([`Sink::sees_messages`]): the writer hands it to
    /// [`Sink::control`] here, after the batches before it.
    Control(ControlMessage),
}

/// A copy of a message that is not REGULAR, to go through the ordered
/// stream (the reading thread's buffer is reused once it is framed): where
/// it was, over a payload of its own.
struct ControlMessage {
    frame: Frame,
    payload: Vec<u8>,
}

impl ControlMessage {
    fn of(msg: &Message<'_>) -> Self {
        let frame = Frame {
            kind: msg.kind,
            offset: msg.offset,
            index: msg.index,
            size_field: msg.size_field,
            payload: 0..msg.payload.len(),
            len: msg.len,
        };
        Self {
            frame,
            payload: msg.payload.to_vec(),
        }
    }

    fn message(&self) -> Message<'_> {
        self.frame.message(&self.payload)
    }
}

/// A job joined: the sink's batch of all its runs' events, and what
/// each run reported, with the job's marks, in order.
struct Done<B> {
    lines: B,
    parts: Vec<Part<Report>>,
}

/// What a worker reports of one run of a job.
struct Report {
    events: u64,
    written: u64,
    filtered: u64,
    diags: Diagnostics,
    metrics: Metrics,
    end: u64,
}

/// What the reading thread, the workers and the writer share to keep in
/// step.
struct Coordination {
    /// The offset after the last message framed.
    read_pos: AtomicU64,
    /// Where the writer gives back the credit of a batch written (see
    /// [`Coordination::new`]).
    give_credit: SyncSender<()>,
    /// Set when a worker panicked or the output failed: the reader stops,
    /// so that the panic surfaces (as [`Error::Worker`]) instead of
    /// everything waiting for a batch never written, and a closed output
    /// does not read the rest of the input for nothing.
    aborted: AtomicBool,
    /// How far the writer got: inputs begun (marks passed), the end of
    /// the last batch written in the last of them, events joined.
    written: Mutex<Written>,
}

/// How far a session's writer got (see [`Coordination::written`]).
#[derive(Debug, Clone, Copy, Default)]
struct Written {
    inputs: u64,
    finished: u64,
    events: u64,
}

impl Coordination {
    /// The flow, and the `credits` batches that may be in flight, for the
    /// reader to take one before it sends a batch; the writer gives it back
    /// once the batch is written. Without them a slow output (gzip, a disk)
    /// would let batches and their lines pile up in memory as fast as the
    /// input is read.
    fn new(credits: usize) -> (Self, Receiver<()>) {
        let (give_credit, taken) = mpsc::sync_channel(credits);
        for _ in 0..credits {
            let _ = give_credit.try_send(());
        }
        let flow = Self {
            read_pos: AtomicU64::new(0),
            give_credit,
            aborted: AtomicBool::new(false),
            written: Mutex::new(Written::default()),
        };
        (flow, taken)
    }

    fn give_credit(&self) {
        let _ = self.give_credit.try_send(());
    }
}

/// Marks the flow aborted if its worker unwinds, and wakes the reader.
struct AbortOnPanic<'f>(&'f Coordination);

impl Drop for AbortOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            self.0.aborted.store(true, Ordering::Relaxed);
            self.0.give_credit();
        }
    }
}

/// What a parallel run adds to a [`FeedReport`]: events kept and filtered.
pub(crate) struct ParallelReport {
    pub(crate) fed: FeedReport,
    pub(crate) kept: u64,
    pub(crate) filtered: u64,
}

/// The workers of a parallel run, started on the ordered pool: each
/// takes batches from one queue (at most two per thread waiting) and
/// joins them with a joiner and a maker of its own. A failed start says
/// which (the workers already started are joined).
fn start_workers<'scope, 'env, 'm, S, K>(
    scope: &'scope std::thread::Scope<'scope, 'env>,
    sink: &S,
    threads: usize,
    opts: &Options,
    (keep, flow, pools): (&'env K, &'env Coordination, &'env Pools<'m, S::Batch>),
) -> Result<Workers<'scope, 'm, S::Batch>, Error>
where
    'm: 'env,
    S: Sink + 'env,
    K: Fn(&JoinedEvent) -> bool + Sync,
{
    let workers = (0..threads).map(|_| {
        let mut maker = sink.maker_with(opts.caches);
        let mut joiner = Joiner::new(opts.clone());
        if sink.sees_messages() {
            joiner.watch_messages();
        }
        move |job: Job<'m>| {
            let _abort = AbortOnPanic(flow);
            Item::Done(join_job(&mut joiner, job, keep, &mut maker, pools))
        }
    });
    ordered::Ordered::scoped_split(scope, "fb-join", threads * 2, workers)
}

/// Joins `input` with `threads` workers and hands the events `keep`
/// accepts to `sink` in log order, in the batches a serial run would
/// fill. `joiner` carries the state in and out, so several inputs make
/// one stream; `stop` is asked before each message; `progress` is called
/// as batches are taken.
#[allow(clippy::too_many_arguments)]
pub(crate) fn run<S, K>(
    joiner: &mut Joiner,
    input: Source<'_>,
    framer: Framer,
    sink: &mut S,
    threads: usize,
    keep: &K,
    stop: &(dyn Fn() -> bool + Sync),
    progress: &mut dyn FnMut(Progress),
) -> Result<ParallelReport, Error>
where
    S: Sink,
    K: Fn(&JoinedEvent) -> bool + Sync,
{
    let threads = threads.max(1);
    let opts: Options = joiner.options().clone();
    let caches = opts.caches;
    let join_runs = joins_runs(&*sink, caches);
    let sees_messages = sink.sees_messages();
    let (flow, credits, pools) = flow_for(&*sink, threads);
    let (flow, pools) = (&flow, &pools);
    std::thread::scope(|scope| {
        // What the workers report is merged here in order as batches are
        // written, so that memory does not grow with the number of
        // batches. Metrics continue from the joiner's own (several inputs
        // make one stream), adding up in the same order as a serial run.
        let mut ordered = Ordered::new(
            Diagnostics::with_limit(opts.diagnostics_limit),
            joiner.metrics().clone(),
        );
        let (feed, mut results) =
            start_workers(scope, &*sink, threads, &opts, (keep, flow, pools))?;
        let reader = scope.spawn(move || {
            let mut batcher = Batcher::new(
                joiner,
                feed,
                credits,
                (flow, pools),
                false,
                (join_runs, sees_messages),
            );
            let (framing_error, at) = frame(&mut batcher, input, framer, caches, stop, &mut |_| {});
            batcher.send(at.offset);
            batcher.submit();
            let counts = (batcher.messages, batcher.kinds);
            (batcher.joiner, counts, framing_error, at, batcher.stopped)
        });
        while let Some(item) = ordered.next(&mut results, flow) {
            ordered.put(item, sink, pools, flow, &mut |finished, events| {
                progress(Progress {
                    read: flow.read_pos.load(Ordering::Relaxed),
                    finished,
                    events,
                })
            });
        }
        let (joiner, (messages, kinds), framing_error, at, stopped) = match reader.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        // Every batch of the input is taken.
        ordered.input_done(sink, flow);
        let (kept, filtered, events) = (ordered.kept, ordered.filtered, ordered.events);
        if let Some(err) = ordered.failure.take() {
            return Err(err);
        }
        ordered.hand_back(joiner);
        progress(Progress {
            read: at.offset,
            finished: at.offset,
            events,
        });
        Ok(ParallelReport {
            fed: FeedReport {
                messages,
                kinds,
                offset: at.offset,
                framing_error,
                stopped_at: stopped.then_some(at),
                skipped: Vec::new(),
                salvaged: Vec::new(),
            },
            kept,
            filtered,
        })
    })
}

/// Frames `input` on the reading thread into `batcher`, until its end, a
/// framing error, `stop`, or the workers are gone: the framing error, and
/// where the next message is. The last batch is left to send. `tick` is
/// told the number of items in the ordered stream before each message.
fn frame<'m, B>(
    batcher: &mut Batcher<'_, 'm, '_, B>,
    input: Source<'m>,
    framer: Framer,
    caches: fb_format::Caches,
    stop: &(dyn Fn() -> bool + Sync),
    tick: &mut dyn FnMut(u64),
) -> (Option<fb_format::Error>, Position) {
    match input {
        Source::Stream(input) => {
            let mut reader = chunked::Chunked::new(input, framer, batcher.spare_buffer());
            let error = batcher.pump(|b| {
                if stop() {
                    b.stopped = true;
                    return Ok(false);
                }
                tick(b.feed.sent());
                reader.next(b)
            });
            let at = reader.at();
            batcher.give_buffer(reader.into_buffer());
            (error, at)
        }
        Source::Slice(data) => {
            let (base, max_payload) = (framer.offset(), framer.max_payload());
            let mut reader = SliceReader::with_framer(data, framer).with_caches(caches);
            let error = batcher.pump(|b| {
                if stop() {
                    b.stopped = true;
                    return Ok(false);
                }
                tick(b.feed.sent());
                // Where the next message starts in `data`.
                let at = (reader.offset() - base) as usize;
                match reader.next_message()? {
                    Some(msg) => Ok(b.take(&msg, |m| m.extend(data, at, &msg, max_payload))),
                    None => Ok(false),
                }
            });
            (error, Position::new(reader.offset(), reader.index()))
        }
        // The pipeline recovers on one thread.
        Source::Recover(_) => (None, Position::START),
    }
}

/// The reading thread's side: follows the ordered state and gathers
/// REGULAR messages into batches for the workers.
struct Batcher<'j, 'm, 'p, B> {
    joiner: &'j mut Joiner,
    /// Jobs to the workers, marks past them, all in the writer's order.
    feed: Feed<Job<'m>, Item<B>>,
    credits: Receiver<()>,
    flow: &'p Coordination,
    pools: &'p Pools<'m, B>,
    /// In a session: marks go in the ordered stream (what the reading
    /// thread's joiner reports goes there, in log order).
    marks: bool,
    messages: u64,
    kinds: MessageCounts,
    /// Reading stopped because the caller asked.
    stopped: bool,
    batch: Messages<'m>,
    config: LoopConfig,
    dedup: DedupCache,
    /// Runs may join into one job ([`Sink::batches_may_join`]).
    join_runs: bool,
    /// The messages that are not REGULAR go to the writer
    /// ([`Sink::sees_messages`]).
    sees_messages: bool,
    /// The job being gathered: runs sent, and marks after them.
    job: Job<'m>,
    /// The payload bytes of the job's runs, and the bytes they hold
    /// (buffers read into are bigger than their messages).
    job_bytes: usize,
    job_held: usize,
}

impl<'j, 'm, 'p, B> Batcher<'j, 'm, 'p, B> {
    fn new(
        joiner: &'j mut Joiner,
        feed: Feed<Job<'m>, Item<B>>,
        credits: Receiver<()>,
        (flow, pools): (&'p Coordination, &'p Pools<'m, B>),
        marks: bool,
        (join_runs, sees_messages): (bool, bool),
    ) -> Self {
        let (config, dedup) = joiner.state();
        Self {
            joiner,
            feed,
            credits,
            flow,
            pools,
            marks,
            messages: 0,
            kinds: MessageCounts::default(),
            stopped: false,
            batch: Pools::<B>::take(&pools.messages),
            config,
            dedup,
            join_runs,
            sees_messages,
            job: Vec::new(),
            job_bytes: 0,
            job_held: 0,
        }
    }

    /// Takes `msg`, and if it is REGULAR puts it in the batch with `add`.
    /// False when the workers are gone.
    fn take(&mut self, msg: &Message<'_>, add: impl FnOnce(&mut Messages<'m>)) -> bool {
        self.messages += 1;
        self.kinds.add(msg.kind);
        let end = msg.offset + msg.len as u64;
        self.flow.read_pos.store(end, Ordering::Relaxed);
        if msg.kind != MessageKind::Regular {
            // Workers see only REGULAR messages: what comes between them
            // (a checkpoint above all) closes the batch, and the next batch
            // starts from the state after it.
            let sent = self.send(msg.offset);
            return sent && self.track(msg) && self.hand_diags() && self.control(msg);
        }
        if self.batch.is_empty() {
            // The state this batch starts from; the worker's joiner follows
            // the dedup events inside the batch itself.
            (self.config, self.dedup) = self.joiner.state();
        }
        add(&mut self.batch);
        self.joiner.track(msg);
        self.batch.bytes < BATCH_BYTES || self.send(end)
    }

    /// A batch starts: the state it starts from (the worker's joiner
    /// follows the dedup events inside the batch itself).
    fn begin_batch(&mut self) {
        (self.config, self.dedup) = self.joiner.state();
    }

    /// Counts `msg` and follows the ordered state it changes. False when
    /// the writer is gone.
    fn follow(&mut self, msg: &Message<'_>) -> bool {
        self.messages += 1;
        self.kinds.add(msg.kind);
        let end = msg.offset + msg.len as u64;
        self.flow.read_pos.store(end, Ordering::Relaxed);
        if msg.kind == MessageKind::Regular {
            self.joiner.track(msg);
            return true;
        }
        self.track(msg) && self.hand_diags() && self.control(msg)
    }

    /// Puts a copy of `msg`, which is not REGULAR, in the ordered stream
    /// for a sink that sees messages (the batch before it sent). Each
    /// copy takes a credit, as a job does, which the writer gives back
    /// once the sink has seen it: a log of large messages of unknown type
    /// holds no more copies in memory than jobs may be in flight. False
    /// when the writer is gone.
    fn control(&mut self, msg: &Message<'_>) -> bool {
        if !self.sees_messages {
            return true;
        }
        self.take_credit() && self.pass(Mark::Control(ControlMessage::of(msg)))
    }

    /// Follows a message that is not REGULAR (the batch before it sent).
    /// A checkpoint that changed the configuration puts a mark in the
    /// ordered stream, where the writer knows the decisions joined before
    /// it. False when the writer is gone.
    fn track(&mut self, msg: &Message<'_>) -> bool {
        let before = self.joiner.config_history().changes.len();
        self.joiner.track(msg);
        match self.joiner.config_history().changes.len() > before {
            true => self.pass(Mark::Config(before)),
            false => true,
        }
    }

    /// In a session, puts what the reading thread's joiner reported so
    /// far in the ordered stream, where it happened (one run keeps it in
    /// the joiner, before the workers' reports). False when the writer is
    /// gone.
    fn hand_diags(&mut self) -> bool {
        if !self.marks || self.joiner.diagnostics().total() == 0 {
            return true;
        }
        let (diags, _) = self.joiner.take_report();
        self.mark(Mark::Diags(diags))
    }

    /// Puts `mark` in the ordered stream after the batches sent so far
    /// (the batch being gathered must be sent first). False when the
    /// writer is gone or there is no stream to put it in.
    fn mark(&mut self, mark: Mark) -> bool {
        self.marks && self.pass(mark)
    }

    /// Puts `mark` after the runs sent so far: in the job being gathered
    /// if there is one, else in the ordered stream. False when the writer
    /// is gone.
    fn pass(&mut self, mark: Mark) -> bool {
        if self.job.is_empty() {
            return self.feed.pass(Item::Mark(mark));
        }
        self.job.push(Part::Mark(mark));
        true
    }

    /// A buffer to read into, from a batch done with when there is one.
    fn spare_buffer(&self) -> Vec<u8> {
        Pools::<B>::reuse(&self.pools.messages).map_or_else(Vec::new, Messages::into_buffer)
    }

    /// Keeps `buf` for [`Batcher::spare_buffer`].
    fn give_buffer(&self, buf: Vec<u8>) {
        let keep = self.pools.spare_messages;
        Pools::<B>::give(&self.pools.messages, Messages::spare(buf), keep);
    }

    /// Sends `messages` as the next batch, its messages all before `end`.
    /// False when the workers are gone.
    fn send_messages(&mut self, messages: Messages<'m>, end: u64) -> bool {
        let spare = std::mem::replace(&mut self.batch, messages);
        let sent = self.send(end);
        Pools::<B>::give(&self.pools.messages, spare, self.pools.spare_messages);
        sent
    }

    /// Takes messages as `next` frames them, until the input ends, the
    /// workers are gone (`next` says false) or framing fails: then why.
    fn pump(
        &mut self,
        mut next: impl FnMut(&mut Self) -> fb_format::Result<bool>,
    ) -> Option<fb_format::Error> {
        loop {
            match next(self) {
                Ok(true) => {}
                Ok(false) => return None,
                Err(err) => {
                    self.joiner.record_framing_error(&err);
                    return Some(err);
                }
            }
        }
    }

    /// Sends the batch so far, if there is one, its messages all before
    /// `end`: into the job being gathered, which goes to a worker once it
    /// holds enough (at once, unless runs may join). False when the
    /// workers are gone.
    fn send(&mut self, end: u64) -> bool {
        if self.flow.aborted.load(Ordering::Relaxed) {
            return false;
        }
        if self.batch.is_empty() {
            return true;
        }
        let messages = std::mem::replace(&mut self.batch, Pools::<B>::take(&self.pools.messages));
        self.job_bytes += messages.bytes;
        self.job_held += messages.held();
        self.job.push(Part::Run(Batch {
            config: self.config,
            dedup: self.dedup.clone(),
            messages,
            end,
        }));
        let room = self.job_bytes < BATCH_BYTES
            && self.job_held < BATCH_BYTES + BATCH_BYTES / 2
            && self.job.len() < RUNS_PER_JOB;
        if self.join_runs && room {
            return true;
        }
        self.submit()
    }

    /// Hands the job gathered, if any, to a worker. False when the
    /// workers are gone.
    fn submit(&mut self) -> bool {
        if self.job.is_empty() {
            return true;
        }
        if !self.take_credit() {
            return false;
        }
        (self.job_bytes, self.job_held) = (0, 0);
        self.feed.submit(std::mem::take(&mut self.job))
    }

    /// Waits for a credit (a job, or a copied message, may go in flight).
    /// False once the run is aborted.
    fn take_credit(&self) -> bool {
        // Once aborted, no credit may come again: not waited for.
        if self.flow.aborted.load(Ordering::Relaxed) {
            return false;
        }
        // A credit, unless a worker panicked (which also wakes this wait).
        self.credits.recv().is_ok() && !self.flow.aborted.load(Ordering::Relaxed)
    }
}

/// Whether a pipeline into `sink` joins runs into jobs: when the sink
/// lets it, and not on the plain path ([`fb_format::Caches::Off`]), which
/// hands over each run alone, for comparing.
fn joins_runs<S: Sink>(sink: &S, caches: fb_format::Caches) -> bool {
    // A job's batch is taken before the marks between its runs: the
    // messages a sink sees would come after the runs that follow them.
    sink.batches_may_join() && !sink.sees_messages() && caches == fb_format::Caches::On
}

/// Joins the runs of `job` on a worker, each from the state it starts
/// from, into one batch of the sink's filled by `maker`.
fn join_job<'m, K, M>(
    joiner: &mut Joiner,
    job: Job<'m>,
    keep: &K,
    maker: &mut M,
    pools: &Pools<'m, M::Batch>,
) -> Done<M::Batch>
where
    K: Fn(&JoinedEvent) -> bool + Sync,
    M: Maker,
{
    let mut lines = match Pools::<M::Batch>::reuse(&pools.lines) {
        Some(mut lines) => {
            maker.clear(&mut lines);
            lines
        }
        None => maker.batch(),
    };
    let parts = job
        .into_iter()
        .map(|part| match part {
            Part::Run(run) => Part::Run(join_run(joiner, run, keep, maker, &mut lines, pools)),
            Part::Mark(mark) => Part::Mark(mark),
        })
        .collect();
    Done { lines, parts }
}

/// Joins one run of a job, from the state it starts from, adding the
/// events `keep` accepts to `out`.
fn join_run<'m, K, M>(
    joiner: &mut Joiner,
    batch: Batch<'m>,
    keep: &K,
    maker: &mut M,
    out: &mut M::Batch,
    pools: &Pools<'m, M::Batch>,
) -> Report
where
    K: Fn(&JoinedEvent) -> bool + Sync,
    M: Maker,
{
    let caches = joiner.options().caches;
    joiner.set_state(batch.config, batch.dedup);
    let (mut events, mut written, mut filtered) = (0, 0, 0);
    let mut messages = batch.messages;
    let framed = messages.each(caches, |msg| {
        joiner.push_each(msg, |ev| {
            events += 1;
            if keep(ev) {
                maker.add(out, ev);
                written += 1;
            } else {
                filtered += 1;
            }
        });
        maker.message(out, msg, joiner.last_message_read());
    });
    if let Err(err) = framed {
        joiner.record_framing_error(&err);
    }
    messages.clear();
    Pools::<M::Batch>::give(&pools.messages, messages, pools.spare_messages);
    let (diags, metrics) = joiner.take_report();
    Report {
        events,
        written,
        filtered,
        diags,
        metrics,
        end: batch.end,
    }
}
