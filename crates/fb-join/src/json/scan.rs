//! The scanner of the JSON check: one pass over a text, token by token,
//! each function taking what is left of the text and returning what is
//! left after what it scanned.

use super::element_memo::{remember, JsonElementMemo, HEAD};
use super::{JsonError, MAX_DEPTH};
use crate::same::same_bytes;

pub(super) fn check(text: &[u8], elements: Option<&mut JsonElementMemo>) -> Result<(), JsonError> {
    let mut error = Failure {
        left: 0,
        what: "",
        elements,
    };
    let rest = around(value::<false>(around(text), 0, &mut error));
    if !rest.is_empty() {
        fail(&mut error, rest.len(), "text after the value");
    }
    if error.what.is_empty() {
        return Ok(());
    }
    // Invalid UTF-8 is reported in preference to any syntax error, wherever
    // the two are, as when UTF-8 was checked by a first pass over the text.
    // Errors are rare, so checking the whole text on that path costs nothing
    // worth saving.
    if let Err(e) = std::str::from_utf8(text) {
        return Err(JsonError {
            offset: e.valid_up_to(),
            what: "invalid UTF-8",
        });
    }
    Err(JsonError {
        offset: text.len().saturating_sub(error.left),
        what: error.what,
    })
}

// The scanner walks a slice of what is left of the text, so that each test
// of the next byte is also its bounds check, and its functions return what
// is left after what they scanned. An error is noted in a `Failure` and
// ends the text there: what follows fails at once, and only the first
// failure counts. That spares a test after every call, and a result too big
// for registers.

/// Where and why the text is not JSON, where as the length left from there;
/// and the elements remembered, if they are.
pub(super) struct Failure<'s> {
    pub(super) left: usize,
    pub(super) what: &'static str,
    pub(super) elements: Option<&'s mut JsonElementMemo>,
}

// Out of line so that the hot loops carry no error-building code.
#[cold]
#[inline(never)]
pub(super) fn fail<'a>(error: &mut Failure, left: usize, what: &'static str) -> &'a [u8] {
    if error.what.is_empty() {
        error.left = left;
        error.what = what;
    }
    &[]
}

/// The value `rest` starts with, perhaps after whitespace, inside `depth`
/// open containers; its objects and arrays are scanned in line if `INLINE`.
#[inline(always)]
fn value<'a, const INLINE: bool>(rest: &'a [u8], depth: usize, error: &mut Failure) -> &'a [u8] {
    match rest {
        [b'"', tail @ ..] => string(rest.len(), tail, error),
        [b'{', tail @ ..] if INLINE => object_in::<false>(tail, depth, error),
        [b'{', tail @ ..] => object(tail, depth, error),
        // Arrays of objects (of actions, of slots) are looked up whole;
        // arrays of numbers rarely repeat.
        [b'[', b'{', ..] if error.elements.is_some() => remembered::<true>(rest, depth, error),
        [b'[', tail @ ..] if INLINE => array_in::<false>(tail, depth, error),
        [b'[', tail @ ..] => array(tail, depth, error),
        [b'-' | b'0'..=b'9', ..] => number(rest, error),
        // The rare cases out of the way, so that the common ones are tested
        // first and in few instructions.
        _ => other_value(rest, depth, error),
    }
}

/// Any value, out of line: for the values of a shape that are arrays or
/// literals (see `context_shapes.rs`).
#[inline(never)]
pub(super) fn any_value<'a>(rest: &'a [u8], depth: usize, error: &mut Failure) -> &'a [u8] {
    value::<false>(rest, depth, error)
}

/// A literal, or a value after whitespace.
#[inline(never)]
fn other_value<'a>(rest: &'a [u8], depth: usize, error: &mut Failure) -> &'a [u8] {
    let word: &[u8] = match rest {
        [b' ' | b'\t' | b'\n' | b'\r', tail @ ..] => {
            return value::<false>(skip_ws(tail), depth, error)
        }
        [b't', ..] => b"true",
        [b'f', ..] => b"false",
        [b'n', ..] => b"null",
        _ => return fail(error, rest.len(), "a value was expected"),
    };
    match rest.strip_prefix(word) {
        Some(tail) => tail,
        None => fail(error, rest.len(), "unknown literal"),
    }
}

// Objects and arrays recurse, MAX_DEPTH deep at most and a few dozen bytes
// of stack a level: cheaper than a stack of one's own, which must be pushed,
// popped, and asked after every value what it is in. Each call scans the
// containers directly inside its own in line, which halves the calls:
// contexts nest small objects in objects.

/// The object whose `{` `rest` follows, inside `depth` open containers.
pub(super) fn object<'a>(rest: &'a [u8], depth: usize, error: &mut Failure) -> &'a [u8] {
    object_in::<true>(rest, depth, error)
}

/// The array whose `[` `rest` follows, inside `depth` open containers.
pub(super) fn array<'a>(rest: &'a [u8], depth: usize, error: &mut Failure) -> &'a [u8] {
    array_in::<true>(rest, depth, error)
}

/// The object whose `{` `rest` follows, inside `depth` open containers; its
/// objects and arrays are scanned in line if `INLINE`.
#[inline(always)]
fn object_in<'a, const INLINE: bool>(
    mut rest: &'a [u8],
    depth: usize,
    error: &mut Failure,
) -> &'a [u8] {
    if depth >= MAX_DEPTH {
        return fail(error, rest.len() + 1, "nested too deeply");
    }
    if rest.first() != Some(&b'"') {
        rest = skip_ws(rest);
        if let [b'}', tail @ ..] = rest {
            return tail;
        }
    }
    loop {
        rest = value::<INLINE>(key(rest, error), depth + 1, error);
        loop {
            match rest {
                [b',', tail @ ..] => {
                    rest = tail;
                    break;
                }
                [b'}', tail @ ..] => return tail,
                _ => {
                    let skipped = skip_ws(rest);
                    if skipped.len() == rest.len() {
                        return fail(error, rest.len(), "`,` or `}` was expected");
                    }
                    rest = skipped;
                }
            }
        }
    }
}

/// The array whose `[` `rest` follows, inside `depth` open containers; its
/// objects and arrays are scanned in line if `INLINE`.
#[inline(always)]
fn array_in<'a, const INLINE: bool>(rest: &'a [u8], depth: usize, error: &mut Failure) -> &'a [u8] {
    if depth >= MAX_DEPTH {
        return fail(error, rest.len() + 1, "nested too deeply");
    }
    let mut rest = match rest {
        [b']', tail @ ..] => return tail,
        [b' ' | b'\t' | b'\n' | b'\r', ..] => skip_ws(rest),
        _ => rest,
    };
    if let [b']', tail @ ..] = rest {
        return tail;
    }
    loop {
        rest = match rest {
            [b'{', ..] if error.elements.is_some() => remembered::<false>(rest, depth + 1, error),
            _ => value::<INLINE>(rest, depth + 1, error),
        };
        loop {
            match rest {
                [b',', tail @ ..] => {
                    rest = tail;
                    break;
                }
                [b']', tail @ ..] => return tail,
                _ => {
                    let skipped = skip_ws(rest);
                    if skipped.len() == rest.len() {
                        return fail(error, rest.len(), "`,` or `]` was expected");
                    }
                    rest = skipped;
                }
            }
        }
    }
}

/// `rest` after any whitespace, tested in line: a text rarely starts or
/// ends with whitespace.
#[inline(always)]
fn around(rest: &[u8]) -> &[u8] {
    match rest {
        [b' ' | b'\t' | b'\n' | b'\r', ..] => skip_ws(rest),
        _ => rest,
    }
}

// Out of line: whitespace is rare between tokens, and its test in line
// would hold a register everywhere.
#[inline(never)]
fn skip_ws(mut rest: &[u8]) -> &[u8] {
    while let [b' ' | b'\t' | b'\n' | b'\r', tail @ ..] = rest {
        rest = tail;
    }
    rest
}

/// A member name and its colon, perhaps after whitespace; returns what
/// follows the colon.
#[inline(always)]
fn key<'a>(rest: &'a [u8], error: &mut Failure) -> &'a [u8] {
    let rest = match rest {
        [b'"', tail @ ..] => string(rest.len(), tail, error),
        _ => match skip_ws(rest) {
            name @ [b'"', tail @ ..] => string(name.len(), tail, error),
            other => return fail(error, other.len(), "a member name was expected"),
        },
    };
    match rest {
        [b':', tail @ ..] => tail,
        _ => match skip_ws(rest) {
            [b':', tail @ ..] => tail,
            other => fail(error, other.len(), "`:` was expected"),
        },
    }
}

#[inline(always)]
pub(super) fn stops(byte: u8) -> bool {
    crate::simd::stops(byte)
}

/// The string whose opening quote, `open` bytes from the end, `rest`
/// follows; returns what follows the closing quote.
#[inline(always)]
pub(super) fn string<'a>(open: usize, rest: &'a [u8], error: &mut Failure) -> &'a [u8] {
    // Most strings end within sixteen bytes: one compare finds where, with
    // no branch that depends on the length.
    let Some(chunk) = rest.first_chunk::<16>() else {
        return string_slowly(open, rest, error);
    };
    let plain = crate::simd::plain16(chunk);
    if plain == 16 {
        return string_long(open, rest, error);
    }
    let rest = rest.get(plain..).unwrap_or_default();
    if let [b'"', tail @ ..] = rest {
        return tail;
    }
    // Escapes, non-ASCII and errors, out of the way.
    string_slowly(open, rest, error)
}

/// Goes on with a string whose next sixteen bytes, at the start of `rest`,
/// are plain.
#[inline(never)]
fn string_long<'a>(open: usize, mut rest: &'a [u8], error: &mut Failure) -> &'a [u8] {
    while let Some(chunk) = rest.first_chunk::<16>() {
        let plain = crate::simd::plain16(chunk);
        rest = rest.get(plain..).unwrap_or_default();
        if plain < 16 {
            break;
        }
    }
    string_slowly(open, rest, error)
}

/// Goes on with the string whose opening quote, `open` bytes from the end,
/// `rest` follows, a byte at a time.
#[inline(never)]
fn string_slowly<'a>(open: usize, mut rest: &'a [u8], error: &mut Failure) -> &'a [u8] {
    loop {
        while let [byte, tail @ ..] = rest {
            if stops(*byte) {
                break;
            }
            rest = tail;
        }
        rest = match rest {
            [b'"', tail @ ..] => return tail,
            [b'\\', ..] => escape(rest, error),
            [0..=0x1F, ..] => return fail(error, rest.len(), "control character in a string"),
            [_, ..] => utf8_char(rest, error),
            [] => return fail(error, open, "unterminated string"),
        };
    }
}

/// Steps over the UTF-8 character `rest` starts with, lead byte >= 0x80.
///
/// Had the text been UTF-8, a character would start there, so if none does
/// the text is not UTF-8, and [`validate`] says where it is not.
fn utf8_char<'a>(rest: &'a [u8], error: &mut Failure) -> &'a [u8] {
    let len = match rest.first() {
        Some(0xC2..=0xDF) => 2,
        Some(0xE0..=0xEF) => 3,
        Some(0xF0..=0xF4) => 4,
        _ => return fail(error, rest.len(), "invalid UTF-8"),
    };
    match rest.split_at_checked(len) {
        Some((char, tail)) if std::str::from_utf8(char).is_ok() => tail,
        _ => fail(error, rest.len(), "invalid UTF-8"),
    }
}

/// Steps over the escape `rest` starts with, at its backslash.
fn escape<'a>(rest: &'a [u8], error: &mut Failure) -> &'a [u8] {
    match rest {
        [_, b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't', tail @ ..] => tail,
        [_, b'u', tail @ ..] => match tail {
            [a, b, c, d, tail @ ..] if [a, b, c, d].iter().all(|h| h.is_ascii_hexdigit()) => tail,
            _ => fail(error, rest.len(), "bad \\u escape"),
        },
        _ => fail(error, rest.len(), "bad escape"),
    }
}

#[inline(always)]
fn digits(mut rest: &[u8]) -> &[u8] {
    while let [b'0'..=b'9', tail @ ..] = rest {
        rest = tail;
    }
    rest
}

#[inline(always)]
pub(super) fn number<'a>(start: &'a [u8], error: &mut Failure) -> &'a [u8] {
    let mut rest = start;
    if let [b'-', tail @ ..] = rest {
        rest = tail;
    }
    rest = match rest {
        [b'0', tail @ ..] => tail,
        [b'1'..=b'9', tail @ ..] => digits(tail),
        _ => return fail(error, start.len(), "malformed number"),
    };
    if let [b'.', tail @ ..] = rest {
        rest = digits(tail);
        if rest.len() == tail.len() {
            return fail(error, start.len(), "malformed number");
        }
    }
    if let [b'e' | b'E', tail @ ..] = rest {
        let tail = match tail {
            [b'+' | b'-', tail @ ..] => tail,
            _ => tail,
        };
        rest = digits(tail);
        if rest.len() == tail.len() {
            return fail(error, start.len(), "malformed number");
        }
    }
    rest
}

/// The object array element, or the array, `rest` starts with (at its `{`
/// or `[`; `ARRAY` says which), inside `depth` open containers: stepped
/// over when remembered, else checked and remembered.
///
/// Arrays are remembered whole as well as element by element: a loop
/// offers the same few sets of actions, so a context's `"_multi"` and
/// `"_slots"` arrays repeat as a whole, and one lookup steps over all
/// their elements.
#[inline(always)]
pub(super) fn remembered<'a, const ARRAY: bool>(
    rest: &'a [u8],
    depth: usize,
    error: &mut Failure,
) -> &'a [u8] {
    if let (Some(elements), Some(head)) =
        (error.elements.as_deref_mut(), rest.first_chunk::<HEAD>())
    {
        if !elements.rate.is_resting() {
            let index = JsonElementMemo::index(head);
            if let Some(entry) = elements.entries.get(index) {
                let len = usize::from(entry.len);
                if let (Some(mine), Some(known)) = (rest.get(..len), entry.bytes.get(..len)) {
                    if len > 0 && depth <= usize::from(entry.depth) && same_bytes(mine, known) {
                        elements.rate.count(true);
                        return rest.get(len..).unwrap_or_default();
                    }
                }
            }
            return if ARRAY {
                unseen_array(rest, depth, error, index)
            } else {
                unseen(rest, depth, error, index)
            };
        }
    }
    not_looked_up::<ARRAY>(rest, depth, error)
}

/// An element or array checked without a lookup: too short to hash, or
/// the table resting.
#[inline(never)]
fn not_looked_up<'a, const ARRAY: bool>(
    rest: &'a [u8],
    depth: usize,
    error: &mut Failure,
) -> &'a [u8] {
    if let Some(elements) = error.elements.as_deref_mut() {
        if rest.len() >= HEAD {
            elements.rate.pass();
        }
    }
    let inside = rest.get(1..).unwrap_or_default();
    if ARRAY {
        array(inside, depth, error)
    } else {
        object(inside, depth, error)
    }
}

/// An array not found in entry `index`: checked with the table at hand
/// (its elements may repeat where the array does not), then remembered
/// there.
#[inline(never)]
fn unseen_array<'a>(rest: &'a [u8], depth: usize, error: &mut Failure, index: usize) -> &'a [u8] {
    if let Some(elements) = error.elements.as_deref_mut() {
        elements.rate.count(false);
    }
    let after = array(rest.get(1..).unwrap_or_default(), depth, error);
    let len = rest.len() - after.len();
    if let (true, Some(elements), Some(bytes)) = (
        error.what.is_empty(),
        error.elements.as_deref_mut(),
        rest.get(..len),
    ) {
        remember(elements, index, bytes, depth);
    }
    after
}

/// An element not found in entry `index`: checked, and remembered there.
#[inline(never)]
fn unseen<'a>(rest: &'a [u8], depth: usize, error: &mut Failure, index: usize) -> &'a [u8] {
    let Some(elements) = error.elements.take() else {
        return object(rest.get(1..).unwrap_or_default(), depth, error);
    };
    elements.rate.count(false);
    // Checked with the table put aside: elements inside this one are not
    // looked up, nor remembered apart from it.
    let after = object(rest.get(1..).unwrap_or_default(), depth, error);
    let len = rest.len() - after.len();
    if let (true, Some(bytes)) = (error.what.is_empty(), rest.get(..len)) {
        remember(elements, index, bytes, depth);
    }
    error.elements = Some(elements);
    after
}
