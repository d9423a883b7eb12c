//! What the validator remembers: array elements it found valid, whole, so
//! that the same bytes met again are stepped over (a loop offers the same
//! actions to event after event).

/// Remembered elements, in a table indexed by a hash of their first
/// `HEAD` bytes: one entry per index, the newest.
#[derive(Clone)]
pub(super) struct Seen {
    pub(super) entries: Box<[Entry]>,
    /// Lookups and hits since the last look at the hit rate, and before.
    pub(super) tries: u32,
    pub(super) hits: u32,
    /// Elements still to pass without a lookup, after a poor hit rate.
    pub(super) resting: u32,
    /// Whether a poor hit rate rests the table (always, but in tests).
    pub(super) adaptive: bool,
    pub(super) total_tries: u64,
    pub(super) total_hits: u64,
}

/// Whether `a` and `b`, of one length, hold the same bytes: sixteen at a
/// time, the last sixteen overlapping those before, where a call to
/// `memcmp` would cost more than the compare.
#[inline(always)]
pub(super) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let (Some(a_last), Some(b_last)) = (a.last_chunk::<16>(), b.last_chunk::<16>()) else {
        return a == b;
    };
    if a.len() != b.len() {
        return false;
    }
    let word = |c: &[u8; 16]| u128::from_ne_bytes(*c);
    let mut differ = word(a_last) ^ word(b_last);
    let (mut a, mut b) = (a, b);
    while let (Some((x, a_rest)), Some((y, b_rest))) =
        (a.split_first_chunk::<16>(), b.split_first_chunk::<16>())
    {
        differ |= word(x) ^ word(y);
        (a, b) = (a_rest, b_rest);
    }
    differ == 0
}

/// Entries in the table.
pub(super) const ENTRIES: usize = 256;
/// Longest element remembered.
pub(super) const ENTRY_BYTES: usize = 254;
/// Bytes hashed to find an element's entry; shorter elements are cheap
/// to check, and the hash reads past them.
pub(super) const HEAD: usize = 32;
/// Lookups between two looks at the hit rate, and how many elements pass
/// without one when fewer than a quarter of them hit.
pub(super) const SAMPLE: u32 = 1024;
pub(super) const REST: u32 = 64 * 1024;

#[derive(Clone)]
pub(super) struct Entry {
    /// Length of the element; 0 for an empty entry.
    pub(super) len: u8,
    /// The depth it was found valid at: it is valid at that depth and any
    /// shallower one, but deeper it may nest too deeply.
    pub(super) depth: u8,
    pub(super) bytes: [u8; ENTRY_BYTES],
}

impl Seen {
    pub(super) fn new(adaptive: bool) -> Self {
        let empty = Entry {
            len: 0,
            depth: 0,
            bytes: [0; ENTRY_BYTES],
        };
        Self {
            entries: vec![empty; ENTRIES].into_boxed_slice(),
            tries: 0,
            hits: 0,
            resting: 0,
            adaptive,
            total_tries: 0,
            total_hits: 0,
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

    /// Counts a lookup, and rests the table after too few hits.
    #[inline(always)]
    pub(super) fn count(&mut self, hit: bool) {
        self.tries += 1;
        self.hits += u32::from(hit);
        if self.tries >= SAMPLE {
            self.sampled();
        }
    }

    #[cold]
    pub(super) fn sampled(&mut self) {
        if self.adaptive && self.hits < self.tries / 4 {
            self.resting = REST;
        }
        self.total_tries += u64::from(self.tries);
        self.total_hits += u64::from(self.hits);
        self.tries = 0;
        self.hits = 0;
    }
}
