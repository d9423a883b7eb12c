//! `fb convert` against the reference's own output for every corpus log
//! (tests/data/expected/MANIFEST.tsv).
//!
//! `FB_BIN` names another `fb` to hold to the same bytes: CI sets it to
//! the build with a profile (`cargo xtask pgo`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/data")
}

struct Case {
    input: String,
    flags: Vec<String>,
    expected: String,
}

fn manifest() -> Vec<Case> {
    let text = std::fs::read_to_string(data_dir().join("expected/MANIFEST.tsv")).unwrap();
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .map(|l| {
            let cols: Vec<&str> = l.split('\t').collect();
            assert_eq!(cols.len(), 3, "bad manifest row: {l}");
            let flags = match cols[1] {
                "-" => Vec::new(),
                f => f.split_whitespace().map(str::to_string).collect(),
            };
            Case {
                input: cols[0].into(),
                flags,
                expected: cols[2].into(),
            }
        })
        .collect()
}

/// The `fb` under test: `FB_BIN`, else the one built with these tests.
fn fb() -> PathBuf {
    std::env::var_os("FB_BIN").map_or_else(|| env!("CARGO_BIN_EXE_fb").into(), PathBuf::from)
}

fn convert(input: &Path, flags: &[String], extra: &[&str], out: &Path) -> (i32, String) {
    let output = Command::new(fb())
        .arg("convert")
        .args(extra)
        .args(flags)
        .arg(input)
        .arg("--force")
        .arg("-o")
        .arg(out)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// A path for `name` (a corpus path, `/` and all) in this binary's
/// scratch folder.
fn scratch(name: &str) -> PathBuf {
    common::scratch(&name.replace('/', "_"))
}

#[test]
fn reference_mode_is_byte_identical_to_the_reference() {
    let cases = manifest();
    assert!(cases.len() >= 49, "manifest has {} rows", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let out = scratch(&case.input);
        let (code, stderr) = convert(
            &data_dir().join(&case.input),
            &case.flags,
            &["--compat", "reference"],
            &out,
        );
        let got = std::fs::read(&out).unwrap_or_default();
        let expected = std::fs::read(data_dir().join(&case.expected)).unwrap();
        if got != expected {
            failures.push(format!(
                "{} (exit {code}): output differs\n{stderr}",
                case.input
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Broken inputs still give the reference's bytes, but exit non-zero where
/// the framing was damaged (the reference always exits 0).
#[test]
fn damaged_framing_exits_1_and_clean_files_exit_0() {
    let cases: &[(&str, i32)] = &[
        ("invalid_joined_logs/bad_magic.log", 1),
        ("invalid_joined_logs/bad_version.log", 1),
        ("invalid_joined_logs/corrupt_joined_payload.log", 0),
        ("invalid_joined_logs/no_msg_hdr.log", 0),
        ("valid_joined_logs/cb_simple.log", 0),
    ];
    for (input, expected) in cases {
        let out = scratch(&format!("exit-{input}"));
        let (code, stderr) = convert(
            &data_dir().join(input),
            &[],
            &["--compat", "reference"],
            &out,
        );
        assert_eq!(code, *expected, "{input}: {stderr}");
    }
}

/// Replaces `.ffffffZ"` in every Timestamp by `.000000Z"`.
fn drop_subseconds(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(pos) = rest.find("\"Timestamp\":\"") {
        let start = pos + "\"Timestamp\":\"".len();
        let (head, tail) = rest.split_at(start);
        out.push_str(head);
        // YYYY-MM-DDTHH:MM:SS. then 6 digits
        out.push_str(&tail[..20]);
        out.push_str("000000");
        rest = &tail[26..];
    }
    out.push_str(rest);
    out
}

/// Default mode: the same lines as the reference except where a [quirk]
/// applies. The timestamp quirk applies everywhere (the reference drops
/// subseconds), so lines are compared with subseconds cleared; the
/// multistep original-cost quirk is checked on its own.
#[test]
fn default_mode_differs_from_the_reference_only_by_its_quirks() {
    let mut with_subseconds = 0;
    for case in manifest() {
        let out = scratch(&format!("sane-{}", case.input));
        convert(&data_dir().join(&case.input), &case.flags, &[], &out);
        let got = std::fs::read_to_string(&out).unwrap_or_default();
        let expected = std::fs::read_to_string(data_dir().join(&case.expected)).unwrap();
        if got != drop_subseconds(&got) {
            with_subseconds += 1;
        }
        let got = drop_subseconds(&got);
        if case.flags.iter().any(|f| f == "--multistep") {
            // [quirk] the reference writes -0.0 as every step's original cost.
            assert_ne!(got, expected, "{}", case.input);
            let reference_like = got
                .lines()
                .map(|l| {
                    let cut = l.rfind(",\"_original_label_cost\":").unwrap();
                    format!("{},\"_original_label_cost\":-0.0}}\n", &l[..cut])
                })
                .collect::<String>();
            assert_eq!(reference_like, expected, "{}", case.input);
        } else {
            assert_eq!(got, expected, "{}", case.input);
        }
    }
    assert!(with_subseconds > 20, "default mode should print subseconds");
}

#[test]
fn default_mode_skips_a_context_that_is_not_json_and_reference_mode_keeps_it() {
    let mut log = std::fs::read(data_dir().join("valid_joined_logs/cb_simple.log")).unwrap();
    let pos = log.windows(8).position(|w| w == b"{\"GUser\"").unwrap();
    log[pos] = b'[';
    let input = scratch("broken-context.log");
    std::fs::write(&input, &log).unwrap();
    let out = scratch("broken-context.dsjson");
    let (code, stderr) = convert(&input, &[], &[], &out);
    assert_eq!(code, 0);
    assert_eq!(std::fs::read(&out).unwrap(), b"");
    assert!(stderr.contains("1 x invalid_context"), "{stderr}");
    assert!(stderr.contains("event `91f71c8`"), "{stderr}");
    let (_, _) = convert(&input, &[], &["--compat", "reference"], &out);
    let text = std::fs::read_to_string(&out).unwrap();
    assert_eq!(text.lines().count(), 1);
    assert!(text.contains("\"c\":[\"GUser\""), "{text}");
}

#[test]
fn overrides_change_the_rewards() {
    // ccb_sum_reward_100_interactions uses Sum; forcing Earliest changes costs.
    let input = data_dir().join("valid_joined_logs/ccb_sum_reward_100_interactions.fb");
    let out = scratch("override.dsjson");
    convert(
        &input,
        &[],
        &["--compat", "reference", "--reward-function", "earliest"],
        &out,
    );
    let forced = std::fs::read(&out).unwrap();
    let expected = std::fs::read(
        data_dir().join("expected/valid_joined_logs/ccb_sum_reward_100_interactions.fb.dsjson"),
    )
    .unwrap();
    assert_eq!(
        forced.iter().filter(|&&b| b == b'\n').count(),
        expected.iter().filter(|&&b| b == b'\n').count()
    );
    assert_ne!(forced, expected);
    // A problem type that matches nothing joins nothing.
    let (_, stderr) = convert(&input, &[], &["--problem-type", "cb"], &out);
    assert_eq!(std::fs::read(&out).unwrap(), b"");
    assert!(stderr.contains("problem_type_mismatch"), "{stderr}");
}

#[test]
fn several_inputs_make_one_stream() {
    // rrcr.fb begins with REGULAR messages that, alone, come before any
    // checkpoint; after cb_simple.log's checkpoint they convert.
    let first = data_dir().join("valid_joined_logs/cb_simple.log");
    let second = data_dir().join("valid_joined_logs/rrcr.fb");
    let out = scratch("two-inputs.dsjson");
    let output = Command::new(fb())
        .args(["convert", "--compat", "reference"])
        .arg(&first)
        .arg(&second)
        .arg("-o")
        .arg(&out)
        .output()
        .unwrap();
    assert!(output.status.success());
    let alone =
        std::fs::read_to_string(data_dir().join("expected/valid_joined_logs/rrcr.fb.dsjson"))
            .unwrap();
    let got = std::fs::read_to_string(&out).unwrap();
    assert_eq!(got.lines().count(), 1 + 3);
    assert!(got.lines().count() > 1 + alone.lines().count());
}

/// `--no-caches` turns every speed cache, memo and shortcut off: every
/// corpus log, in both modes, gives the same bytes and exit code, and in
/// reference mode the reference's bytes. The flag is not in `--help`.
#[test]
fn every_corpus_log_gives_the_same_bytes_without_caches() {
    let mut failures = Vec::new();
    for case in manifest() {
        let expected = std::fs::read(data_dir().join(&case.expected)).unwrap();
        for compat in ["reference", "sane"] {
            let name = format!("{}-{compat}", case.input);
            let cached = scratch(&format!("cached-{name}"));
            let plain = scratch(&format!("plain-{name}"));
            let input = data_dir().join(&case.input);
            let mode = ["--compat", compat];
            let (code, _) = convert(&input, &case.flags, &mode, &cached);
            let (code_plain, stderr) = convert(
                &input,
                &case.flags,
                &["--no-caches", "--compat", compat],
                &plain,
            );
            let (got, got_plain) = (std::fs::read(&cached), std::fs::read(&plain));
            let got = got.unwrap_or_default();
            if got_plain.unwrap_or_default() != got || code_plain != code {
                failures.push(format!("{name}: exit {code} and {code_plain}\n{stderr}"));
            }
            if compat == "reference" && got != expected {
                failures.push(format!("{name}: not the reference's bytes"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let help = Command::new(fb())
        .args(["convert", "--help"])
        .output()
        .unwrap();
    assert!(help.status.success());
    assert!(!String::from_utf8_lossy(&help.stdout).contains("caches"));
}
