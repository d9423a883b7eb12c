//! Numbers and strings exactly as the reference's JSON writer prints them.

use crate::put::Put;

/// Appends an f64 in rapidjson's style. Non-finite values, which JSON cannot
/// hold, are written as `null`.
#[cfg(test)]
pub(crate) fn push_f64(out: &mut Vec<u8>, v: f64) {
    put_f64(out, v);
}

/// Appends an unsigned integer.
#[cfg(test)]
pub(crate) fn push_u64(out: &mut Vec<u8>, v: u64) {
    put_u64(out, v);
}

/// Appends a signed integer.
#[cfg(test)]
pub(crate) fn push_i64(out: &mut Vec<u8>, v: i64) {
    put_i64(out, v);
}

/// Appends `s` as a JSON string with rapidjson's escapes: `"` `\` and
/// control characters; everything else (including non-ASCII) as is.
#[cfg(test)]
pub(crate) fn push_str(out: &mut Vec<u8>, s: &str) {
    put_str(out, s);
}

/// [`push_f64`] into any sink.
#[cfg(test)]
pub(crate) fn put_f64<P: Put>(out: &mut P, v: f64) {
    if !v.is_finite() {
        out.put(b"null");
        return;
    }
    let mut buf = dtoa::Buffer::new();
    out.put(buf.format_finite(v).as_bytes());
}

/// [`push_u64`] into any sink.
#[inline]
pub(crate) fn put_u64<P: Put>(out: &mut P, v: u64) {
    // Action ids and indices are mostly one digit.
    if v < 10 {
        out.byte(b'0' + v as u8);
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let mut n = v;
    // u64::MAX has 20 digits: `i` never goes below 0.
    for slot in buf.iter_mut().rev() {
        *slot = b'0' + (n % 10) as u8;
        i -= 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.put(buf.get(i..).unwrap_or_default());
}

/// [`push_i64`] into any sink.
pub(crate) fn put_i64<P: Put>(out: &mut P, v: i64) {
    if v < 0 {
        out.byte(b'-');
    }
    put_u64(out, v.unsigned_abs());
}

/// [`push_str`] into any sink.
#[inline]
pub(crate) fn put_str<P: Put>(out: &mut P, s: &str) {
    out.byte(b'"');
    let bytes = s.as_bytes();
    if plain(bytes) {
        out.put(bytes);
        out.byte(b'"');
        return;
    }
    put_escaped(out, bytes);
}

/// True when `bytes` need no escape and are ASCII (others take the
/// escaping path, which writes non-ASCII as is).
#[inline(always)]
fn plain(bytes: &[u8]) -> bool {
    // Ids are 16 bytes and more: sixteen at a time, the last chunk
    // overlapping the one before.
    if let Some(last) = bytes.last_chunk::<16>() {
        let mut chunks = bytes.chunks_exact(16);
        return chunks.all(|c| {
            c.first_chunk()
                .is_some_and(|c| crate::simd::plain16(c) == 16)
        }) && crate::simd::plain16(last) == 16;
    }
    // Shorter ones (short event ids, model ids, slot ids) as two
    // overlapping words: a byte-by-byte pass cost eight instructions a
    // byte, more than the copy.
    if let (Some(a), Some(b)) = (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
        return plain_word(u64::from_le_bytes(*a)) & plain_word(u64::from_le_bytes(*b));
    }
    if let (Some(a), Some(b)) = (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
        let (a, b) = (u32::from_le_bytes(*a), u32::from_le_bytes(*b));
        return plain_word(u64::from(a) | u64::from(b) << 32);
    }
    bytes.iter().fold(true, |ok, &b| {
        ok & (b >= 0x20) & (b != b'"') & (b != b'\\') & (b < 0x80)
    })
}

/// True when none of the eight bytes of `word` needs an escape or is
/// outside ASCII. The usual tests of a word for a byte below a bound, or
/// for a zero byte (here of `word` xor a byte repeated), may be wrong for
/// the bytes after a true one, but never about whether there is one.
#[inline(always)]
fn plain_word(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    let below = |bound: u64| word.wrapping_sub(ONES * bound) & !word & HIGHS;
    let equal = |byte: u8| {
        let x = word ^ (ONES * u64::from(byte));
        x.wrapping_sub(ONES) & !x & HIGHS
    };
    (below(0x20) | equal(b'"') | equal(b'\\') | (word & HIGHS)) == 0
}

/// The body and closing quote of a string that needs escapes.
#[inline(never)]
fn put_escaped<P: Put>(out: &mut P, bytes: &[u8]) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: &[u8] = match b {
            b'"' => b"\\\"",
            b'\\' => b"\\\\",
            b'\n' => b"\\n",
            b'\r' => b"\\r",
            b'\t' => b"\\t",
            0x08 => b"\\b",
            0x0C => b"\\f",
            0..=0x1F => b"",
            _ => continue,
        };
        out.put(bytes.get(start..i).unwrap_or_default());
        if escape.is_empty() {
            out.put(b"\\u00");
            let hex = |n: u8| HEX.get(usize::from(n)).copied().unwrap_or(b'0');
            out.byte(hex(b >> 4));
            out.byte(hex(b & 0xF));
        } else {
            out.put(escape);
        }
        start = i + 1;
    }
    out.put(bytes.get(start..).unwrap_or_default());
    out.byte(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_rapidjson() {
        let cases: &[(&str, f64, &str)] = &[
            ("one", 1.0, "1.0"),
            ("negative zero", -0.0, "-0.0"),
            (
                "f32 0.90000004 widened",
                f64::from(0.900_000_04_f32),
                "0.9000000357627869",
            ),
            ("f32 0.1 widened", f64::from(0.1f32), "0.10000000149011612"),
            (
                "small f32 widened",
                f64::from(1e-7f32),
                "1.0000000116860974e-7",
            ),
            (
                "grisu2, not shortest",
                2.198_999_881_744_384_8,
                "2.1989998817443849",
            ),
            (
                "pdf value",
                f64::from(0.000_505_050_5_f32),
                "0.0005050505278632045",
            ),
            ("large", 1e21, "1e21"),
        ];
        for (name, v, expected) in cases {
            let mut out = Vec::new();
            push_f64(&mut out, *v);
            assert_eq!(String::from_utf8(out).unwrap(), *expected, "{name}");
        }
    }

    #[test]
    fn integers() {
        for (v, s) in [(0u64, "0"), (7, "7"), (u64::MAX, "18446744073709551615")] {
            let mut out = Vec::new();
            push_u64(&mut out, v);
            assert_eq!(out, s.as_bytes());
        }
        let mut out = Vec::new();
        push_i64(&mut out, i64::MIN);
        assert_eq!(out, b"-9223372036854775808");
    }

    #[test]
    fn strings_escape_quotes_backslashes_and_controls_only() {
        let mut out = Vec::new();
        push_str(&mut out, "a\"b\\c\nd\u{1}é/");
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "\"a\\\"b\\\\c\\nd\\u0001é/\""
        );
    }

    /// Every byte in every place of texts up to 20 bytes long, on a
    /// background of every other kind of byte: the word tests must agree
    /// with the plain definition, whatever surrounds the byte.
    #[test]
    fn plain_agrees_with_its_definition_byte_by_byte() {
        let plain_byte = |b: u8| b >= 0x20 && b != b'"' && b != b'\\' && b < 0x80;
        for len in 0..=20 {
            for background in [b'x', b' ', b'!', b'#', b'[', b']', 0x7F] {
                for at in 0..len {
                    for byte in 0..=u8::MAX {
                        let mut text = vec![background; len];
                        text[at] = byte;
                        assert_eq!(
                            plain(&text),
                            text.iter().all(|&b| plain_byte(b)),
                            "{}",
                            text.escape_ascii()
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn every_special_character_in_every_place_of_short_and_long_strings() {
        // The plain test reads sixteen bytes at a time from 16 bytes on,
        // the last chunk overlapping: try each place in and across chunks.
        let expected = |text: &str| {
            let mut out = String::from("\"");
            for c in text.chars() {
                match c {
                    '"' => out.push_str("\\\""),
                    '\\' => out.push_str("\\\\"),
                    '\n' => out.push_str("\\n"),
                    '\t' => out.push_str("\\t"),
                    '\u{1}' => out.push_str("\\u0001"),
                    c => out.push(c),
                }
            }
            out.push('"');
            out
        };
        for len in 0..40 {
            for at in 0..len {
                for special in ['"', '\\', '\n', '\t', '\u{1}', 'é', '~'] {
                    let text: String = (0..len)
                        .map(|i| if i == at { special } else { 'x' })
                        .collect();
                    let mut out = Vec::new();
                    push_str(&mut out, &text);
                    assert_eq!(String::from_utf8(out).unwrap(), expected(&text), "{text:?}");
                }
            }
        }
    }
}
