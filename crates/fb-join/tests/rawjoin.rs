//! The raw-stream joiner's fuzz harness (`fuzz/harness/rawjoin.rs`) over
//! the corpus pairs with every option byte, and over the saved inputs in
//! `tests/data/fuzz/rawjoin/`.

#[path = "../../../fuzz/harness/rawjoin.rs"]
mod harness;

use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

#[test]
fn every_option_byte_over_corpus_pairs_accounts_for_every_observation() {
    // (interactions, observations)
    for (i, o) in [
        (
            "fb_events/cb_v2_size_2.fb",
            "fb_events/f-reward_v2_size_2.fb",
        ),
        ("fb_events/cb_v2_dedup.fb", "fb_events/f-reward_v2.fb"),
        (
            "client_time/cb_v2_client_time.fb",
            "client_time/f-reward_3obs_v2_client_time.fb",
        ),
        (
            "reward_functions/ccb/ccb_v2.fb",
            "reward_functions/ccb/fmix-reward_v2.fb",
        ),
    ] {
        let (a, b) = (
            std::fs::read(data(i)).unwrap(),
            std::fs::read(data(o)).unwrap(),
        );
        for flags in 0..=255u8 {
            for cut in [0, a.len() / 2, a.len()] {
                let mut input = vec![flags];
                input.extend_from_slice(&(cut as u16).to_le_bytes());
                input.extend_from_slice(&a[..cut]);
                input.extend_from_slice(&b);
                harness::rawjoin(&input);
            }
        }
    }
}

#[test]
fn fuzz_regressions_replay() {
    let dir = data("fuzz/rawjoin");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        harness::rawjoin(&std::fs::read(entry.unwrap().path()).unwrap());
        n += 1;
    }
    assert!(n >= 2, "{n} inputs in {}", dir.display());
}
