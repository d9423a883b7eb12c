//! (d) The context check: `json::Validator`, which remembers the array
//! elements it found valid and the shapes of the texts it checked in full,
//! against the plain `json::validate`.

use fb_join::json::{validate, Validator};

/// The first byte chooses where the rest splits into two texts, `a` and
/// `b`; one validator then checks `a`, `b`, `a` again and `b` again, so
/// that the second time round it meets the elements of the first; then
/// `a` with `b` put inside it, where the first byte says again, which has
/// the shape of `a` whenever `b` fits where it goes (in a string, in a
/// number, as a value). Each time it must say exactly what `validate`
/// says, error offsets included.
pub fn json(data: &[u8]) {
    let Some((&split, rest)) = data.split_first() else {
        return;
    };
    let at = usize::from(split) * rest.len() / 256;
    let (a, b) = rest.split_at(at.min(rest.len()));
    let inside = usize::from(split) * a.len() / 256;
    let spliced = [&a[..inside], b, &a[inside..]].concat();
    let mut remembering = Validator::new();
    for text in [a, b, a, b, &spliced, a, &spliced] {
        assert_eq!(
            remembering.validate(text),
            validate(text),
            "on {}",
            text.escape_ascii()
        );
    }
}
