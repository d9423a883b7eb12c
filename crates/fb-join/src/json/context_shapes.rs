//! The shapes of the last texts checked in full: their bytes, with the
//! values that change from one context to the next cut out.
//!
//! A loop's contexts are written by one program from one kind of record:
//! the same keys in the same order, around values that differ (a user's
//! id, an age, the actions offered). The bytes between those values (the
//! keys, brackets, commas and colons) repeat, and a text made of the same
//! bytes around other values is as valid as the first: replacing one JSON
//! value by another valid one leaves a valid text, and the bytes around
//! each value pass through the grammar exactly as they did in the text the
//! shape was learned from. So a text that has the shape is checked by
//! comparing its fixed bytes, a few at a time, and checking its values
//! alone.
//!
//! What the shape keeps as its values: strings that are not member names,
//! numbers, literals, and whole arrays (their length varies, and arrays of
//! objects are looked up whole in the validator's table). Objects are
//! kept open: their names and brackets are fixed bytes.

use super::element_memo::JsonElementMemo;
use super::scan::remembered;
use super::scan::{any_value, number, string, Failure};
use crate::caches::MemoRate;

/// Longest text a shape is learned from: as `last_valid_text.rs`'s.
const LIMIT: usize = 4096;

/// One part of a shape, in order: up to sixteen fixed bytes, then what
/// follows them.
#[derive(Clone, Copy, Debug)]
pub(super) struct Part {
    /// The fixed bytes, then zeros.
    pub(super) bytes: [u8; 16],
    /// Bit `i` set for each fixed byte `i`: those that must be equal.
    pub(super) want: u32,
    /// How many bytes are fixed.
    pub(super) len: u8,
    pub(super) then: Then,
}

/// What follows a part's fixed bytes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Then {
    /// More fixed bytes, or the end of the text.
    Nothing,
    /// A string value.
    Str,
    /// A number.
    Num,
    /// Any value inside `depth` open containers (an array, a literal).
    Value(u32),
}

/// The shapes of the last two texts checked in full that had none known
/// (a loop may write two kinds of context, or a member only now and then),
/// the one that fitted last first; and how often texts have one.
#[derive(Clone, Default)]
pub(super) struct ContextShapes {
    /// Each empty until a shape is learned.
    pub(super) known: [Vec<Part>; 2],
    /// Texts compared with the shapes, and those that had one. Resting,
    /// neither a comparison nor a lesson is made.
    pub(super) rate: MemoRate,
}

impl ContextShapes {
    /// Shapes that never rest (for tests: every text is compared).
    #[cfg(test)]
    pub(super) fn fixed() -> Self {
        Self {
            rate: MemoRate::fixed(),
            ..Self::default()
        }
    }

    /// Shapes never compared nor learned (for tests of the other memos).
    #[cfg(test)]
    pub(super) fn off() -> Self {
        Self {
            rate: MemoRate::off(),
            ..Self::default()
        }
    }

    /// Learns the shape of `text`, a valid JSON text, in place of the
    /// older one known, and puts it first; nothing while resting. Its
    /// arrays are stepped over with `elements`, where the check of `text` has
    /// just put them.
    pub(super) fn learn(&mut self, text: &[u8], elements: Option<&mut JsonElementMemo>) {
        if self.rate.is_resting() {
            return;
        }
        self.known.swap(0, 1);
        let [parts, _] = &mut self.known;
        parts.clear();
        // The lesson's lookups are not the check's: the table's rate is
        // left as the check left it.
        let rate = elements.as_ref().map(|elements| elements.rate);
        let mut error = Failure {
            left: 0,
            what: "",
            elements,
        };
        if text.len() > LIMIT || learn(text, parts, &mut error).is_none() {
            parts.clear();
        }
        if let (Some(elements), Some(rate)) = (error.elements, rate) {
            elements.rate = rate;
        }
    }

    /// Whether `text` has a shape known, and valid values where the text
    /// it was learned from had its own: then it is valid. Its arrays are
    /// looked up in `elements`. The shape it has is put first.
    #[inline(always)]
    pub(super) fn fit(&mut self, text: &[u8], elements: &mut JsonElementMemo) -> bool {
        if self.rate.rests() {
            return false;
        }
        if self.known[0].is_empty() {
            return false;
        }
        let mut fitted = None;
        for (k, parts) in self.known.iter().enumerate() {
            if parts.is_empty() {
                // No shape fits the empty text, which is not JSON.
                break;
            }
            let mut error = Failure {
                left: 0,
                what: "",
                elements: Some(&mut *elements),
            };
            if fits(parts, text, &mut error) {
                fitted = Some(k);
                break;
            }
            if !error.what.is_empty() {
                // A value is not valid: so is the text, whatever its shape.
                break;
            }
        }
        // What a text was worth, against its plain check: fitting the
        // first shape saves about a third of it; fitting the second, after
        // failing the first, about nothing; fitting neither costs the
        // failed comparisons and the lesson, about five times that third.
        let worth = match fitted {
            Some(0) => 1,
            Some(_) => -1,
            None => -5,
        };
        self.rate.tally(fitted.is_some(), worth);
        if fitted == Some(1) {
            self.known.swap(0, 1);
        }
        fitted.is_some()
    }
}

/// Whether `text` is made of the fixed bytes of the shape of `parts`
/// around valid values. A value that is not valid ends the comparison
/// (noted in `error`; the text is then checked in full, which says where
/// it fails).
#[inline(always)]
fn fits(parts: &[Part], text: &[u8], error: &mut Failure) -> bool {
    let mut rest = text;
    for part in parts {
        let len = usize::from(part.len);
        let same = match rest.first_chunk::<16>() {
            Some(chunk) => crate::simd::equal16(chunk, &part.bytes) & part.want == part.want,
            None => rest.get(..len) == part.bytes.get(..len),
        };
        if !same {
            return false;
        }
        rest = rest.get(len..).unwrap_or_default();
        rest = match part.then {
            Then::Nothing => rest,
            Then::Str => match rest {
                [b'"', tail @ ..] => string(rest.len(), tail, error),
                _ => return false,
            },
            Then::Num => match rest {
                [b'-' | b'0'..=b'9', ..] => number(rest, error),
                _ => return false,
            },
            // Arrays of objects (the actions) in line, as `value` takes
            // them; literals and other arrays out of line.
            Then::Value(depth) => match rest {
                [b'[', b'{', ..] => remembered::<true>(rest, depth as usize, error),
                _ => any_value(rest, depth as usize, error),
            },
        };
    }
    rest.is_empty() && error.what.is_empty()
}

/// Appends the fixed bytes `run`, then `then`, to `parts`.
fn push(run: &[u8], then: Then, parts: &mut Vec<Part>) {
    let mut pieces = run.chunks(16).peekable();
    if pieces.peek().is_none() {
        parts.push(Part {
            bytes: [0; 16],
            want: 0,
            len: 0,
            then,
        });
    }
    while let Some(piece) = pieces.next() {
        let mut bytes = [0u8; 16];
        if let Some(room) = bytes.get_mut(..piece.len()) {
            room.copy_from_slice(piece);
        }
        parts.push(Part {
            bytes,
            want: (1u32 << piece.len()) - 1,
            len: piece.len() as u8,
            then: if pieces.peek().is_none() {
                then
            } else {
                Then::Nothing
            },
        });
    }
}

/// The parts of `text`, valid JSON, its values found by the scanner;
/// `None` if it does not scan as JSON.
fn learn(text: &[u8], parts: &mut Vec<Part>, error: &mut Failure) -> Option<()> {
    let mut depth = 0u32;
    let mut start = 0;
    let mut rest = text;
    while let Some((&byte, tail)) = rest.split_first() {
        let at = text.len() - rest.len();
        let (after, then) = match byte {
            b'"' => {
                let after = string(rest.len(), tail, error);
                let next = after
                    .iter()
                    .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'));
                if next == Some(&b':') {
                    // A member name: fixed bytes.
                    rest = after;
                    continue;
                }
                (after, Then::Str)
            }
            b'-' | b'0'..=b'9' => (number(rest, error), Then::Num),
            b'[' | b't' | b'f' | b'n' => {
                (any_value(rest, depth as usize, error), Then::Value(depth))
            }
            b'{' => {
                depth += 1;
                rest = tail;
                continue;
            }
            b'}' => {
                depth = depth.checked_sub(1)?;
                rest = tail;
                continue;
            }
            _ => {
                rest = tail;
                continue;
            }
        };
        if !error.what.is_empty() {
            return None;
        }
        push(text.get(start..at)?, then, parts);
        start = text.len() - after.len();
        rest = after;
    }
    if start < text.len() {
        push(text.get(start..)?, Then::Nothing, parts);
    }
    // A text that is one value (an array, a string) has no fixed bytes: to
    // fit its shape is to check it in full.
    parts.iter().any(|part| part.len > 0).then_some(())
}
