//! The joiner: configuration, grouping by event id, and the processing of
//! each group into joined events (SEMANTICS.md §1–§5, §7, §8).

use std::borrow::Cow;
use std::collections::VecDeque;

use fb_format::{EventView, Message, MessageKind, Payload, PayloadDecoder, Position};
use fb_schema::{PayloadType, TimeStamp};

use crate::config::{ConfigChange, ConfigHistory, LoopConfig};
use crate::dedup::{inline_actions, DedupCache};
use crate::diag::{Diagnostic, DiagnosticKind, Diagnostics};
use crate::event::{Buffers, JoinedEvent, Outcome, OutcomeIndex, OutcomeValue};
use crate::metrics::Metrics;
use crate::reward::Signal;
use crate::{CacheCounts, Caches, Compat, Options, Problem};

mod group;
mod ids;
mod multistep;
mod outcome_texts;
mod read_whole;
mod rewards;

pub use read_whole::MessageRead;

use outcome_texts::{fill_outcome, set_index, set_value};

/// Joins the messages of a log into [`JoinedEvent`]s.
///
/// Feed messages in order, either with [`Joiner::push_each`], which hands
/// over each joined event as it is made, its context borrowed from the
/// message; or with [`Joiner::push`], after which [`Joiner::pop`] gives the
/// joined events with contexts of their own. State (configuration, dedup
/// cache) carries over between messages, and between files when one joiner
/// reads several.
#[derive(Debug)]
pub struct Joiner {
    opts: Options,
    config: LoopConfig,
    /// The configurations checkpoints put in force, bounded.
    history: ConfigHistory,
    dedup: DedupCache,
    decoder: PayloadDecoder,
    /// Checks contexts, remembering the actions already found valid.
    json: crate::json::Validator,
    diags: Diagnostics,
    metrics: Metrics,
    ready: VecDeque<JoinedEvent<'static>>,
    /// Buffers of events handed back, filled again by the next events.
    pool: Vec<Buffers>,
    /// Buffers of contexts that had to be owned (decompressed, rewritten,
    /// or queued for `pop`), for reuse.
    contexts: Vec<Vec<u8>>,
    /// Scratch of `regular`, kept between messages for its allocation
    /// (see [`reuse`]).
    views: Vec<(u32, EventView<'static>)>,
    /// The views in group order, when the message had them out of it.
    grouped: Vec<(u32, EventView<'static>)>,
    /// Scratch of the counting sort that makes `grouped`.
    starts: Vec<u32>,
    ids: Vec<&'static str>,
    /// Groups a message's events by id.
    groups: ids::IdGroups,
    signals: Vec<Signal>,
    /// Text buffers of outcome values and indices, for reuse.
    spare: Vec<String>,
    /// Outcomes left over by events that had more than the event filling
    /// their buffers next, with their id buffers, for reuse: where lines
    /// have one outcome or three, dropping and making them again cost a
    /// `malloc` and a `free` a line.
    spare_outcomes: Vec<Outcome>,
    /// Slots left over by CCB and Slates decisions that had more than the
    /// decision filling their buffers next, for reuse (see `pool.rs`).
    spare_slots: Vec<crate::event::SlotDecision>,
    /// Messages whose events came in group order, not sorted.
    in_group_order: u64,
    /// Whether the last REGULAR message was read whole.
    read_whole: read_whole::ReadWhole,
}

/// Events kept for reuse at most: more than one message's worth is rare.
const POOL_LIMIT: usize = 1024;

/// Empties `v` and returns its allocation as a vector of another type of
/// the same size and alignment (in practice: the same views borrowing
/// another message), so that scratch space survives between messages
/// without tying the joiner to one message's lifetime. The standard
/// library collects a `filter_map` over `into_iter` in place; if it ever
/// did not, this would only allocate again.
fn reuse<T, U>(mut v: Vec<T>) -> Vec<U> {
    v.clear();
    v.into_iter().filter_map(|_| None).collect()
}

impl Joiner {
    /// A joiner with `opts`.
    pub fn new(opts: Options) -> Self {
        Self {
            config: LoopConfig::new(&opts.overrides),
            history: ConfigHistory::default(),
            decoder: PayloadDecoder::with_caches(opts.max_payload, opts.caches),
            json: crate::json::Validator::with_caches(opts.caches),
            diags: Diagnostics::with_limit(opts.diagnostics_limit),
            dedup: DedupCache::default(),
            metrics: Metrics::default(),
            ready: VecDeque::new(),
            pool: Vec::new(),
            contexts: Vec::new(),
            views: Vec::new(),
            grouped: Vec::new(),
            starts: Vec::new(),
            ids: Vec::new(),
            groups: ids::IdGroups::new(opts.caches),
            signals: Vec::new(),
            spare: Vec::new(),
            spare_outcomes: Vec::new(),
            spare_slots: Vec::new(),
            in_group_order: 0,
            read_whole: read_whole::ReadWhole::default(),
            opts,
        }
    }

    /// From now on, judges each REGULAR message (see
    /// [`Joiner::last_message_read`]). The pipeline asks for a sink that
    /// sees the messages ([`crate::Sink::sees_messages`]). Only the speed
    /// caches' path can read a message whole (the plain one leaves every
    /// check to the sink: the twin a test compares with), and only where
    /// contexts are checked as they are in the log: with other options
    /// there is nothing to judge, and every message stays
    /// [`MessageRead::NotWhole`].
    pub fn watch_messages(&mut self) {
        self.read_whole.watching = self.opts.caches == Caches::On
            && self.opts.compat == Compat::Sane
            && !self.opts.inline_dedup;
    }

    /// Whether the last REGULAR message fed was read whole and sound
    /// (see [`MessageRead`]); always [`MessageRead::NotWhole`] unless
    /// [`Joiner::watch_messages`] was asked.
    pub fn last_message_read(&self) -> MessageRead {
        self.read_whole.last()
    }

    /// A joiner for a log that stands on its own after this one's (`fb
    /// validate` checks each input of a folder so): the same options and
    /// none of this one's state (no configuration, checkpoint,
    /// deduplication, metrics, diagnostics or events waiting), but its
    /// speed caches as they are (the payload decoder's and the JSON
    /// check's), so that each small log of a folder does not allocate and
    /// learn them again. A cache only makes the same join faster
    /// ([`Caches::Off`] joins the same), so nothing joined differs; what
    /// [`Joiner::cache_counts`] says goes on from this one's counts.
    pub fn for_next_log(self) -> Joiner {
        let mut next = Joiner::new_without_caches(self.opts.clone());
        next.decoder = self.decoder;
        next.json = self.json;
        next.read_whole.watching = self.read_whole.watching;
        next
    }

    /// [`Joiner::new`] with caches that allocate nothing, for
    /// [`Joiner::for_next_log`] to put this one's in.
    fn new_without_caches(opts: Options) -> Self {
        let mut off = opts;
        let caches = std::mem::replace(&mut off.caches, Caches::Off);
        let mut joiner = Joiner::new(off);
        joiner.opts.caches = caches;
        joiner.groups = ids::IdGroups::new(caches);
        joiner
    }

    /// How much each of its speed caches served so far (none with
    /// [`Caches::Off`]).
    pub fn cache_counts(&self) -> CacheCounts {
        let (_, json_elements) = self.json.lookups();
        let (_, repeated_contexts) = self.json.repeats();
        let (_, context_shapes) = self.json.shapes();
        CacheCounts {
            zstd_frames: self.decoder.frames_served_again(),
            outcome_parts: self.decoder.outcome_parts_served_again(),
            json_elements,
            repeated_contexts,
            context_shapes,
            same_id_as_before: self.groups.same_as_before(),
            messages_in_group_order: self.in_group_order,
            verified_in_full: self.decoder.verified_in_full(),
            ..CacheCounts::default()
        }
    }

    /// The options it was made with.
    pub fn options(&self) -> &Options {
        &self.opts
    }

    /// The configuration in force.
    pub fn config(&self) -> &LoopConfig {
        &self.config
    }

    /// The configurations checkpoints put in force so far, and where.
    pub fn config_history(&self) -> &ConfigHistory {
        &self.history
    }

    /// Everything reported so far.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diags
    }

    /// Metrics over the events joined so far.
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }

    /// The ordered state a parallel worker needs: configuration and dedup
    /// cache.
    pub(crate) fn state(&self) -> (LoopConfig, DedupCache) {
        (self.config, self.dedup.clone())
    }

    /// Replaces the ordered state (see [`Joiner::state`]).
    pub(crate) fn set_state(&mut self, config: LoopConfig, dedup: DedupCache) {
        self.config = config;
        self.dedup = dedup;
    }

    /// Takes the diagnostics and metrics gathered so far, leaving empty
    /// ones (a worker hands its share to the merging side).
    pub(crate) fn take_report(&mut self) -> (Diagnostics, Metrics) {
        let limit = self.opts.diagnostics_limit;
        (
            std::mem::replace(&mut self.diags, Diagnostics::with_limit(limit)),
            std::mem::take(&mut self.metrics),
        )
    }

    /// Adds the diagnostics workers gathered, and takes `metrics` as the
    /// metrics so far: the joiner's own with the workers' merged into them
    /// in order, as [`convert_parallel`](crate::convert_parallel) keeps
    /// them.
    pub(crate) fn absorb_in_order(&mut self, diags: &Diagnostics, metrics: Metrics) {
        self.diags.merge(diags);
        self.metrics = metrics;
    }

    /// Sets the decisions joined before configuration changes and the
    /// last one's time, as `(change index, decisions, time)`: a reading
    /// thread's joiner notes changes but joins nothing, and the writer
    /// that merges the workers' metrics in order knows them.
    pub(crate) fn place_config_changes(
        &mut self,
        marks: &[(usize, u64, Option<fb_schema::TimeStamp>)],
    ) {
        for &(index, decisions, last) in marks {
            if let Some(change) = self.history.changes.get_mut(index) {
                change.decisions_before = decisions;
                change.last_before = last;
            }
        }
    }

    /// Follows the ordered state of a message without joining it:
    /// checkpoints, unknown messages, and — when dedup references are
    /// inlined — the DedupInfo events of REGULAR messages. What it reports
    /// about a REGULAR message is left to the worker that joins it.
    pub(crate) fn track(&mut self, msg: &Message<'_>) {
        if msg.kind != MessageKind::Regular {
            self.push(msg);
            return;
        }
        if !self.opts.inline_dedup || !self.config.is_ready() {
            return;
        }
        let Ok(events) = msg.events_with(self.opts.caches) else {
            return;
        };
        let mut pending = Vec::new();
        for event in events {
            let Ok(view) = event else { break };
            match view.payload_type() {
                PayloadType::DedupInfo => pending.push(view),
                // As in `regular`: the rest of the message is dropped.
                PayloadType::Episode if !self.multistep() => break,
                _ => {}
            }
        }
        for view in pending {
            if self.apply_dedup(&view).is_err() {
                // The worker drops this message and reports why.
                break;
            }
        }
    }

    /// The next joined event of the messages given to [`Joiner::push`],
    /// in output order.
    pub fn pop(&mut self) -> Option<JoinedEvent<'static>> {
        self.ready.pop_front()
    }

    /// Hands a popped event back: its buffers are reused for the next
    /// events, so that steady-state joining does not allocate.
    pub fn recycle(&mut self, ev: JoinedEvent<'_>) {
        let (buffers, context) = ev.apart();
        if let Cow::Owned(buf) = context {
            keep_spare(&mut self.contexts, buf);
        }
        if self.pool.len() < POOL_LIMIT {
            self.pool.push(buffers);
        }
    }

    fn blank<'m>(&mut self) -> JoinedEvent<'m> {
        JoinedEvent::around(self.pool.pop().unwrap_or_default())
    }

    /// `ev` with a context of its own, in a reused buffer.
    fn owned(&mut self, mut ev: JoinedEvent<'_>) -> JoinedEvent<'static> {
        if let Cow::Borrowed(bytes) = ev.context {
            copy_context(&mut ev.context, bytes, &mut self.contexts);
        }
        let context = std::mem::take(&mut ev.context).into_owned();
        ev.with_context(Cow::Owned(context))
    }

    /// Records a framing error that ended a log.
    pub fn record_framing_error(&mut self, err: &fb_format::Error) {
        self.diags.push(Diagnostic {
            kind: DiagnosticKind::Framing,
            offset: err.offset(),
            message: 0,
            event_id: None,
            detail: err.to_string(),
        });
    }

    /// Processes one message; its joined events are then queued for
    /// [`Joiner::pop`], each with a copy of its context.
    pub fn push(&mut self, msg: &Message<'_>) {
        let mut ready = std::mem::take(&mut self.ready);
        self.process(msg, &mut ready);
        self.ready = ready;
    }

    /// Processes one message and hands each of its joined events to `each`
    /// as soon as it is made, with its context borrowed from the message
    /// where the payload is stored uncompressed: nothing is copied or
    /// queued. Events still queued by [`Joiner::push`] go to `each` first.
    ///
    /// ```
    /// # let log = std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"),
    /// #     "/../../tests/data/valid_joined_logs/cb_simple.log")).unwrap();
    /// let mut joiner = fb_join::Joiner::new(fb_join::Options::default());
    /// let mut reader = fb_format::SliceReader::new(&log);
    /// let mut lines = 0;
    /// while let Some(msg) = reader.next_message().unwrap() {
    ///     joiner.push_each(&msg, |ev| {
    ///         // Uncompressed: the context is the payload's own bytes.
    ///         assert!(matches!(ev.context, std::borrow::Cow::Borrowed(_)));
    ///         lines += 1;
    ///     });
    /// }
    /// assert!(lines > 0);
    /// ```
    pub fn push_each(&mut self, msg: &Message<'_>, each: impl FnMut(&JoinedEvent<'_>)) {
        let mut each = Each(each);
        while let Some(mut ev) = self.ready.pop_front() {
            each.take(self, &mut ev);
            self.recycle(ev);
        }
        self.process(msg, &mut each);
    }

    fn process<S: Sink>(&mut self, msg: &Message<'_>, sink: &mut S) {
        match msg.kind {
            MessageKind::Checkpoint => match msg.checkpoint() {
                Ok(info) => {
                    let before = self.config;
                    self.config.apply_checkpoint(&info, &self.opts.overrides);
                    let change = ConfigChange {
                        offset: msg.offset,
                        message: msg.index,
                        decisions_before: self.metrics.joined,
                        last_before: self.metrics.last.as_ref().map(|(_, t)| *t),
                        config: self.config,
                    };
                    self.history.note(&before, change);
                }
                Err(err) => self.diags.push(Diagnostic {
                    kind: DiagnosticKind::InvalidJoinedPayload,
                    offset: msg.offset,
                    message: msg.index,
                    event_id: None,
                    detail: format!("{err}; the configuration is unchanged"),
                }),
            },
            MessageKind::Regular => self.regular(msg, sink),
            MessageKind::Unknown(_) => {
                if let Some(w) = msg.unknown_warning() {
                    self.diags.push(Diagnostic {
                        kind: DiagnosticKind::UnknownMessageType,
                        offset: msg.offset,
                        message: msg.index,
                        event_id: None,
                        detail: w.to_string(),
                    });
                }
            }
            MessageKind::FileMagic | MessageKind::Header | MessageKind::Eof => {}
        }
    }

    fn diag(&mut self, at: Position, kind: DiagnosticKind, event_id: Option<&str>, detail: String) {
        self.diags.push(Diagnostic {
            kind,
            offset: at.offset,
            message: at.index,
            event_id: event_id.map(str::to_string),
            detail,
        });
    }

    fn regular<S: Sink>(&mut self, msg: &Message<'_>, sink: &mut S) {
        if !self.read_whole.watching {
            return self.regular_events(msg, sink);
        }
        self.read_whole.start(self.diags.total());
        self.regular_events(msg, sink);
        self.read_whole.end(self.diags.total());
    }

    fn regular_events<S: Sink>(&mut self, msg: &Message<'_>, sink: &mut S) {
        let at = Position::new(msg.offset, msg.index);
        if !self.config.is_ready() {
            self.metrics.events_read += msg
                .events_with(self.opts.caches)
                .map_or(0, |e| e.total() as u64);
            self.diag(
                at,
                DiagnosticKind::NotReady,
                None,
                "REGULAR message before any checkpoint set the problem type: skipped \
                 (set the problem type to convert it)"
                    .into(),
            );
            return;
        }
        let events = match msg.events_with(self.opts.caches) {
            Ok(events) => events,
            Err(err) => {
                self.diag(
                    at,
                    DiagnosticKind::InvalidJoinedPayload,
                    None,
                    format!("{err}: message skipped"),
                );
                return;
            }
        };
        let total = events.total();
        self.read_whole.listed(total);
        self.metrics.events_read += total as u64;
        let selected = self.selected();
        // Each view with the index of its id's group, in file order.
        let mut views: Vec<(u32, EventView<'_>)> = reuse(std::mem::take(&mut self.views));
        let mut ids: Vec<&str> = reuse(std::mem::take(&mut self.ids));
        self.groups.start(total);
        // Counted by hand: `enumerate` would wrap `Events::next` in a call
        // LLVM does not inline, and each view would be copied out of its
        // result, a wide copy of narrow stores that waits for them.
        let mut next_position = 0;
        #[allow(clippy::explicit_counter_loop)]
        for event in events {
            let position = next_position;
            next_position += 1;
            let view = match event {
                Ok(view) => view,
                Err(err) => {
                    self.diag(
                        at,
                        DiagnosticKind::BadEvent,
                        None,
                        format!("event {position}: {err}"),
                    );
                    self.diags
                        .add(DiagnosticKind::EventsDropped, (total - position) as u64);
                    break;
                }
            };
            match view.payload_type() {
                PayloadType::DedupInfo => {
                    if let Err((kind, detail)) = self.apply_dedup(&view) {
                        self.diag(
                            at,
                            kind,
                            Some(view.id),
                            format!("{detail}: message dropped"),
                        );
                        self.diags.add(DiagnosticKind::EventsDropped, total as u64);
                        return;
                    }
                }
                PayloadType::Episode if !self.multistep() => {
                    self.diag(
                        at,
                        DiagnosticKind::EpisodeOutsideMultistep,
                        Some(view.id),
                        format!(
                            "an Episode event outside multistep mode (join with multistep on); \
                             the rest of the message ({} events) is dropped",
                            total - position
                        ),
                    );
                    self.diags
                        .add(DiagnosticKind::EventsDropped, (total - position) as u64);
                    break;
                }
                // An episode marker carries nothing the output needs.
                PayloadType::Episode => {}
                // A loop the caller does not want: read, counted, not joined.
                _ if !selected => self.metrics.not_selected += 1,
                // The reference joins a multistep message as one batch,
                // whatever the episode ids in it.
                _ if self.multistep() && self.opts.compat == Compat::Reference => {
                    views.push((0, view));
                }
                _ => {
                    let group = self.groups.group_of(&mut ids, view.id);
                    views.push((group, view));
                }
            }
        }
        // Groups in order of first appearance, file order inside each.
        let mut grouped: Vec<(u32, EventView<'_>)> = reuse(std::mem::take(&mut self.grouped));
        let in_order = if self.opts.caches == Caches::On && views.is_sorted_by_key(|(g, _)| *g) {
            self.in_group_order += 1;
            &views
        } else {
            // No id was grouped where all are one batch (multistep under
            // `Compat::Reference`): that is group 0.
            let groups = ids.len().max(1);
            ids::group_order(&views, groups, &mut self.starts, &mut grouped);
            &grouped
        };
        for group in in_order.chunk_by(|a, b| a.0 == b.0) {
            let Some((_, first)) = group.first() else {
                continue;
            };
            if self.multistep() {
                self.multistep_group(at, first.id, group, sink);
            } else {
                self.group(at, first.id, group, sink);
            }
        }
        self.views = reuse(views);
        self.grouped = reuse(grouped);
        self.ids = reuse(ids);
    }

    /// Whether REGULAR messages are joined as multistep episodes: when
    /// asked ([`Options::multistep`]) or, but under [`Compat::Reference`]
    /// (the reference joins nothing of such a loop without its flag), when
    /// the checkpoint in force says the loop is multistep.
    fn multistep(&self) -> bool {
        self.opts.multistep
            || (self.opts.compat != Compat::Reference
                && self.config.problem_type == Some(Problem::Multistep))
    }

    /// Whether the events of the loop in force are wanted
    /// ([`Options::only`]).
    fn selected(&self) -> bool {
        if self.opts.only.is_empty() {
            return true;
        }
        let kind = if self.multistep() {
            Some(Problem::Multistep)
        } else {
            self.config.problem_type
        };
        kind.is_some_and(|k| self.opts.only.contains(&k))
    }

    fn apply_dedup(&mut self, view: &EventView<'_>) -> Result<(), (DiagnosticKind, String)> {
        let payload = self
            .decoder
            .payload(view)
            .map_err(|e| (DiagnosticKind::InvalidPayload, e.to_string()))?;
        let Payload::Dedup(info) = payload else {
            return Err((
                DiagnosticKind::InvalidPayload,
                "DedupInfo payload expected".into(),
            ));
        };
        let (ids, values) = (info.ids(), info.values());
        let (id_count, value_count) = (ids.map_or(0, |v| v.len()), values.map_or(0, |v| v.len()));
        if id_count != value_count {
            return Err((
                DiagnosticKind::DedupMismatch,
                format!("DedupInfo has {id_count} ids but {value_count} values"),
            ));
        }
        // The cache serves only to inline actions: without that it is not
        // kept, and the info is only checked.
        if self.opts.inline_dedup {
            let ids = ids.into_iter().flat_map(|v| v.iter());
            let values = values.into_iter().flat_map(|v| v.iter());
            self.dedup.apply(ids.zip(values));
        }
        Ok(())
    }

    /// The event's time: its client time when configured and present.
    ///
    /// In line, the client time's case apart: out of line, the call cost
    /// more than reading the enqueued time, twice an outcome.
    #[inline(always)]
    fn time_of(&mut self, at: Position, view: &EventView<'_>) -> TimeStamp {
        if self.config.use_client_time {
            return self.client_time_of(at, view);
        }
        view.enqueued
    }

    /// [`Self::time_of`] where the configuration asks for the client time.
    #[inline(never)]
    fn client_time_of(&mut self, at: Position, view: &EventView<'_>) -> TimeStamp {
        if let Some(t) = view.client_time() {
            return t;
        }
        self.diag(
            at,
            DiagnosticKind::ClientTimeMissing,
            Some(view.id),
            "client time requested but absent: the enqueued time is used".into(),
        );
        view.enqueued
    }

    fn outcome(&mut self, at: Position, view: &EventView<'_>) -> Option<Outcome> {
        let mut out = Outcome::blank();
        self.outcome_into(at, view, &mut out).then_some(out)
    }

    /// Decodes an outcome into `out`, reusing its buffers; false (and a
    /// diagnostic) when it cannot be decoded.
    fn outcome_into(&mut self, at: Position, view: &EventView<'_>, out: &mut Outcome) -> bool {
        if self.spare.len() > POOL_LIMIT {
            self.spare.truncate(POOL_LIMIT);
        }
        let spare = &mut self.spare;
        let decoded = match self
            .decoder
            .with_outcome(view, |o| fill_outcome(out, o, spare))
        {
            Ok(()) => Ok(()),
            Err(err) => Err(err.to_string()),
        };
        match decoded {
            Ok(()) => {
                out.time = self.time_of(at, view);
                out.event_id.clear();
                out.event_id.push_str(view.id);
                true
            }
            Err(detail) => {
                self.diag(at, DiagnosticKind::InvalidPayload, Some(view.id), detail);
                false
            }
        }
    }

    /// Keeps the outcomes of `outcomes` past the first `keep` for reuse,
    /// their text buffers apart: every idle text buffer is then in
    /// `spare`, where the next outcome with a text finds it, and the
    /// buffers in use never outnumber the texts of the events at hand.
    #[inline(always)]
    fn park_outcomes(&mut self, outcomes: &mut Vec<Outcome>, keep: usize) {
        let texts = &mut self.spare;
        crate::pool::park(outcomes, keep, &mut self.spare_outcomes, |o| {
            set_value(&mut o.value, OutcomeValue::None, texts);
            set_index(&mut o.index, OutcomeIndex::None, texts);
        });
    }

    /// Makes `ctx` the context as written: dedup references inlined when
    /// asked, and JSON validity checked unless reproducing the reference.
    /// False (and a diagnostic) when the event must be skipped.
    #[inline(always)]
    fn context(&mut self, at: Position, id: &str, ctx: &mut Cow<'_, [u8]>) -> bool {
        // In line where there is nothing to do (the reference's mode).
        if !self.opts.inline_dedup && self.opts.compat != Compat::Sane {
            return true;
        }
        self.rewrite_and_check(at, id, ctx)
    }

    /// [`Self::context`]'s work, when there is some.
    #[inline(never)]
    fn rewrite_and_check(&mut self, at: Position, id: &str, ctx: &mut Cow<'_, [u8]>) -> bool {
        if self.opts.inline_dedup {
            let mut out = self.contexts.pop().unwrap_or_default();
            out.clear();
            let inlined = inline_actions(ctx, &self.dedup, &mut out);
            if let Cow::Owned(old) = std::mem::replace(ctx, Cow::Owned(out)) {
                keep_spare(&mut self.contexts, old);
            }
            if let Err(missing) = inlined {
                self.diag(
                    at,
                    DiagnosticKind::MissingDedupAction,
                    Some(id),
                    format!(
                        "context refers to action {missing}, which no DedupInfo provided: skipped"
                    ),
                );
                return false;
            }
        }
        if self.opts.compat == Compat::Sane {
            if let Err(err) = self.json.validate(ctx) {
                self.diag(
                    at,
                    DiagnosticKind::InvalidContext,
                    Some(id),
                    format!("context is not valid JSON ({err}): skipped"),
                );
                return false;
            }
        }
        true
    }
}

/// Where the joiner puts the events it makes.
trait Sink {
    /// Takes `ev`, a finished event; what it leaves there is recycled.
    fn take(&mut self, joiner: &mut Joiner, ev: &mut JoinedEvent<'_>);
}

/// Queued for [`Joiner::pop`]: the event must own its context.
impl Sink for VecDeque<JoinedEvent<'static>> {
    fn take(&mut self, joiner: &mut Joiner, ev: &mut JoinedEvent<'_>) {
        let blank = joiner.blank();
        let ev = std::mem::replace(ev, blank);
        self.push_back(joiner.owned(ev));
    }
}

/// Handed to a closure.
struct Each<F>(F);

impl<F: FnMut(&JoinedEvent<'_>)> Sink for Each<F> {
    #[inline(always)]
    fn take(&mut self, _: &mut Joiner, ev: &mut JoinedEvent<'_>) {
        (self.0)(ev);
    }
}

/// Keeps `buf` in `spare` for reuse, if it has room worth keeping.
fn keep_spare(spare: &mut Vec<Vec<u8>>, buf: Vec<u8>) {
    if spare.len() < POOL_LIMIT && buf.capacity() > 0 {
        spare.push(buf);
    }
}

/// Points `slot` at `ctx`, keeping a buffer it owned for reuse.
#[inline(always)]
fn borrow_context<'m>(slot: &mut Cow<'m, [u8]>, ctx: &'m [u8], spare: &mut Vec<Vec<u8>>) {
    if let Cow::Owned(buf) = std::mem::replace(slot, Cow::Borrowed(ctx)) {
        keep_spare(spare, buf);
    }
}

/// Makes `slot` an owned copy of `ctx`, in its own buffer or a spare one.
fn copy_context(slot: &mut Cow<'_, [u8]>, ctx: &[u8], spare: &mut Vec<Vec<u8>>) {
    let mut buf = match std::mem::take(slot) {
        Cow::Owned(buf) if buf.capacity() > 0 => buf,
        _ => spare.pop().unwrap_or_default(),
    };
    buf.clear();
    buf.extend_from_slice(ctx);
    *slot = Cow::Owned(buf);
}
