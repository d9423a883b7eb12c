//! (d) The context check: `json::Validator`, which remembers the array
//! elements it found valid, against the plain `json::validate`.

use fb_join::json::{validate, Validator};

/// The first byte chooses where the rest splits into two texts, `a` and
/// `b`; one validator then checks `a`, `b`, `a` again and `b` again, so
/// that the second time round it meets the elements of the first. Each
/// time it must say exactly what `validate` says, error offsets included.
pub fn json(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = usize::from(split) * rest.len() / 256;
    let (a, b) = rest.split_at(at.min(rest.len()));
    let mut remembering = Validator::new();
    for text in [a, b, a, b] {
        assert_eq!(
            remembering.validate(text),
            validate(text),
            "on {}",
            text.escape_ascii()
        );
    }
}
