//! Whether two byte strings are equal, by words: ids, names and cached
//! JSON elements are compared millions of times, and below 64 bytes a call
//! to `memcmp` costs more than the compare.

/// Length from which `memcmp` (the C library picks the widest compare the
/// processor has) beats a loop of 16-byte words, as remembered JSON arrays
/// of a couple of hundred bytes showed (bench/NOTES.md).
const LONG: usize = 64;

/// `a == b`: overlapping words from each end for 4 to 16 bytes, sixteen
/// bytes at a time (the last sixteen overlapping those before) above, and
/// `memcmp` from [`LONG`] bytes.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    if a.len() >= LONG {
        return a == b;
    }
    if let (Some(a_last), Some(b_last)) = (a.last_chunk::<16>(), b.last_chunk::<16>()) {
        let word = |c: &[u8; 16]| u128::from_ne_bytes(*c);
        let mut differ = word(a_last) ^ word(b_last);
        let (mut a, mut b) = (a, b);
        while let (Some((x, a_rest)), Some((y, b_rest))) =
            (a.split_first_chunk::<16>(), b.split_first_chunk::<16>())
        {
            differ |= word(x) ^ word(y);
            (a, b) = (a_rest, b_rest);
        }
        return differ == 0;
    }
    if let (Some(a0), Some(b0)) = (a.first_chunk::<8>(), b.first_chunk::<8>()) {
        return a0 == b0 && a.last_chunk::<8>() == b.last_chunk::<8>();
    }
    if let (Some(a0), Some(b0)) = (a.first_chunk::<4>(), b.first_chunk::<4>()) {
        return a0 == b0 && a.last_chunk::<4>() == b.last_chunk::<4>();
    }
    a == b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_bytes_is_equality_at_every_length_and_place() {
        // Every length up to 40, with one byte changed at every place (or
        // none), against the unchanged text.
        let text: Vec<u8> = (0..40u8).map(|i| b'a' + i % 26).collect();
        for len in 0..=text.len() {
            let a = &text[..len];
            assert!(same_bytes(a, a), "length {len}");
            for at in 0..len {
                let mut b = a.to_vec();
                b[at] ^= 0x20;
                assert!(!same_bytes(a, &b), "length {len}, byte {at}");
            }
            if len > 0 {
                assert!(!same_bytes(a, &text[..len - 1]), "length {len}, shorter");
            }
        }
    }

    #[test]
    fn same_is_equality() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "abcd",
            "abce",
            "bbcd",
            "abcde",
            "abcdf",
            "xbcde",
            "abcdefg",
            "abcdefgh",
            "abcdefgi",
            "bbcdefgh",
            "abcdefghi",
            "abcdefghj",
            "abcdefgxi",
            "0123456789abcdef",
            "0123456789abcdeg",
            "0123456789xbcdef",
            "1123456789abcdef",
            "0123456789abcdefg",
            "0123456789abcdefh",
            "0123456789abcdexg",
            "dbef19fc-8e7b-445f-bde4-eb0c26f3f89e",
            "dbef19fc-8e7b-445f-bde4-eb0c26f3f89f",
            "dbef19fc-8e7b-445f-bdx4-eb0c26f3f89e",
        ];
        for a in words {
            for b in words {
                assert_eq!(
                    same_bytes(a.as_bytes(), b.as_bytes()),
                    a == b,
                    "{a:?} {b:?}"
                );
            }
        }
    }
}
