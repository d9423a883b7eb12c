//! Every problem of a log, with where it is (`fb validate`): damaged
//! bytes are errors; data that is readable but odd (outcomes without
//! their decision, events of another problem type, a log without
//! FILEMAGIC or without events) are warnings.

use std::sync::{Arc, Mutex};

use fb_format::{Caches, Message, MessageKind, Payload, PayloadDecoder, Position};
use fb_join::{DiagnosticKind, JoinedEvent, Joiner, Maker, MessageRead, Pipeline, Sink, Source};

use crate::error::Error;
use crate::input::{self, Head, Input};
use crate::output::Output;

/// What checking found.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verdict {
    /// Problems that are damage.
    pub errors: u64,
    /// Problems that are odd data.
    pub warnings: u64,
    /// Messages read.
    pub messages: u64,
    /// Events read.
    pub events: u64,
}

/// Checks every input, each on its own (no checkpoint carries over),
/// joined with `options`, and lists its problems to `out`, one line each
/// with where it is, at most `max_listed` of them (all are counted), then
/// finishes `out`. `threads` work at once: with fewer inputs than threads,
/// each input in turn on all of them (its messages checked and joined on
/// the pipeline's workers); otherwise that many inputs at once, each on
/// one. What they found is listed in the order of the inputs, and of the
/// messages in each: the same lines for any number of threads.
pub fn validate(
    inputs: &[Input],
    options: &fb_join::Options,
    max_listed: usize,
    out: Output,
    threads: usize,
) -> Result<Verdict, Error> {
    let mut problems = Problems {
        errors: 0,
        warnings: 0,
        max: max_listed,
        out,
        pending: None,
    };
    let (mut messages, mut events) = (0, 0);
    let threads = threads.max(1);
    let (at_once, per_input) = match inputs.len() < threads {
        true => (1, threads),
        false => (threads, 1),
    };
    // What one input's check leaves to the next: at most one per thread
    // checking inputs at once.
    let spares: Mutex<Vec<Carried>> = Mutex::new(Vec::new());
    crate::in_order::in_order(
        inputs,
        crate::in_order::Threads {
            count: at_once,
            name: "fb-validate",
            doing: "checking the inputs",
        },
        |input| {
            let carried = spares.lock().ok().and_then(|mut s| s.pop());
            let (found, left) = check_one(input, options, max_listed, per_input, carried);
            if let (Some(left), Ok(mut s)) = (left, spares.lock()) {
                s.push(left);
            }
            found
        },
        |found| {
            let found = found?;
            messages += found.messages;
            events += found.events;
            problems.take(found)
        },
    )?;
    problems.flush()?;
    let listed = (problems.count() as usize).min(max_listed);
    if problems.count() as usize > listed {
        let more = format!(
            "... and {} more problems (raise --max-errors to list them)\n",
            problems.count() as usize - listed
        );
        problems.out.put(more.as_bytes())?;
    }
    let Problems {
        errors,
        warnings,
        out,
        ..
    } = problems;
    out.finish()?;
    Ok(Verdict {
        errors,
        warnings,
        messages,
        events,
    })
}

/// What checking one input (or a part of its messages) found: its
/// problems' lines (as many as can be listed), every problem counted, its
/// messages and events.
#[derive(Debug, Default)]
struct Found {
    lines: Vec<(Severity, String)>,
    errors: u64,
    warnings: u64,
    messages: u64,
    events: u64,
    max: usize,
}

impl Found {
    fn new(max: usize) -> Self {
        Self {
            max,
            ..Self::default()
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn add(
        &mut self,
        severity: Severity,
        input: &str,
        offset: u64,
        message: Option<u64>,
        event: Option<&str>,
        what: &str,
    ) {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        // No more than the run lists in all can be listed of one input.
        if self.lines.len() >= self.max {
            return;
        }
        let mut at = format!("{input}: byte {offset}");
        if let Some(m) = message {
            at.push_str(&format!(", message {m}"));
        }
        if let Some(e) = event {
            at.push_str(&format!(", event `{e}`"));
        }
        let word = match severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        self.lines.push((severity, format!("{at}: {word}: {what}")));
    }

    /// Adds what `later` found, in the messages after ours, and empties
    /// it.
    fn absorb(&mut self, later: &mut Found) {
        let room = self.max.saturating_sub(self.lines.len());
        self.lines.extend(later.lines.drain(..).take(room));
        self.errors += std::mem::take(&mut later.errors);
        self.warnings += std::mem::take(&mut later.warnings);
        self.messages += std::mem::take(&mut later.messages);
        self.events += std::mem::take(&mut later.events);
    }
}

/// What checking an input leaves for the next one checked on the same
/// thread: the joiner's speed caches and those of the message checks
/// (see [`Joiner::for_next_log`]). Only speed: each log is still joined
/// and checked on its own.
struct Carried {
    joiner: Joiner,
    checks: Option<CheckMessages>,
}

/// Checks one input on its own (a fresh joiner: each log must stand on
/// its own, though it may take the caches `carried` from the input
/// before), on `threads` threads. Gives back what the next input may
/// carry on with.
fn check_one(
    input: &Input,
    options: &fb_join::Options,
    max: usize,
    threads: usize,
    carried: Option<Carried>,
) -> (Result<Found, Error>, Option<Carried>) {
    let opened = match input::open(input) {
        Ok(opened) => opened,
        Err(e) => return (Err(e.into()), carried),
    };
    check_opened(input, opened, options, max, threads, carried)
}

/// [`check_one`] once the input is open.
fn check_opened(
    input: &Input,
    opened: input::Opened,
    options: &fb_join::Options,
    max: usize,
    threads: usize,
    carried: Option<Carried>,
) -> (Result<Found, Error>, Option<Carried>) {
    use Severity::{Error as Bad, Warning};
    let name: Arc<str> = input.name().into();
    let mut problems = Found::new(max);
    match &opened.head {
        Head::NotALog(why) => {
            problems.add(Bad, &name, 0, None, None, why);
            return (Ok(problems), carried);
        }
        Head::Empty => {
            let w = Head::Empty.warning().unwrap_or_default();
            problems.add(Bad, &name, 0, None, None, w);
            return (Ok(problems), carried);
        }
        Head::NoMagic => {
            let w = Head::NoMagic.warning().unwrap_or_default();
            problems.add(Warning, &name, 0, None, None, w);
        }
        Head::Magic => {}
    }
    let limit = u32::try_from(options.max_payload).unwrap_or(u32::MAX);
    let (joiner, spare) = match carried {
        Some(c) => (c.joiner.for_next_log(), c.checks),
        None => (Joiner::new(options.clone()), None),
    };
    let checks = Checks {
        name: name.clone(),
        found: problems,
        spare,
    };
    // Every event is joined for the joiner's findings, none kept. A
    // session, not a feed: on several threads the reading thread's
    // findings (checkpoints it could not read) then take their place
    // among the workers' in log order, so that the joiner keeps the same
    // first diagnostics (`Options::diagnostics_limit`) as on one thread.
    let mut pipeline = Pipeline::with_joiner(joiner, |_: &JoinedEvent<'_>| false, checks, threads);
    let fed = pipeline.session(|session| {
        session.begin_input()?;
        session.feed(
            Source::Stream(opened.reader),
            Position::START,
            &|| false,
            &mut |_| {},
        )
    });
    let (joiner, checks) = pipeline.finish();
    let fed = match fed {
        Ok((Ok(fed), _)) => fed,
        Ok((Err(e), _)) | Err(e) => return (Err(Error::joining(&name, e)), None),
    };
    let found = judge(input, &name, &fed, &joiner, checks.found, limit);
    let carried = Carried {
        joiner,
        checks: checks.spare,
    };
    (Ok(found), Some(carried))
}

/// What an input's check found, with what its reading (`fed`) and its
/// joiner found added to what its messages showed (`problems`).
fn judge(
    input: &Input,
    name: &str,
    fed: &fb_join::FeedReport,
    joiner: &Joiner,
    mut problems: Found,
    limit: u32,
) -> Found {
    use Severity::Error as Bad;
    if let Some(err) = &fed.framing_error {
        let mut what = err.to_string();
        if let Some(good) = cut_salvage(input, err.offset(), limit) {
            what = format!("{what}; {good}");
        }
        problems.add(Bad, name, err.offset(), None, None, &what);
    }
    let (m, e) = (fed.messages, problems.events);
    problems.messages = m;
    let diags = joiner.diagnostics();
    // Sound but with nothing in it (FILEMAGIC alone, or a header and
    // checkpoints): odd for a log, and worth a word.
    if m > 0 && e == 0 && problems.errors == 0 {
        problems.add(
            Severity::Warning,
            name,
            input.len().unwrap_or(0),
            None,
            None,
            &format!(
                "the log holds no event ({}, no REGULAR message with events): nothing \
                 to convert",
                crate::plural(m, "message")
            ),
        );
    }
    // What the joiner finds (outcomes without decisions, events of
    // another problem type, multistep without --multistep) is odd
    // data, not damage.
    for d in diags.kept().iter().filter(|d| joinability(d.kind)) {
        problems.add(
            Severity::Warning,
            name,
            d.offset,
            Some(d.message),
            d.event_id.as_deref(),
            &d.detail,
        );
    }
    // Diagnostics beyond the joiner's keep limit are counted, not listed.
    let kept = diags.kept().iter().filter(|d| joinability(d.kind)).count() as u64;
    let counted: u64 = diags
        .counts()
        .iter()
        .filter(|(k, _)| joinability(**k))
        .map(|(_, v)| v)
        .sum();
    problems.warnings += counted - kept;
    problems
}

/// How bad a problem is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Severity {
    /// The file is damaged or not a log: something in it cannot be read.
    Error,
    /// The file reads, but its data is odd: something will not be joined
    /// or converted as it stands.
    Warning,
}

/// Problems found so far, printed as they come up to the limit.
struct Problems {
    errors: u64,
    warnings: u64,
    max: usize,
    out: Output,
    /// The last line, not yet written, and how many times it came in a
    /// row: repeats are said once.
    pending: Option<(String, usize)>,
}

impl Problems {
    fn count(&self) -> u64 {
        self.errors + self.warnings
    }

    /// Takes what one input found, in the order of the inputs: its lines
    /// listed while the run's count is within the limit, every problem
    /// counted.
    fn take(&mut self, found: Found) -> Result<(), Error> {
        let (mut errors, mut warnings) = (found.errors, found.warnings);
        for (severity, line) in found.lines {
            match severity {
                Severity::Error => errors -= 1,
                Severity::Warning => warnings -= 1,
            }
            self.add_line(severity, line)?;
        }
        self.errors += errors;
        self.warnings += warnings;
        Ok(())
    }

    /// Counts one problem, and lists it while within the limit.
    fn add_line(&mut self, severity: Severity, line: String) -> Result<(), Error> {
        match severity {
            Severity::Error => self.errors += 1,
            Severity::Warning => self.warnings += 1,
        }
        if self.count() as usize > self.max {
            return Ok(());
        }
        match &mut self.pending {
            Some((last, n)) if *last == line => {
                *n += 1;
                Ok(())
            }
            _ => {
                self.flush()?;
                self.pending = Some((line, 1));
                Ok(())
            }
        }
    }

    /// Writes the pending line.
    fn flush(&mut self) -> Result<(), Error> {
        match self.pending.take() {
            Some((line, 1)) => self.out.put(format!("{line}\n").as_bytes()),
            Some((line, n)) => self.out.put(format!("{line} ({n} times)\n").as_bytes()),
            None => Ok(()),
        }
    }
}

/// The joiner's findings that are about joinability (the structural ones
/// are found by the checks here already).
fn joinability(kind: DiagnosticKind) -> bool {
    !matches!(
        kind,
        DiagnosticKind::InvalidJoinedPayload
            | DiagnosticKind::BadEvent
            | DiagnosticKind::EventsDropped
            | DiagnosticKind::InvalidPayload
            | DiagnosticKind::InvalidContext
            | DiagnosticKind::Framing
            | DiagnosticKind::UnknownMessageType
    )
}

fn context_of<'a>(payload: &Payload<'a>) -> Option<&'a [u8]> {
    match payload {
        Payload::Cb(e) => e.context().map(|c| c.bytes()),
        Payload::Ccb(e) | Payload::Slates(e) => e.context().map(|c| c.bytes()),
        Payload::Ca(e) => e.context().map(|c| c.bytes()),
        Payload::MultiStep(e) => e.context().map(|c| c.bytes()),
        _ => None,
    }
}

/// The pipeline's sink of `fb validate`: what the messages themselves
/// show, in log order (the events joined are the joiner's to judge).
struct Checks {
    name: Arc<str>,
    found: Found,
    /// The one-thread loop's maker, from the input before or kept at the
    /// end of this one (`Sink::recycle`): its caches outlive an input.
    spare: Option<CheckMessages>,
}

impl Sink for Checks {
    type Batch = Found;
    type Maker = CheckMessages;

    fn maker(&self) -> CheckMessages {
        CheckMessages {
            name: self.name.clone(),
            max: self.found.max,
            decoder: PayloadDecoder::default(),
            json: fb_join::json::Validator::new(),
        }
    }

    fn serial_maker(&mut self, caches: Caches) -> CheckMessages {
        match self.spare.take() {
            Some(mut spare) => {
                spare.name = self.name.clone();
                spare.max = self.found.max;
                spare
            }
            None => self.maker_with(caches),
        }
    }

    fn recycle(&mut self, maker: CheckMessages, _: Found) {
        self.spare = Some(maker);
    }

    fn sees_messages(&self) -> bool {
        true
    }

    fn control(&mut self, msg: &Message<'_>) -> Result<(), fb_join::Error> {
        check_control(&self.name, msg, &mut self.found);
        Ok(())
    }

    fn take(&mut self, batch: &mut Found) -> Result<(), fb_join::Error> {
        self.found.absorb(batch);
        Ok(())
    }
}

/// Checks REGULAR messages where they are joined (on the pipeline's
/// workers when there are several).
struct CheckMessages {
    name: Arc<str>,
    max: usize,
    decoder: PayloadDecoder,
    /// The rule `fb convert` applies to contexts, so that what one
    /// accepts the other does.
    json: fb_join::json::Validator,
}

impl Maker for CheckMessages {
    type Batch = Found;

    fn batch(&mut self) -> Found {
        Found::new(self.max)
    }

    fn add(&mut self, _: &mut Found, _: &JoinedEvent<'_>) {}

    fn message(&mut self, found: &mut Found, msg: &Message<'_>, read: MessageRead) {
        match read {
            // The joiner decoded every payload and checked every context
            // of it, as `check_regular` would, and found nothing: counted,
            // not read again.
            MessageRead::Whole { events } => found.events += events as u64,
            MessageRead::NotWhole => check_regular(self, msg, found),
        }
    }

    fn full(&self, _: &Found) -> bool {
        false
    }

    fn clear(&mut self, found: &mut Found) {
        // Its lines' room is kept for the next batch.
        found.lines.clear();
        (found.errors, found.warnings) = (0, 0);
        (found.messages, found.events) = (0, 0);
    }
}

/// What a message that is not REGULAR shows.
fn check_control(name: &str, msg: &Message<'_>, found: &mut Found) {
    use Severity::{Error as Bad, Warning};
    let mut at = |sev: Severity, what: &str| {
        found.add(sev, name, msg.offset, Some(msg.index), None, what);
    };
    match msg.kind {
        MessageKind::Unknown(_) => {
            let w = msg
                .unknown_warning()
                .map(|w| w.to_string())
                .unwrap_or_default();
            at(Warning, &w);
        }
        MessageKind::Header => {
            if let Err(e) = msg.file_header() {
                at(Bad, &e.to_string());
            }
        }
        MessageKind::Checkpoint => {
            if let Err(e) = msg.checkpoint() {
                at(Bad, &e.to_string());
            }
        }
        MessageKind::Regular | MessageKind::FileMagic | MessageKind::Eof => {}
    }
}

/// What a REGULAR message shows: its events' bytes, their payloads, and
/// their contexts as JSON; its events counted.
fn check_regular(checks: &mut CheckMessages, msg: &Message<'_>, found: &mut Found) {
    use Severity::Error as Bad;
    let name = &*checks.name;
    let at = |p: &mut Found, event: Option<&str>, what: &str| {
        p.add(Bad, name, msg.offset, Some(msg.index), event, what);
    };
    let list = match msg.events() {
        Ok(list) => list,
        Err(e) => {
            let good = salvage_note(msg, false);
            at(found, None, &format!("{e}: {good}"));
            return;
        }
    };
    let mut noted = false;
    for (position, ev) in list.enumerate() {
        found.events += 1;
        let view = match ev {
            Ok(v) => v,
            Err(e) => {
                // Once per message: what of it is still good.
                let good = match noted {
                    false => format!("; {}", salvage_note(msg, false)),
                    true => String::new(),
                };
                noted = true;
                at(found, None, &format!("event {position}: {e}{good}"));
                continue;
            }
        };
        match checks.decoder.payload(&view) {
            Err(e) => at(found, Some(view.id), &e.to_string()),
            Ok(payload) => {
                if let Some(ctx) = context_of(&payload) {
                    if let Err(e) = checks.json.validate(ctx) {
                        at(
                            found,
                            Some(view.id),
                            &format!(
                                "context is not valid JSON ({e}): fb convert skips this event"
                            ),
                        );
                    }
                }
            }
        }
    }
}

/// What salvage makes of a damaged REGULAR message: how many of its
/// events are still good and would be kept (`fb convert --recover`, `fb
/// repair`).
fn salvage_note(msg: &fb_format::Message<'_>, cut: bool) -> String {
    match fb_format::salvage::salvage(
        msg.payload,
        msg.offset,
        msg.index,
        msg.size_field,
        msg.len,
        cut,
    ) {
        Some(s) => format!(
            "{} of its {} events are still good and kept by --recover and fb repair ({} more \
             good but withheld, {} lost)",
            s.report.kept,
            s.report.listed,
            s.report.withheld,
            s.report.lost_count()
        ),
        None => "its event list cannot be read: the whole message is lost".into(),
    }
}

/// For a file whose last message is cut: what salvage makes of it, read
/// from the file (the stream reader keeps no partial message).
fn cut_salvage(input: &Input, offset: u64, limit: u32) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let Input::File(path) = input else {
        return None;
    };
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(offset)).ok()?;
    let mut bytes = Vec::new();
    file.take(u64::from(limit) + 8)
        .read_to_end(&mut bytes)
        .ok()?;
    let head: [u8; 8] = bytes.get(..8)?.try_into().ok()?;
    let kind = u32::from_le_bytes(head[..4].try_into().ok()?);
    if fb_format::MessageKind::from_type(kind) != fb_format::MessageKind::Regular {
        return None;
    }
    let size = u32::from_le_bytes(head[4..].try_into().ok()?);
    let msg = fb_format::Message {
        kind: fb_format::MessageKind::Regular,
        offset,
        index: 0,
        size_field: size,
        payload: bytes.get(8..)?,
        len: bytes.len(),
    };
    Some(salvage_note(&msg, true))
}
