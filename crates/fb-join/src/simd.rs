//! How far a string runs before a byte it cannot step over, sixteen bytes
//! at a time.
//!
//! Testing byte after byte cost three instructions a byte and a branch per
//! string whose outcome depended on the string's length; one SSE2 compare
//! of sixteen bytes finds the end of most keys and values at once.

/// How many of the sixteen bytes come before the first one a string
/// cannot step over (`"`, `\`, a control character, a byte >= 0x80);
/// 16 when there is none.
#[inline(always)]
pub(crate) fn plain16(bytes: &[u8; 16]) -> usize {
    stops16(bytes).trailing_zeros() as usize
}

/// Bit `i` set when byte `i` of `a` and of `b` are equal.
#[inline(always)]
pub(crate) fn equal16(a: &[u8; 16], b: &[u8; 16]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: SSE2 is part of the x86_64 baseline, as in `stops16`.
        unsafe { sse2::equal16(a, b) }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        scalar_equal16(a, b)
    }
}

#[cfg(any(test, not(target_arch = "x86_64")))]
fn scalar_equal16(a: &[u8; 16], b: &[u8; 16]) -> u32 {
    a.iter()
        .zip(b)
        .enumerate()
        .fold(0, |mask, (i, (x, y))| mask | (u32::from(x == y) << i))
}

/// True for a byte a string cannot step over.
#[inline(always)]
pub(crate) fn stops(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\' || byte >= 0x80
}

/// Bit `i` set when byte `i` stops a string, and bit 16 always.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stops16(bytes: &[u8; 16]) -> u32 {
    // SAFETY: SSE2 is part of the x86_64 baseline: every x86_64 processor
    // has it and Rust enables it for every x86_64 target.
    unsafe { sse2::stops16(bytes) }
}

/// Bit `i` set when byte `i` stops a string, and bit 16 always.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn stops16(bytes: &[u8; 16]) -> u32 {
    scalar_stops16(bytes)
}

#[cfg(any(test, not(target_arch = "x86_64")))]
fn scalar_stops16(bytes: &[u8; 16]) -> u32 {
    bytes
        .iter()
        .enumerate()
        .fold(1 << 16, |mask, (i, &b)| mask | (u32::from(stops(b)) << i))
}

#[cfg(target_arch = "x86_64")]
mod sse2 {
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x,
    };

    /// Sixteen bytes as one vector, without a pointer: two halves the
    /// compiler joins into one unaligned load.
    #[target_feature(enable = "sse2")]
    #[inline]
    fn vector(bytes: &[u8; 16]) -> __m128i {
        let [a, b, c, d, e, f, g, h, i, j, k, l, m, n, o, p] = *bytes;
        _mm_set_epi64x(
            i64::from_le_bytes([i, j, k, l, m, n, o, p]),
            i64::from_le_bytes([a, b, c, d, e, f, g, h]),
        )
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn equal16(a: &[u8; 16], b: &[u8; 16]) -> u32 {
        _mm_movemask_epi8(_mm_cmpeq_epi8(vector(a), vector(b))) as u32 & 0xFFFF
    }

    #[target_feature(enable = "sse2")]
    #[inline]
    pub(super) fn stops16(bytes: &[u8; 16]) -> u32 {
        let v = vector(bytes);
        let quote = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(v, _mm_set1_epi8(b'\\' as i8));
        // Signed: below 0x20 is a control character or a byte >= 0x80.
        let other = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
        let stops = _mm_or_si128(_mm_or_si128(quote, backslash), other);
        (_mm_movemask_epi8(stops) as u32 & 0xFFFF) | 1 << 16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_bytes_in_every_place() {
        let a: [u8; 16] = std::array::from_fn(|i| b'a' + i as u8);
        for at in 0..16 {
            for byte in 0..=u8::MAX {
                let mut b = a;
                b[at] = byte;
                let expected = if byte == a[at] {
                    0xFFFF
                } else {
                    0xFFFF & !(1 << at)
                };
                assert_eq!(equal16(&a, &b), expected, "{byte:#x} at {at}");
                assert_eq!(equal16(&a, &b), scalar_equal16(&a, &b), "{byte:#x} at {at}");
            }
        }
    }

    #[test]
    fn every_byte_in_every_place() {
        for byte in 0..=u8::MAX {
            for at in 0..16 {
                let mut bytes = [b'a'; 16];
                bytes[at] = byte;
                let expected = if stops(byte) { at } else { 16 };
                assert_eq!(plain16(&bytes), expected, "{byte:#x} at {at}");
                assert_eq!(stops16(&bytes), scalar_stops16(&bytes), "{byte:#x} at {at}");
            }
        }
    }
}
