//! The `fb` commands as a user runs them: flags, outputs, exit codes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use common::{data, fb, p, scratch};

fn expected(rel: &str) -> String {
    std::fs::read_to_string(data(&format!("expected/{rel}.dsjson"))).unwrap()
}

#[test]
fn convert_reads_a_directory_in_name_order_as_one_stream() {
    let out = fb(&[
        "convert",
        "-q",
        "--compat",
        "reference",
        p(&data("skip_learn/cb")),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut names: Vec<String> = std::fs::read_dir(data("skip_learn/cb"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let joined: String = names
        .iter()
        .map(|n| expected(&format!("skip_learn/cb/{n}")))
        .collect();
    assert_eq!(out.stdout, joined);
}

#[test]
fn convert_reads_stdin() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(["convert", "-q", "--compat", "reference", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let log = std::fs::read(data("valid_joined_logs/ccb_simple.log")).unwrap();
    child.stdin.take().unwrap().write_all(&log).unwrap();
    let mut stdout = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut stdout)
        .unwrap();
    assert!(child.wait().unwrap().success());
    assert_eq!(stdout, expected("valid_joined_logs/ccb_simple.log"));
}

#[test]
fn convert_inline_dedup_makes_self_contained_lines() {
    let input = data("valid_joined_logs/cb_dedup_compressed.log");
    let plain = fb(&["convert", "-q", p(&input)]);
    assert!(plain.stdout.contains("__aid"));
    let inlined = fb(&["convert", "-q", "--inline-dedup", p(&input)]);
    assert_eq!(inlined.code, 0);
    assert!(!inlined.stdout.contains("__aid"), "{}", inlined.stdout);
    for line in inlined.stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let multi = v["c"]["_multi"].as_array().unwrap();
        assert!(multi
            .iter()
            .all(|a| a.is_object() && a.get("__aid").is_none()));
    }
}

#[test]
fn convert_skip_learn_exclude_drops_deferred_unactivated_events() {
    let input = data("skip_learn/ccb/mixed_deferred_action_events.fb");
    let all = fb(&["convert", "-q", p(&input)]);
    let kept = fb(&["convert", "-q", "--skip-learn", "exclude", p(&input)]);
    let skipped = all
        .stdout
        .lines()
        .filter(|l| l.contains("\"_skipLearn\":true"))
        .count();
    assert!(skipped > 0);
    assert_eq!(
        kept.stdout.lines().count(),
        all.stdout.lines().count() - skipped
    );
    assert!(!kept.stdout.contains("_skipLearn"));
    let loud = fb(&["convert", "--skip-learn", "exclude", p(&input)]);
    assert!(
        loud.stderr.contains(&format!("{skipped} filtered out")),
        "{}",
        loud.stderr
    );
}

#[test]
fn convert_filters_by_time_and_type() {
    let dir = data("valid_joined_logs");
    let cases: &[(&str, &[&str], usize)] = &[
        ("nothing after 2030", &["--since", "2030-01-01"], 0),
        ("everything before 2030", &["--until", "2030-01-01"], 0),
        (
            "one day of CB",
            &[
                "--since",
                "2021-04-13",
                "--until",
                "2021-04-14",
                "--only",
                "cb",
            ],
            1,
        ),
        ("only ccb", &["--only", "ccb"], 0),
    ];
    let all = fb(&["convert", "-q", p(&dir)]);
    let total = all.stdout.lines().count();
    for (name, flags, _) in cases {
        let mut args = vec!["convert", "-q"];
        args.extend_from_slice(flags);
        args.push(p(&dir));
        let out = fb(&args);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        let n = out.stdout.lines().count();
        match *name {
            "nothing after 2030" => assert_eq!(n, 0, "{name}"),
            "everything before 2030" => assert_eq!(n, total, "{name}"),
            "one day of CB" => {
                let want = all
                    .stdout
                    .lines()
                    .filter(|l| {
                        l.contains("\"Timestamp\":\"2021-04-13T") && l.contains("\"_label_Action\"")
                    })
                    .count();
                assert!(want > 0, "{name}");
                assert_eq!(n, want, "{name}");
                assert!(
                    out.stdout
                        .lines()
                        .all(|l| l.contains("\"Timestamp\":\"2021-04-13T")),
                    "{name}"
                );
            }
            _ => {
                assert!(n > 0 && n < total, "{name}");
                assert!(
                    out.stdout
                        .lines()
                        .all(|l| l.contains("\"_outcomes\":[{\"_label_cost\"")),
                    "{name}"
                );
            }
        }
    }
    let bad = fb(&["convert", "--since", "yesterday", p(&dir)]);
    assert_eq!(bad.code, 2);
    assert!(bad.stderr.contains("is not a time"), "{}", bad.stderr);
}

#[test]
fn convert_compresses_by_extension() {
    let input = data("valid_joined_logs/slates_simple.log");
    let want = expected("valid_joined_logs/slates_simple.log");
    let gz = scratch("out.dsjson.gz");
    assert_eq!(
        fb(&[
            "convert",
            "-q",
            "--compat",
            "reference",
            p(&input),
            "-o",
            p(&gz)
        ])
        .code,
        0
    );
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(&gz).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    assert_eq!(text, want);
    let zst = scratch("out.dsjson.zst");
    assert_eq!(
        fb(&[
            "convert",
            "-q",
            "--compat",
            "reference",
            p(&input),
            "-o",
            p(&zst)
        ])
        .code,
        0
    );
    let bytes = zstd::decode_all(std::fs::File::open(&zst).unwrap()).unwrap();
    assert_eq!(String::from_utf8(bytes).unwrap(), want);
}

#[test]
fn bad_inputs_say_what_and_exit_as_documented() {
    let not_a_log = scratch("notes.txt");
    std::fs::write(&not_a_log, "hello world\n").unwrap();
    let bad_magic = data("invalid_joined_logs/bad_magic.log");
    let bad_version = data("invalid_joined_logs/bad_version.log");
    let empty_dir = scratch("empty-dir");
    std::fs::create_dir_all(&empty_dir).unwrap();
    let cases: Vec<(&str, Vec<&str>, i32, String)> = vec![
        (
            "missing file",
            vec!["convert", "/no/such/file.log"],
            2,
            "/no/such/file.log: no such file or directory".into(),
        ),
        (
            "empty directory",
            vec!["convert", p(&empty_dir)],
            2,
            "the directory holds no files".into(),
        ),
        (
            "sample of a directory",
            vec!["sample", "--fraction", "0.5", p(&empty_dir)],
            2,
            "empty-dir is a directory: give the log files in it".into(),
        ),
        (
            "split of a directory",
            vec![
                "split",
                "--max-size",
                "1MiB",
                "-o",
                "/no/such/out",
                p(&empty_dir),
            ],
            2,
            "empty-dir is a directory: give the log files in it".into(),
        ),
        (
            "not a log",
            vec!["convert", p(&not_a_log)],
            1,
            "not a joined binary log: first bytes are 68 65 6c 6c (\"hell\")".into(),
        ),
        (
            "stats of a missing file",
            vec!["stats", "/no/such/file.log"],
            2,
            "no such file or directory".into(),
        ),
        (
            "validate a missing file",
            vec!["validate", "/no/such/file.log"],
            2,
            "no such file or directory".into(),
        ),
        (
            "inspect a non-log",
            vec!["inspect", p(&not_a_log)],
            1,
            "not a joined binary log".into(),
        ),
        (
            "truncated log",
            vec!["convert", p(&bad_magic)],
            1,
            "not a joined binary log".into(),
        ),
        (
            "bad version",
            vec!["convert", p(&bad_version)],
            1,
            "declares file-format version 2".into(),
        ),
        (
            "unknown flag",
            vec!["convert", "--frobnicate", "x"],
            2,
            "unexpected argument".into(),
        ),
    ];
    for (name, args, code, message) in cases {
        let out = fb(&args);
        assert_eq!(out.code, code, "{name}: {}", out.stderr);
        assert!(out.stderr.contains(&message), "{name}: {}", out.stderr);
    }
}

#[test]
fn warnings_are_summarized_not_flooded() {
    let out = fb(&[
        "convert",
        p(&data(
            "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
        )),
    ]);
    assert_eq!(out.code, 0);
    assert!(
        out.stderr.contains("fb: warning: 72 x unknown_slot_id"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("... and 69 more"), "{}", out.stderr);
    assert!(out.stderr.lines().count() < 20, "{}", out.stderr);
    let verbose = fb(&[
        "convert",
        "-v",
        p(&data(
            "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
        )),
    ]);
    // -v lists every one; equal lines in a row are said once, with a count.
    let listed: usize = verbose
        .stderr
        .lines()
        .filter(|l| l.starts_with("fb:   message"))
        .map(|l| {
            l.strip_suffix(" times)")
                .and_then(|l| l.rsplit_once(" ("))
                .map_or(1, |(_, n)| n.parse::<usize>().unwrap())
        })
        .sum();
    assert_eq!(listed, 72 + 17, "{}", verbose.stderr);
    assert!(verbose.stderr.contains("(2 times)"), "{}", verbose.stderr);
    let quiet = fb(&[
        "convert",
        "-q",
        p(&data(
            "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
        )),
    ]);
    assert_eq!(quiet.stderr, "");
}

#[test]
fn validate_exit_codes_and_listing() {
    let clean = fb(&["validate", p(&data("valid_joined_logs/cb_simple.log"))]);
    assert_eq!(clean.code, 0, "{}{}", clean.stdout, clean.stderr);
    assert_eq!(clean.stdout, "");
    assert!(clean.stderr.contains("valid"), "{}", clean.stderr);

    let corrupt = fb(&[
        "validate",
        p(&data("invalid_joined_logs/corrupt_joined_payload.log")),
    ]);
    assert_eq!(corrupt.code, 1);
    assert!(
        corrupt.stdout.starts_with(&format!(
        "{}: byte 160, message 3: error: JoinedPayload in message 3 at byte 160 is not a valid flatbuffer",
        p(&data("invalid_joined_logs/corrupt_joined_payload.log"))
    )),
        "{}",
        corrupt.stdout
    );

    // An outcome without its decision is odd data, not damage: a warning,
    // which fails the check only with --strict.
    let lone = data("invalid_joined_logs/no_interaction_but_with_observation.log");
    let joinability = fb(&["validate", p(&lone)]);
    assert_eq!(joinability.code, 0, "{}", joinability.stderr);
    assert!(
        joinability
            .stdout
            .contains("message 3, event `91f71c8`: warning: no interaction was accepted"),
        "{}",
        joinability.stdout
    );
    assert!(
        joinability.stderr.contains("valid, with 3 warnings"),
        "{}",
        joinability.stderr
    );
    let strict = fb(&["validate", "--strict", p(&lone)]);
    assert_eq!(strict.code, 1);
    assert_eq!(strict.stdout, joinability.stdout);

    let limited = fb(&[
        "validate",
        "--max-errors",
        "2",
        p(&data("invalid_joined_logs")),
    ]);
    assert_eq!(limited.code, 1);
    let lines: Vec<&str> = limited.stdout.lines().collect();
    assert_eq!(lines.len(), 3, "{}", limited.stdout);
    assert!(
        lines[2].starts_with("... and ") && lines[2].contains("more problems"),
        "{}",
        limited.stdout
    );
}

#[test]
fn inspect_events_dumps_json_lines() {
    let out = fb(&[
        "inspect",
        "--events",
        p(&data("valid_joined_logs/cb_simple.log")),
    ]);
    assert_eq!(out.code, 0);
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // FILEMAGIC, HEADER, CHECKPOINT, two events, EOF
    assert_eq!(lines.len(), 6);
    assert_eq!(lines[2]["type"], "CHECKPOINT");
    assert_eq!(lines[2]["problem_type"], "CB");
    assert_eq!(lines[3]["payload"]["type"], "CbEvent");
    assert_eq!(lines[3]["payload"]["action_ids"], serde_json::json!([1, 2]));
    assert_eq!(lines[3]["payload"]["context"]["GUser"]["id"], "a");
    assert_eq!(
        lines[4]["payload"],
        serde_json::json!({"type": "OutcomeEvent", "value": 1.5, "index": null, "action_taken": false})
    );
    assert_eq!(lines[4]["enqueued"], "2021-04-13T15:08:46.0386001Z");
}

#[test]
fn inspect_offset_and_count() {
    let file = data("valid_joined_logs/cb_simple.log");
    let one = fb(&["inspect", "--offset", "128", p(&file)]);
    assert_eq!(one.code, 0);
    assert_eq!(
        one.stdout.lines().nth(1),
        Some("      2           128  CHECKPOINT          24")
    );
    assert_eq!(one.stdout.lines().count(), 2);
    let miss = fb(&["inspect", "--offset", "130", p(&file)]);
    assert_eq!(miss.code, 1);
    assert!(
        miss.stderr
            .contains("no message starts at byte 130; the nearest starts are at bytes 128 and 160"),
        "{}",
        miss.stderr
    );
    // Past the end: where the log ends and its last message starts.
    let past = fb(&["inspect", "--offset", "99999999", p(&file)]);
    assert_eq!(past.code, 1);
    assert!(
        past.stderr
            .contains("the log ends at byte 672; its last message starts at byte 664"),
        "{}",
        past.stderr
    );
    assert!(!past.stderr.contains(" -"), "{}", past.stderr);
    // A message of many events lists its first ids, and says how many more.
    let many = fb(&[
        "inspect",
        p(&data(
            "valid_joined_logs/average_reward_100_interactions.fb",
        )),
    ]);
    assert!(
        many.stdout.contains("... and 89 more (-v lists them)"),
        "{}",
        many.stdout
    );
    let all = fb(&[
        "inspect",
        "-v",
        p(&data(
            "valid_joined_logs/average_reward_100_interactions.fb",
        )),
    ]);
    assert!(!all.stdout.contains("more (-v"), "{}", all.stdout);
    assert!(all.stdout.contains("1357e515"), "{}", all.stdout);
    let count = fb(&["inspect", "--count", p(&file)]);
    assert_eq!(count.stdout, "CHECKPOINT 1\nEOF        1\nFILEMAGIC  1\nHEADER     1\nREGULAR    1\ntotal      5\nbytes      672\n");
}

#[test]
fn every_command_has_an_example_in_its_help() {
    for cmd in ["convert", "stats", "inspect", "validate", "gen"] {
        let out = fb(&[cmd, "--help"]);
        assert_eq!(out.code, 0, "{cmd}");
        assert!(out.stdout.contains("Example"), "{cmd}: {}", out.stdout);
    }
}

#[test]
fn convert_recover_keeps_both_logs_around_garbage_and_reports_the_range() {
    let a = std::fs::read(data("valid_joined_logs/ccb_simple.log")).unwrap();
    let b = std::fs::read(data("valid_joined_logs/cb_simple.log")).unwrap();
    let mut seed = 0x9E37_79B9_7F4A_7C15u64;
    let junk: Vec<u8> = (0..1024)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed as u8
        })
        .collect();
    let log = scratch("two-logs.fb");
    std::fs::write(&log, [a.clone(), junk, b].concat()).unwrap();
    let out = fb(&["convert", "--recover", "--compat", "reference", p(&log)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let want =
        expected("valid_joined_logs/ccb_simple.log") + &expected("valid_joined_logs/cb_simple.log");
    assert_eq!(out.stdout, want);
    let range = format!("skipped bytes {}..{} (1024 bytes)", a.len(), a.len() + 1024);
    assert!(out.stderr.contains(&range), "{}", out.stderr);
    // Without --recover the reader stops at the EOF of the first log.
    let plain = fb(&["convert", "-q", "--compat", "reference", p(&log)]);
    assert_eq!(plain.stdout, expected("valid_joined_logs/ccb_simple.log"));
}

#[test]
fn convert_recover_on_a_cut_file_writes_only_lines_of_the_intact_file() {
    let gen = scratch("for-cut.fb");
    fb(&["gen", "-q", "--events", "50", "--seed", "3", "-o", p(&gen)]);
    let whole = std::fs::read(&gen).unwrap();
    let intact = fb(&["convert", "-q", "--compat", "reference", p(&gen)]).stdout;
    let log = scratch("cut.log");
    std::fs::write(&log, &whole[..whole.len() / 2]).unwrap();
    let out = fb(&[
        "convert",
        "--recover",
        "--compat",
        "reference",
        "--threads",
        "1",
        p(&log),
    ]);
    assert_eq!(out.code, 1);
    assert!(!out.stdout.is_empty());
    assert!(intact.starts_with(&out.stdout), "{}", out.stdout);
    assert!(out.stderr.contains("skipped bytes"), "{}", out.stderr);
}

#[test]
fn diagnostics_of_several_inputs_name_their_file() {
    let lone = data("invalid_joined_logs/no_interaction_but_with_observation.log");
    let simple = data("valid_joined_logs/cb_simple.log");
    for threads in ["1", "2"] {
        let out = fb(&["convert", "--threads", threads, p(&simple), p(&lone)]);
        let example = format!("fb:   {}: message 3 at byte 160, event `91f71c8`", p(&lone));
        assert!(out.stderr.contains(&example), "{threads}: {}", out.stderr);
        // The two equal diagnostics of that file are said once.
        assert!(
            out.stderr
                .contains("dropped (outcome_without_interaction) (2 times)"),
            "{}",
            out.stderr
        );
    }
    // Loops the user left out with --only are not joined: nothing is said
    // of their events but how many there were.
    let out = fb(&["convert", "--only", "ccb", p(&simple), p(&lone)]);
    assert!(
        !out.stderr.contains("outcome_without_interaction"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr
            .contains("6 events of other problem types not joined (--only)"),
        "{}",
        out.stderr
    );
    // One input: no file name needed.
    let out = fb(&["convert", p(&lone)]);
    assert!(
        out.stderr.contains("fb:   message 3 at byte 160"),
        "{}",
        out.stderr
    );
}

/// A log whose checkpoint says MULTISTEP is joined as multistep episodes
/// by default, as with --multistep; `--compat reference` joins nothing
/// of it without the flag, as the reference does.
#[test]
fn a_multistep_checkpoint_is_followed_by_default() {
    let dir = common::scratch_dir("multistep-checkpoint");
    let log = dir.join("ms.fb");
    let run = fb(&[
        "gen",
        "-q",
        "--problem-type",
        "multistep",
        "--events",
        "40",
        "--seed",
        "2",
        "-o",
        p(&log),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let flagged = fb(&["convert", "-q", "--multistep", p(&log)]);
    assert!(flagged.stdout.lines().count() >= 40, "{}", flagged.stderr);
    // (case, flags, the lines wanted)
    let cases: [(&str, &[&str], &str); 3] = [
        ("default", &[], &flagged.stdout),
        (
            "reference with the flag",
            &["--compat", "reference", "--multistep"],
            "",
        ),
        ("reference", &["--compat", "reference"], ""),
    ];
    for (case, flags, want) in cases {
        let mut args = vec!["convert", "-q"];
        args.extend_from_slice(flags);
        args.push(p(&log));
        let run = fb(&args);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        match case {
            "reference with the flag" => assert!(run.stdout.lines().count() >= 40, "{case}"),
            _ => assert_eq!(run.stdout, want, "{case}"),
        }
    }
    let stats = fb(&["stats", "--json", "-q", p(&log)]);
    let v: serde_json::Value = serde_json::from_str(&stats.stdout).unwrap();
    assert_eq!(
        v["by_problem_type"]["multistep"]["events"].as_u64(),
        Some(flagged.stdout.lines().count() as u64)
    );
}

/// Help texts speak with one voice: numbers are `<N>`, the --compat text
/// fits every command that takes it, the top-level text names every
/// command's work.
#[test]
fn help_texts_agree_across_commands() {
    let commands = [
        "convert", "export", "gen", "index", "join", "inspect", "sample", "split", "stats",
        "validate", "repair",
    ];
    for command in commands {
        let help = fb(&[command, "--help"]).stdout;
        for odd in ["<MAX_ERRORS>", "<MAX_LISTED>", "<SEED>", "for stats:"] {
            assert!(!help.contains(odd), "{command}: {odd} in\n{help}");
        }
    }
    let top = fb(&["--help"]).stdout;
    for work in [
        "DSJSON", "Parquet", "repair", "index", "sample", "split", "join", "generate",
    ] {
        assert!(top.lines().next().unwrap().contains(work), "{work}: {top}");
    }
}

/// A log of FILEMAGIC alone (or a header and checkpoints) is sound but
/// holds nothing: a warning, which --strict makes an exit 1.
#[test]
fn validate_warns_of_a_log_without_events() {
    let dir = common::scratch_dir("validate-no-events");
    let log = dir.join("magic.fb");
    std::fs::write(&log, b"VWFB\x01\0\0\0").unwrap();
    let run = fb(&["validate", p(&log)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stdout.contains("holds no event"), "{}", run.stdout);
    assert_eq!(fb(&["validate", "--strict", p(&log)]).code, 1);
    let sound = fb(&["validate", p(&data("valid_joined_logs/cb_simple.log"))]);
    assert!(!sound.stdout.contains("holds no event"), "{}", sound.stdout);
}
