//! The `json` fuzz target's code, replayed on its seeds and on the inputs
//! it found (`tests/data/fuzz/json`): a remembering validator says what
//! the plain check says.

#[path = "../../../fuzz/harness/json.rs"]
mod harness;

use std::path::PathBuf;

fn files(dir: PathBuf) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_none_or(|e| e != "md"))
        .collect();
    paths.sort();
    paths
}

#[test]
fn seeds_and_found_inputs_replay() {
    let seeds = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/seeds/json");
    let seeds = files(seeds);
    assert!(!seeds.is_empty(), "no seed in fuzz/seeds/json");
    for path in seeds
        .into_iter()
        .chain(files(fb_tests::data_dir().join("fuzz/json")))
    {
        harness::json(&std::fs::read(&path).unwrap());
    }
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
