//! The one loop that feeds inputs to a pipeline, for every face: each
//! input in order as one log, files mapped while that is safe (or read),
//! pipes and other readers streamed, damaged inputs recovered on request,
//! a time window narrowed to the blocks of a fresh index, and what went
//! wrong told to an [`Observer`] and kept in a [`RunReport`].

use std::io::Read;
use std::path::{Path, PathBuf};

use fb_format::Position;
use fb_join::{FeedReport, JoinedEvent, Joiner, Pipeline, Progress, Session, Source};

use crate::ahead::{Ahead, ReadAhead};
use crate::error::Error;
use crate::input::{self, Head, Input};
use crate::mapped::{self, Releaser};
use crate::options::Filter;
use crate::report::{Damage, Note, Observer, RunReport};
use crate::window::Spans;

/// Something to read a log from: a file or standard input ([`Input`]), or
/// what a face opens itself (bytes, a Python file object).
pub trait Readable {
    /// How messages name it.
    fn name(&self) -> String;
    /// Its path, when it is a file: a file may be mapped, and may have an
    /// index beside it.
    fn path(&self) -> Option<&Path>;
    /// Its size in bytes, when known.
    fn size(&self) -> Option<u64>;
    /// Its bytes from the first, and its size when it was opened, if
    /// known: for a file, asked of the open file (see [`input::open_unread`]).
    fn open(&self) -> Result<(Box<dyn Read + Send>, Option<u64>), Error>;
}

impl Readable for Input {
    fn name(&self) -> String {
        Input::name(self)
    }

    fn path(&self) -> Option<&Path> {
        match self {
            Input::File(path) => Some(path),
            Input::Stdin | Input::Other(_) => None,
        }
    }

    fn size(&self) -> Option<u64> {
        self.len()
    }

    fn open(&self) -> Result<(Box<dyn Read + Send>, Option<u64>), Error> {
        // The first bytes are looked at where the input is fed.
        Ok(input::open_unread(self)?)
    }
}

/// What to do when an input is damaged or not a log (without recovery).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDamage {
    /// Record it and go on with the next input (the command line: every
    /// readable line is written, and the run exits 1).
    Continue,
    /// Stop the run there (Python raises where the damage is).
    Stop,
}

pub use crate::input::Maps;

/// How to feed the inputs.
pub struct Drive<'a> {
    /// Read each input whole and resynchronize after damage.
    pub recover: bool,
    /// Read only the blocks of a fresh index that hold events in this time
    /// range (seconds, `[since, until)`; see [`Filter::window`]).
    pub window: Option<(i64, i64)>,
    /// Maps or reads.
    pub maps: Maps,
    /// Go on past damage or stop at it.
    pub on_damage: OnDamage,
    /// Asked before each message and each read: true stops the run.
    pub cancel: &'a (dyn Fn() -> bool + Sync),
    /// How errors of the pipeline's output name it.
    pub target: &'a str,
}

impl Drive<'_> {
    /// Never cancelled.
    pub fn never() -> bool {
        false
    }
}

/// Why a run stopped before the end of its inputs.
#[derive(Debug)]
pub enum Stop {
    /// An input is damaged or not a log (with [`OnDamage::Stop`]).
    Damaged(Damage),
    /// [`Drive::cancel`] said so.
    Cancelled,
    /// Anything else: an input that cannot be read, the output failing.
    Failed(Error),
}

impl From<Error> for Stop {
    fn from(e: Error) -> Self {
        Self::Failed(e)
    }
}

impl Stop {
    /// The error a face reports.
    pub fn into_error(self) -> Error {
        match self {
            Self::Damaged(d) => Error::Damaged(d.to_string()),
            Self::Cancelled => Error::Msg("interrupted".into()),
            Self::Failed(e) => e,
        }
    }
}

/// The filter of a run as the pipeline takes it. Events made from the
/// replacement bytes of a file truncated under its map are not the log's
/// (see `mapped`): never kept.
pub fn keeper(filter: &Filter) -> impl Fn(&JoinedEvent<'_>) -> bool + Sync + '_ {
    move |ev| !mapped::tripped() && filter.keep(ev)
}

/// Feeds every input to `pipeline` in order, as one log, as `drive` says.
/// What the inputs were and what went wrong with them is in `report` (also
/// when the run stops), and told to `observer` as it happens.
///
/// Several inputs on several threads make one session
/// ([`Pipeline::session`]): the workers and the writer start once, and
/// join the batches of the inputs before while the next is opened and
/// framed. Files are then read, not mapped (a map would have to outlive
/// the batches that borrow it); recovery feeds each input on its own.
pub fn feed_all<R, S, K>(
    inputs: &[R],
    pipeline: &mut Pipeline<S, K>,
    drive: &Drive<'_>,
    report: &mut RunReport,
    observer: &mut dyn Observer,
) -> Result<(), Stop>
where
    R: Readable,
    S: fb_join::Sink + Send,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    let total = match observer.wants_total() {
        true => inputs.iter().map(Readable::size).sum::<Option<u64>>(),
        false => None,
    };
    observer.start(total);
    let session = inputs.len() > 1 && !drive.recover && pipeline.threads() > 1;
    let ahead = read_ahead(inputs, pipeline, drive, session);
    let result = match session {
        true => {
            let from = report.starts.len();
            let ended = pipeline.session(|session| {
                let mut feeder = InSession(session);
                inputs.iter().enumerate().try_for_each(|(i, input)| {
                    let ahead = ahead.as_ref().map(|ahead| (ahead, i));
                    feed_one(input, ahead, &mut feeder, drive, report, observer)
                })
            });
            match ended {
                Ok((result, starts)) => {
                    report.place_starts(from, &starts);
                    result
                }
                Err(e) => Err(Stop::Failed(Error::joining(drive.target, e))),
            }
        }
        false => inputs.iter().enumerate().try_for_each(|(i, input)| {
            let ahead = ahead.as_ref().map(|ahead| (ahead, i));
            feed_one(input, ahead, pipeline, drive, report, observer)
        }),
    };
    // Helpers still reading ahead (a run that stopped early) stop.
    drop(ahead);
    observer.finish();
    result
}

/// Helpers that open and read files ahead of the framing thread (see
/// `ahead`), on enough threads and for a sink whose work is light
/// ([`fb_join::Sink::work_is_light`]), where files are read through from their
/// start: not mapped (a session never maps), not recovered (read whole
/// instead), not read by an index's blocks; and not on the plain path
/// ([`fb_join::Caches::Off`]), which opens and reads each file where it
/// is framed, for comparing.
fn read_ahead<R, S, K>(
    inputs: &[R],
    pipeline: &Pipeline<S, K>,
    drive: &Drive<'_>,
    session: bool,
) -> Option<ReadAhead>
where
    R: Readable,
    S: fb_join::Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    let reads_whole_files = drive.window.is_none()
        && !drive.recover
        && (session || drive.maps == Maps::Never)
        && pipeline.joiner().options().caches == fb_join::Caches::On
        && pipeline.sink().work_is_light()
        && pipeline.threads() >= READ_AHEAD_FROM_THREADS
        && inputs.iter().any(|input| input.path().is_some());
    if !reads_whole_files {
        return None;
    }
    let paths: Vec<Option<PathBuf>> = inputs
        .iter()
        .map(|input| input.path().map(Path::to_path_buf))
        .collect();
    ReadAhead::start(paths, HELPERS)
}

/// Threads reading ahead: one alone, opening a folder's small files and
/// copying them in, is no faster than the framing thread it feeds on 8
/// threads; two keep ahead of it (bench/NOTES.md, 2026-11-29, sixth stop).
const HELPERS: usize = 2;

/// Threads from which files are read ahead. On fewer, the framing thread
/// keeps up with the workers, and a helper would only take a core from
/// them and copy every byte once more (bench/NOTES.md, 2026-11-29).
const READ_AHEAD_FROM_THREADS: usize = 8;

/// What the driver feeds: bytes it holds (a map, a window's span), a
/// stream it opened, or bytes to recover. Streams are `'static`: a
/// session keeps them past the call.
enum Fodder<'a> {
    Slice(&'a [u8]),
    Stream(Box<dyn Read + Send>),
    Recover(&'a [u8]),
}

/// What the driver feeds an input to: the pipeline itself, or a session
/// of it.
trait Feeder {
    fn joiner(&self) -> &Joiner;
    /// Whether a file may be mapped (as the drive says).
    fn maps(&self) -> bool;
    /// Notes that the input `name` starts.
    fn begin(&mut self, name: String, report: &mut RunReport, target: &str) -> Result<(), Stop>;
    /// Feeds `fodder` from `start` (`Position::START` for recovery).
    fn feed(
        &mut self,
        fodder: Fodder<'_>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, fb_join::Error>;
}

impl<S, K> Feeder for Pipeline<S, K>
where
    S: fb_join::Sink,
    K: Fn(&JoinedEvent<'_>) -> bool + Sync,
{
    fn joiner(&self) -> &Joiner {
        Pipeline::joiner(self)
    }

    fn maps(&self) -> bool {
        true
    }

    fn begin(&mut self, name: String, report: &mut RunReport, _: &str) -> Result<(), Stop> {
        report.begin(name, Pipeline::joiner(self));
        Ok(())
    }

    fn feed(
        &mut self,
        fodder: Fodder<'_>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, fb_join::Error> {
        let source = match fodder {
            Fodder::Slice(data) => Source::Slice(data),
            Fodder::Stream(stream) => Source::Stream(stream),
            Fodder::Recover(data) => Source::Recover(data),
        };
        Pipeline::feed(self, source, start, stop, progress)
    }
}

/// A session as the driver feeds it: what it is fed must outlive the
/// batches made of it, so files are read (not mapped) and the spans of an
/// index window copied.
struct InSession<'a, 's>(&'a mut Session<'s, 'static>);

impl Feeder for InSession<'_, '_> {
    fn joiner(&self) -> &Joiner {
        self.0.joiner()
    }

    fn maps(&self) -> bool {
        false
    }

    fn begin(&mut self, name: String, report: &mut RunReport, target: &str) -> Result<(), Stop> {
        // Where its diagnostics start is known once the session ends.
        report.begin_pending(name, self.0.joiner());
        self.0
            .begin_input()
            .map_err(|e| Stop::Failed(Error::joining(target, e)))
    }

    fn feed(
        &mut self,
        fodder: Fodder<'_>,
        start: Position,
        stop: &(dyn Fn() -> bool + Sync),
        progress: &mut dyn FnMut(Progress),
    ) -> Result<FeedReport, fb_join::Error> {
        let stream = match fodder {
            Fodder::Slice(data) => Box::new(std::io::Cursor::new(data.to_vec())),
            Fodder::Stream(stream) => stream,
            // `feed_all` recovers input by input, never in a session.
            Fodder::Recover(_) => return Err(fb_join::Error::RecoverInSession),
        };
        self.0.feed(Source::Stream(stream), start, stop, progress)
    }
}

fn feed_one(
    input: &dyn Readable,
    ahead: Option<(&ReadAhead, usize)>,
    pipeline: &mut dyn Feeder,
    drive: &Drive<'_>,
    report: &mut RunReport,
    observer: &mut dyn Observer,
) -> Result<(), Stop> {
    if (drive.cancel)() {
        return Err(Stop::Cancelled);
    }
    let name = input.name();
    pipeline.begin(name.clone(), report, drive.target)?;
    let mut told = Told::default();
    let fail = |e: fb_join::Error| Stop::Failed(Error::joining(drive.target, e));
    let map = match (drive.maps, input.path()) {
        (Maps::WhereSafe, Some(path)) if pipeline.maps() => mapped::Mapped::open(path),
        _ => None,
    };
    // The size before reading, to tell a cut after (`shrank`): asked now
    // where the input is mapped, recovered or read by its index; a plain
    // read asks the file it opens.
    let mut size = match drive.recover || map.is_some() || drive.window.is_some() {
        true => input.size(),
        false => None,
    };
    if drive.recover {
        recover_one(input, map, pipeline, drive, report, observer)?;
        return shrank(input, size, report, observer, drive);
    }
    let mut resume = None;
    if let Some(map) = map {
        if !take_head(
            &name,
            &Head::of(map.get(..4).unwrap_or(&map)),
            report,
            observer,
            drive,
        )? {
            return Ok(());
        }
        let indexed = match (drive.window, input.path()) {
            (Some(window), Some(path)) if !pipeline.joiner().options().inline_dedup => {
                crate::sidecar::load_summary(path, &map, observer)?.map(|index| (window, index))
            }
            _ => None,
        };
        if let Some((window, index)) = indexed {
            let spans = Spans::Borrowed(&map);
            feed_blocks(
                spans, &index, window, pipeline, report, &name, drive, observer,
            )?;
            return shrank(input, size, report, observer, drive);
        }
        let mut releaser = Releaser::default();
        let stop = || mapped::broken() || (drive.cancel)();
        let mut fed = pipeline
            .feed(
                Fodder::Slice(&map),
                fb_format::Position::START,
                &stop,
                &mut |at| {
                    // Pages already joined are not needed again.
                    releaser.done(&map, at.finished);
                    told.tell(at, observer)
                },
            )
            .map_err(fail)?;
        framing(report, &name, &mut fed, observer, drive)?;
        match fed.stopped_at {
            None => return shrank(input, size, report, observer, drive),
            Some(_) if (drive.cancel)() => return Err(Stop::Cancelled),
            Some(at) => {
                // Another process wants to change the file: read on from
                // here, through `read`.
                let rest = map.into_rest(at.offset).map_err(|e| {
                    Error::Msg(format!("{name}: reading on after byte {}: {e}", at.offset))
                })?;
                resume = Some((Box::new(rest) as Box<dyn Read + Send>, at));
            }
        }
    }
    if let (None, Some(window), Some(path)) = (&resume, drive.window, input.path()) {
        if !pipeline.joiner().options().inline_dedup {
            let file = std::fs::File::open(path)
                .map_err(|e| Error::Msg(format!("cannot open {name}: {e}")))?;
            let mut first = Vec::with_capacity(4);
            (&file)
                .take(4)
                .read_to_end(&mut first)
                .map_err(|e| Error::Msg(format!("{name}: {e}")))?;
            // Only a log can have an index; what is not one is said by the
            // full read below.
            let head = Head::of(&first);
            let loaded = match head {
                Head::Magic | Head::NoMagic => {
                    crate::sidecar::load_summary_unmapped(path, &file, drive.maps, observer)?
                }
                Head::Empty | Head::NotALog(_) => None,
            };
            if let Some(index) = loaded {
                take_head(&name, &head, report, observer, drive)?;
                let spans = Spans::Read {
                    file: &file,
                    buf: Vec::new(),
                };
                feed_blocks(
                    spans, &index, window, pipeline, report, &name, drive, observer,
                )?;
                return shrank(input, size, report, observer, drive);
            }
        }
    }
    let (stream, start) = match resume {
        Some(resume) => resume,
        None => {
            let (mut reader, opened) = match ahead.map(|(ahead, i)| ahead.take(i)) {
                Some(Ahead::Opened(file)) => {
                    let size = file.size();
                    (Box::new(file) as Box<dyn Read + Send>, Some(size))
                }
                Some(Ahead::Failed(message)) => return Err(Stop::Failed(Error::Msg(message))),
                Some(Ahead::Skipped) | None => input.open()?,
            };
            size = size.or(opened);
            let mut first = Vec::with_capacity(4);
            (&mut reader)
                .take(4)
                .read_to_end(&mut first)
                .map_err(|e| Error::Msg(format!("{name}: {e}")))?;
            if !take_head(&name, &Head::of(&first), report, observer, drive)? {
                return Ok(());
            }
            let stream: Box<dyn Read + Send> = Box::new(std::io::Cursor::new(first).chain(reader));
            (stream, fb_format::Position::START)
        }
    };
    let mut fed = pipeline
        .feed(Fodder::Stream(stream), start, drive.cancel, &mut |at| {
            told.tell(at, observer)
        })
        .map_err(fail)?;
    if fed.stopped_at.is_some() {
        return Err(Stop::Cancelled);
    }
    framing(report, &name, &mut fed, observer, drive)?;
    if matches!(size, Some(before) if fed.offset >= before) && !mapped::tripped() {
        // Every byte it had when opened was read: nothing was cut from
        // what there was to read, whatever its size now.
        return Ok(());
    }
    shrank(input, size, report, observer, drive)
}

/// Progress of one input told so far: the pipeline counts from the
/// input's start, an observer is told deltas.
#[derive(Default)]
struct Told {
    bytes: u64,
    events: u64,
}

impl Told {
    fn tell(&mut self, at: fb_join::Progress, observer: &mut dyn Observer) {
        observer.progress(
            at.read.saturating_sub(self.bytes),
            at.events.saturating_sub(self.events),
        );
        self.bytes = self.bytes.max(at.read);
        self.events = self.events.max(at.events);
    }
}

/// Records damage, and stops the run when the drive says so.
fn damaged(
    damage: Damage,
    report: &mut RunReport,
    observer: &mut dyn Observer,
    drive: &Drive<'_>,
) -> Result<(), Stop> {
    report.damaged(damage.clone(), observer);
    match drive.on_damage {
        OnDamage::Continue => Ok(()),
        OnDamage::Stop => Err(Stop::Damaged(damage)),
    }
}

/// Takes in what the head of the input `name` says: false when it is not
/// to be read (not a log: damage; empty: a warning).
fn take_head(
    name: &str,
    head: &Head,
    report: &mut RunReport,
    observer: &mut dyn Observer,
    drive: &Drive<'_>,
) -> Result<bool, Stop> {
    if let Head::NotALog(why) = head {
        let damage = Damage {
            input: name.to_string(),
            offset: Some(0),
            message_index: Some(0),
            why: why.clone(),
        };
        damaged(damage, report, observer, drive)?;
        return Ok(false);
    }
    if let Some(what) = head.warning() {
        observer.note(Note::Warning { input: name, what });
    }
    if *head == Head::Empty {
        return Ok(false);
    }
    report.logs += 1;
    Ok(true)
}

/// Takes in one feed's messages, and the framing error that ended it: the
/// input is damaged there, or could not be read (a reader that failed:
/// no message to blame).
fn framing(
    report: &mut RunReport,
    name: &str,
    fed: &mut fb_join::FeedReport,
    observer: &mut dyn Observer,
    drive: &Drive<'_>,
) -> Result<(), Stop> {
    let Some(err) = report.fed(fed) else {
        return Ok(());
    };
    match err.index() {
        None => Err(Stop::Failed(Error::Msg(format!("{name}: {err}")))),
        Some(index) => damaged(
            Damage {
                input: name.to_string(),
                offset: Some(err.offset()),
                message_index: Some(index),
                why: err.to_string(),
            },
            report,
            observer,
            drive,
        ),
    }
}

/// Reports the input as damaged when it is shorter now than the `before`
/// bytes it had when reading began, or a map of it was found cut (see
/// [`mapped::tripped`]): another process truncated it while it was read.
fn shrank(
    input: &dyn Readable,
    before: Option<u64>,
    report: &mut RunReport,
    observer: &mut dyn Observer,
    drive: &Drive<'_>,
) -> Result<(), Stop> {
    let now = input.size();
    let cut = matches!((before, now), (Some(b), Some(n)) if n < b);
    if !(cut || mapped::tripped()) {
        return Ok(());
    }
    let sizes = match (before, now) {
        (Some(b), Some(n)) => format!(" from {b} to {n} bytes"),
        _ => String::new(),
    };
    let damage = Damage {
        input: input.name(),
        offset: now,
        message_index: None,
        why: format!(
            "shrank{sizes} while it was read (another process truncated it): what was read \
             before the cut is converted, nothing after"
        ),
    };
    damaged(damage, report, observer, drive)
}

/// The blocks of `index` with events in `window` (seconds), each after
/// the checkpoint in force there (see [`crate::window::ranges`]), their
/// bytes from `spans`.
#[allow(clippy::too_many_arguments)]
fn feed_blocks(
    mut spans: Spans<'_>,
    index: &fb_format::index::Index,
    window: (i64, i64),
    pipeline: &mut dyn Feeder,
    report: &mut RunReport,
    name: &str,
    drive: &Drive<'_>,
    observer: &mut dyn Observer,
) -> Result<(), Stop> {
    let mapped = matches!(spans, Spans::Borrowed(_));
    for (start, end, at) in crate::window::ranges(index, window, spans.piece()) {
        let slice = spans
            .get(start, end)
            .map_err(|why| Error::Msg(format!("{name}: {why}")))?;
        let stop = || (mapped && mapped::broken()) || (drive.cancel)();
        let mut fed = pipeline
            .feed(
                Fodder::Slice(slice),
                fb_format::Position::new(start, at),
                &stop,
                &mut |_| {},
            )
            .map_err(|e| Stop::Failed(Error::joining(drive.target, e)))?;
        if fed.stopped_at.is_some() {
            return Err(match (drive.cancel)() {
                true => Stop::Cancelled,
                false => Stop::Failed(Error::Msg(format!(
                    "{name}: another process opened it for writing while it was read through \
                     its index: stopped; run again once it is done, or pass --no-index"
                ))),
            });
        }
        framing(report, name, &mut fed, observer, drive)?;
    }
    Ok(())
}

/// Recovery: one input read whole (mapped when it was) and
/// resynchronized after damage; skipped ranges reported.
fn recover_one(
    input: &dyn Readable,
    map: Option<mapped::Mapped>,
    pipeline: &mut dyn Feeder,
    drive: &Drive<'_>,
    report: &mut RunReport,
    observer: &mut dyn Observer,
) -> Result<(), Stop> {
    let name = input.name();
    let is_mapped = map.is_some();
    let read;
    let bytes: &[u8] = match &map {
        Some(map) => map,
        None => {
            let (mut reader, size) = input.open()?;
            read = crate::input::read_placed(&mut reader, size).map_err(|e| {
                match (drive.cancel)() {
                    true => Stop::Cancelled,
                    false => Stop::Failed(Error::Msg(format!("{name}: {e}"))),
                }
            })?;
            read.0.get(read.1..).unwrap_or_default()
        }
    };
    let head = Head::of(bytes.get(..4).unwrap_or(bytes));
    if head == Head::Empty {
        take_head(&name, &head, report, observer, drive)?;
        return Ok(());
    }
    // Recovery reads on whatever the head says: damage is its trade.
    report.logs += 1;
    let joined_before = pipeline.joiner().metrics().joined;
    // Recovery reads the map in place to the end: another process that
    // wants to change the file makes it stop (see `mapped`).
    let stop = || (is_mapped && (mapped::broken() || mapped::tripped())) || (drive.cancel)();
    let mut told = Told::default();
    let mut fed = pipeline
        .feed(
            Fodder::Recover(bytes),
            fb_format::Position::START,
            &stop,
            &mut |at| told.tell(at, observer),
        )
        .map_err(|e| Stop::Failed(Error::joining(drive.target, e)))?;
    if (drive.cancel)() {
        return Err(Stop::Cancelled);
    }
    if fed.stopped_at.is_some() || (is_mapped && mapped::tripped()) {
        return Err(Stop::Failed(Error::Msg(format!(
            "{name}: another process opened it for writing or truncated it while it was being \
             recovered: stopped; run again once it is done"
        ))));
    }
    let skipped = std::mem::take(&mut fed.skipped);
    let salvaged = std::mem::take(&mut fed.salvaged);
    report.fed(&mut fed);
    // What recovery skips is reported, never a reason to stop: reading on
    // past it is what was asked.
    for r in &skipped {
        let damage = Damage {
            input: name.clone(),
            offset: Some(r.start),
            message_index: None,
            why: r.to_string(),
        };
        report.damaged(damage, observer);
    }
    for s in salvaged {
        observer.note(Note::Salvaged {
            input: &name,
            report: &s,
        });
        report.salvaged.push((name.clone(), s));
    }
    if !skipped.is_empty() {
        observer.note(Note::Recovered {
            input: &name,
            events: pipeline.joiner().metrics().joined - joined_before,
            skipped: skipped.iter().map(fb_format::recover::Skipped::len).sum(),
            ranges: skipped.len(),
        });
    }
    Ok(())
}
