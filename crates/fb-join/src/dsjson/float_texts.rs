//! Floats' texts by their bits, for the DSJSON writer.
//!
//! Probabilities, costs and rewards take few values in a loop, and
//! printing a float the way the reference does (Grisu2, through `dtoa`)
//! is the costliest step of a line: about 576 instructions a float. A
//! float met before is written from the text printed then.

use crate::put::Put;

/// Sets of two slots in the cache (a power of two).
const SETS: usize = 256;
const SLOTS: usize = SETS * 2;

/// One float's bits and the text printed for them; `len` 0 holds nothing.
#[derive(Debug, Clone, Copy, Default)]
struct FloatText {
    bits: u32,
    len: u8,
    text: [u8; 27],
}

/// Floats' texts by their bits, in sets of two slots. Without slots
/// ([`FloatTextCache::default`]), every float is printed.
#[derive(Debug, Default)]
pub(super) struct FloatTextCache(Box<[FloatText]>);

impl FloatTextCache {
    /// A cache of [`SLOTS`] texts, allocated here once (16 KiB).
    pub(super) fn new() -> Self {
        Self::with_slots(SLOTS)
    }

    fn with_slots(slots: usize) -> Self {
        Self(vec![FloatText::default(); slots].into_boxed_slice())
    }

    /// Texts held: none where the cache has no slots.
    pub(super) fn held(&self) -> u64 {
        self.0.iter().filter(|slot| slot.len > 0).count() as u64
    }

    /// `[..]` of `values`, each float's text from the cache.
    pub(super) fn floats<P: Put>(&mut self, out: &mut P, values: &[f32]) {
        out.byte(b'[');
        for (i, v) in values.iter().enumerate() {
            if i > 0 {
                out.byte(b',');
            }
            self.push(out, *v);
        }
        out.byte(b']');
    }

    /// The text of `v`.
    #[inline(always)]
    pub(super) fn push<P: Put>(&mut self, out: &mut P, v: f32) {
        let bits = v.to_bits();
        let set = set_of(bits);
        if let Some([first, second]) = self.0.get(set..set + 2) {
            for slot in [first, second] {
                if slot.len > 0 && slot.bits == bits {
                    out.put_first(&slot.text, usize::from(slot.len));
                    return;
                }
            }
        }
        self.print(out, v, set);
    }

    /// Prints `v` and remembers its text first in set `set`, if there is
    /// one, the slot there before moving second.
    #[inline(never)]
    fn print<P: Put>(&mut self, out: &mut P, v: f32, set: usize) {
        let wide = f64::from(v);
        let mut buf = dtoa::Buffer::new();
        let text: &[u8] = if wide.is_finite() {
            buf.format_finite(wide).as_bytes()
        } else {
            b"null"
        };
        out.put(text);
        if let Some(pair) = self.0.get_mut(set..set + 2) {
            let mut slot = FloatText {
                bits: v.to_bits(),
                len: 0,
                text: [0; 27],
            };
            if let Some(room) = slot.text.get_mut(..text.len()) {
                room.copy_from_slice(text);
                slot.len = text.len() as u8;
                pair.rotate_right(1);
                if let Some(first) = pair.first_mut() {
                    *first = slot;
                }
            }
        }
    }
}

/// The first of the two slots (a set) where the text of a float with
/// these bits may be remembered. Two ways to a set: two frequent values
/// whose bits fall in one set (in a CCB bench log, a probability of
/// 0.0666… and a cost of -1.0 did, in a cache of one way) both stay.
#[inline(always)]
fn set_of(bits: u32) -> usize {
    let mixed = (bits ^ (bits >> 16)).wrapping_mul(0x9E37_79B9);
    (mixed >> (32 - SETS.trailing_zeros())) as usize * 2 % SLOTS
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of each float, through a cache of `slots` slots.
    fn texts(values: &[f32], slots: usize) -> Vec<String> {
        let mut cache = FloatTextCache::with_slots(slots);
        values
            .iter()
            .map(|&v| {
                let mut out = Vec::new();
                cache.push(&mut out, v);
                String::from_utf8(out).unwrap()
            })
            .collect()
    }

    #[test]
    fn remembered_floats_print_as_printed() {
        // Values that repeat, values that share a set, values of every
        // length of text, and some that are not numbers.
        let mut values: Vec<f32> = vec![0.0, -0.0, 1.0, -1.0, 0.05, 0.85, 1e-30, 3.4e38];
        values.extend([
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::MIN_POSITIVE,
        ]);
        let mut x = 0x1234_5678u32;
        for _ in 0..5000 {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            values.push(f32::from_bits(x));
            values.push(values[(x % 12) as usize]);
        }
        let uncached = texts(&values, 0);
        assert_eq!(texts(&values, SLOTS), uncached);
        // The uncached text is dtoa's shortest text of the widened value.
        assert_eq!(uncached[..4], ["0.0", "-0.0", "1.0", "-1.0"]);
        assert_eq!(uncached[8], "null");
    }

    #[test]
    fn two_floats_of_one_set_both_stay() {
        let a = 1.0f32;
        let set = set_of(a.to_bits());
        let b = (1..u32::MAX)
            .map(|k| f32::from_bits(a.to_bits() ^ k))
            .find(|v| v.is_finite() && set_of(v.to_bits()) == set)
            .expect("another float in the set");
        let mut cache = FloatTextCache::new();
        for v in [a, b, a, b] {
            cache.push(&mut Vec::new(), v);
        }
        let held: Vec<u32> = cache.0[set..set + 2].iter().map(|s| s.bits).collect();
        assert!(
            held.contains(&a.to_bits()) && held.contains(&b.to_bits()),
            "{held:?}"
        );
        assert_eq!(cache.held(), 2);
        assert_eq!(FloatTextCache::default().held(), 0);
    }
}
