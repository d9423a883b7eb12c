//! Which keys a join has met, in memory that does not grow with the
//! number of keys: a Bloom filter. It answers "no" only for keys never
//! put in, and "yes" for a key never put in once in a while (a false
//! positive), the more often the fuller it is.
//!
//! With a window the joiner forgets the groups it handed out, so it asks
//! two of these whether an observation that joined nothing is late (its
//! interaction was read), early (its interaction is in the input, still
//! ahead) or an orphan (it is nowhere).

use std::hash::BuildHasher;

/// Bits set per key.
const HASHES: usize = 6;

/// Input bytes per bit of a filter: a decision of a raw stream is a few
/// hundred bytes (a context, ids, probabilities), so a filter of a 16th of
/// the streams' bytes in bits has a dozen bits a key or more, and then
/// fewer than one key in a hundred never put in is said to be in.
const BYTES_PER_BIT: u64 = 16;

/// The smallest filter, in bits.
const MIN_BITS: u64 = 1 << 12;

/// The largest filter, in bits (16 MiB, reached at 2 GiB of interaction
/// streams): past that, false positives grow more frequent rather than
/// the memory.
const MAX_BITS: u64 = 1 << 27;

/// Seed of the hash: the same input gives the same counts every run.
const SEED: u64 = 0x5eed_f07a_11ed;

/// A set of keys that may answer "yes" for a key never put in.
pub(super) struct KeySet {
    words: Vec<u64>,
    bits: u64,
    hasher: foldhash::quality::FixedState,
}

impl KeySet {
    /// A filter sized for the keys of `bytes` of interaction streams.
    pub(super) fn for_bytes(bytes: u64) -> Self {
        let bits = (bytes / BYTES_PER_BIT)
            .clamp(MIN_BITS, MAX_BITS)
            .div_ceil(64)
            * 64;
        Self {
            words: vec![0; (bits / 64) as usize],
            bits,
            hasher: foldhash::quality::FixedState::with_seed(SEED),
        }
    }

    /// The bit positions of `key`: double hashing over the two halves of
    /// one 64-bit hash, each mapped onto the filter by a multiply.
    fn positions(&self, key: &str) -> [u64; HASHES] {
        let hash = self.hasher.hash_one(key);
        let (first, step) = (hash & 0xffff_ffff, (hash >> 32) | 1);
        let mut at = [0; HASHES];
        for (i, slot) in (0u64..).zip(at.iter_mut()) {
            let h = first.wrapping_add(i.wrapping_mul(step)) & 0xffff_ffff;
            // `bits` is at most 2^27, so the product fits.
            *slot = (h * self.bits) >> 32;
        }
        at
    }

    /// Puts `key` in.
    pub(super) fn insert(&mut self, key: &str) {
        for at in self.positions(key) {
            if let Some(word) = self.words.get_mut((at / 64) as usize) {
                *word |= 1 << (at % 64);
            }
        }
    }

    /// Whether `key` may have been put in (`false`: it surely was not).
    pub(super) fn contains(&self, key: &str) -> bool {
        self.positions(key).into_iter().all(|at| {
            self.words
                .get((at / 64) as usize)
                .is_some_and(|word| word & (1 << (at % 64)) != 0)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_put_in_are_found_and_others_seldom() {
        let key = |set: &str, k: u64| format!("{set}-{k:08x}-4{k:03x}-8000-{k:012x}");
        // (case, bytes of streams a key, keys put in, most false positives
        // among 100,000 keys not put in)
        for (case, bytes_a_key, keys, most) in [
            ("generated decisions", 550, 20_000, 20),
            ("small decisions", 200, 20_000, 600),
            ("the smallest filter", 0, 300, 500),
        ] {
            let mut set = KeySet::for_bytes(bytes_a_key * keys);
            for k in 0..keys {
                set.insert(&key("in", k));
            }
            for k in 0..keys {
                assert!(set.contains(&key("in", k)), "{case}: {k} lost");
            }
            let false_positives = (0..100_000)
                .filter(|&k| set.contains(&key("out", k)))
                .count();
            assert!(false_positives <= most, "{case}: {false_positives}");
        }
    }
}
