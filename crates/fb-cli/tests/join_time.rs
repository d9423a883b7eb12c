//! `fb join` and time: the generator's raw streams are in client time
//! order and join to the counts their client times imply; a stream that
//! goes back in time is reported with where; what joins nothing is named
//! late, early or orphan as it is; the joined events' timestamps are the
//! time `--timestamp` chooses, so that the join of generated streams
//! converts as the generated log does.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{fb, p, scratch_dir};
use fb_format::raw::RawStreamReader;
use fb_schema::{PayloadType, TimeStamp, UnionArg};
use fb_writer::raw::{take_apart, Streams};
use fb_writer::{CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, MetaSpec, PayloadSpec};

/// One event of a raw stream as the test reads it.
#[derive(Debug, Clone)]
struct Ev {
    id: String,
    kind: PayloadType,
    /// Client time, µs since 1970.
    time: i64,
    offset: u64,
    message: u64,
}

/// The events of a raw stream, in order.
fn events(path: &Path) -> Vec<Ev> {
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut reader = RawStreamReader::new(&bytes);
    while let Some(msg) = reader.next_message().unwrap() {
        for e in msg.raw_events().unwrap() {
            out.push(Ev {
                id: e.id.to_string(),
                kind: e.kind,
                time: fb_format::index::micros(&e.client_time.unwrap()),
                offset: msg.offset,
                message: msg.index,
            });
        }
    }
    out
}

/// (joined, late, early, orphan) as a window of `eud` µs and a skew of
/// `skew` µs join `observations` to the first events of `interactions`,
/// from their client times alone: the definition, not the joiner.
fn expected(interactions: &[Ev], observations: &[Ev], eud: i64, skew: i64) -> [u64; 4] {
    let mut first: HashMap<&str, i64> = HashMap::new();
    for e in interactions
        .iter()
        .filter(|e| e.kind != PayloadType::DedupInfo)
    {
        first.entry(&e.id).or_insert(e.time);
    }
    let mut counts = [0; 4];
    for o in observations {
        let slot = match first.get(o.id.as_str()) {
            None => 3,
            Some(&t) if o.time < t - skew => 2,
            Some(&t) if o.time > t + eud => 1,
            Some(_) => 0,
        };
        counts[slot] += 1;
    }
    counts
}

/// The summary's counts: (joined, late, early, orphan).
fn reported(stderr: &str) -> [u64; 4] {
    let line = stderr
        .lines()
        .find(|l| l.contains(" joined with "))
        .unwrap_or_else(|| panic!("no summary: {stderr}"));
    // "... joined with J of N observations; unjoined: L late, E early, O orphan; ..."
    let words: Vec<&str> = line
        .split([' ', ',', ';'])
        .filter(|w| !w.is_empty())
        .collect();
    let after = |word: &str| -> u64 {
        let k = words.iter().position(|w| *w == word).unwrap();
        words[k + 1].parse().unwrap()
    };
    let before = |word: &str| -> u64 {
        let k = words.iter().position(|w| *w == word).unwrap();
        words[k - 1].parse().unwrap()
    };
    [
        after("with"),
        before("late"),
        before("early"),
        before("orphan"),
    ]
}

fn generate(dir: &Path, name: &str, flags: &[&str]) -> PathBuf {
    let log = dir.join(format!("{name}.fb"));
    let mut args = vec!["gen", "-q", "--raw-streams", "--force", "-o", p(&log)];
    args.extend_from_slice(flags);
    let run = fb(&args);
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    log
}

fn stream(log: &Path, side: &str) -> PathBuf {
    log.with_extension(format!("{side}.fb"))
}

#[test]
fn generated_streams_are_in_client_time_order_and_join_by_it() {
    let dir = scratch_dir("join-time-order");
    let log = generate(&dir, "cb", &["--events", "3000", "--seed", "4"]);
    let (i, o) = (stream(&log, "interactions"), stream(&log, "observations"));
    let (interactions, observations) = (events(&i), events(&o));
    assert_eq!(observations.len(), 3000);
    for (side, evs) in [
        ("interactions", &interactions),
        ("observations", &observations),
    ] {
        for pair in evs.windows(2) {
            assert!(pair[0].time <= pair[1].time, "{side}: {pair:?}");
        }
    }
    // (case, flags, window, skew)
    let minute = 60_000_000;
    let cases: [(&str, &[&str], i64, i64); 4] = [
        ("eud 1m", &["--eud", "1m"], minute, 0),
        (
            "eud 1m, skew 1h",
            &["--eud", "1m", "--skew", "1h"],
            minute,
            60 * minute,
        ),
        ("eud 3m", &["--eud", "3m"], 3 * minute, 0),
        (
            "eud 3m, skew 1h",
            &["--eud", "3m", "--skew", "1h"],
            3 * minute,
            60 * minute,
        ),
    ];
    for (case, flags, eud, skew) in cases {
        let out = dir.join("joined.fb");
        let mut args = vec![
            "join",
            "--interactions",
            p(&i),
            "--observations",
            p(&o),
            "--force",
            "-o",
            p(&out),
        ];
        args.extend_from_slice(flags);
        let run = fb(&args);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        let want = expected(&interactions, &observations, eud, skew);
        // Outcomes come 1 to 301 s after their decision: some, not all,
        // inside each window.
        assert!(want[0] > 0 && want[1] > 0, "{case}: {want:?}");
        assert_eq!(reported(&run.stderr), want, "{case}: {}", run.stderr);
        assert!(
            !run.stderr.contains("goes back in time"),
            "{case}: {}",
            run.stderr
        );
    }
}

#[test]
fn generated_multistep_streams_join_to_the_generated_rewards() {
    let dir = scratch_dir("join-time-multistep");
    let log = generate(
        &dir,
        "ms",
        &[
            "--problem-type",
            "multistep",
            "--events",
            "300",
            "--seed",
            "2",
        ],
    );
    let [i, e, o] = ["interactions", "episodes", "observations"].map(|side| stream(&log, side));
    let steps = events(&i);
    for pair in steps.windows(2) {
        assert!(pair[0].time <= pair[1].time, "{pair:?}");
    }
    let joined = dir.join("joined.fb");
    for flags in [&[][..], &["--eud", "1h"]] {
        let mut args = vec![
            "join",
            "-q",
            "--interactions",
            p(&i),
            "--episodes",
            p(&e),
            "--observations",
            p(&o),
            "--force",
            "-o",
            p(&joined),
        ];
        args.extend_from_slice(flags);
        assert_eq!(fb(&args).code, 0, "{flags:?}");
        let costs = |path: &Path| -> Vec<(String, String)> {
            let run = fb(&["convert", "-q", "--multistep", p(path)]);
            run.stdout
                .lines()
                .map(|l| {
                    let v: serde_json::Value = serde_json::from_str(l).unwrap();
                    (v["EventId"].to_string(), v["_label_cost"].to_string())
                })
                .collect()
        };
        let (generated, again) = (costs(&log), costs(&joined));
        assert_eq!(generated.len(), 900);
        assert_eq!(generated, again, "{flags:?}");
    }
}

/// Observations of `d0` and `d1` around their decisions at 12:01:00,
/// and of `d2`, decided at 13:00:00, each with a value that says which
/// it is: as (id, seconds after 12:00, value).
const OBSERVATIONS: [(&str, u32, f32); 7] = [
    ("d0", 90, 1.0),  // joined
    ("d2", 100, 2.0), // an hour early: its interaction is not read yet
    ("d1", 150, 4.0), // late, 30 s past the window
    ("nobody", 200, 8.0),
    ("d0", 600, 16.0),  // late, eight minutes past the window
    ("d1", 3500, 32.0), // late by the best part of an hour
    ("d2", 3610, 64.0), // joined
];

fn at(secs: u32) -> TimeStamp {
    let s = 12 * 3600 + secs;
    TimeStamp::new(
        2026,
        1,
        2,
        (s / 3600) as u8,
        (s / 60 % 60) as u8,
        (s % 60) as u8,
        0,
    )
}

/// Interaction and observation streams: decisions `d0`, `d1` at 12:01:00
/// and `d2` at 13:00:00, and `observations` in the order given.
fn streams(dir: &Path, observations: &[(&'static str, u32, f32)]) -> (PathBuf, PathBuf) {
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    w.checkpoint(&CheckpointConfig::default()).unwrap();
    let event =
        |id: &'static str, time: TimeStamp, payload: PayloadSpec<'static>| JoinedEventSpec {
            meta: MetaSpec {
                client_time: Some(time),
                ..MetaSpec::new(id)
            },
            enqueued: time,
            payload,
        };
    for (id, secs) in [("d0", 60), ("d1", 60), ("d2", 3600)] {
        w.push_event(&event(
            id,
            at(secs),
            PayloadSpec::Cb(CbSpec {
                action_ids: Some(&[1, 2]),
                probabilities: Some(&[0.5, 0.5]),
                context: Some(br#"{"x":1}"#),
                ..CbSpec::default()
            }),
        ))
        .unwrap();
    }
    for &(id, secs, value) in observations {
        w.push_event(&event(
            id,
            at(secs),
            PayloadSpec::Outcome(fb_schema::OutcomeEventArgs {
                value: UnionArg::Numeric(value),
                index: UnionArg::None,
                action_taken: false,
            }),
        ))
        .unwrap();
    }
    w.end_regular().unwrap();
    w.eof().unwrap();
    let mut streams = Streams::default();
    take_apart(&w.into_inner(), &mut streams, 2).unwrap();
    let (i, o) = (dir.join("i.fb"), dir.join("o.fb"));
    std::fs::write(&i, &streams.interactions).unwrap();
    std::fs::write(&o, &streams.observations).unwrap();
    (i, o)
}

/// A join of the streams above with `flags`, and what it must give: the
/// reward sum of each decision, the summary's counts (joined, late,
/// early, orphan), whether it warns of a stream going back in time.
struct Case {
    name: &'static str,
    flags: &'static [&'static str],
    sums: [f64; 3],
    counts: [u64; 4],
    warned: bool,
}

/// Joins with `flags`; returns the run and each decision's reward sum.
fn join_sums(dir: &Path, i: &Path, o: &Path, flags: &[&str]) -> (common::Out, Vec<f64>) {
    let out = dir.join("joined.fb");
    let mut args = vec![
        "join",
        "--reward-function",
        "sum",
        "--interactions",
        p(i),
        "--observations",
        p(o),
        "--force",
        "-o",
        p(&out),
    ];
    args.extend_from_slice(flags);
    let run = fb(&args);
    assert_eq!(run.code, 0, "{flags:?}: {}", run.stderr);
    let conv = fb(&["convert", "-q", p(&out)]);
    let sums = conv
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            -v["_label_cost"].as_f64().unwrap()
        })
        .collect();
    (run, sums)
}

#[test]
fn what_joins_nothing_is_named_late_early_or_orphan() {
    let dir = scratch_dir("join-time-names");
    let (i, o) = streams(&dir, &OBSERVATIONS);
    // (case, flags, reward sums of d0..d2, [joined, late, early, orphan])
    let cases = [
        Case {
            name: "eud 60s",
            flags: &["--eud", "60s"],
            sums: [1.0, 0.0, 64.0],
            counts: [2, 3, 1, 1],
            warned: false,
        },
        Case {
            name: "no window",
            flags: &[],
            sums: [17.0, 36.0, 66.0],
            counts: [6, 0, 0, 1],
            warned: false,
        },
    ];
    for Case {
        name: case,
        flags,
        sums,
        counts,
        warned,
    } in cases
    {
        let (run, got) = join_sums(&dir, &i, &o, flags);
        assert_eq!(got, sums, "{case}");
        assert_eq!(reported(&run.stderr), counts, "{case}: {}", run.stderr);
        assert_eq!(run.stderr.contains("goes back in time"), warned, "{case}");
        for word in [
            "late: came after",
            "early: before",
            "orphan: no interaction",
        ] {
            assert!(run.stderr.contains(word), "{case}: {word}: {}", run.stderr);
        }
    }
}

#[test]
fn a_stream_that_goes_back_in_time_is_reported_with_where() {
    let dir = scratch_dir("join-time-back");
    // d1's observation at 12:01:50 comes after d0's at 12:03:20: back 90 s.
    let observations = [("d0", 90, 1.0), ("d0", 200, 2.0), ("d1", 110, 4.0)];
    let (i, o) = streams(&dir, &observations);
    let back = events(&o).into_iter().find(|e| e.id == "d1").unwrap();
    let cases = [
        // d0's late observation moves the stream to 12:03:20, past d1's
        // window and skew: d1's group is handed out before its own comes.
        Case {
            name: "eud 60s, skew 1m",
            flags: &["--eud", "60s", "--skew", "1m"],
            sums: [1.0, 0.0, 0.0],
            counts: [1, 2, 0, 0],
            warned: true,
        },
        Case {
            name: "eud 60s, skew 90s",
            flags: &["--eud", "60s", "--skew", "90s"],
            sums: [1.0, 4.0, 0.0],
            counts: [2, 1, 0, 0],
            warned: false,
        },
        Case {
            name: "no window",
            flags: &[],
            sums: [3.0, 4.0, 0.0],
            counts: [3, 0, 0, 0],
            warned: false,
        },
    ];
    for Case {
        name: case,
        flags,
        sums,
        counts,
        warned,
    } in cases
    {
        let (run, got) = join_sums(&dir, &i, &o, flags);
        assert_eq!(got, sums, "{case}");
        assert_eq!(reported(&run.stderr), counts, "{case}: {}", run.stderr);
        assert_eq!(
            run.stderr.contains("goes back in time"),
            warned,
            "{case}: {}",
            run.stderr
        );
        if warned {
            for part in [
                format!("warning: {}:", o.display()),
                format!("batch {} at byte {}", back.message, back.offset),
                "event `d1` at 2026-01-02T12:01:50.000000Z is 90s earlier".to_string(),
                "(2026-01-02T12:03:20.000000Z), more than --skew 60s".to_string(),
                "(1 event in this file, the furthest by 90s)".to_string(),
                "--skew 90s joins them".to_string(),
            ] {
                assert!(run.stderr.contains(&part), "{case}: {part}: {}", run.stderr);
            }
        }
    }
}

#[test]
fn joined_events_carry_the_time_timestamp_chooses() {
    let dir = scratch_dir("join-time-stamp");
    // (name, gen flags, convert flags)
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("cb", &["--problem-type", "cb"], &[]),
        (
            "cb-zstd-dedup-deferred",
            &[
                "--problem-type",
                "cb",
                "--zstd",
                "--dedup",
                "--deferred",
                "0.3",
                "--activated",
                "0.5",
            ],
            &[],
        ),
        ("ccb-dedup", &["--problem-type", "ccb", "--dedup"], &[]),
        (
            "slates",
            &["--problem-type", "slates", "--outcomes", "3"],
            &[],
        ),
        ("ca", &["--problem-type", "ca", "--activated", "0.5"], &[]),
        (
            "multistep",
            &["--problem-type", "multistep"],
            &["--multistep"],
        ),
    ];
    for (name, gen, convert) in cases {
        let mut flags = vec!["--events", "400", "--seed", "8"];
        flags.extend_from_slice(gen);
        let log = generate(&dir, name, &flags);
        let mut streams = vec![
            "--interactions".to_string(),
            p(&stream(&log, "interactions")).to_string(),
            "--observations".into(),
            p(&stream(&log, "observations")).into(),
        ];
        if stream(&log, "episodes").exists() {
            streams.extend(["--episodes".into(), p(&stream(&log, "episodes")).into()]);
        }
        let convert_all = |path: &Path, extra: &[&str]| {
            let mut args = vec!["convert", "-q"];
            args.extend_from_slice(convert);
            args.extend_from_slice(extra);
            args.push(p(path));
            let run = fb(&args);
            assert_eq!(run.code, 0, "{name}: {}", run.stderr);
            run.stdout
        };
        let generated = convert_all(&log, &["--use-client-time"]);
        assert_eq!(
            generated.lines().count(),
            if *convert == ["--multistep"] {
                1200
            } else {
                400
            }
        );
        let joined = dir.join(format!("{name}.joined.fb"));
        for window in [&[][..], &["--eud", "10m"]] {
            let mut args: Vec<String> = vec![
                "join".into(),
                "-q".into(),
                "--force".into(),
                "-o".into(),
                p(&joined).into(),
            ];
            args.extend(streams.iter().cloned());
            args.extend(["--timestamp".into(), "client".into()]);
            args.extend(window.iter().map(|s| s.to_string()));
            let run = fb(&args);
            assert_eq!(run.code, 0, "{name} {window:?}: {}", run.stderr);
            // The client time is the joined event's time: the same lines
            // whether the converter is told to use the client time or not.
            for extra in [&[][..], &["--use-client-time"]] {
                assert!(
                    convert_all(&joined, extra) == generated,
                    "{name} {window:?} {extra:?}: the join converts otherwise than the log"
                );
            }
        }
        // The time of the join for every event: between the run's start
        // and end, the same in every line.
        let before = std::time::SystemTime::now();
        let mut args: Vec<String> = vec![
            "join".into(),
            "-q".into(),
            "--force".into(),
            "-o".into(),
            p(&joined).into(),
        ];
        args.extend(streams.iter().cloned());
        args.extend(["--timestamp".into(), "join".into()]);
        assert_eq!(fb(&args).code, 0, "{name}");
        let after = std::time::SystemTime::now();
        let stamps: std::collections::BTreeSet<String> = convert_all(&joined, &[])
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).unwrap();
                v["Timestamp"].as_str().unwrap().to_string()
            })
            .collect();
        assert_eq!(stamps.len(), 1, "{name}: {stamps:?}");
        let stamp = stamps.first().unwrap();
        // "YYYY-MM-DDTHH:MM:SS.ffffffZ", in seconds since 1970.
        let field = |k: usize, n: usize| stamp[k..k + n].parse::<i64>().unwrap();
        let days = fb_schema::calendar::days_from_civil(
            field(0, 4),
            field(5, 2) as u32,
            field(8, 2) as u32,
        );
        let stamped = days * 86_400 + field(11, 2) * 3600 + field(14, 2) * 60 + field(17, 2);
        let secs = |t: std::time::SystemTime| {
            t.duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
        };
        assert!(
            (secs(before)..=secs(after)).contains(&stamped),
            "{name}: {stamp} is not between the run's start and end"
        );
    }
}

#[test]
fn events_without_client_time_are_counted_where_they_get_the_join_time() {
    let dir = scratch_dir("join-time-none");
    let (i, o) = (
        common::data("fb_events/cb_v2_size_2.fb"),
        common::data("fb_events/f-reward_v2_size_2.fb"),
    );
    // (case, --timestamp, what the summary says of them)
    for (case, stamp, says) in [
        (
            "client",
            "client",
            Some("4 events without client time stamped with the time of the join"),
        ),
        ("join", "join", None),
    ] {
        let out = dir.join(format!("{case}.fb"));
        let run = fb(&[
            "join",
            "--timestamp",
            stamp,
            "--interactions",
            p(&i),
            "--observations",
            p(&o),
            "--force",
            "-o",
            p(&out),
        ]);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        match says {
            Some(line) => assert!(run.stderr.contains(line), "{case}: {}", run.stderr),
            None => assert!(
                !run.stderr.contains("without client time"),
                "{case}: {}",
                run.stderr
            ),
        }
    }
}
