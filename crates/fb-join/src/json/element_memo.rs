//! What the validator remembers: array elements it found valid, whole, so
//! that the same bytes met again are stepped over (a loop offers the same
//! actions to event after event); and the scanner's lookups in it.

use super::scan::{array, object, Failure};
use crate::caches::MemoRate;
use crate::same::same_bytes;

/// Remembered elements, in a table indexed by a hash of their first
/// `HEAD` bytes: one entry per index, the newest.
#[derive(Clone)]
pub(super) struct JsonElementMemo {
    pub(super) entries: Box<[Entry]>,
    /// Lookups and hits; a turn is an element long enough to look up.
    pub(super) rate: MemoRate,
}

/// Entries in the table.
pub(super) const ENTRIES: usize = 256;
/// Longest element remembered.
pub(super) const ENTRY_BYTES: usize = 254;
/// Bytes hashed to find an element's entry; shorter elements are cheap
/// to check, and the hash reads past them.
pub(super) const HEAD: usize = 32;

// In this order: a lookup reads the length, then compares the bytes from
// the front, and both are then in the entry's first cache line (laid out
// by the compiler, the length came last, a line of its own to fetch).
#[derive(Clone)]
#[repr(C)]
pub(super) struct Entry {
    /// Length of the element; 0 for an empty entry.
    pub(super) len: u8,
    /// The depth it was found valid at: it is valid at that depth and any
    /// shallower one, but deeper it may nest too deeply.
    pub(super) depth: u8,
    pub(super) bytes: [u8; ENTRY_BYTES],
}

impl JsonElementMemo {
    pub(super) fn new(adaptive: bool) -> Self {
        let empty = Entry {
            len: 0,
            depth: 0,
            bytes: [0; ENTRY_BYTES],
        };
        Self {
            entries: vec![empty; ENTRIES].into_boxed_slice(),
            rate: if adaptive {
                MemoRate::default()
            } else {
                MemoRate::fixed()
            },
        }
    }

    /// The index of the entry for an element that starts with `head`.
    #[inline(always)]
    pub(super) fn index(head: &[u8; HEAD]) -> usize {
        let word = |i: usize| {
            head.get(i..i + 8)
                .and_then(|w| <[u8; 8]>::try_from(w).ok())
                .map_or(0, u64::from_le_bytes)
        };
        let mixed =
            word(0) ^ word(8).rotate_left(19) ^ word(16).rotate_left(37) ^ word(24).rotate_left(53);
        (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 56) as usize % ENTRIES
    }
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

/// Keeps `bytes`, a value found valid inside `depth` open containers, in
/// entry `index`, when it fits.
fn remember(elements: &mut JsonElementMemo, index: usize, bytes: &[u8], depth: usize) {
    if let (Some(entry), Ok(depth), Ok(len)) = (
        elements.entries.get_mut(index),
        u8::try_from(depth),
        u8::try_from(bytes.len()),
    ) {
        if let Some(room) = entry.bytes.get_mut(..bytes.len()) {
            room.copy_from_slice(bytes);
            entry.len = len;
            entry.depth = depth;
        }
    }
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
