//! `fb join`: raw streams in, a joined log out that converts to the rewards
//! its observations imply; joined logs taken apart and joined again give
//! their DSJSON back; the join window keeps what it should.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::{Path, PathBuf};

use common::{data, fb, p, scratch_dir};
use fb_format::raw::RawStreamReader;
use fb_schema::{IndexValue, OutcomeEvent, OutcomeValue, TimeStamp, UnionArg};
use fb_writer::raw::{take_apart, Streams};
use fb_writer::{CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, MetaSpec, PayloadSpec};
use serde_json::Value;

/// One observation as the stream holds it.
#[derive(Debug, Clone)]
struct Obs {
    id: String,
    value: Option<f32>,
    index: IndexValue<'static>,
    activation: bool,
}

/// The observations of a raw stream, in order.
fn observations(path: &Path) -> Vec<Obs> {
    let bytes = std::fs::read(path).unwrap();
    let mut out = Vec::new();
    let mut reader = RawStreamReader::new(&bytes);
    while let Some(msg) = reader.next_message().unwrap() {
        for e in msg.raw_events().unwrap() {
            let event = fb_schema::verified::<fb_schema::Event>(e.bytes).unwrap();
            let payload = event.payload().unwrap().bytes();
            let outcome = fb_schema::verified::<OutcomeEvent>(payload).unwrap();
            out.push(Obs {
                id: e.id.to_string(),
                value: match outcome.value() {
                    OutcomeValue::Numeric(v) => Some(v),
                    OutcomeValue::Literal(_) => Some(0.0),
                    _ => None,
                },
                index: match outcome.index() {
                    IndexValue::Numeric(i) => IndexValue::Numeric(i),
                    IndexValue::Literal(s) => IndexValue::Literal(String::leak(s.to_string())),
                    _ => IndexValue::None,
                },
                activation: outcome.action_taken(),
            });
        }
    }
    out
}

/// The reward `function` gives `values` (in order; all at one time), as
/// SEMANTICS.md §4 says, in 32-bit float.
fn reward(function: &str, values: &[f32], default: f32) -> f32 {
    if values.is_empty() {
        return default;
    }
    match function {
        "earliest" => values[0],
        "average" => values.iter().fold(0f32, |a, v| a + v) / values.len() as f32,
        "sum" => values.iter().fold(0f32, |a, v| a + v),
        "min" => values.iter().copied().fold(f32::INFINITY, f32::min),
        "max" => {
            let m = values.iter().copied().fold(f32::MIN_POSITIVE, f32::max);
            if m == f32::MIN_POSITIVE {
                default
            } else {
                m
            }
        }
        "median" => {
            let mut v = values.to_vec();
            v.sort_by(f32::total_cmp);
            let n = v.len();
            if n % 2 == 1 {
                v[n / 2]
            } else {
                (v[n / 2 - 1] + v[n / 2]) / 2.0
            }
        }
        other => panic!("{other}"),
    }
}

fn close(a: f64, b: f32, what: &str) {
    assert!(
        (a - f64::from(b)).abs() <= 1e-5 * (1.0 + a.abs()),
        "{what}: {a} in the DSJSON, {b} expected"
    );
}

/// Joins `interactions` and `observations` with `flags`, checks the log
/// validates, and returns its reference DSJSON lines.
fn join_and_convert(dir: &Path, name: &str, i: &Path, o: &Path, flags: &[&str]) -> Vec<Value> {
    let out = dir.join(format!("{name}.fb"));
    let mut args = vec![
        "join",
        "-q",
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
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    let check = fb(&["validate", "-q", p(&out)]);
    assert_eq!(check.code, 0, "{name}: {}", check.stderr);
    let conv = fb(&["convert", "-q", "--compat", "reference", p(&out)]);
    assert!(conv.code <= 1, "{name}: {}", conv.stderr);
    conv.stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn corpus_streams_join_to_the_rewards_their_observations_imply() {
    let dir = scratch_dir("join-corpus");
    // (case, interactions, observations, flags, decisions)
    let functions = ["earliest", "average", "median", "sum", "min", "max"];
    let mut cases: Vec<(String, &str, &str, Vec<&str>, usize)> = Vec::new();
    for f in functions {
        for (kind, i, o) in [
            (
                "cb",
                "reward_functions/cb/cb_v2.fb",
                "reward_functions/cb/f-reward_3obs_v2.fb",
            ),
            (
                "ca",
                "reward_functions/ca/ca_v2.fb",
                "reward_functions/ca/f-reward_3obs_v2.fb",
            ),
            (
                "ccb",
                "reward_functions/ccb/ccb_v2.fb",
                "reward_functions/ccb/fi-reward_v2.fb",
            ),
            (
                "ccb-mixed",
                "reward_functions/ccb/ccb_v2.fb",
                "reward_functions/ccb/fmix-reward_v2.fb",
            ),
            (
                "ccb-slot-id",
                "reward_functions/ccb/ccb-with-slot-id_v2.fb",
                "reward_functions/ccb/fs-reward_v2.fb",
            ),
            (
                "slates",
                "reward_functions/slates/slates_v2.fb",
                "reward_functions/slates/fi-reward_v2.fb",
            ),
        ] {
            cases.push((format!("{kind}-{f}"), i, o, vec!["--reward-function", f], 1));
        }
    }
    cases.extend([
        (
            "ccb-out-of-bound-default".to_string(),
            "reward_functions/ccb/ccb_v2.fb",
            "reward_functions/ccb/fi-out-of-bound-reward_v2.fb",
            vec!["--default-reward", "-3"],
            1,
        ),
        (
            "cb-apprentice".to_string(),
            "reward_functions/cb/cb_apprentice_match_baseline_v2.fb",
            "reward_functions/cb/f-reward_3obs_v2.fb",
            vec!["--learning-mode", "apprentice", "--reward-function", "sum"],
            1,
        ),
        (
            "cb-apprentice-5".to_string(),
            "fb_events/cb_v2_size_5_apprentice.fb",
            "fb_events/f-reward_v2_size_5_apprentice.fb",
            vec!["--learning-mode", "apprentice"],
            5,
        ),
        (
            "ccb-apprentice-match".to_string(),
            "reward_functions/ccb/ccb-apprentice-baseline-match_v2.fb",
            "reward_functions/ccb/fi-reward_v2.fb",
            vec!["--learning-mode", "apprentice"],
            1,
        ),
        (
            "ccb-apprentice-not-match".to_string(),
            "reward_functions/ccb/ccb-apprentice-baseline-not-match_v2.fb",
            "reward_functions/ccb/fi-reward_v2.fb",
            vec!["--learning-mode", "apprentice"],
            1,
        ),
        (
            "cb-2".to_string(),
            "fb_events/cb_v2_size_2.fb",
            "fb_events/f-reward_v2_size_2.fb",
            vec![],
            2,
        ),
        (
            "cb-dedup".to_string(),
            "fb_events/cb_v2_dedup.fb",
            "fb_events/f-reward_v2.fb",
            vec![],
            1,
        ),
        (
            "ca-2".to_string(),
            "fb_events/ca_v2_size_2.fb",
            "fb_events/f-reward_v2_size_2.fb",
            vec![],
            2,
        ),
        (
            "ccb".to_string(),
            "fb_events/ccb_v2.fb",
            "fb_events/fi-reward_v2.fb",
            vec![],
            1,
        ),
        (
            "ccb-baseline-loop".to_string(),
            "fb_events/ccb-baseline-loopinteractions_v2.fb",
            "fb_events/ccb-baseline-loopobservations_v2.fb",
            vec!["--learning-mode", "apprentice", "--reward-function", "sum"],
            5,
        ),
        (
            "client-time".to_string(),
            "client_time/cb_v2_client_time.fb",
            "client_time/f-reward_3obs_v2_client_time.fb",
            vec![
                "--use-client-time",
                "--reward-function",
                "average",
                "--eud",
                "1h",
            ],
            1,
        ),
    ]);
    let mut checked = 0;
    for (name, i, o, flags, decisions) in &cases {
        let lines = join_and_convert(&dir, name, &data(i), &data(o), flags);
        assert_eq!(lines.len(), *decisions, "{name}");
        let flag = |f: &str| flags.iter().position(|x| *x == f).map(|k| flags[k + 1]);
        let function = flag("--reward-function").unwrap_or("earliest");
        let default: f32 = flag("--default-reward").map_or(0.0, |d| d.parse().unwrap());
        let apprentice = flag("--learning-mode") == Some("apprentice");
        let obs = observations(&data(o));
        for line in &lines {
            let id = line["EventId"].as_str().unwrap();
            let mine: Vec<&Obs> = obs.iter().filter(|o| o.id == id && !o.activation).collect();
            if let Some(slots) = line["_outcomes"]
                .as_array()
                .filter(|_| line["_label_cost"].is_null())
            {
                // CCB: each slot's outcomes, by index or by slot id.
                for (k, slot) in slots.iter().enumerate() {
                    let slot_id = slot["_id"].as_str().unwrap_or_default();
                    let values: Vec<f32> = mine
                        .iter()
                        .filter(|o| match o.index {
                            IndexValue::Numeric(i) => i as usize == k,
                            IndexValue::Literal(s) => s == slot_id,
                            _ => false,
                        })
                        .filter_map(|o| o.value)
                        .collect();
                    let want = reward(function, &values, default);
                    let cost = slot["_label_cost"].as_f64().unwrap();
                    if apprentice {
                        close(-slot["_original_label_cost"].as_f64().unwrap(), want, name);
                        assert!(cost == 0.0 || cost == -1.0, "{name}: {cost}");
                    } else {
                        close(-cost, want, &format!("{name} slot {k}"));
                    }
                    checked += 1;
                }
                continue;
            }
            let values: Vec<f32> = mine.iter().filter_map(|o| o.value).collect();
            let want = reward(function, &values, default);
            let cost = line["_label_cost"]
                .as_f64()
                .or_else(|| line["_label_ca"]["cost"].as_f64())
                .unwrap();
            if apprentice {
                close(-line["_original_label_cost"].as_f64().unwrap(), want, name);
                let baseline = line["a"][0].as_u64() == Some(1);
                assert_eq!(-cost, if baseline { 1.0 } else { 0.0 }, "{name}");
            } else {
                close(-cost, want, name);
            }
            checked += 1;
        }
    }
    assert!(checked >= cases.len(), "{checked} rewards checked");
}

/// A generated joined log taken apart into raw streams (batches of 7
/// events, each stream cut into two files) and joined again.
fn round_trip(dir: &Path, name: &str, gen: &[&str], join: &[&str]) {
    let log = dir.join(format!("{name}.fb"));
    let mut args = vec![
        "gen",
        "-q",
        "--events",
        "300",
        "--seed",
        "11",
        "--force",
        "-o",
        p(&log),
    ];
    args.extend_from_slice(gen);
    assert_eq!(fb(&args).code, 0, "{name}");
    let bytes = std::fs::read(&log).unwrap();
    let mut streams = Streams::default();
    let counts = take_apart(&bytes, &mut streams, 7).unwrap();
    assert!(
        counts.interactions >= 300 && counts.observations > 0,
        "{name}: {counts:?}"
    );
    // Each stream in two files at a batch boundary.
    let halves = |stream: &[u8], side: &str| -> Vec<PathBuf> {
        let mut reader = RawStreamReader::new(stream);
        let mut cut = 0;
        let mut n = 0;
        while let Some(msg) = reader.next_message().unwrap() {
            n += 1;
            if n == 3 {
                cut = msg.offset as usize;
            }
        }
        let (a, b) = stream.split_at(cut);
        let paths = [0, 1].map(|k| dir.join(format!("{name}.{side}.{k}.fb")));
        std::fs::write(&paths[0], a).unwrap();
        std::fs::write(&paths[1], b).unwrap();
        paths.to_vec()
    };
    let joined = dir.join(format!("{name}.joined.fb"));
    let mut args: Vec<String> = vec![
        "join".into(),
        "-q".into(),
        "--force".into(),
        "-o".into(),
        p(&joined).into(),
    ];
    for (flag, stream, side) in [
        ("--interactions", &streams.interactions, "i"),
        ("--observations", &streams.observations, "o"),
        ("--episodes", &streams.episodes, "e"),
    ] {
        if stream.is_empty() {
            continue;
        }
        args.push(flag.into());
        for path in halves(stream, side) {
            args.push(p(&path).into());
        }
    }
    args.extend(join.iter().map(|s| s.to_string()));
    let run = fb(&args);
    assert_eq!(run.code, 0, "{name}: {}", run.stderr);
    let check = fb(&["validate", "-q", p(&joined)]);
    assert_eq!(check.code, 0, "{name}: {}", check.stderr);
    let multistep = gen.contains(&"multistep");
    for extra in [
        &["--use-client-time"][..],
        &["--use-client-time", "--inline-dedup"],
    ] {
        let mut conv = vec!["convert", "-q"];
        conv.extend_from_slice(extra);
        if multistep {
            conv.push("--multistep");
        }
        let whole = fb(&[&conv[..], &[p(&log)]].concat());
        let again = fb(&[&conv[..], &[p(&joined)]].concat());
        assert!(whole.stdout.lines().count() >= 300, "{name}");
        assert!(
            whole.stdout == again.stdout,
            "{name} {extra:?} {join:?}: {} lines from the log, {} from the join",
            whole.stdout.lines().count(),
            again.stdout.lines().count()
        );
    }
}

#[test]
fn generated_logs_taken_apart_and_joined_again_convert_the_same() {
    let dir = scratch_dir("join-round-trip");
    // (name, gen flags)
    let cases: &[(&str, &[&str])] = &[
        ("cb", &["--problem-type", "cb"]),
        (
            "cb-zstd-dedup",
            &["--problem-type", "cb", "--zstd", "--dedup"],
        ),
        ("ccb-dedup", &["--problem-type", "ccb", "--dedup"]),
        ("ccb-zstd", &["--problem-type", "ccb", "--zstd"]),
        ("slates", &["--problem-type", "slates", "--outcomes", "3"]),
        (
            "ca",
            &[
                "--problem-type",
                "ca",
                "--deferred",
                "0.3",
                "--activated",
                "0.5",
            ],
        ),
        ("multistep", &["--problem-type", "multistep"]),
    ];
    for (name, gen) in cases {
        let problem = gen[1];
        let base = ["--problem-type", problem];
        round_trip(&dir, name, gen, &base);
        // Outcomes come up to 300 s apart, one after the other: an hour
        // holds them all.
        round_trip(
            &dir,
            &format!("{name}-eud"),
            gen,
            &[&base[..], &["--eud", "1h"]].concat(),
        );
    }
}

/// Interactions `d0..d3` at 12:00:00 and observations around their
/// window, each with its own value so that the sum says which joined.
fn window_streams(dir: &Path) -> (PathBuf, PathBuf) {
    let at = |secs: u32| {
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
    };
    let ids = ["d0", "d1", "d2", "d3"];
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
    for id in ids {
        w.push_event(&event(
            id,
            at(60),
            PayloadSpec::Cb(CbSpec {
                action_ids: Some(&[1, 2]),
                probabilities: Some(&[0.5, 0.5]),
                context: Some(br#"{"x":1}"#),
                ..CbSpec::default()
            }),
        ))
        .unwrap();
    }
    // (id, seconds after 12:00, value): the EUD is 60 s from 12:01:00.
    let observations = [
        ("d0", 119, 1.0),  // just inside
        ("d1", 120, 2.0),  // exactly at the end
        ("d2", 121, 4.0),  // just after: late
        ("d3", 59, 8.0),   // a second before its interaction: early
        ("d0", 110, 16.0), // inside
        ("nobody", 100, 32.0),
    ];
    let mut sorted = observations;
    sorted.sort_by_key(|o| o.1);
    for (id, secs, value) in sorted {
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

#[test]
fn the_window_keeps_what_is_inside_it() {
    let dir = scratch_dir("join-eud");
    let (i, o) = window_streams(&dir);
    // (case, flags, reward sum of d0..d3, unjoined observations)
    let cases: [(&str, Vec<&str>, [f64; 4], usize); 3] = [
        ("eud 60s", vec!["--eud", "60s"], [17.0, 2.0, 0.0, 0.0], 3),
        (
            "eud 60s, skew 1s",
            vec!["--eud", "60s", "--skew", "1s"],
            [17.0, 2.0, 0.0, 8.0],
            2,
        ),
        ("no window", vec![], [17.0, 2.0, 4.0, 8.0], 1),
    ];
    for (case, flags, sums, unjoined) in cases {
        let late = dir.join("unjoined.fb");
        let mut all = vec!["--reward-function", "sum", "--unjoined", p(&late)];
        all.extend_from_slice(&flags);
        let lines = join_and_convert(&dir, "window", &i, &o, &all);
        let got: Vec<f64> = lines
            .iter()
            .map(|l| -l["_label_cost"].as_f64().unwrap())
            .collect();
        assert_eq!(got, sums, "{case}");
        let bytes = std::fs::read(&late).unwrap();
        let mut reader = RawStreamReader::new(&bytes);
        let mut n = 0;
        while let Some(msg) = reader.next_message().unwrap() {
            n += msg.raw_events().unwrap().len();
        }
        assert_eq!(n, unjoined, "{case}");
    }
    // A window needs client times: the corpus streams have none.
    let out = fb(&[
        "join",
        "--interactions",
        p(&data("fb_events/cb_v2.fb")),
        "--observations",
        p(&data("fb_events/f-reward_v2.fb")),
        "--eud",
        "10m",
        "--force",
        "-o",
        p(&dir.join("no-time.fb")),
    ]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(out.stderr.contains("no client time"), "{}", out.stderr);
    assert!(out.stderr.contains("f-reward_v2.fb"), "{}", out.stderr);
    assert!(!dir.join("no-time.fb").exists());
}

#[test]
fn damaged_streams_are_reported_with_where() {
    let dir = scratch_dir("join-damage");
    let good = std::fs::read(data("fb_events/cb_v2_size_2.fb")).unwrap();
    let cut = dir.join("cut.fb");
    std::fs::write(&cut, &good[..good.len() - 5]).unwrap();
    let out = fb(&[
        "join",
        "--problem-type",
        "cb",
        "--interactions",
        p(&cut),
        "--observations",
        p(&data("fb_events/f-reward_v2_size_2.fb")),
        "--force",
        "-o",
        p(&dir.join("out.fb")),
    ]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(out.stderr.contains("cut.fb"), "{}", out.stderr);
    assert!(out.stderr.contains("byte 0"), "{}", out.stderr);
    // Nothing joined, every observation an orphan; a run that ends in
    // error keeps its log aside, still valid, and makes no output.
    assert!(out.stderr.contains("2 orphan"), "{}", out.stderr);
    assert!(!dir.join("out.fb").exists());
    assert_eq!(
        fb(&["validate", "-q", p(&dir.join("out.fb.partial"))]).code,
        0
    );
}

/// A damaged preamble in the middle of a stream: the input ends there
/// (exit 1, said with the file and offset), or with `--recover` reading
/// goes on at the next whole batch and only the damaged batch is lost.
#[test]
fn recover_reads_on_past_a_damaged_batch() {
    let dir = scratch_dir("join-recover");
    let log = dir.join("cb.fb");
    assert_eq!(
        fb(&[
            "gen",
            "-q",
            "--events",
            "100",
            "--seed",
            "2",
            "--force",
            "-o",
            p(&log)
        ])
        .code,
        0
    );
    let mut streams = Streams::default();
    take_apart(&std::fs::read(&log).unwrap(), &mut streams, 10).unwrap();
    // The fourth batch's size field says far more than is there.
    let mut reader = RawStreamReader::new(&streams.interactions);
    let fourth = (0..4)
        .map(|_| reader.next_message().unwrap().unwrap())
        .last()
        .unwrap();
    let mut damaged = streams.interactions.clone();
    let at = fourth.offset as usize;
    damaged[at + 4..at + 8].copy_from_slice(&0x00ff_0000u32.to_be_bytes());
    let (i, o) = (dir.join("i.fb"), dir.join("o.fb"));
    std::fs::write(&i, &damaged).unwrap();
    std::fs::write(&o, &streams.observations).unwrap();
    // (case, flags, exit code, decisions joined, orphans)
    for (case, flags, code, decisions, orphans) in [
        ("stop", &[][..], 1, 30, 70),
        ("recover", &["--recover"][..], 1, 90, 10),
    ] {
        let out = dir.join(format!("{case}.joined.fb"));
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
        assert_eq!(run.code, code, "{case}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!("byte {at}")),
            "{case}: {}",
            run.stderr
        );
        assert!(
            run.stderr.contains(&format!("{orphans} orphan")),
            "{case}: {}",
            run.stderr
        );
        // Without --recover the run ends in error: the log is kept aside.
        let written = match case {
            "stop" => dir.join(format!("{case}.joined.fb.partial")),
            _ => out.clone(),
        };
        assert_eq!(out.exists(), case != "stop", "{case}");
        let lines = fb(&["convert", "-q", p(&written)]).stdout.lines().count();
        assert_eq!(lines, decisions, "{case}");
    }
}

/// Each input is checked to be the raw stream it is given as before any
/// output is made: a failed join leaves the output as it was.
#[test]
fn inputs_that_are_not_the_stream_given_are_refused_before_any_output() {
    let dir = scratch_dir("join-inputs");
    let empty = dir.join("empty.fb");
    std::fs::write(&empty, b"").unwrap();
    let text = dir.join("text.fb");
    std::fs::write(&text, b"{\"a\":1}\n").unwrap();
    let (i, o) = (
        data("fb_events/cb_v2_size_2.fb"),
        data("fb_events/f-reward_v2_size_2.fb"),
    );
    let log = data("valid_joined_logs/cb_simple.log");
    let (i, o, log) = (p(&i), p(&o), p(&log));
    let (empty, text) = (p(&empty), p(&text));
    // (case, flags, what stderr says)
    let cases: [(&str, Vec<&str>, Vec<String>); 7] = [
        (
            "swapped",
            vec!["--interactions", o, "--observations", i],
            vec![format!(
                "{o} holds observations (its first event is an outcome), but it is given as \
                 --interactions: give it as --observations"
            )],
        ),
        (
            "decisions as observations",
            vec!["--interactions", i, "--observations", i],
            vec![format!(
                "{i} holds interactions (its first event is a CB decision), but it is given \
                 as --observations: give it as --interactions"
            )],
        ),
        (
            "decisions as episodes",
            vec!["--interactions", i, "--episodes", i, "--observations", o],
            vec![format!("{i} holds interactions"), "--episodes".into()],
        ),
        (
            "joined log as interactions",
            vec!["--interactions", log, "--observations", o],
            vec![format!(
                "{log} is a joined binary log (it starts with a FILEMAGIC message), not a \
                 raw stream of interactions"
            )],
        ),
        (
            "joined log as observations",
            vec!["--interactions", i, "--observations", log],
            vec![format!(
                "{log} is a joined binary log (it starts with a FILEMAGIC message), not a \
                 raw stream of observations"
            )],
        ),
        (
            "empty interactions",
            vec!["--interactions", empty, "--observations", o],
            vec![
                format!("warning: {empty}: empty file: no interactions read from it"),
                format!("the interaction stream ({empty}) is empty"),
            ],
        ),
        (
            "text",
            vec!["--interactions", i, "--observations", text],
            vec![format!(
                "{text} is not a raw stream of observations: its first bytes are 7b 22 61 22"
            )],
        ),
    ];
    let out = dir.join("out.fb");
    for (case, flags, says) in cases {
        std::fs::write(&out, b"kept").unwrap();
        let mut args = vec!["join", "-o", p(&out)];
        args.extend_from_slice(&flags);
        let run = fb(&args);
        assert_eq!(run.code, 2, "{case}: {}", run.stderr);
        for part in says {
            assert!(run.stderr.contains(&part), "{case}: {part}: {}", run.stderr);
        }
        assert_eq!(std::fs::read(&out).unwrap(), b"kept", "{case}");
        let left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().ends_with(".tmp"))
            .collect();
        assert!(left.is_empty(), "{case}: {left:?}");
    }
    // An empty stream beside others is read as none, with a warning.
    let run = fb(&[
        "join",
        "--interactions",
        i,
        empty,
        "--observations",
        o,
        "--force",
        "-o",
        p(&out),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("empty file: no interactions read from it")
            && run.stderr.contains("joined with 2 of 2 observations"),
        "{}",
        run.stderr
    );
}
