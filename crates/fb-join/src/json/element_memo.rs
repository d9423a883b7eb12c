//! What the validator remembers: array elements it found valid, whole, so
//! that the same bytes met again are stepped over (a loop offers the same
//! actions to event after event); and the scanner's lookups in it.

use crate::caches::MemoRate;

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

/// Keeps `bytes`, a value found valid inside `depth` open containers, in
/// entry `index`, when it fits.
pub(super) fn remember(elements: &mut JsonElementMemo, index: usize, bytes: &[u8], depth: usize) {
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
