//! Outcome payloads verified lately, with what the verifier read of them.
//!
//! An outcome is a small flatbuffer (32 to 64 bytes) of a value, an index
//! and a flag, and a loop logs few distinct ones: the corpus's CB log has
//! 6 distinct outcome payloads among 75,308, a generated CCB log 6 among
//! 19,564. Verifying one walks four tables and a union, about 150
//! instructions; finding the same bytes among the last ones read, and
//! comparing them, about a third of that. The verifier's answer depends on
//! the bytes alone, so the parts kept for equal bytes are the parts.
//!
//! Only parts that borrow nothing are kept (a text value or index borrows
//! its payload). Where payloads do not repeat (ids as texts, values that
//! all differ), lookups would cost without paying: hits are counted, and
//! lookups rest for a while when fewer than one in [`POOR`] hit.

use fb_schema::{IndexValue, OutcomeParts, OutcomeValue};

use crate::hit_rate::DecoderRate;

/// Slots of the table (a power of two).
const SLOTS: usize = 64;
/// The longest payload kept.
const BYTES: usize = 64;
/// Fewer hits than one lookup in this many, and lookups rest for a while
/// (`hit_rate.rs`).
const POOR: u32 = 4;

/// One payload and its parts; `len` 0 holds nothing.
#[derive(Clone, Copy)]
struct Slot {
    len: usize,
    bytes: [u8; BYTES],
    parts: OutcomeParts<'static>,
}

const EMPTY: Slot = Slot {
    len: 0,
    bytes: [0; BYTES],
    parts: OutcomeParts {
        value: OutcomeValue::None,
        index: IndexValue::None,
        action_taken: false,
    },
};

/// Where a payload is, or is to go.
pub(crate) enum Find {
    /// Not looked up: resting, or a payload too short or too long to keep.
    Skipped,
    /// Held in this slot: [`OutcomePartsCache::parts`].
    Found(usize),
    /// Not held: verify it, and [`OutcomePartsCache::keep`] it in this slot.
    Missing(usize),
}

/// The table, and how often it pays.
pub(crate) struct OutcomePartsCache {
    slots: Box<[Slot; SLOTS]>,
    rate: DecoderRate<POOR>,
}

impl Default for OutcomePartsCache {
    fn default() -> Self {
        Self {
            slots: Box::new([EMPTY; SLOTS]),
            rate: DecoderRate::default(),
        }
    }
}

impl OutcomePartsCache {
    /// A table that looks nothing up, so keeps nothing.
    pub(crate) fn off() -> Self {
        Self {
            rate: DecoderRate::off(),
            ..Self::default()
        }
    }

    /// Payloads found, with their parts, since the table was made.
    pub(crate) fn hits(&self) -> u64 {
        self.rate.totals().1
    }

    /// Looks the payload `bytes` up.
    #[inline(always)]
    pub(crate) fn find(&mut self, bytes: &[u8]) -> Find {
        if self.rate.rests() {
            return Find::Skipped;
        }
        let (Some(head), Some(tail)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) else {
            return Find::Skipped;
        };
        if bytes.len() > BYTES {
            return Find::Skipped;
        }
        let at = slot_of(bytes.len(), head, tail);
        let hit = self
            .slots
            .get(at)
            .is_some_and(|slot| slot.bytes.get(..slot.len).is_some_and(|kept| kept == bytes));
        self.rate.count(hit);
        if hit {
            Find::Found(at)
        } else {
            Find::Missing(at)
        }
    }

    /// The parts of the payload slot `at` holds.
    #[inline(always)]
    pub(crate) fn parts(&self, at: usize) -> Option<&OutcomeParts<'static>> {
        self.slots.get(at).map(|slot| &slot.parts)
    }

    /// Keeps `bytes`, verified into `parts`, in slot `at` (found
    /// [`Find::Missing`]), unless the parts borrow from them.
    pub(crate) fn keep(&mut self, at: usize, bytes: &[u8], parts: &OutcomeParts<'_>) {
        let value = match parts.value {
            OutcomeValue::None => OutcomeValue::None,
            OutcomeValue::Numeric(v) => OutcomeValue::Numeric(v),
            OutcomeValue::Unknown(tag) => OutcomeValue::Unknown(tag),
            OutcomeValue::Literal(_) => return,
        };
        let index = match parts.index {
            IndexValue::None => IndexValue::None,
            IndexValue::Numeric(i) => IndexValue::Numeric(i),
            IndexValue::Unknown(tag) => IndexValue::Unknown(tag),
            IndexValue::Literal(_) => return,
        };
        let Some(slot) = self.slots.get_mut(at) else {
            return;
        };
        let Some(room) = slot.bytes.get_mut(..bytes.len()) else {
            return;
        };
        room.copy_from_slice(bytes);
        slot.len = bytes.len();
        slot.parts = OutcomeParts {
            value,
            index,
            action_taken: parts.action_taken,
        };
    }
}

/// The slot for a payload of `len` bytes that starts with `head` and ends
/// with `tail`. Outcomes of one writer share their first bytes (offsets
/// and vtables) and differ near the end (the value's bytes), so both ends
/// are mixed by a folded multiply (the two halves of the full product
/// xored), where every input bit reaches every output bit: the top bits of
/// a plain product ignored most of a value's bytes.
#[inline(always)]
fn slot_of(len: usize, head: &[u8; 8], tail: &[u8; 8]) -> usize {
    let mixed = u64::from_le_bytes(*head).rotate_left(23)
        ^ u64::from_le_bytes(*tail)
        ^ (len as u64).rotate_left(47);
    let full = u128::from(mixed) * 0x9E37_79B9_7F4A_7C15;
    ((full >> 64) as u64 ^ full as u64) as usize % SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;
    const SAMPLE: u32 = DecoderRate::<POOR>::SAMPLE;

    fn numeric(v: f32) -> OutcomeParts<'static> {
        OutcomeParts {
            value: OutcomeValue::Numeric(v),
            index: IndexValue::Numeric(3),
            action_taken: true,
        }
    }

    /// A 40-byte payload that differs from others in its last bytes, as
    /// outcome values do.
    fn payload(v: u32) -> Vec<u8> {
        let mut b = vec![7u8; 36];
        b.extend_from_slice(&v.to_le_bytes());
        b
    }

    #[test]
    fn only_kept_payloads_are_found_with_their_parts() {
        let mut cache = OutcomePartsCache::default();
        let a = payload(1);
        let Find::Missing(at) = cache.find(&a) else {
            panic!("found in an empty table");
        };
        cache.keep(at, &a, &numeric(1.5));
        let Find::Found(found) = cache.find(&a) else {
            panic!("a kept payload not found");
        };
        let parts = cache.parts(found).expect("a slot");
        assert_eq!(parts.value, OutcomeValue::Numeric(1.5));
        assert_eq!(parts.index, IndexValue::Numeric(3));
        assert!(parts.action_taken);
        // Another payload, even one in the same slot, is not found.
        for v in 2..200 {
            if let Find::Found(_) = cache.find(&payload(v)) {
                panic!("payload {v} found without being kept");
            }
        }
        // One byte longer or shorter than a kept one is not it either.
        let mut longer = a.clone();
        longer.push(0);
        assert!(!matches!(cache.find(&longer), Find::Found(_)));
        assert!(!matches!(cache.find(&a[..39]), Find::Found(_)));
    }

    #[test]
    fn parts_that_borrow_are_not_kept() {
        let mut cache = OutcomePartsCache::default();
        let a = payload(9);
        for parts in [
            OutcomeParts {
                value: OutcomeValue::Literal("clicked"),
                index: IndexValue::None,
                action_taken: false,
            },
            OutcomeParts {
                value: OutcomeValue::Numeric(1.0),
                index: IndexValue::Literal("slot-1"),
                action_taken: false,
            },
        ] {
            let Find::Missing(at) = cache.find(&a) else {
                panic!("found, yet never kept");
            };
            cache.keep(at, &a, &parts);
        }
        assert!(matches!(cache.find(&a), Find::Missing(_)));
    }

    #[test]
    fn a_table_made_off_finds_nothing() {
        let mut cache = OutcomePartsCache::off();
        for _ in 0..4 * SAMPLE {
            let p = payload(1);
            match cache.find(&p) {
                Find::Skipped => {}
                Find::Found(_) | Find::Missing(_) => panic!("looked up"),
            }
        }
        assert_eq!(cache.hits(), 0);
        let mut on = OutcomePartsCache::default();
        for _ in 0..3 {
            if let Find::Missing(at) = on.find(&payload(1)) {
                on.keep(at, &payload(1), &numeric(1.0));
            }
        }
        assert_eq!(on.hits(), 2);
    }

    #[test]
    fn payloads_too_short_or_too_long_are_not_looked_up() {
        let mut cache = OutcomePartsCache::default();
        assert!(matches!(cache.find(&[1; 7]), Find::Skipped));
        assert!(matches!(cache.find(&[1; BYTES + 1]), Find::Skipped));
        assert!(matches!(cache.find(&[1; BYTES]), Find::Missing(_)));
    }

    #[test]
    fn lookups_rest_where_payloads_never_repeat() {
        let mut cache = OutcomePartsCache::default();
        for v in 0..SAMPLE {
            if let Find::Missing(at) = cache.find(&payload(v)) {
                cache.keep(at, &payload(v), &numeric(v as f32));
            }
        }
        assert!(matches!(cache.find(&payload(0)), Find::Skipped));
        // Payloads that repeat keep being looked up (even where two of
        // them share a slot, half the lookups hit).
        let mut cache = OutcomePartsCache::default();
        for v in 0..4 * SAMPLE {
            let p = payload(v % 4);
            if let Find::Missing(at) = cache.find(&p) {
                cache.keep(at, &p, &numeric(0.0));
            }
        }
        assert!(!matches!(cache.find(&payload(1)), Find::Skipped));
    }

    #[test]
    fn outcome_values_spread_over_the_slots() {
        // 16 payloads that differ only in a value's bytes, as the outcomes
        // of one writer do, fall in at least 8 slots.
        for shift in [0, 8, 16, 24] {
            let slots: std::collections::BTreeSet<usize> = (0..16u32)
                .map(|v| {
                    let p = payload(v << shift);
                    slot_of(p.len(), p.first_chunk().unwrap(), p.last_chunk().unwrap())
                })
                .collect();
            assert!(slots.len() >= 8, "values << {shift}: {} slots", slots.len());
        }
    }
}
