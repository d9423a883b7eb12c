//! The Bloom filters of a block: decision ids and dedup ids.

use super::checksum::FNV_OFFSET;

/// Bloom filter bits per decision id.
const BLOOM_BITS: usize = 10;
/// Probes per id.
const PROBES: u64 = 3;

/// The bits a key sets (format 5): double hashing, `h1 + i·h2` for `i` in
/// 0..3, each mapped onto the filter's bits by `(h × bits) >> 64`. The
/// key is read as 8-byte little-endian words (the last zero-padded), each
/// taken in as `h = rotl((h ^ word) × K, 29)` from a start that holds the
/// key's length; `h1` and `h2` are two finalizations of `h`. Version 4
/// hashed every byte twice with FNV-1a: a fifth of `fb index`'s time.
fn probes(key: &[u8], bits: u64) -> impl Iterator<Item = u64> {
    probes_of(key_hashes(key), bits)
}

/// [`probes`] of a key's hashes ([`key_hashes`]).
fn probes_of((h1, h2): (u64, u64), bits: u64) -> impl Iterator<Item = u64> {
    (0..PROBES).map(move |i| {
        let h = h1.wrapping_add(i.wrapping_mul(h2));
        ((u128::from(h) * u128::from(bits)) >> 64) as u64
    })
}

const KEY_MUL: u64 = 0x9e37_79b9_7f4a_7c15;

/// The two hashes of a key from which its probes are drawn: a build
/// keeps these rather than the key, which may lie in a window of the log
/// read over by the time the filter is made.
pub(super) fn key_hashes(key: &[u8]) -> (u64, u64) {
    let step = |h: u64, word: u64| (h ^ word).wrapping_mul(KEY_MUL).rotate_left(29);
    let mut h = FNV_OFFSET ^ (key.len() as u64).wrapping_mul(KEY_MUL);
    let mut words = key.chunks_exact(8);
    for word in &mut words {
        h = step(h, u64::from_le_bytes(word.try_into().unwrap_or_default()));
    }
    let rest = words.remainder();
    if !rest.is_empty() {
        let mut last = [0u8; 8];
        for (to, from) in last.iter_mut().zip(rest) {
            *to = *from;
        }
        h = step(h, u64::from_le_bytes(last));
    }
    (finalize(h), finalize(h ^ KEY_MUL) | 1)
}

/// MurmurHash3's 64-bit finalizer: every input bit reaches every output
/// bit.
fn finalize(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

/// Whether every bit `key` sets is set in `bloom`.
pub(super) fn contains(bloom: &[u8], key: &[u8]) -> bool {
    let bits = bloom.len() as u64 * 8;
    bits > 0
        && probes(key, bits).all(|bit| {
            bloom
                .get((bit / 8) as usize)
                .is_some_and(|b| b & (1 << (bit % 8)) != 0)
        })
}

/// A filter of `keys`, 10 bits each (64 at least).
#[cfg(test)]
pub(super) fn filter<'k>(keys: impl ExactSizeIterator<Item = &'k [u8]>) -> Vec<u8> {
    filter_hashed(keys.map(key_hashes))
}

/// [`filter`] of keys given by their hashes ([`key_hashes`]).
pub(super) fn filter_hashed(keys: impl ExactSizeIterator<Item = (u64, u64)>) -> Vec<u8> {
    let bits = (keys.len() * BLOOM_BITS).next_multiple_of(8).max(64);
    let mut bloom = vec![0u8; bits / 8];
    for key in keys {
        for bit in probes_of(key, bits as u64) {
            if let Some(byte) = bloom.get_mut((bit / 8) as usize) {
                *byte |= 1 << (bit % 8);
            }
        }
    }
    bloom
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every key put in a filter tests positive; of keys not put in, about
    /// as few as 10 bits and 3 probes per key allow (1.7% in theory), for
    /// ids shaped like the logs' (UUIDs, short ids) and for dedup ids.
    #[test]
    fn bloom_filters_have_no_false_negatives_and_few_false_positives() {
        type Key = fn(u64) -> Vec<u8>;
        let cases: [(&str, Key); 3] = [
            ("uuid-like ids", |i| {
                format!("{:08x}-4e2b-4c1a-9f3d-{:012x}", i * 7919, i).into_bytes()
            }),
            ("short ids", |i| format!("ev{i}").into_bytes()),
            ("dedup ids", |i| {
                (i.wrapping_mul(0x9e37_79b9) ^ 0x55).to_le_bytes().to_vec()
            }),
        ];
        for (name, key) in cases {
            let inside: Vec<Vec<u8>> = (0..20_000).map(key).collect();
            let bloom = filter(inside.iter().map(|k| &k[..]));
            assert!(
                inside.iter().all(|k| contains(&bloom, k)),
                "{name}: a key put in is missing"
            );
            let false_positives = (20_000..40_000)
                .map(key)
                .filter(|k| contains(&bloom, k))
                .count();
            assert!(
                false_positives < 600,
                "{name}: {false_positives} false positives of 20000"
            );
            assert!(
                false_positives > 40,
                "{name}: {false_positives}: the filter is not 10 bits a key"
            );
        }
    }
}
