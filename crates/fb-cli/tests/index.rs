//! `fb index` and what reads it: lookups by event id give the full scan's
//! lines; a stale, foreign or damaged index is never trusted.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::Path;

use common::{data, fb, p, scratch_dir};
use fb_format::index::{FileLog, Index, LogSource};

/// The DSJSON lines of `log`.
fn convert(log: &Path) -> Vec<String> {
    let out = fb(&["convert", "-q", p(log)]);
    assert!(out.code <= 1, "{}: {}", log.display(), out.stderr);
    out.stdout.lines().map(str::to_string).collect()
}

fn event_id(line: &str) -> String {
    let doc: serde_json::Value = serde_json::from_str(line).unwrap();
    doc["EventId"].as_str().unwrap_or_default().to_string()
}

/// Every decision of `log` looked up through its index gives the lines the
/// full scan gives for its id; the index reads back as written.
fn lookups_match_the_full_scan(name: &str, log: &Path) -> usize {
    let bytes = std::fs::read(log).unwrap();
    let index = Index::build(&bytes).unwrap();
    assert_eq!(
        Index::from_bytes(&index.to_bytes()).unwrap(),
        index,
        "{name}"
    );
    let lines = convert(log);
    let mut ids: Vec<String> = lines.iter().map(|l| event_id(l)).collect();
    ids.dedup();
    // Some 60 ids of each log, spread over it (every one of a small log).
    let step = (ids.len() / 60).max(1);
    let ids: Vec<String> = ids.into_iter().step_by(step).collect();
    // In memory and as a file read as it goes; through the index, and
    // (for a few ids) without it.
    let file = std::fs::File::open(log).unwrap();
    let from_file = FileLog::new(&file, bytes.len() as u64);
    let sources: [(&str, &dyn LogSource); 2] = [("in memory", &&bytes[..]), ("a file", &from_file)];
    for (k, id) in ids.iter().enumerate() {
        let want: Vec<&String> = lines.iter().filter(|l| event_id(l) == *id).collect();
        for (source, log) in sources {
            let indexes = match k < 3 {
                true => vec![Some(&index), None],
                false => vec![Some(&index)],
            };
            for index in indexes {
                let mut got = Vec::new();
                let found = fb_run::lookup::event_lines(
                    log,
                    index,
                    id,
                    fb_join::Options::default(),
                    &mut got,
                )
                .unwrap();
                let got = String::from_utf8(got).unwrap();
                let got: Vec<&str> = got.lines().collect();
                let case = format!("{name}: {id}, {source}, index: {}", index.is_some());
                assert_eq!(got.len(), want.len(), "{case}");
                assert!(got.iter().zip(&want).all(|(g, w)| g == w), "{case}");
                assert_eq!(found.lines as usize, want.len(), "{case}");
            }
        }
    }
    ids.len()
}

#[test]
fn lookups_by_event_id_give_the_full_scans_lines() {
    let mut checked = 0;
    for file in [
        "valid_joined_logs/average_reward_100_interactions.fb",
        "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
        "valid_joined_logs/slates_average_reward_100_interactions.fb",
        "valid_joined_logs/cb_simple.log",
        "valid_joined_logs/ca_loop_simple.fb",
        "valid_joined_logs/cb_dedup_compressed.log",
        "skip_learn/cb/mixed_deferred_action_events.fb",
    ] {
        checked += lookups_match_the_full_scan(file, &data(file));
    }
    let dir = scratch_dir("index-gen");
    // (name, gen flags): each problem type, with and without zstd, dedup.
    let cases: &[(&str, &[&str])] = &[
        ("cb", &["--problem-type", "cb"]),
        (
            "cb-zstd-dedup",
            &["--problem-type", "cb", "--zstd", "--dedup"],
        ),
        (
            "ccb",
            &["--problem-type", "ccb", "--events-per-message", "7"],
        ),
        ("ccb-zstd", &["--problem-type", "ccb", "--zstd", "--dedup"]),
        (
            "slates",
            &["--problem-type", "slates", "--checkpoint-every", "50"],
        ),
        ("ca", &["--problem-type", "ca"]),
    ];
    for (name, flags) in cases {
        let log = dir.join(format!("{name}.fb"));
        let mut args = vec!["gen", "-q", "--events", "600", "--seed", "8", "-o", p(&log)];
        args.extend_from_slice(flags);
        assert_eq!(fb(&args).code, 0, "{name}");
        checked += lookups_match_the_full_scan(name, &log);
    }
    assert!(checked > 500, "{checked} ids");
}

#[test]
fn the_index_is_small_and_says_what_the_log_holds() {
    let dir = scratch_dir("index-size");
    // (name, gen flags): one decision per message; dedup, a few ids each.
    let cases: &[(&str, &[&str])] = &[
        ("cb", &["--problem-type", "cb"]),
        ("ccb-dedup", &["--problem-type", "ccb", "--zstd", "--dedup"]),
    ];
    for (name, flags) in cases {
        let log = dir.join(format!("{name}.fb"));
        let mut args = vec!["gen", "-q", "--size", "4MB", "--seed", "2", "-o", p(&log)];
        args.extend_from_slice(flags);
        assert_eq!(fb(&args).code, 0, "{name}");
        let out = fb(&["index", p(&log)]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let idx = fb_run::sidecar::path_for(&log);
        let size = std::fs::metadata(&idx).unwrap().len();
        let bytes = std::fs::read(&log).unwrap();
        assert!(
            size * 100 < bytes.len() as u64,
            "{name}: index {size} bytes for a log of {}",
            bytes.len()
        );
        let written = std::fs::read(&idx).unwrap();
        let index = Index::from_bytes(&written).unwrap();
        // Read in windows (the default), mapped, or in memory: one index.
        let mapped = dir.join(format!("{name}-mapped.fbidx"));
        let out = fb(&[
            "index",
            "-q",
            "--mmap",
            "--threads",
            "3",
            p(&log),
            "-o",
            p(&mapped),
        ]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        assert!(std::fs::read(&mapped).unwrap() == written, "{name}: mapped");
        let mut in_memory = Index::build(&bytes).unwrap();
        in_memory.stamp = index.stamp;
        assert!(in_memory.to_bytes() == written, "{name}: in memory");
        let stats = fb(&["stats", "--json", p(&log)]);
        let doc: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
        assert_eq!(Some(index.decisions()), doc["joined"].as_u64(), "{name}");
        // Blocks cover the log, in order, without gaps.
        let mut at = 0;
        for b in &index.blocks {
            assert_eq!(b.start, at, "{name}");
            at = b.end;
        }
        assert_eq!(at, bytes.len() as u64, "{name}");
        // Every dedup id is found in the block of the message defining it.
        let mut decoder = fb_format::PayloadDecoder::default();
        let mut defined = 0;
        for msg in fb_format::SliceReader::new(&bytes) {
            let msg = msg.unwrap();
            if msg.kind != fb_format::MessageKind::Regular {
                continue;
            }
            for view in msg.events().unwrap() {
                let view = view.unwrap();
                if let Ok(fb_format::Payload::Dedup(info)) = decoder.payload(&view) {
                    for id in info.ids().into_iter().flatten() {
                        let holder = index
                            .blocks
                            .iter()
                            .find(|b| b.start <= msg.offset && msg.offset < b.end)
                            .unwrap();
                        assert!(holder.may_define(id), "{name}: dedup id {id}");
                        defined += 1;
                    }
                }
            }
        }
        assert_eq!(defined, index.dedup_ids(), "{name}");
        if name.contains("dedup") {
            assert!(defined > 100, "{name}: {defined} dedup ids");
        }
    }
}

#[test]
fn a_stale_or_damaged_index_is_never_trusted() {
    let dir = scratch_dir("index-stale");
    let original =
        std::fs::read(data("valid_joined_logs/average_reward_100_interactions.fb")).unwrap();
    let index = Index::build(&original).unwrap();
    // (case, the log as it is now)
    let mut rewritten = original.clone();
    let last = rewritten.len() - 20;
    rewritten[last] ^= 1;
    let mut appended = original.clone();
    appended.extend_from_slice(&original[..8]);
    let cases: [(&str, Vec<u8>); 3] = [
        ("appended to", appended),
        ("rewritten in place", rewritten),
        ("truncated", original[..original.len() - 100].to_vec()),
    ];
    for (case, log) in &cases {
        assert!(index.check_log(log).is_err(), "{case}");
    }
    assert!(index.check_log(&original).is_ok());

    // Damaged index files: an error that names what is wrong, never a panic.
    let bytes = index.to_bytes();
    let mut flipped = bytes.clone();
    flipped[70] ^= 0x40;
    for (case, b) in [
        ("a flipped byte", flipped),
        ("cut", bytes[..bytes.len() / 2].to_vec()),
        ("empty", Vec::new()),
        (
            "not an index",
            b"hello world, this is not an index".to_vec(),
        ),
    ] {
        let err = Index::from_bytes(&b).unwrap_err();
        assert!(err.to_string().contains("index"), "{case}: {err}");
    }

    // Through the CLI: a damaged index is an error naming it; `fb index`
    // rebuilds it; a stale one is rebuilt on use and the answer is right.
    let log = dir.join("a.fb");
    std::fs::write(&log, &original).unwrap();
    let idx = fb_run::sidecar::path_for(&log);
    std::fs::write(&idx, b"FBIDX\r\n\x1a garbage").unwrap();
    let lines = convert(&log);
    let id = event_id(&lines[10]);
    // Read (a lookup) or mapped (a sample), the same error.
    for args in [
        vec!["inspect", "--event-id", &id, p(&log)],
        vec!["sample", "--decisions", "3", p(&log)],
    ] {
        let out = fb(&args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains(p(&idx)), "{args:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{args:?}: {}", out.stdout);
    }
    assert_eq!(fb(&["index", p(&log)]).code, 0);
    let out = fb(&["inspect", "--event-id", &id, p(&log)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(out.stdout.trim_end(), lines[10]);
    // An index of format version 1 is rebuilt on use, by each reader.
    let mut v1 = std::fs::read(&idx).unwrap();
    v1[8..12].copy_from_slice(&1u32.to_le_bytes());
    for args in [
        vec!["inspect", "--event-id", &id, p(&log)],
        vec!["sample", "--decisions", "3", p(&log)],
    ] {
        std::fs::write(&idx, &v1).unwrap();
        let out = fb(&args);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        assert!(out.stderr.contains("format version 1"), "{}", out.stderr);
        assert!(Index::from_bytes(&std::fs::read(&idx).unwrap()).is_ok());
    }
    // The log changes under its index: rebuilt, and the answer follows.
    let mut grown = original.clone();
    grown.extend_from_slice(&original[8..]);
    std::fs::write(&log, &grown).unwrap();
    let out = fb(&["inspect", "--event-id", &id, p(&log)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("stale"), "{}", out.stderr);
    let twice = convert(&log);
    let want: Vec<&String> = twice.iter().filter(|l| event_id(l) == id).collect();
    assert_eq!(out.stdout.lines().count(), want.len());
    let rebuilt = Index::from_bytes(&std::fs::read(&idx).unwrap()).unwrap();
    assert!(rebuilt.check_log(&grown).is_ok());
    // Unknown id: exit 1, said.
    let out = fb(&["inspect", "--event-id", "no-such-id", p(&log)]);
    assert_eq!(out.code, 1);
    assert!(
        out.stderr.contains("no decision with event id"),
        "{}",
        out.stderr
    );
}

/// `--since/--until` read only the blocks an index points to, and write
/// the bytes a full read writes: each problem type, several windows, one
/// and two threads, one input and two in a row (the configuration carries).
#[test]
fn time_windows_through_the_index_equal_the_full_scan() {
    let dir = scratch_dir("index-window");
    let cases: &[(&str, &[&str])] = &[
        ("cb", &["--problem-type", "cb", "--checkpoint-every", "300"]),
        (
            "ccb",
            &[
                "--problem-type",
                "ccb",
                "--zstd",
                "--events-per-message",
                "3",
            ],
        ),
        (
            "slates",
            &["--problem-type", "slates", "--checkpoint-every", "700"],
        ),
        ("ca", &["--problem-type", "ca", "--dedup"]),
        ("multistep", &["--problem-type", "multistep"]),
    ];
    // Windows inside the generated logs' hour, at its edges, and empty.
    let windows = [
        ("2024-01-01T00:10:00Z", "2024-01-01T00:12:30Z"),
        ("2024-01-01T00:00:00Z", "2024-01-01T00:00:05Z"),
        ("2024-01-01T00:40:00Z", "2024-01-02"),
        ("2023-12-01", "2023-12-02"),
    ];
    for (name, flags) in cases {
        let log = dir.join(format!("{name}.fb"));
        let mut args = vec![
            "gen",
            "-q",
            "--events",
            "2500",
            "--seed",
            "6",
            "-o",
            p(&log),
        ];
        args.extend_from_slice(flags);
        assert_eq!(fb(&args).code, 0, "{name}");
        assert_eq!(fb(&["index", "-q", p(&log)]).code, 0, "{name}");
        let extra: &[&str] = if *name == "multistep" {
            &["--multistep"]
        } else {
            &[]
        };
        for (since, until) in windows {
            for threads in ["1", "2"] {
                for inputs in [vec![p(&log)], vec![p(&log), p(&log)]] {
                    let run = |no_index: bool| {
                        let mut a = vec![
                            "convert",
                            "--threads",
                            threads,
                            "--since",
                            since,
                            "--until",
                            until,
                        ];
                        a.extend_from_slice(extra);
                        if no_index {
                            a.push("--no-index");
                        }
                        a.extend(inputs.iter().copied());
                        fb(&a)
                    };
                    let (full, indexed) = (run(true), run(false));
                    let what = format!(
                        "{name} {since}..{until} {threads} threads, {} inputs",
                        inputs.len()
                    );
                    assert_eq!(full.code, 0, "{what}: {}", full.stderr);
                    assert_eq!(indexed.code, 0, "{what}: {}", indexed.stderr);
                    assert!(
                        full.stdout == indexed.stdout,
                        "{what}: the index changed the output"
                    );
                }
            }
        }
        // A narrow window reads fewer messages through the index.
        let messages = |no_index: bool| {
            let mut a = vec![
                "convert",
                "--threads",
                "1",
                "--since",
                windows[0].0,
                "--until",
                windows[0].1,
            ];
            a.extend_from_slice(extra);
            if no_index {
                a.push("--no-index");
            }
            a.extend([p(&log), "-o", "/dev/null"]);
            let err = fb(&a).stderr;
            let at = err.find(" messages").unwrap_or_else(|| panic!("{err}"));
            let n: u64 = err[..at].rsplit(' ').next().unwrap().parse().unwrap();
            n
        };
        assert!(
            messages(false) * 2 < messages(true),
            "{name}: the index was not used"
        );
        // The window inside the log keeps something: the case tests it.
        let mut a = vec![
            "convert",
            "-q",
            "--since",
            windows[0].0,
            "--until",
            windows[0].1,
        ];
        a.extend_from_slice(extra);
        a.push(p(&log));
        let some = fb(&a);
        assert!(some.stdout.lines().count() > 10, "{name}");
    }
}

/// `fb sample`: the drawn decisions' lines are the full scan's, the same
/// for a seed with and without an index, and `--format log` writes a valid
/// log that converts to those very lines.
#[test]
fn samples_are_lines_of_the_log_and_the_same_for_a_seed() {
    let dir = scratch_dir("index-sample");
    let cases: &[(&str, &[&str])] = &[
        ("cb", &["--problem-type", "cb"]),
        (
            "ccb-zstd-dedup",
            &[
                "--problem-type",
                "ccb",
                "--zstd",
                "--dedup",
                "--events-per-message",
                "4",
            ],
        ),
        (
            "slates",
            &["--problem-type", "slates", "--checkpoint-every", "400"],
        ),
        ("ca", &["--problem-type", "ca"]),
    ];
    for (name, flags) in cases {
        let log = dir.join(format!("{name}.fb"));
        let mut args = vec![
            "gen",
            "-q",
            "--events",
            "1500",
            "--seed",
            "12",
            "-o",
            p(&log),
        ];
        args.extend_from_slice(flags);
        assert_eq!(fb(&args).code, 0, "{name}");
        let full = convert(&log);
        let whole: std::collections::HashSet<&String> = full.iter().collect();
        let draw = |seed: &str| {
            let mut a = vec!["sample", "-q", "--decisions", "60", "--seed", seed];
            a.push(p(&log));
            let out = fb(&a);
            assert_eq!(out.code, 0, "{name}: {}", out.stderr);
            out.stdout
        };
        let unindexed = draw("5");
        assert_eq!(fb(&["index", "-q", p(&log)]).code, 0);
        let indexed = draw("5");
        assert!(unindexed == indexed, "{name}: the index changed the sample");
        let lines: Vec<&str> = indexed.lines().collect();
        assert_eq!(lines.len(), 60, "{name}");
        for l in &lines {
            assert!(
                whole.contains(&l.to_string()),
                "{name}: a line the log does not give"
            );
        }
        assert!(
            draw("6") != indexed,
            "{name}: another seed, the same sample"
        );
        // As a log: valid, and converting it gives the sample's lines.
        let sampled = dir.join(format!("{name}-sample.fb"));
        assert_eq!(
            fb(&[
                "sample",
                "-q",
                "--decisions",
                "60",
                "--seed",
                "5",
                "--format",
                "log",
                p(&log),
                "-o",
                p(&sampled)
            ])
            .code,
            0
        );
        assert_eq!(fb(&["validate", p(&sampled)]).code, 0, "{name}");
        assert!(
            convert(&sampled).join("\n") + "\n" == indexed,
            "{name}: the sampled log converts otherwise"
        );
    }
}

/// A checkpoint whose reward function is out of range keeps the reward
/// function of the one before (sum, here): reading through the index
/// (windows, lookups, samples) applies both, and gives the full scan's
/// lines.
#[test]
fn the_index_keeps_the_reward_function_an_earlier_checkpoint_set() {
    let dir = scratch_dir("index-carried");
    let log = dir.join("carrying.fb");
    std::fs::write(&log, common::carrying_log()).unwrap();
    let lines = convert(&log);
    assert_eq!(lines.len(), 13);
    assert!(
        lines.iter().all(|l| l.starts_with(r#"{"_label_cost":-3"#)),
        "not all sums"
    );
    assert_eq!(fb(&["index", "-q", p(&log)]).code, 0);
    // Messages are 7 hours apart from 2026-03-01T00:30: windows after the
    // out-of-range checkpoint (before message 5), and across it.
    for (since, until) in [
        ("2026-03-02T11:00:00Z", "2026-03-04T00:00:00Z"),
        ("2026-03-03T00:00:00Z", "2026-03-05T00:00:00Z"),
        ("2026-03-01T10:00:00Z", "2026-03-02T12:00:00Z"),
    ] {
        let window = |extra: &[&str]| {
            let mut args = vec!["convert", "-q", "--since", since, "--until", until];
            args.extend_from_slice(extra);
            args.push(p(&log));
            let out = fb(&args);
            assert_eq!(out.code, 0, "{}", out.stderr);
            out.stdout
        };
        let indexed = window(&[]);
        assert!(!indexed.is_empty(), "{since}");
        // (Lines carry 40 KB of padding: compared, not printed.)
        assert!(
            indexed == window(&["--no-index"]),
            "{since}..{until}: windows differ"
        );
    }
    for (k, line) in lines.iter().enumerate() {
        let out = fb(&["inspect", "--event-id", &format!("decision-{k}"), p(&log)]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout.trim_end() == line,
            "decision-{k}: the lookup differs"
        );
    }
    let out = fb(&["sample", "-q", "--decisions", "13", p(&log)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.lines().eq(lines.iter().map(String::as_str)),
        "the sample differs"
    );
}

/// An index whose message tables do not add up to its blocks' counts
/// (its checksum intact, as if written by a faulty build) stops a sample
/// with an error that says to rebuild it, in both output formats, and
/// leaves no output behind: the table walk runs on a thread of its own and
/// its error is not lost.
#[test]
fn a_sample_through_a_table_that_does_not_add_up_fails_and_says_so() {
    let dir = scratch_dir("index-sample-table");
    let log = dir.join("a.fb");
    std::fs::copy(
        data("valid_joined_logs/average_reward_100_interactions.fb"),
        &log,
    )
    .unwrap();
    let mut index = Index::build(&std::fs::read(&log).unwrap()).unwrap();
    index.stamp = fb_run::sidecar::stamp(&std::fs::metadata(&log).unwrap());
    index.blocks.last_mut().unwrap().decisions += 1;
    std::fs::write(fb_run::sidecar::path_for(&log), index.to_bytes()).unwrap();
    for format in ["dsjson", "log"] {
        let out_path = dir.join(format!("sample.{format}"));
        let out = fb(&[
            "sample",
            "--fraction",
            "1",
            "--format",
            format,
            p(&log),
            "-o",
            p(&out_path),
        ]);
        assert_eq!(out.code, 2, "{format}: {}", out.stderr);
        assert!(
            out.stderr.contains("does not add up: run fb index"),
            "{format}: {}",
            out.stderr
        );
        assert!(!out_path.exists(), "{format}: a partial sample was left");
    }
}

/// A sample large enough that its chunks are read on two threads (a
/// megabyte of drawn messages and more) gives, through the index, what
/// the unindexed path (the log read whole, one thread) gives, in both
/// formats; and its lines are the log's.
#[test]
fn a_large_sample_read_on_two_threads_is_the_one_read_whole() {
    let dir = scratch_dir("index-sample-large");
    let log = dir.join("cb.fb");
    let gen = fb(&["gen", "-q", "--size", "6MiB", "--seed", "21", "-o", p(&log)]);
    assert_eq!(gen.code, 0, "{}", gen.stderr);
    let full = convert(&log);
    let whole: std::collections::HashSet<&String> = full.iter().collect();
    let mut round = 0;
    let mut draw = |format: &str| {
        round += 1;
        let to = dir.join(format!("sample-{round}.{format}"));
        let out = fb(&[
            "sample",
            "-q",
            "--fraction",
            "0.6",
            "--seed",
            "3",
            "--format",
            format,
            p(&log),
            "-o",
            p(&to),
        ]);
        assert_eq!(out.code, 0, "{format}: {}", out.stderr);
        std::fs::read(&to).unwrap()
    };
    let (lines_whole, log_whole) = (draw("dsjson"), draw("log"));
    assert_eq!(fb(&["index", "-q", p(&log)]).code, 0);
    let (lines_indexed, log_indexed) = (draw("dsjson"), draw("log"));
    assert!(lines_whole == lines_indexed, "the index changed the sample");
    assert!(
        log_whole == log_indexed,
        "the index changed the sampled log"
    );
    // The index is mapped under a read lease when it can be; while a
    // writer has it open, no lease is given, and it is read instead: the
    // same sample.
    let writer = std::fs::OpenOptions::new()
        .append(true)
        .open(fb_run::sidecar::path_for(&log))
        .unwrap();
    let (lines_read, log_read) = (draw("dsjson"), draw("log"));
    drop(writer);
    assert!(
        lines_read == lines_indexed,
        "a read index changed the sample"
    );
    assert!(
        log_read == log_indexed,
        "a read index changed the sampled log"
    );
    let lines_indexed = String::from_utf8(lines_indexed).unwrap();
    let lines: Vec<&str> = lines_indexed.lines().collect();
    assert!(
        lines.len() * 10 >= full.len() * 5,
        "{} of {}",
        lines.len(),
        full.len()
    );
    assert!(lines.iter().all(|l| whole.contains(&l.to_string())));
}

/// A log rewritten in place between its two hashed ends, at the same size
/// (an event id changed in the middle), is told from the one indexed by
/// what the file system says of it: the index is rebuilt, and the new id
/// is found.
#[test]
fn a_log_rewritten_in_the_middle_at_the_same_size_is_not_trusted() {
    let dir = scratch_dir("index-rewritten-middle");
    let log = dir.join("g.fb");
    let out = fb(&[
        "gen",
        "-q",
        "--events",
        "2000",
        "--seed",
        "5",
        "-o",
        p(&log),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut bytes = std::fs::read(&log).unwrap();
    assert!(
        bytes.len() > 4 * fb_format::index::HASHED,
        "{}",
        bytes.len()
    );
    assert_eq!(fb(&["index", "-q", p(&log)]).code, 0);
    let lines = convert(&log);
    let old = event_id(&lines[lines.len() / 2]);
    // Every place the id is (the decision and its outcomes): the same
    // length, another id, and the log still verifies.
    let places: Vec<usize> = (0..bytes.len() - old.len())
        .filter(|&at| bytes[at..].starts_with(old.as_bytes()))
        .collect();
    assert!(places.len() >= 2, "{places:?}");
    let hashed = fb_format::index::HASHED;
    assert!(places
        .iter()
        .all(|&at| at > hashed && at < bytes.len() - hashed));
    let new: String = old.chars().rev().collect();
    assert_ne!(new, old);
    for at in places {
        bytes[at..at + new.len()].copy_from_slice(new.as_bytes());
    }
    std::fs::write(&log, &bytes).unwrap();
    let index =
        Index::from_bytes(&std::fs::read(fb_run::sidecar::path_for(&log)).unwrap()).unwrap();
    assert!(
        index.check_log(&bytes).is_ok(),
        "the ends alone cannot tell"
    );

    let out = fb(&["inspect", "--event-id", &new, p(&log)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("stale"), "{}", out.stderr);
    assert!(out.stdout.contains(&new), "{}", out.stdout);
    // And the index rebuilt is trusted again: no word of staleness.
    let out = fb(&["inspect", "--event-id", &new, p(&log)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("stale"), "{}", out.stderr);
    // A copy of the log (and its index) is another file: rebuilt too.
    let copy = dir.join("copy.fb");
    std::fs::copy(&log, &copy).unwrap();
    std::fs::copy(
        fb_run::sidecar::path_for(&log),
        fb_run::sidecar::path_for(&copy),
    )
    .unwrap();
    let out = fb(&["inspect", "--event-id", &new, p(&copy)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stderr.contains("another file"), "{}", out.stderr);
}

/// A folder of logs holds their indexes once indexed, and other files:
/// every command that reads a folder leaves out what is not a log, with
/// one note; a file named on the command line that is not a log is
/// still an error.
#[test]
fn a_folders_files_that_are_not_logs_are_left_out_with_a_note() {
    let dir = scratch_dir("index-folder");
    for name in ["cb_simple.log", "ccb_simple.log"] {
        std::fs::copy(data(&format!("valid_joined_logs/{name}")), dir.join(name)).unwrap();
    }
    let want = fb(&["convert", "-q", p(&dir)]);
    assert_eq!(want.code, 0, "{}", want.stderr);
    assert_eq!(fb(&["index", "-q", p(&dir)]).code, 0);
    assert!(fb_run::sidecar::path_for(&dir.join("cb_simple.log")).exists());
    std::fs::write(dir.join("README"), "logs of the loop\n").unwrap();
    std::fs::write(dir.join("out.dsjson"), want.stdout.as_bytes()).unwrap();
    // (command, exit code wanted)
    let cases: [(&[&str], i32); 6] = [
        (&["index"], 0),
        (&["convert"], 0),
        (&["stats"], 0),
        (&["validate"], 0),
        (&["inspect", "--count"], 0),
        (&["export", "--force", "-o", "/dev/null"], 0),
    ];
    for (args, code) in cases {
        let mut all: Vec<&str> = args.to_vec();
        all.push(p(&dir));
        let out = fb(&all);
        assert_eq!(out.code, code, "{args:?}: {}", out.stderr);
        assert_eq!(
            out.stderr.matches("skipped 4 files").count(),
            1,
            "{args:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("cb_simple.log.fbidx"),
            "{args:?}: {}",
            out.stderr
        );
    }
    let out = fb(&["convert", "-q", p(&dir)]);
    assert_eq!(out.stdout, want.stdout);
    assert!(out.stderr.is_empty(), "{}", out.stderr);
    // Named itself, a file that is not a log is an error.
    let out = fb(&["convert", p(&dir.join("README"))]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains("not a joined binary log"),
        "{}",
        out.stderr
    );
    // A folder of nothing but such files holds no logs: said.
    let other = scratch_dir("index-folder-nothing");
    std::fs::write(other.join("README"), "no logs here\n").unwrap();
    let out = fb(&["convert", p(&other)]);
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("holds no joined logs"),
        "{}",
        out.stderr
    );
}
