//! FNV-1a, and the checksum of an index file's two parts built on it.

pub(super) const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// FNV-1a, 64 bits: enough to tell a stale or damaged index, not a
/// defence against forgery.
pub(super) fn fnv(bytes: &[u8], seed: u64) -> u64 {
    bytes
        .iter()
        .fold(seed, |h, b| (h ^ u64::from(*b)).wrapping_mul(FNV_PRIME))
}

const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// The checksum of an index file's body (described in the module docs):
/// FNV-1a's step over words in four independent lanes, so that a 60 MB
/// index is checked in milliseconds.
pub(super) fn checksum(bytes: &[u8]) -> u64 {
    let mut lanes = [0u64, 1, 2, 3].map(|n| FNV_OFFSET ^ n);
    let mut quads = bytes.chunks_exact(32);
    for quad in &mut quads {
        for (lane, word) in lanes.iter_mut().zip(quad.chunks_exact(8)) {
            let word = u64::from_le_bytes(word.try_into().unwrap_or_default());
            *lane = ((*lane ^ word).wrapping_mul(FNV_PRIME)).rotate_left(31);
        }
    }
    let mut h = FNV_OFFSET;
    for lane in lanes {
        h = fnv(&lane.to_le_bytes(), h);
    }
    h = fnv(quads.remainder(), h);
    fnv(&(bytes.len() as u64).to_le_bytes(), h)
}
