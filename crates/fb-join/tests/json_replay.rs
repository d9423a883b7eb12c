//! The `json` fuzz target's code, replayed on its seeds and on the inputs
//! it found (`tests/data/fuzz/json`): a remembering validator says what
//! the plain check says.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

#[path = "../../../fuzz/harness/json.rs"]
mod harness;

use std::path::PathBuf;

/// The `json` fuzz target's seeds and the inputs it found
/// (`fuzz/seeds/json/*`, `tests/data/fuzz/json/*`), replayed through its
/// code.
#[test]
fn fuzz_seeds_and_regressions_replay() {
    for path in fb_tests::fuzz_inputs("json") {
        eprintln!("replaying {}", path.display());
        harness::json(&std::fs::read(&path).unwrap());
    }
}

/// A context, then the same context with a few bytes put in at every
/// place: texts of the first one's shape wherever they land in a value,
/// valid or not, checked by their values alone, and said valid or not as
/// the plain check says.
#[test]
fn bytes_put_in_a_context_at_every_place() {
    let context: &[u8] = br#"{"GUser":{"id":"u87734","major":"med","age":65},"_multi":[{"TAction":{"a_id":"a6"}},{"TAction":{"a_id":"a7"}}],"p":[0.5,-1e3],"ok":true}"#;
    let values: [&[u8]; 14] = [
        b"x",
        b"\\n",
        b"\\u00e9",
        b"\\x",
        b"\"",
        b"\xc3\xa9",
        b"\xff",
        b"\x01",
        b"1",
        b".5",
        b"e",
        b"{}",
        b",1",
        b" ",
    ];
    let mut fitted = 0;
    for at in 0..=context.len() {
        for value in values {
            let text = [&context[..at], value, &context[at..]].concat();
            let mut v = fb_join::json::Validator::new();
            assert_eq!(v.validate(context), Ok(()));
            assert_eq!(
                v.validate(&text),
                fb_join::json::validate(&text),
                "on {}",
                text.escape_ascii()
            );
            fitted += v.shapes().1;
        }
    }
    // Most texts that stayed valid had the context's shape.
    assert!(fitted > 200, "{fitted} texts had the shape");
}

#[test]
fn every_split_of_two_contexts_sharing_an_action() {
    let seed = std::fs::read(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/json/seed-contexts"),
    )
    .unwrap();
    let body = &seed[1..];
    for split in 0..=u8::MAX {
        let mut input = vec![split];
        input.extend_from_slice(body);
        harness::json(&input);
        // And with a byte of the shared action changed in one place.
        if let Some(at) = body.windows(4).position(|w| w == b"a7\",") {
            input[1 + at + 1] = b'8';
            harness::json(&input);
        }
    }
}
