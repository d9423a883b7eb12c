//! VW decision-service JSON contexts, written into reused strings.
//!
//! Actions come from a fixed pool: the text of pool item `k` depends only
//! on `k`, and so does its dedup id, so the same action always has the
//! same text and id across a log.

use std::fmt::Write as _;

use fb_format::splitmix::{mix64, SplitMix64};

const MAJORS: [&str; 8] = ["eng", "math", "bio", "art", "law", "med", "econ", "cs"];
const HOBBIES: [&str; 8] = [
    "hiking",
    "chess",
    "music",
    "cooking",
    "reading",
    "cycling",
    "gaming",
    "photography",
];
const TOPICS: [&str; 10] = [
    "sports", "politics", "tech", "music", "food", "travel", "science", "finance", "movies",
    "health",
];
const POSITIONS: [&str; 4] = ["top", "side", "bottom", "footer"];

fn pick<'a>(list: &[&'a str], at: u64) -> &'a str {
    // at % len < len
    list.get((at % list.len() as u64) as usize)
        .copied()
        .unwrap_or_default()
}

/// The dedup id of pool item `key`: a stable hash below 2^53 so that any
/// JSON reader keeps it exact.
pub fn dedup_id(key: u64) -> u64 {
    mix64(key ^ 0x5EED_0FAC_7100_0000) & ((1u64 << 53) - 1)
}

/// Appends the JSON object of pool item `key` (an action's features).
/// `slot` adds `"_slot_id"` (slates).
pub fn action_json(out: &mut String, key: u64, slot: Option<usize>) {
    out.push('{');
    if let Some(slot) = slot {
        let _ = write!(out, "\"_slot_id\":{slot},");
    }
    let _ = write!(
        out,
        "\"TAction\":{{\"a_id\":\"a{key}\",\"topic\":\"{}\",\"len\":{}}}}}",
        pick(&TOPICS, key),
        10 + mix64(key) % 90
    );
}

/// Appends the shared user features `"GUser":{...}`.
pub fn user_json(out: &mut String, rng: &mut SplitMix64) {
    let user = rng.below_one_draw(100_000);
    let _ = write!(
        out,
        "\"GUser\":{{\"id\":\"u{user}\",\"major\":\"{}\",\"hobby\":\"{}\",\"age\":{}}}",
        pick(&MAJORS, rng.next_u64()),
        pick(&HOBBIES, rng.next_u64()),
        18 + rng.below_one_draw(60)
    );
}

/// Appends the `_slots` array: slot `i` gets `"_id"` when `ids[i]` is set.
pub fn slots_json(out: &mut String, ids: &[Option<String>]) {
    out.push_str("\"_slots\":[");
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('{');
        if let Some(id) = id {
            let _ = write!(out, "\"_id\":\"{id}\",");
        }
        let _ = write!(
            out,
            "\"TSlot\":{{\"pos\":\"{}\",\"rank\":{i}}}}}",
            pick(&POSITIONS, i as u64)
        );
    }
    out.push(']');
}

/// Appends the continuous-action context features `"TCtx":{...}`.
pub fn ca_json(out: &mut String, rng: &mut SplitMix64) {
    let _ = write!(
        out,
        "\"TCtx\":{{\"hour\":{},\"room\":\"r{}\",\"occupancy\":{}}}",
        rng.below_one_draw(24),
        rng.below_one_draw(50),
        rng.below_one_draw(10)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn action_objects_are_flat() {
        let mut s = String::new();
        action_json(&mut s, 3, None);
        assert_eq!(
            s,
            format!(
                "{{\"TAction\":{{\"a_id\":\"a3\",\"topic\":\"music\",\"len\":{}}}}}",
                10 + mix64(3) % 90
            )
        );
        let mut s = String::new();
        action_json(&mut s, 3, Some(1));
        assert!(s.starts_with("{\"_slot_id\":1,\"TAction\":{\"a_id\":\"a3\""));
        assert!(s.ends_with("}}"));
    }

    #[test]
    fn slots_with_and_without_ids() {
        let mut s = String::new();
        slots_json(&mut s, &[Some("slot-0".into()), None]);
        assert_eq!(
            s,
            "\"_slots\":[{\"_id\":\"slot-0\",\"TSlot\":{\"pos\":\"top\",\"rank\":0}},\
             {\"TSlot\":{\"pos\":\"side\",\"rank\":1}}]"
        );
    }
}
