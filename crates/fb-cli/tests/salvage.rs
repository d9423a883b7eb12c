//! Partial salvage: the good events of a cut or corrupt batch come back,
//! and nothing that the intact log would not give.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::collections::HashSet;
use std::path::Path;

use common::{data, fb, p, scratch_dir};
use fb_format::{MessageKind, SliceReader};
use fb_schema::PayloadType;

/// The DSJSON lines of `log` as `fb convert` (with `flags`) writes them.
fn lines(log: &Path, flags: &[&str]) -> Vec<String> {
    let mut args = vec!["convert", "-q"];
    args.extend_from_slice(flags);
    args.push(p(log));
    let out = fb(&args);
    assert!(out.code <= 1, "{}: {}", log.display(), out.stderr);
    out.stdout.lines().map(str::to_string).collect()
}

/// The top-level event id of a DSJSON line.
fn event_id(line: &str) -> String {
    let doc: serde_json::Value = serde_json::from_str(line).unwrap();
    doc["EventId"].as_str().unwrap_or_default().to_string()
}

#[test]
fn cut_batches_give_back_their_intact_lines() {
    let dir = scratch_dir("salvage-cuts");
    let files = [
        "valid_joined_logs/average_reward_100_interactions.fb",
        "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
        "valid_joined_logs/slates_average_reward_100_interactions.fb",
    ];
    let (mut got, mut floor) = (0usize, 0.0f64);
    for file in files {
        let log = data(file);
        let bytes = std::fs::read(&log).unwrap();
        let intact = lines(&log, &[]);
        let whole: HashSet<&String> = intact.iter().collect();
        for percent in [50usize, 75, 90] {
            let name = format!("{file} cut at {percent}%");
            let cut = dir.join(format!("cut-{percent}.fb"));
            std::fs::write(&cut, &bytes[..bytes.len() * percent / 100]).unwrap();
            let out = fb(&["convert", "--recover", p(&cut)]);
            assert_eq!(out.code, 1, "{name}: {}", out.stderr);
            assert!(
                out.stderr.contains("events salvaged"),
                "{name}: {}",
                out.stderr
            );
            let salvaged: Vec<&str> = out.stdout.lines().collect();
            for line in &salvaged {
                assert!(
                    whole.contains(&line.to_string()),
                    "{name}: a line the intact log does not have: {line}"
                );
            }
            // In order, as the intact log gives them.
            let mut rest = intact.iter();
            for line in &salvaged {
                assert!(rest.any(|l| l == line), "{name}: lines out of order");
            }
            got += salvaged.len();
            floor += 0.6 * percent as f64 / 100.0 * intact.len() as f64;

            // validate says how many events of the cut batch are good, and
            // repair writes them in a valid batch that converts the same.
            let v = fb(&["validate", p(&cut)]);
            assert_eq!(v.code, 1, "{name}");
            assert!(
                v.stdout.contains("events are still good"),
                "{name}: {}",
                v.stdout
            );
            let repaired = dir.join(format!("repaired-{percent}.fb"));
            let r = fb(&["repair", "--force", p(&cut), "-o", p(&repaired)]);
            assert_eq!(r.code, 1, "{name}: {}", r.stderr);
            assert!(r.stderr.contains("events salvaged"), "{name}: {}", r.stderr);
            assert_eq!(
                fb(&["validate", p(&repaired)]).code,
                0,
                "{name}: repaired log"
            );
            let again: Vec<String> = lines(&repaired, &[]);
            assert_eq!(
                again.len(),
                salvaged.len(),
                "{name}: repaired log converts otherwise"
            );
            assert!(again.iter().zip(&salvaged).all(|(a, b)| a == b), "{name}");
            // stats counts them.
            let s = fb(&["stats", "--recover", "--json", p(&cut)]);
            let doc: serde_json::Value = serde_json::from_str(&s.stdout).unwrap();
            assert_eq!(doc["salvaged"]["messages"], 1, "{name}");
            assert_eq!(
                doc["joined"].as_u64(),
                Some(salvaged.len() as u64),
                "{name}"
            );
        }
    }
    assert!(
        got as f64 >= floor,
        "{got} lines salvaged over the nine cuts, at least {floor:.0} expected"
    );
}

/// An event of a batch: (position, id, a decision?, where its nested
/// `Event` bytes start in the log).
type Listed = (usize, String, bool, usize);

/// The REGULAR message of `log` with the most events: its offset and its
/// events.
fn biggest_batch(log: &[u8]) -> (u64, Vec<Listed>) {
    let mut best: Option<(u64, Vec<Listed>)> = None;
    for msg in SliceReader::new(log) {
        let msg = msg.unwrap();
        if msg.kind != MessageKind::Regular {
            continue;
        }
        let base = msg.offset as usize + 8;
        let (listed, start) = fb_format::skim::event_list(msg.payload).unwrap();
        let mut events = Vec::new();
        for (position, view) in msg.events().unwrap().enumerate() {
            let view = view.unwrap();
            let (_, bytes, _) =
                fb_format::skim::listed_event(msg.payload, start, position).unwrap();
            let at = base + (bytes.as_ptr() as usize - msg.payload.as_ptr() as usize);
            let decision = !matches!(
                view.payload_type(),
                PayloadType::Outcome | PayloadType::DedupInfo | PayloadType::Episode
            );
            events.push((position, view.id.to_string(), decision, at));
        }
        assert_eq!(events.len(), listed);
        if best.as_ref().is_none_or(|b| b.1.len() < events.len()) {
            best = Some((msg.offset, events));
        }
    }
    best.unwrap()
}

#[test]
fn a_corrupt_event_loses_only_the_decisions_it_could_belong_to() {
    let dir = scratch_dir("salvage-flip");
    // (problem type, extra convert flags)
    let cases: &[(&str, &[&str])] = &[("cb", &[]), ("ccb", &[]), ("slates", &[]), ("ca", &[])];
    for (kind, flags) in cases {
        let log = dir.join(format!("{kind}.fb"));
        let gen = fb(&[
            "gen",
            "-q",
            "--problem-type",
            kind,
            "--events",
            "40",
            "--events-per-message",
            "40",
            "--seed",
            "3",
            "-o",
            p(&log),
        ]);
        assert_eq!(gen.code, 0, "{kind}: {}", gen.stderr);
        let bytes = std::fs::read(&log).unwrap();
        let intact = lines(&log, flags);
        let (_, events) = biggest_batch(&bytes);
        assert!(events.len() >= 40, "{kind}: one batch of the decisions");
        // An outcome in the middle, so that the decision it belongs to
        // comes before it and must be withheld.
        let (flipped, _, _, at) = events
            .iter()
            .skip(events.len() / 2)
            .find(|e| !e.2)
            .cloned()
            .unwrap_or_else(|| panic!("{kind}: no outcome after the middle"));
        let mut broken = bytes.clone();
        for b in &mut broken[at..at + 8] {
            *b ^= 0xA5;
        }
        let damaged = dir.join(format!("{kind}-flipped.fb"));
        std::fs::write(&damaged, &broken).unwrap();

        // Without --recover, the rest of the message after the bad event is
        // dropped (as the reference does); with it, the rule decides.
        let mut args = vec!["convert", "--recover"];
        args.extend_from_slice(flags);
        args.push(p(&damaged));
        let out = fb(&args);
        assert_eq!(out.code, 1, "{kind}: {}", out.stderr);
        assert!(
            out.stderr.contains(&format!("event {flipped} lost")),
            "{kind}: {}",
            out.stderr
        );
        // Safe: the decisions after the lost event; their outcomes follow
        // them, all intact.
        let safe: HashSet<&str> = events
            .iter()
            .filter(|e| e.2 && e.0 > flipped)
            .map(|e| e.1.as_str())
            .collect();
        let withheld = events.iter().filter(|e| e.0 < flipped).count();
        assert!(
            out.stderr
                .contains(&format!("{withheld} good ones withheld")),
            "{kind}: {}",
            out.stderr
        );
        let want: Vec<&String> = intact
            .iter()
            .filter(|l| safe.contains(event_id(l).as_str()))
            .collect();
        let got: Vec<&str> = out.stdout.lines().collect();
        assert!(!want.is_empty(), "{kind}: the case tests nothing");
        assert_eq!(got.len(), want.len(), "{kind}: {}", out.stderr);
        for (g, w) in got.iter().zip(&want) {
            assert_eq!(g, w, "{kind}: a salvaged line differs from the intact one");
        }
    }
}
