//! The last stage of a pipeline: what joined events become.

use fb_format::Message;

use crate::event::JoinedEvent;
use crate::joiner::MessageRead;
use crate::Caches;
use crate::Error;

/// What joined events become: the last stage of a [`Pipeline`](crate::Pipeline).
///
/// Events are added to batches by a [`Maker`] where they are made (on a
/// worker thread when there are several), and the sink takes the batches
/// in log order.
pub trait Sink {
    /// What events are gathered into: lines, column builders, sums.
    type Batch: Send;
    /// Fills batches; one per thread.
    type Maker: Maker<Batch = Self::Batch> + Send;

    /// A maker for one thread.
    fn maker(&self) -> Self::Maker;

    /// A maker for one thread of a pipeline whose speed caches are
    /// `caches` ([`crate::Options::caches`]): a sink whose makers keep
    /// caches of their own (the DSJSON writer's texts) makes them with or
    /// without.
    fn maker_with(&self, caches: Caches) -> Self::Maker {
        let _ = caches;
        self.maker()
    }

    /// The batch a one-thread loop starts an input with (a
    /// [`Pipeline`](crate::Pipeline) on one thread, and recovery): a new
    /// one from `maker` by default. A sink whose result is running sums
    /// may lend its own total instead, so that one thread adds each event
    /// straight to it, in log order, and [`Sink::take`] gets it back;
    /// several threads never call this.
    fn first_batch(&mut self, maker: &mut Self::Maker) -> Self::Batch {
        maker.batch()
    }

    /// The maker a one-thread loop joins an input with: a new one from
    /// [`Sink::maker_with`] by default. A sink may give back the one
    /// [`Sink::recycle`] kept from the input before, so that its caches
    /// and buffers outlive an input: a folder of small logs then costs
    /// what one log of their bytes does.
    fn serial_maker(&mut self, caches: Caches) -> Self::Maker {
        self.maker_with(caches)
    }

    /// Gets the maker and the last batch (taken) of a one-thread loop at
    /// the end of its input, to keep for the next ([`Sink::serial_maker`],
    /// [`Sink::first_batch`]); dropped by default.
    fn recycle(&mut self, maker: Self::Maker, batch: Self::Batch) {
        let _ = (maker, batch);
    }

    /// Whether several threads may join the runs of messages they are
    /// handed (cut at checkpoints, DedupInfo messages, and each input's
    /// end) into one batch, so that short runs cost no more than long
    /// ones: for a sink whose output does not depend on where its batches
    /// end (lines written one after the other, sums kept per event, rows
    /// cut again into batches of their own). [`Sink::input_done`] is then
    /// still told once per input, in order, but a batch taken before may
    /// hold events of the next input. False by default: on several
    /// threads the sink sees the batches of each run alone.
    fn batches_may_join(&self) -> bool {
        false
    }

    /// Whether the workers' work per event is light (formatting a line,
    /// counting), so that on many threads the one thread that reads and
    /// frames the input limits the run. The driver then reads files ahead
    /// on helper threads (fb-run's `ahead`). False by default: a sink that
    /// encodes columns keeps its workers busy, and helpers would only
    /// take their cores (bench/NOTES.md, 2026-11-29, sixth stop).
    fn work_is_light(&self) -> bool {
        false
    }

    /// The most jobs that may be in flight at once (framed, joined, or
    /// waiting to be taken), whatever the number of threads; `None` (the
    /// default) lets three a thread be. For a sink whose batches are
    /// large (columns being built), so that its memory does not grow with
    /// the number of threads: past the cap, the threads beyond it wait.
    fn jobs_in_flight(&self) -> Option<usize> {
        None
    }

    /// Whether the sink looks at the messages themselves as well as the
    /// joined events: each REGULAR message goes to [`Maker::message`]
    /// where it is joined, each other message to [`Sink::control`], all
    /// in log order among the batches, on any number of threads. False by
    /// default; for a sink that says true, the messages that are not
    /// REGULAR are copied on several threads (each copy holds a credit, as
    /// a job does, until the sink has seen it), and a one-thread loop
    /// hands its batch over before each of them.
    fn sees_messages(&self) -> bool {
        false
    }

    /// A message that is not REGULAR (FILEMAGIC, the header, a
    /// checkpoint, EOF, one of unknown type), in log order: after the
    /// batches of every message before it, before those of every message
    /// after it. Called only where [`Sink::sees_messages`] says so. An
    /// error is the output's, as one of [`Sink::take`].
    fn control(&mut self, msg: &Message<'_>) -> Result<(), Error> {
        let _ = msg;
        Ok(())
    }

    /// Takes a batch, in log order. The batch is cleared and reused after.
    fn take(&mut self, batch: &mut Self::Batch) -> Result<(), Error>;

    /// Told that every batch of an input has been taken, before any batch
    /// of the next: once per input that handed the sink an event (one the
    /// filter kept), in order, whatever the number of threads. An input is
    /// what one [`Pipeline::feed`](crate::Pipeline::feed) reads, and in a
    /// session what one [`Session::begin_input`](crate::Session::begin_input)
    /// begins. Nothing by default. An error is the output's, as one of
    /// [`Sink::take`].
    fn input_done(&mut self) -> Result<(), Error> {
        Ok(())
    }
}

/// Fills the batches of a [`Sink`].
pub trait Maker {
    /// The sink's batch.
    type Batch;

    /// A new, empty batch.
    fn batch(&mut self) -> Self::Batch;

    /// Adds one kept event.
    fn add(&mut self, batch: &mut Self::Batch, ev: &JoinedEvent<'_>);

    /// Looks at a REGULAR message where it is joined, once its events
    /// are (those kept are in `batch`, or in batches handed over before
    /// it): what a sink that [`Sink::sees_messages`] finds in the message
    /// itself goes into `batch`. `read` says whether the joiner read the
    /// message whole and found nothing wrong in it, so that a check of
    /// its bytes need not read it again. Nothing by default.
    fn message(&mut self, batch: &mut Self::Batch, msg: &Message<'_>, read: MessageRead) {
        let _ = (batch, msg, read);
    }

    /// Whether a batch is big enough to hand over now. One thread asks
    /// after each event it adds and hands the batch over when this says
    /// so, inside a message too. Worker threads hand over one batch per chunk
    /// of messages they joined, and do not ask.
    fn full(&self, batch: &Self::Batch) -> bool;

    /// Empties a batch for reuse.
    fn clear(&mut self, batch: &mut Self::Batch);
}
