//! The validator as it was before it was made fast, kept verbatim as the
//! specification: the differential tests require the fast one to agree with
//! it on every input, error offsets and texts included. Only its error type
//! and depth limit are the parent's, so that the two answers compare.

use super::{JsonError, MAX_DEPTH};

#[derive(Clone, Copy, PartialEq)]
enum Expect {
    Value,
    AfterValue,
}

/// Checks that `text` is exactly one JSON value, whitespace around it.
pub fn validate(text: &[u8]) -> Result<(), JsonError> {
    if let Err(e) = std::str::from_utf8(text) {
        return Err(JsonError {
            offset: e.valid_up_to(),
            what: "invalid UTF-8",
        });
    }
    // One bit per open container: 1 = object, 0 = array.
    let mut stack = [0u64; MAX_DEPTH / 64];
    let mut depth = 0usize;
    let mut pos = skip_ws(text, 0);
    let mut state = Expect::Value;
    let err = |offset, what| Err(JsonError { offset, what });
    loop {
        match state {
            Expect::Value => {
                let Some(&b) = text.get(pos) else {
                    return err(pos, "a value was expected");
                };
                match b {
                    b'{' | b'[' => {
                        if depth == MAX_DEPTH {
                            return err(pos, "nested too deeply");
                        }
                        let bit = 1u64 << (depth % 64);
                        if let Some(word) = stack.get_mut(depth / 64) {
                            if b == b'{' {
                                *word |= bit;
                            } else {
                                *word &= !bit;
                            }
                        }
                        depth += 1;
                        pos = skip_ws(text, pos + 1);
                        let close = if b == b'{' { b'}' } else { b']' };
                        if text.get(pos) == Some(&close) {
                            depth -= 1;
                            pos += 1;
                            state = Expect::AfterValue;
                        } else if b == b'{' {
                            pos = key(text, pos)?;
                        }
                    }
                    b'"' => {
                        pos = string(text, pos)?;
                        state = Expect::AfterValue;
                    }
                    b't' => {
                        pos = literal(text, pos, b"true")?;
                        state = Expect::AfterValue;
                    }
                    b'f' => {
                        pos = literal(text, pos, b"false")?;
                        state = Expect::AfterValue;
                    }
                    b'n' => {
                        pos = literal(text, pos, b"null")?;
                        state = Expect::AfterValue;
                    }
                    b'-' | b'0'..=b'9' => {
                        pos = number(text, pos)?;
                        state = Expect::AfterValue;
                    }
                    _ => return err(pos, "a value was expected"),
                }
            }
            Expect::AfterValue => {
                pos = skip_ws(text, pos);
                if depth == 0 {
                    return if pos == text.len() {
                        Ok(())
                    } else {
                        err(pos, "text after the value")
                    };
                }
                let top = depth - 1;
                let in_object = stack
                    .get(top / 64)
                    .is_some_and(|w| w & (1u64 << (top % 64)) != 0);
                match (text.get(pos), in_object) {
                    (Some(b','), true) => {
                        pos = key(text, skip_ws(text, pos + 1))?;
                        state = Expect::Value;
                    }
                    (Some(b','), false) => {
                        pos = skip_ws(text, pos + 1);
                        state = Expect::Value;
                    }
                    (Some(b'}'), true) | (Some(b']'), false) => {
                        depth -= 1;
                        pos += 1;
                    }
                    (_, true) => return err(pos, "`,` or `}` was expected"),
                    (_, false) => return err(pos, "`,` or `]` was expected"),
                }
            }
        }
    }
}

fn skip_ws(text: &[u8], mut pos: usize) -> usize {
    while matches!(text.get(pos), Some(b' ' | b'\t' | b'\n' | b'\r')) {
        pos += 1;
    }
    pos
}

/// A member name and its colon; returns where the value starts.
fn key(text: &[u8], pos: usize) -> Result<usize, JsonError> {
    if text.get(pos) != Some(&b'"') {
        return Err(JsonError {
            offset: pos,
            what: "a member name was expected",
        });
    }
    let pos = skip_ws(text, string(text, pos)?);
    if text.get(pos) != Some(&b':') {
        return Err(JsonError {
            offset: pos,
            what: "`:` was expected",
        });
    }
    Ok(skip_ws(text, pos + 1))
}

/// A string starting at the quote at `pos`; returns the position after it.
fn string(text: &[u8], pos: usize) -> Result<usize, JsonError> {
    let mut i = pos + 1;
    loop {
        let Some(&b) = text.get(i) else {
            return Err(JsonError {
                offset: pos,
                what: "unterminated string",
            });
        };
        match b {
            b'"' => return Ok(i + 1),
            b'\\' => match text.get(i + 1) {
                Some(b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't') => i += 2,
                Some(b'u') => {
                    let hex = text.get(i + 2..i + 6);
                    if !hex.is_some_and(|h| h.iter().all(u8::is_ascii_hexdigit)) {
                        return Err(JsonError {
                            offset: i,
                            what: "bad \\u escape",
                        });
                    }
                    i += 6;
                }
                _ => {
                    return Err(JsonError {
                        offset: i,
                        what: "bad escape",
                    })
                }
            },
            0..=0x1F => {
                return Err(JsonError {
                    offset: i,
                    what: "control character in a string",
                })
            }
            _ => i += 1,
        }
    }
}

fn literal(text: &[u8], pos: usize, word: &[u8]) -> Result<usize, JsonError> {
    if text.get(pos..pos + word.len()) == Some(word) {
        Ok(pos + word.len())
    } else {
        Err(JsonError {
            offset: pos,
            what: "unknown literal",
        })
    }
}

fn digits(text: &[u8], mut pos: usize) -> usize {
    while text.get(pos).is_some_and(u8::is_ascii_digit) {
        pos += 1;
    }
    pos
}

fn number(text: &[u8], mut pos: usize) -> Result<usize, JsonError> {
    let start = pos;
    let bad = |offset| {
        Err(JsonError {
            offset,
            what: "malformed number",
        })
    };
    if text.get(pos) == Some(&b'-') {
        pos += 1;
    }
    match text.get(pos) {
        Some(b'0') => pos += 1,
        Some(b'1'..=b'9') => pos = digits(text, pos),
        _ => return bad(start),
    }
    if text.get(pos) == Some(&b'.') {
        let after = digits(text, pos + 1);
        if after == pos + 1 {
            return bad(start);
        }
        pos = after;
    }
    if matches!(text.get(pos), Some(b'e' | b'E')) {
        pos += 1;
        if matches!(text.get(pos), Some(b'+' | b'-')) {
            pos += 1;
        }
        let after = digits(text, pos);
        if after == pos {
            return bad(start);
        }
        pos = after;
    }
    Ok(pos)
}
