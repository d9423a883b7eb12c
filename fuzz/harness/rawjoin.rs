//! Fuzz harness over the raw-stream joiner, shared by the `rawjoin` fuzz
//! target and the regression test that replays `tests/data/fuzz/rawjoin/`
//! (`crates/fb-join/tests/rawjoin.rs` includes this file). A panic is a
//! finding.

use fb_join::rawjoin::{join, Config, Input, Item, Side};

/// The first byte chooses options (a window or none, its length and skew,
/// recover); the next two (little-endian) where the rest splits into an
/// interaction stream and an observation stream. Checks: every
/// observation read is joined or handed out unjoined exactly once; the
/// groups handed out hold every interaction-side event read and every
/// joined observation (streams are routed by the file they are in, not by
/// their events' types: an outcome in the interaction stream is an
/// interaction-side event); recovery only skips forward, inside the input;
/// pages are given back in ranges inside the input; only a join with a
/// window reports streams that go back in time, by more than the skew.
pub fn rawjoin(data: &[u8]) {
    let [flags, s0, s1, rest @ ..] = data else {
        return;
    };
    let split = usize::from(u16::from_le_bytes([*s0, *s1])).min(rest.len());
    let (interactions, observations) = rest.split_at(split);
    let inputs = [
        Input {
            side: Side::Interactions,
            bytes: interactions,
        },
        Input {
            side: Side::Observations,
            bytes: observations,
        },
    ];
    let cfg = Config {
        eud: (flags & 1 != 0).then_some(i64::from(flags >> 4) * 1_000_000),
        skew: i64::from((flags >> 2) & 3) * 500_000,
        recover: flags & 2 != 0,
    };
    let (mut in_groups, mut unjoined, mut groups, mut dedup) = (0u64, 0u64, 0u64, 0u64);
    let mut sink = |item: Item<'_>| {
        match item {
            Item::Group(events) => {
                groups += 1;
                assert!(!events.is_empty(), "an empty group");
                in_groups += events.len() as u64;
            }
            Item::Unjoined(..) => unjoined += 1,
            Item::Dedup(_) => dedup += 1,
        }
        Ok(())
    };
    let lens = inputs.map(|i| i.bytes.len() as u64);
    let mut release = |input: usize, range: std::ops::Range<u64>| {
        assert!(range.start <= range.end, "{range:?}");
        assert!(range.end <= lens[input], "{range:?} past the end");
    };
    let Ok(report) = join(&inputs, cfg, &mut sink, &mut release) else {
        // Only an event without client time under a window stops a join.
        assert!(cfg.eud.is_some(), "a join without a window failed");
        return;
    };
    assert_eq!(report.groups, groups);
    assert_eq!(report.dedup, dedup);
    assert_eq!(
        report.interactions + report.episodes + report.joined,
        in_groups
    );
    assert_eq!(report.late + report.early + report.orphans, unjoined);
    assert_eq!(
        report.observations,
        report.joined + report.late + report.early + report.orphans
    );
    for w in &report.went_back {
        assert!(cfg.eud.is_some(), "went back in time without a window");
        assert!(w.events >= 1 && w.furthest > cfg.skew, "{w:?}");
        assert!(
            w.latest - w.time > cfg.skew && w.furthest >= w.latest - w.time,
            "{w:?}"
        );
    }
    for d in &report.damage {
        if let Some(at) = d.resumed_at {
            assert!(cfg.recover, "resumed without recover");
            let len = inputs[d.input].bytes.len() as u64;
            assert!(at <= len, "resumed past the end");
        }
    }
}
