//! The DSJSON writer: one line per joined event, keys in the reference's
//! order, numbers in its format.

use crate::event::{Decision, EventKind, Index, JoinedEvent, Outcome, Value};
use crate::number::{push_f64, push_i64, push_str, push_u64};
use crate::time::push_timestamp;
use crate::Compat;

/// Appends the DSJSON line of `ev` to `out`, `\n` included.
///
/// For many lines, a [`Writer`] is faster: it remembers how recent floats
/// print.
pub fn write_line(ev: &JoinedEvent, compat: Compat, out: &mut Vec<u8>) {
    line(ev, compat, &mut Floats::default(), out);
}

/// Writes DSJSON lines, caching the text of recently printed floats
/// (probabilities and rewards repeat a lot, and printing a float the way
/// the reference does is the costliest step of a line).
#[derive(Debug)]
pub struct Writer {
    compat: Compat,
    floats: Floats,
}

impl Writer {
    /// A writer for `compat` output.
    pub fn new(compat: Compat) -> Self {
        Self {
            compat,
            floats: Floats {
                cache: vec![Slot::default(); CACHE_SLOTS].into_boxed_slice(),
            },
        }
    }

    /// Appends the line of `ev` to `out`, `\n` included.
    pub fn write_line(&mut self, ev: &JoinedEvent, out: &mut Vec<u8>) {
        line(ev, self.compat, &mut self.floats, out);
    }
}

const CACHE_SLOTS: usize = 512;

#[derive(Debug, Clone, Copy, Default)]
struct Slot {
    bits: u32,
    len: u8,
    text: [u8; 27],
}

/// Float printing with an optional direct-mapped cache keyed by the bits.
#[derive(Debug, Default)]
struct Floats {
    cache: Box<[Slot]>,
}

impl Floats {
    fn push(&mut self, out: &mut Vec<u8>, v: f32) {
        let bits = v.to_bits();
        let index = (bits.wrapping_mul(0x9E37_79B9) >> 23) as usize % CACHE_SLOTS.max(1);
        if let Some(slot) = self.cache.get_mut(index) {
            if slot.len > 0 && slot.bits == bits {
                out.extend_from_slice(slot.text.get(..usize::from(slot.len)).unwrap_or_default());
                return;
            }
            let start = out.len();
            push_f64(out, f64::from(v));
            let text = out.get(start..).unwrap_or_default();
            if let Some(room) = slot.text.get_mut(..text.len()) {
                room.copy_from_slice(text);
                slot.len = text.len() as u8;
                slot.bits = bits;
            }
            return;
        }
        push_f64(out, f64::from(v));
    }
}

fn line(ev: &JoinedEvent, compat: Compat, fl: &mut Floats, out: &mut Vec<u8>) {
    match (&ev.kind, &ev.decision) {
        (
            EventKind::Cb | EventKind::MultiStep,
            Decision::Cb {
                actions,
                probabilities,
            },
        ) => write_cb(ev, actions, probabilities, compat, fl, out),
        (EventKind::Ccb, Decision::MultiSlot { .. }) => write_ccb(ev, compat, fl, out),
        (EventKind::Slates, Decision::MultiSlot { .. }) => write_slates(ev, compat, fl, out),
        (EventKind::Ca, Decision::Ca { action, pdf_value }) => {
            write_ca(ev, *action, *pdf_value, compat, fl, out)
        }
        // The joiner never builds other pairs.
        _ => return,
    }
    out.push(b'\n');
}

fn key(out: &mut Vec<u8>, k: &str) {
    out.push(b'"');
    out.extend_from_slice(k.as_bytes());
    out.extend_from_slice(b"\":");
}

fn context(out: &mut Vec<u8>, ctx: &[u8]) {
    key(out, "c");
    // A raw newline would split the line; the reference writes a space.
    if memchr::memchr(b'\n', ctx).is_some() {
        out.extend(ctx.iter().map(|&b| if b == b'\n' { b' ' } else { b }));
    } else {
        out.extend_from_slice(ctx);
    }
}

/// `"EventId":"..",` — CCB and Slates leave it out when empty.
fn event_id_if_any(out: &mut Vec<u8>, id: &str) {
    if !id.is_empty() {
        key(out, "EventId");
        push_str(out, id);
        out.push(b',');
    }
}

/// `"_a":[..],"_p":[..]` of one slot.
fn slot_actions(fl: &mut Floats, out: &mut Vec<u8>, slot: &crate::event::Slot) {
    key(out, "_a");
    uints(out, slot.actions.iter().map(|a| u64::from(*a)));
    out.push(b',');
    key(out, "_p");
    floats(fl, out, &slot.probabilities);
}

fn uints(out: &mut Vec<u8>, values: impl Iterator<Item = u64>) {
    out.push(b'[');
    for (i, v) in values.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        push_u64(out, v);
    }
    out.push(b']');
}

fn floats(fl: &mut Floats, out: &mut Vec<u8>, values: &[f32]) {
    out.push(b'[');
    for (i, v) in values.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        fl.push(out, *v);
    }
    out.push(b']');
}

fn value(fl: &mut Floats, out: &mut Vec<u8>, v: &Value) {
    match v {
        Value::Numeric(x) => fl.push(out, *x),
        Value::None => fl.push(out, 0.0),
        Value::Literal(s) => push_str(out, s),
    }
}

/// `{"v":..,"EventId":..,["Index":..,]"ActionTaken":..}`
fn outcome(fl: &mut Floats, out: &mut Vec<u8>, o: &Outcome, with_index: bool) {
    out.push(b'{');
    if !o.action_taken {
        key(out, "v");
        value(fl, out, &o.value);
        out.push(b',');
    }
    key(out, "EventId");
    push_str(out, &o.event_id);
    if with_index {
        out.push(b',');
        key(out, "Index");
        match &o.index {
            Index::Literal(s) => push_str(out, s),
            Index::Numeric(i) => {
                out.push(b'"');
                push_i64(out, i64::from(*i));
                out.push(b'"');
            }
            Index::None => push_str(out, "-1"),
        }
    }
    out.push(b',');
    key(out, "ActionTaken");
    out.extend_from_slice(if o.action_taken { b"true" } else { b"false" });
    out.push(b'}');
}

fn outcomes<'a>(
    fl: &mut Floats,
    out: &mut Vec<u8>,
    list: impl Iterator<Item = &'a Outcome>,
    with_index: bool,
) {
    out.push(b'[');
    for (i, o) in list.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        outcome(fl, out, o, with_index);
    }
    out.push(b']');
}

fn vw_state(out: &mut Vec<u8>, model: &str) {
    key(out, "VWState");
    out.extend_from_slice(b"{\"m\":");
    push_str(out, model);
    out.push(b'}');
}

fn pdrop(fl: &mut Floats, out: &mut Vec<u8>, ev: &JoinedEvent) {
    let p = ev.pdrop();
    if p != 0.0 {
        out.push(b',');
        key(out, "pdrop");
        fl.push(out, p);
    }
}

fn write_cb(
    ev: &JoinedEvent,
    actions: &[u64],
    probs: &[f32],
    compat: Compat,
    fl: &mut Floats,
    out: &mut Vec<u8>,
) {
    let first = actions.first().copied().unwrap_or(0);
    out.push(b'{');
    key(out, "_label_cost");
    fl.push(out, -ev.reward);
    out.push(b',');
    key(out, "_label_probability");
    fl.push(out, probs.first().map_or(0.0, |p| p * ev.pass_probability));
    out.push(b',');
    key(out, "_label_Action");
    push_u64(out, first);
    out.push(b',');
    key(out, "_labelIndex");
    push_u64(out, first.wrapping_sub(1));
    out.push(b',');
    if ev.skip_learn {
        key(out, "_skipLearn");
        out.extend_from_slice(b"true,");
    }
    key(out, "o");
    outcomes(fl, out, ev.outcomes.iter(), false);
    out.push(b',');
    key(out, "Timestamp");
    push_timestamp(out, &ev.time, compat);
    out.extend_from_slice(b",\"Version\":\"1\",");
    key(out, "EventId");
    push_str(out, &ev.event_id);
    out.push(b',');
    key(out, "a");
    uints(out, actions.iter().copied());
    out.push(b',');
    context(out, &ev.context);
    out.push(b',');
    key(out, "p");
    floats(fl, out, probs);
    out.push(b',');
    vw_state(out, &ev.model_id);
    pdrop(fl, out, ev);
    out.push(b',');
    key(out, "_original_label_cost");
    fl.push(out, -ev.original_reward);
    out.push(b'}');
}

fn write_ccb(ev: &JoinedEvent, compat: Compat, fl: &mut Floats, out: &mut Vec<u8>) {
    let Decision::MultiSlot { slots, baseline } = &ev.decision else {
        return;
    };
    out.push(b'{');
    key(out, "Timestamp");
    push_timestamp(out, &ev.time, compat);
    out.push(b',');
    if ev.skip_learn {
        key(out, "_skipLearn");
        out.extend_from_slice(b"true,");
    }
    out.extend_from_slice(b"\"Version\":\"1\",");
    event_id_if_any(out, &ev.event_id);
    context(out, &ev.context);
    out.push(b',');
    key(out, "_outcomes");
    out.push(b'[');
    for (i, slot) in slots.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        key(out, "_label_cost");
        fl.push(out, -slot.reward);
        out.push(b',');
        key(out, "_id");
        push_str(out, slot.id.as_deref().unwrap_or(&ev.event_id));
        out.push(b',');
        slot_actions(fl, out, slot);
        out.push(b',');
        if !slot.outcomes.is_empty() {
            key(out, "_o");
            outcomes(
                fl,
                out,
                slot.outcomes.iter().filter_map(|&k| ev.outcomes.get(k)),
                true,
            );
            out.push(b',');
        }
        key(out, "_original_label_cost");
        fl.push(out, -slot.original_reward);
        out.push(b'}');
    }
    out.extend_from_slice(b"],");
    if !baseline.is_empty() {
        key(out, "_ba");
        out.push(b'[');
        for (i, b) in baseline.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            push_i64(out, i64::from(*b));
        }
        out.extend_from_slice(b"],");
    }
    vw_state(out, &ev.model_id);
    pdrop(fl, out, ev);
    out.push(b'}');
}

fn write_slates(ev: &JoinedEvent, compat: Compat, fl: &mut Floats, out: &mut Vec<u8>) {
    let Decision::MultiSlot { slots, .. } = &ev.decision else {
        return;
    };
    out.push(b'{');
    key(out, "Timestamp");
    push_timestamp(out, &ev.time, compat);
    out.extend_from_slice(b",\"Version\":\"1\",");
    event_id_if_any(out, &ev.event_id);
    key(out, "_label_cost");
    fl.push(out, -ev.reward);
    out.push(b',');
    key(out, "o");
    outcomes(fl, out, ev.outcomes.iter(), false);
    out.push(b',');
    key(out, "_outcomes");
    out.push(b'[');
    for (i, slot) in slots.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'{');
        slot_actions(fl, out, slot);
        out.push(b'}');
    }
    out.extend_from_slice(b"],");
    context(out, &ev.context);
    out.push(b',');
    vw_state(out, &ev.model_id);
    pdrop(fl, out, ev);
    if ev.skip_learn {
        out.extend_from_slice(b",\"_skipLearn\":true");
    }
    out.push(b'}');
}

fn write_ca(
    ev: &JoinedEvent,
    action: f32,
    pdf: f32,
    compat: Compat,
    fl: &mut Floats,
    out: &mut Vec<u8>,
) {
    out.extend_from_slice(b"{\"_label_ca\":{\"cost\":");
    fl.push(out, -ev.reward);
    out.extend_from_slice(b",\"pdf_value\":");
    fl.push(out, pdf);
    out.extend_from_slice(b",\"action\":");
    fl.push(out, action);
    out.extend_from_slice(b"},");
    key(out, "Timestamp");
    push_timestamp(out, &ev.time, compat);
    out.extend_from_slice(b",\"Version\":\"1\",");
    key(out, "EventId");
    push_str(out, &ev.event_id);
    out.push(b',');
    context(out, &ev.context);
    out.push(b',');
    vw_state(out, &ev.model_id);
    pdrop(fl, out, ev);
    if ev.skip_learn {
        out.extend_from_slice(b",\"_skipLearn\":true");
    }
    out.push(b'}');
}
