//! An outcome refilled in place from the parts the decoder read: its text
//! buffers (a literal value or index) reused, or left for the next outcome
//! that has a text.

use fb_schema::{IndexValue, OutcomeParts, OutcomeValue as WireValue};

use crate::event::{Outcome, OutcomeIndex, OutcomeValue};

/// Copies value, index and activation of `o` into `out`, reusing text
/// buffers: the ones `out` has, else spares from `spare`, where a text
/// replaced by a number leaves its buffer.
///
/// Written case by case, so that a number replacing a number (nearly every
/// outcome) is a test and a store: moving each field out and back through
/// `mem::replace` cost 69 instructions an outcome.
#[inline(always)]
pub(super) fn fill_outcome(out: &mut Outcome, o: &OutcomeParts<'_>, spare: &mut Vec<String>) {
    match o.value {
        WireValue::Literal(s) => match &mut out.value {
            OutcomeValue::Literal(buf) => refill(buf, s),
            slot => *slot = OutcomeValue::Literal(spare_text(spare, s)),
        },
        WireValue::Numeric(v) => set_value(&mut out.value, OutcomeValue::Numeric(v), spare),
        WireValue::None | WireValue::Unknown(_) => {
            set_value(&mut out.value, OutcomeValue::None, spare)
        }
    }
    match o.index {
        IndexValue::Literal(s) => match &mut out.index {
            OutcomeIndex::Literal(buf) => refill(buf, s),
            slot => *slot = OutcomeIndex::Literal(spare_text(spare, s)),
        },
        IndexValue::Numeric(i) => set_index(&mut out.index, OutcomeIndex::Numeric(i), spare),
        IndexValue::None | IndexValue::Unknown(_) => {
            set_index(&mut out.index, OutcomeIndex::None, spare)
        }
    }
    out.action_taken = o.action_taken;
}

/// `buf` holding `s` instead.
#[inline(always)]
fn refill(buf: &mut String, s: &str) {
    buf.clear();
    buf.push_str(s);
}

/// A buffer holding `s`: a spare one, or a new one that holds any id of
/// up to 64 bytes (a buffer made for a short index, "slot-0", and handed
/// later to an event id would grow again, long after the warm-up).
fn spare_text(spare: &mut Vec<String>, s: &str) -> String {
    let mut buf = spare.pop().unwrap_or_else(|| String::with_capacity(64));
    refill(&mut buf, s);
    buf
}

/// `slot` set to `value`, which holds no text; a text it held is spare.
#[inline(always)]
pub(super) fn set_value(slot: &mut OutcomeValue, value: OutcomeValue, spare: &mut Vec<String>) {
    if let OutcomeValue::Literal(buf) = std::mem::replace(slot, value) {
        spare.push(buf);
    }
}

/// [`set_value`] for an index.
#[inline(always)]
pub(super) fn set_index(slot: &mut OutcomeIndex, index: OutcomeIndex, spare: &mut Vec<String>) {
    if let OutcomeIndex::Literal(buf) = std::mem::replace(slot, index) {
        spare.push(buf);
    }
}
