//! The DSJSON writer: one line per joined event, keys in the reference's
//! order, numbers in its format.

use crate::event::{Decision, JoinedEvent, Outcome, OutcomeIndex, OutcomeValue};
use crate::number::{put_i64, put_str, put_u64};
use crate::put::{Cursor, Put};
use crate::time::MinuteMemo;
use crate::{CacheCounts, Caches, Compat, Problem};

mod float_texts;
mod probability_arrays;

use float_texts::FloatTextCache;
use probability_arrays::{Found, ProbabilityArrayCache};

/// Appends the DSJSON line of `ev` to `out`, `\n` included.
///
/// For many lines, a [`Writer`] is faster: it remembers how recent floats
/// print, and formats into a buffer of its own.
pub fn write_line(ev: &JoinedEvent, compat: Compat, out: &mut Vec<u8>) {
    line(ev, compat, &mut TextCaches::default(), out);
}

/// Writes DSJSON lines, caching the text of recently printed floats
/// (probabilities and rewards repeat a lot, and printing a float the way
/// the reference does is the costliest step of a line), of whole
/// probability arrays and of the minute of the last timestamp; none with
/// [`Caches::Off`].
pub struct Writer {
    compat: Compat,
    caches: TextCaches,
    /// [`Writer::write_line`] formats here, then copies the line out whole.
    scratch: Lines,
}

impl std::fmt::Debug for Writer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Writer")
            .field("compat", &self.compat)
            .finish_non_exhaustive()
    }
}

impl Writer {
    /// A writer for `compat` output.
    pub fn new(compat: Compat) -> Self {
        Self::with_caches(compat, Caches::On)
    }

    /// [`Writer::new`]; with [`Caches::Off`] it remembers no text, and
    /// writes every line as [`write_line`] does.
    pub fn with_caches(compat: Compat, caches: Caches) -> Self {
        let caches = match caches {
            Caches::On => TextCaches {
                floats: FloatTextCache::new(),
                minute: MinuteMemo::keeping(Caches::On),
                arrays: ProbabilityArrayCache::new(),
            },
            Caches::Off => TextCaches::default(),
        };
        Self {
            compat,
            caches,
            scratch: Lines::with_capacity(4096),
        }
    }

    /// How much each of its caches served so far (none with
    /// [`Caches::Off`]).
    pub fn cache_counts(&self) -> CacheCounts {
        let c = &self.caches;
        CacheCounts {
            float_texts_held: c.floats.held(),
            probability_arrays: c.arrays.hits(),
            minute_texts_kept: c.minute.kept(),
            ..CacheCounts::default()
        }
    }

    /// Appends the line of `ev` to `out`, `\n` included.
    pub fn write_line(&mut self, ev: &JoinedEvent, out: &mut Vec<u8>) {
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        self.write_into(ev, &mut scratch);
        out.extend_from_slice(scratch.as_bytes());
        self.scratch = scratch;
    }
}

/// DSJSON lines gathered in one buffer that [`Writer::write_into`] formats
/// straight into: its bytes stay initialized from one use to the next, so
/// a line needs no copy on its way to the output.
#[derive(Debug, Default)]
pub struct Lines {
    buf: Vec<u8>,
    len: usize,
}

impl Lines {
    /// Room for about `capacity` bytes of lines before it grows.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            buf: vec![0; capacity],
            len: 0,
        }
    }

    /// The lines written since the last [`Lines::clear`].
    pub fn as_bytes(&self) -> &[u8] {
        self.buf.get(..self.len).unwrap_or_default()
    }

    /// Bytes of lines held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when no line is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forgets the lines, keeping the buffer.
    pub fn clear(&mut self) {
        self.len = 0;
    }
}

impl Writer {
    /// Appends the line of `ev` to `lines`, `\n` included, formatting it
    /// in place.
    pub fn write_into(&mut self, ev: &JoinedEvent, lines: &mut Lines) {
        loop {
            let room = lines.buf.get_mut(lines.len..).unwrap_or_default();
            let mut cursor = Cursor::new(room);
            line(ev, self.compat, &mut self.caches, &mut cursor);
            let needed = cursor.len();
            let end = lines.len + needed;
            if end <= lines.buf.len() {
                lines.len = end;
                return;
            }
            // Too long for what is left: now that its length is known,
            // again with room for it.
            let grown = end.max(lines.buf.len().saturating_mul(2)).max(4096);
            lines.buf.resize(grown, 0);
        }
    }
}

/// Text remembered from line to line: floats' texts by their bits
/// (`dsjson/float_texts.rs`), whole probability arrays
/// (`dsjson/probability_arrays.rs`), and the minute of the last timestamp.
/// The default remembers nothing: no table, no minute kept.
#[derive(Debug)]
struct TextCaches {
    floats: FloatTextCache,
    minute: MinuteMemo,
    arrays: ProbabilityArrayCache,
}

impl Default for TextCaches {
    fn default() -> Self {
        Self {
            floats: FloatTextCache::default(),
            minute: MinuteMemo::keeping(Caches::Off),
            arrays: ProbabilityArrayCache::default(),
        }
    }
}

impl TextCaches {
    #[inline(always)]
    fn push<P: Put>(&mut self, out: &mut P, v: f32) {
        self.floats.push(out, v);
    }

    /// `[..]` of `values`, the whole array's text from the table of arrays
    /// when it holds it.
    fn floats<P: Put>(&mut self, out: &mut P, values: &[f32]) {
        let TextCaches { floats, arrays, .. } = self;
        match arrays.put(out, values) {
            Found::Written => {}
            Found::Skipped => floats.floats(out, values),
            Found::Missing(at) => {
                if !arrays.keep(out, at, values, |c| floats.floats(c, values)) {
                    floats.floats(out, values);
                }
            }
        }
    }
}

fn line<P: Put>(ev: &JoinedEvent, compat: Compat, fl: &mut TextCaches, out: &mut P) {
    match (&ev.kind, &ev.decision) {
        (
            Problem::Cb | Problem::Multistep,
            Decision::Cb {
                actions,
                probabilities,
            },
        ) => write_cb(ev, actions, probabilities, compat, fl, out),
        (Problem::Ccb, Decision::MultiSlot { .. }) => write_ccb(ev, compat, fl, out),
        (Problem::Slates, Decision::MultiSlot { .. }) => write_slates(ev, compat, fl, out),
        (Problem::Ca, Decision::Ca { action, pdf_value }) => {
            write_ca(ev, *action, *pdf_value, compat, fl, out)
        }
        // The joiner never builds other pairs.
        _ => return,
    }
    out.byte(b'\n');
}

/// Appends `"name":` and what comes before it (`,` or `{`) in one copy of
/// known size.
macro_rules! key {
    ($out:expr, $before:literal, $name:literal) => {
        $out.put(concat!($before, "\"", $name, "\":").as_bytes())
    };
}

fn context<P: Put>(out: &mut P, ctx: &[u8]) {
    key!(out, "", "c");
    // A raw newline would split the line; the reference writes a space.
    if memchr::memchr(b'\n', ctx).is_some() {
        for &b in ctx {
            out.byte(if b == b'\n' { b' ' } else { b });
        }
    } else {
        out.put(ctx);
    }
}

/// `"EventId":"..",` — CCB and Slates leave it out when empty.
fn event_id_if_any<P: Put>(out: &mut P, id: &str) {
    if !id.is_empty() {
        key!(out, "", "EventId");
        put_str(out, id);
        out.byte(b',');
    }
}

/// `"_a":[..],"_p":[..]` of one slot.
fn slot_actions<P: Put>(fl: &mut TextCaches, out: &mut P, slot: &crate::event::SlotDecision) {
    key!(out, "", "_a");
    uints(out, slot.actions.iter().map(|a| u64::from(*a)));
    key!(out, ",", "_p");
    floats(fl, out, &slot.probabilities);
}

fn uints<P: Put>(out: &mut P, values: impl Iterator<Item = u64>) {
    out.byte(b'[');
    for (i, v) in values.enumerate() {
        if i > 0 {
            out.byte(b',');
        }
        put_u64(out, v);
    }
    out.byte(b']');
}

fn floats<P: Put>(fl: &mut TextCaches, out: &mut P, values: &[f32]) {
    fl.floats(out, values);
}

/// An outcome's value. A literal value is its text by default; the
/// reference writes its numeric value, 0.0, instead (SEMANTICS.md §3).
fn value<P: Put>(fl: &mut TextCaches, out: &mut P, v: &OutcomeValue, compat: Compat) {
    match v {
        OutcomeValue::Numeric(x) => fl.push(out, *x),
        OutcomeValue::None => fl.push(out, 0.0),
        OutcomeValue::Literal(_) if compat == Compat::Reference => fl.push(out, 0.0),
        OutcomeValue::Literal(s) => put_str(out, s),
    }
}

/// `{"v":..,"EventId":..,["Index":..,]"ActionTaken":..}`
fn outcome<P: Put>(
    fl: &mut TextCaches,
    out: &mut P,
    o: &Outcome,
    with_index: bool,
    compat: Compat,
) {
    if o.action_taken {
        key!(out, "{", "EventId");
    } else {
        key!(out, "{", "v");
        value(fl, out, &o.value, compat);
        key!(out, ",", "EventId");
    }
    put_str(out, &o.event_id);
    if with_index {
        key!(out, ",", "Index");
        match &o.index {
            OutcomeIndex::Literal(s) => put_str(out, s),
            OutcomeIndex::Numeric(i) => {
                out.byte(b'"');
                put_i64(out, i64::from(*i));
                out.byte(b'"');
            }
            OutcomeIndex::None => put_str(out, "-1"),
        }
    }
    if o.action_taken {
        out.put(b",\"ActionTaken\":true}");
    } else {
        out.put(b",\"ActionTaken\":false}");
    }
}

fn outcomes<'a, P: Put>(
    fl: &mut TextCaches,
    out: &mut P,
    list: impl Iterator<Item = &'a Outcome>,
    with_index: bool,
    compat: Compat,
) {
    out.byte(b'[');
    for (i, o) in list.enumerate() {
        if i > 0 {
            out.byte(b',');
        }
        outcome(fl, out, o, with_index, compat);
    }
    out.byte(b']');
}

fn vw_state<P: Put>(out: &mut P, model: &str) {
    out.put(b"\"VWState\":{\"m\":");
    put_str(out, model);
    out.byte(b'}');
}

fn pdrop<P: Put>(fl: &mut TextCaches, out: &mut P, ev: &JoinedEvent) {
    let p = ev.pdrop();
    if p != 0.0 {
        key!(out, ",", "pdrop");
        fl.push(out, p);
    }
}

fn write_cb<P: Put>(
    ev: &JoinedEvent,
    actions: &[u64],
    probs: &[f32],
    compat: Compat,
    fl: &mut TextCaches,
    out: &mut P,
) {
    let first = actions.first().copied().unwrap_or(0);
    key!(out, "{", "_label_cost");
    fl.push(out, -ev.reward);
    key!(out, ",", "_label_probability");
    fl.push(out, probs.first().map_or(0.0, |p| p * ev.pass_probability));
    key!(out, ",", "_label_Action");
    put_u64(out, first);
    key!(out, ",", "_labelIndex");
    put_u64(out, first.wrapping_sub(1));
    if ev.skip_learn {
        out.put(b",\"_skipLearn\":true,\"o\":");
    } else {
        key!(out, ",", "o");
    }
    outcomes(fl, out, ev.outcomes.iter(), false, compat);
    key!(out, ",", "Timestamp");
    fl.minute.put(out, &ev.time, compat);
    out.put(b",\"Version\":\"1\",\"EventId\":");
    put_str(out, &ev.event_id);
    key!(out, ",", "a");
    uints(out, actions.iter().copied());
    out.byte(b',');
    context(out, &ev.context);
    key!(out, ",", "p");
    floats(fl, out, probs);
    out.byte(b',');
    vw_state(out, &ev.model_id);
    pdrop(fl, out, ev);
    key!(out, ",", "_original_label_cost");
    fl.push(out, -ev.original_reward);
    out.byte(b'}');
}

fn write_ccb<P: Put>(ev: &JoinedEvent, compat: Compat, fl: &mut TextCaches, out: &mut P) {
    let Decision::MultiSlot { slots, baseline } = &ev.decision else {
        return;
    };
    key!(out, "{", "Timestamp");
    fl.minute.put(out, &ev.time, compat);
    out.byte(b',');
    if ev.skip_learn {
        key!(out, "", "_skipLearn");
        out.put(b"true,");
    }
    out.put(b"\"Version\":\"1\",");
    event_id_if_any(out, &ev.event_id);
    context(out, &ev.context);
    key!(out, ",", "_outcomes");
    out.byte(b'[');
    for (i, slot) in slots.iter().enumerate() {
        if i > 0 {
            out.byte(b',');
        }
        key!(out, "{", "_label_cost");
        fl.push(out, -slot.reward);
        key!(out, ",", "_id");
        put_str(out, slot.id.as_deref().unwrap_or(&ev.event_id));
        out.byte(b',');
        slot_actions(fl, out, slot);
        out.byte(b',');
        if !slot.outcomes.is_empty() {
            key!(out, "", "_o");
            outcomes(
                fl,
                out,
                slot.outcomes.iter().filter_map(|&k| ev.outcomes.get(k)),
                true,
                compat,
            );
            out.byte(b',');
        }
        key!(out, "", "_original_label_cost");
        fl.push(out, -slot.original_reward);
        out.byte(b'}');
    }
    out.put(b"],");
    if !baseline.is_empty() {
        key!(out, "", "_ba");
        out.byte(b'[');
        for (i, b) in baseline.iter().enumerate() {
            if i > 0 {
                out.byte(b',');
            }
            put_i64(out, i64::from(*b));
        }
        out.put(b"],");
    }
    vw_state(out, &ev.model_id);
    pdrop(fl, out, ev);
    out.byte(b'}');
}

fn write_slates<P: Put>(ev: &JoinedEvent, compat: Compat, fl: &mut TextCaches, out: &mut P) {
    let Decision::MultiSlot { slots, .. } = &ev.decision else {
        return;
    };
    key!(out, "{", "Timestamp");
    fl.minute.put(out, &ev.time, compat);
    out.put(b",\"Version\":\"1\",");
    event_id_if_any(out, &ev.event_id);
    key!(out, "", "_label_cost");
    fl.push(out, -ev.reward);
    key!(out, ",", "o");
    outcomes(fl, out, ev.outcomes.iter(), false, compat);
    key!(out, ",", "_outcomes");
    out.byte(b'[');
    for (i, slot) in slots.iter().enumerate() {
        if i > 0 {
            out.byte(b',');
        }
        out.byte(b'{');
        slot_actions(fl, out, slot);
        out.byte(b'}');
    }
    out.put(b"],");
    context_to_end(fl, out, ev);
}

/// `"c":..,"VWState":..[,"pdrop":..][,"_skipLearn":true]}`: how Slates and
/// CA lines end.
fn context_to_end<P: Put>(fl: &mut TextCaches, out: &mut P, ev: &JoinedEvent) {
    context(out, &ev.context);
    out.byte(b',');
    vw_state(out, &ev.model_id);
    pdrop(fl, out, ev);
    if ev.skip_learn {
        out.put(b",\"_skipLearn\":true");
    }
    out.byte(b'}');
}

fn write_ca<P: Put>(
    ev: &JoinedEvent,
    action: f32,
    pdf: f32,
    compat: Compat,
    fl: &mut TextCaches,
    out: &mut P,
) {
    out.put(b"{\"_label_ca\":{\"cost\":");
    fl.push(out, -ev.reward);
    out.put(b",\"pdf_value\":");
    fl.push(out, pdf);
    out.put(b",\"action\":");
    fl.push(out, action);
    out.put(b"},");
    key!(out, "", "Timestamp");
    fl.minute.put(out, &ev.time, compat);
    out.put(b",\"Version\":\"1\",");
    key!(out, "", "EventId");
    put_str(out, &ev.event_id);
    out.byte(b',');
    context_to_end(fl, out, ev);
}

/// Lines gathered before a batch goes out on one thread: at least an
/// output buffer's worth, so that they pass through it without a copy.
const CHUNK: usize = 1 << 20;

/// The DSJSON [`Sink`](crate::Sink): lines formatted where events are
/// made, written to `W` in log order.
#[derive(Debug)]
pub struct LinesSink<W> {
    out: W,
    compat: Compat,
    written: u64,
    /// One thread's maker, with the speed caches it was made with, and
    /// its batch, kept from one input to the next.
    spare_maker: Option<(Caches, LinesMaker)>,
    spare_batch: Option<Lines>,
    /// The speed caches of the one-thread maker in use.
    serial_caches: Caches,
}

impl<W: std::io::Write> LinesSink<W> {
    /// Lines in `compat` style to `out`.
    pub fn new(out: W, compat: Compat) -> Self {
        Self {
            out,
            compat,
            written: 0,
            spare_maker: None,
            spare_batch: None,
            serial_caches: Caches::On,
        }
    }

    /// Bytes written so far.
    pub fn bytes_written(&self) -> u64 {
        self.written
    }

    /// The output, flushed by the caller.
    pub fn into_inner(self) -> W {
        self.out
    }

    /// The output.
    pub fn get_mut(&mut self) -> &mut W {
        &mut self.out
    }
}

/// Formats lines for a [`LinesSink`], one per thread.
#[derive(Debug)]
pub struct LinesMaker(Writer);

impl crate::Maker for LinesMaker {
    type Batch = Lines;

    fn batch(&mut self) -> Lines {
        Lines::with_capacity(CHUNK + (64 << 10))
    }

    fn add(&mut self, batch: &mut Lines, ev: &JoinedEvent<'_>) {
        self.0.write_into(ev, batch);
    }

    fn full(&self, batch: &Lines) -> bool {
        batch.len() >= CHUNK
    }

    fn clear(&mut self, batch: &mut Lines) {
        batch.clear();
    }
}

impl<W: std::io::Write> crate::Sink for LinesSink<W> {
    type Batch = Lines;
    type Maker = LinesMaker;

    fn maker(&self) -> LinesMaker {
        self.maker_with(Caches::On)
    }

    fn maker_with(&self, caches: Caches) -> LinesMaker {
        LinesMaker(Writer::with_caches(self.compat, caches))
    }

    fn serial_maker(&mut self, caches: Caches) -> LinesMaker {
        self.serial_caches = caches;
        match self.spare_maker.take() {
            Some((kept, maker)) if kept == caches => maker,
            _ => self.maker_with(caches),
        }
    }

    fn first_batch(&mut self, maker: &mut LinesMaker) -> Lines {
        match self.spare_batch.take() {
            Some(mut batch) => {
                batch.clear();
                batch
            }
            None => crate::Maker::batch(maker),
        }
    }

    fn recycle(&mut self, maker: LinesMaker, batch: Lines) {
        self.spare_maker = Some((self.serial_caches, maker));
        self.spare_batch = Some(batch);
    }

    fn batches_may_join(&self) -> bool {
        // Lines are written one after the other, wherever batches end.
        true
    }

    fn work_is_light(&self) -> bool {
        true
    }

    fn take(&mut self, batch: &mut Lines) -> Result<(), crate::Error> {
        self.out
            .write_all(batch.as_bytes())
            .map_err(|source| crate::Error::Write {
                written: self.written,
                source,
            })?;
        self.written += batch.len() as u64;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A CB event whose context holds `len` bytes of text.
    fn event(len: usize) -> JoinedEvent<'static> {
        let mut ev = JoinedEvent::blank();
        ev.event_id = "e\"1".into();
        ev.model_id = "m".into();
        ev.context = format!("{{\"x\":\"{}\"}}", "a".repeat(len))
            .into_bytes()
            .into();
        ev.decision = Decision::Cb {
            actions: vec![2, 1],
            probabilities: vec![0.75, 0.25],
        };
        let mut o = Outcome::blank();
        o.event_id = "e\"1".into();
        o.value = OutcomeValue::Literal("click".into());
        ev.outcomes.push(o);
        ev.reward = 1.5;
        ev.skip_learn = len % 2 == 1;
        ev
    }

    #[test]
    fn lines_written_in_place_equal_lines_written_out() {
        let mut writer = Writer::new(Compat::Sane);
        let mut lines = Lines::with_capacity(1000);
        let mut expected = Vec::new();
        for len in [0, 1, 100, 700, 3000, 10, 100_000, 5, 0] {
            let ev = event(len);
            write_line(&ev, Compat::Sane, &mut expected);
            writer.write_into(&ev, &mut lines);
            assert_eq!(
                lines.as_bytes(),
                &expected[..],
                "after a context of {len} bytes"
            );
        }
        assert_eq!(lines.len(), expected.len());
        lines.clear();
        assert!(lines.is_empty() && lines.as_bytes().is_empty());
        writer.write_into(&event(3), &mut lines);
        assert!(lines.as_bytes().starts_with(b"{\"_label_cost\":-1.5,"));
        assert_eq!(Lines::default().as_bytes(), b"");
    }

    #[test]
    fn lines_longer_than_the_scratch_buffer_are_written_whole() {
        let mut writer = Writer::new(Compat::Sane);
        for len in [0, 1, 100, 3900, 4095, 4096, 4097, 9000, 100_000, 10] {
            let ev = event(len);
            let mut expected = Vec::new();
            write_line(&ev, Compat::Sane, &mut expected);
            let mut out = b"before".to_vec();
            writer.write_line(&ev, &mut out);
            assert_eq!(out[6..], expected[..], "context of {len} bytes");
            assert!(out.starts_with(b"before{\"_label_cost\":-1.5,"));
            assert!(out.ends_with(b"}\n"));
            let at = out.windows(5).position(|w| w == b"\"c\":{").unwrap() + 4;
            assert_eq!(out[at..at + ev.context.len()], ev.context[..]);
        }
    }
}
