//! Many inputs, one pipeline run: a [`Session`] keeps a pipeline's
//! threads (workers, writer, their buffers and the sink's makers) for as
//! long as there are inputs, so that per input there is only opening and
//! framing, and the workers join the batches of one input while the next
//! is framed. See [`Pipeline::session`](crate::Pipeline::session).

use fb_format::Position;

use crate::feed::{FeedReport, Feeds, Progress, Source};
use crate::joiner::Joiner;
use crate::pipeline::Pipeline;
use crate::sink::Sink;
use crate::{Error, JoinedEvent};

/// Inputs fed to a pipeline as one log, its threads kept from one to the
/// next. Sources borrow for `'m`, which outlives the session.
pub struct Session<'s, 'm> {
    inner: &'s mut dyn Feeds<'m>,
}

impl<'m> Session<'_, 'm> {
    /// The joiner that follows the ordered state: its options and
    /// configuration. Its metrics and diagnostics are whole only once the
    /// session has ended.
    pub fn joiner(&self) -> &Joiner {
        self.inner.joiner()
    }

    /// Says that the next feeds are another input: where its diagnostics
    /// start among the kept ones is in what [`Pipeline::session`] returns,
    /// one entry per call, in order.
    pub fn begin_input(&mut self) -> Result<(), Error> {
        self.inner.begin_input()
    }

    /// As [`Pipeline::feed`], but the events may still be joining when
    /// this returns: the session's end waits for them. `progress.events`
    /// counts the events written since this feed began, of any input;
    /// `progress.finished` says how far this input is written. A parallel
    /// session cannot take [`Source::Recover`] (recovery reads on one
    /// thread, through [`Pipeline::feed`]).
    pub fn feed(
        &mut self,
        source: Source<'m>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, Error> {
        self.inner.feed(source, start, stop, progress)
    }
}

/// A session on one thread: the pipeline fed input after input.
struct Serial<'p, S: Sink, K> {
    pipeline: &'p mut Pipeline<S, K>,
    starts: Vec<usize>,
}

impl<'m, S, K> Feeds<'m> for Serial<'_, S, K>
where
    S: Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    fn joiner(&self) -> &Joiner {
        self.pipeline.joiner()
    }

    fn begin_input(&mut self) -> Result<(), Error> {
        let kept = self.pipeline.joiner().diagnostics().kept().len();
        self.starts.push(kept);
        Ok(())
    }

    fn feed(
        &mut self,
        source: Source<'m>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, Error> {
        self.pipeline.feed(source, start, stop, progress)
    }
}

impl<S, K> Pipeline<S, K>
where
    S: Sink + Send,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    /// Runs `f` with a [`Session`] over this pipeline: on several threads
    /// the workers and the writer (on a thread of its own: the sink goes
    /// there) start once and end when `f` returns, after every batch fed
    /// is written. Gives back what `f` returned and where each input's
    /// diagnostics start among the joiner's kept ones (one per
    /// [`Session::begin_input`]). The sink sees the same batches as when
    /// each input is fed with [`Pipeline::feed`], unless it lets them join
    /// ([`Sink::batches_may_join`]): then the runs of several small inputs
    /// may make one. The diagnostics come in log order, as on one thread.
    ///
    /// An error of the output ends the session: feeds then return an
    /// error, and this returns the output's.
    pub fn session<'m, R>(
        &mut self,
        f: impl FnOnce(&mut Session<'_, 'm>) -> R,
    ) -> Result<(R, Vec<usize>), Error> {
        if self.threads() == 1 {
            let mut serial = Serial {
                pipeline: self,
                starts: Vec::new(),
            };
            let value = f(&mut Session { inner: &mut serial });
            return Ok((value, serial.starts));
        }
        let threads = self.threads();
        let (joiner, keep, sink) = self.parts();
        let ended = crate::parallel::session::run(joiner, sink, threads, keep, |inner| {
            f(&mut Session { inner })
        });
        self.add_counts(ended.kept, ended.filtered);
        ended.result.map(|value| (value, ended.starts))
    }
}
