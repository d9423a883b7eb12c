//! `fb convert --threads N` writes the same bytes whatever N, and with
//! `--no-caches` (every speed cache, memo and shortcut off).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

fn run(args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.code().is_some_and(|c| c <= 1),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

fn same_bytes_for_every_thread_count(input: &Path, flags: &[&str]) -> usize {
    let path = input.to_str().unwrap();
    let mut outputs = Vec::new();
    for threads in ["1", "2", "4"] {
        let mut args = vec!["convert", "-q", "--threads", threads];
        args.extend_from_slice(flags);
        args.push(path);
        outputs.push(run(&args));
    }
    assert_eq!(outputs[0], outputs[1], "{path} {flags:?}: 1 vs 2 threads");
    assert_eq!(outputs[0], outputs[2], "{path} {flags:?}: 1 vs 4 threads");
    for threads in ["1", "2"] {
        let mut args = vec!["convert", "-q", "--no-caches", "--threads", threads];
        args.extend_from_slice(flags);
        args.push(path);
        let plain = run(&args);
        assert_eq!(
            outputs[0], plain,
            "{path} {flags:?}: caches on vs off, {threads} threads"
        );
    }
    // A file is mapped and its payloads borrowed; a pipe is read and its
    // payloads copied into batches. The bytes out are the same.
    let mut args = vec!["convert", "-q", "--threads", "2"];
    args.extend_from_slice(flags);
    args.push("-");
    let piped = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(&args)
        .stdin(std::fs::File::open(input).unwrap())
        .output()
        .unwrap();
    assert!(
        piped.status.code().is_some_and(|c| c <= 1),
        "{path} from stdin"
    );
    assert_eq!(
        outputs[0], piped.stdout,
        "{path} {flags:?}: file vs stdin, 2 threads"
    );
    outputs[0].len()
}

#[test]
fn every_corpus_file_converts_identically_with_1_2_and_4_threads() {
    let manifest = std::fs::read_to_string(data("expected/MANIFEST.tsv")).unwrap();
    let mut files = 0;
    for row in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let cols: Vec<&str> = row.split('\t').collect();
        let flags: Vec<&str> = if cols[1] == "-" {
            vec![]
        } else {
            cols[1].split(' ').collect()
        };
        for compat in [["--compat", "reference"], ["--compat", "sane"]] {
            let mut all = flags.clone();
            all.extend_from_slice(&compat);
            all.push("--inline-dedup");
            same_bytes_for_every_thread_count(&data(cols[0]), &all);
        }
        files += 1;
    }
    assert!(files >= 49);
}

#[test]
fn generated_logs_with_checkpoints_zstd_and_dedup_convert_identically() {
    let dir = common::scratch_dir("threads");
    let cases: &[(&str, &[&str])] = &[
        (
            "cb",
            &[
                "--problem-type",
                "cb",
                "--checkpoint-every",
                "3",
                "--zstd",
                "--dedup",
                "--events-per-message",
                "2",
            ],
        ),
        (
            "ccb",
            &[
                "--problem-type",
                "ccb",
                "--checkpoint-every",
                "5",
                "--dedup",
                "--deferred",
                "0.3",
                "--activated",
                "0.5",
            ],
        ),
        (
            "slates",
            &[
                "--problem-type",
                "slates",
                "--checkpoint-every",
                "7",
                "--zstd",
            ],
        ),
        ("ca", &["--problem-type", "ca", "--checkpoint-every", "2"]),
        (
            "multistep",
            &["--problem-type", "multistep", "--checkpoint-every", "4"],
        ),
    ];
    for (name, flags) in cases {
        let log = dir.join(format!("{name}.fb"));
        let mut args = vec![
            "gen",
            "-q",
            "--events",
            "5000",
            "--seed",
            "11",
            "-o",
            log.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        run(&args);
        let extra: &[&str] = if *name == "multistep" {
            &["--multistep"]
        } else {
            &[]
        };
        let mut with_inline = extra.to_vec();
        with_inline.push("--inline-dedup");
        // Batches close every MiB of payload: the log must span several of
        // them for the order to be tested.
        let size = std::fs::metadata(&log).unwrap().len();
        assert!(size > 2 << 20, "{name}: the log has only {size} bytes");
        let n = same_bytes_for_every_thread_count(&log, &with_inline);
        assert!(n > 0, "{name}: no DSJSON");
        same_bytes_for_every_thread_count(&log, extra);
    }
}

/// `-o x.gz` and `-o x.zst`: the same compressed bytes for any thread
/// count, several members or frames, and the plain output once
/// decompressed, by this process and by the system's `gzip` and `zstd`.
#[test]
fn compressed_outputs_are_the_same_bytes_for_every_thread_count() {
    use std::io::Read;
    let dir = common::scratch_dir("packed");
    let log = dir.join("cb.fb");
    let log_s = log.to_str().unwrap();
    run(&["gen", "-q", "--size", "4MB", "--seed", "5", "-o", log_s]);
    let plain = run(&["convert", "-q", log_s]);
    assert!(
        plain.len() > 3 << 20,
        "{} bytes: too few pieces",
        plain.len()
    );
    // (extension, level flags, command that decompresses to stdout)
    let cases: &[(&str, &[&str], &[&str])] = &[
        ("gz", &[], &["gzip", "-dc"]),
        ("gz", &["--level", "9"], &["gzip", "-dc"]),
        ("zst", &[], &["zstd", "-dcq"]),
        ("zst", &["--level=-3"], &["zstd", "-dcq"]),
    ];
    for (ext, level, tool) in cases {
        let mut files = Vec::new();
        for threads in ["1", "2", "3"] {
            let out = dir.join(format!("out-{threads}.{ext}"));
            let mut args = vec!["convert", "-q", "--force", "--threads", threads];
            args.extend_from_slice(level);
            args.extend([log_s, "-o", out.to_str().unwrap()]);
            run(&args);
            files.push(std::fs::read(&out).unwrap());
        }
        let name = format!("{ext} {level:?}");
        assert!(files[0] == files[1], "{name}: 1 and 2 threads differ");
        assert!(files[0] == files[2], "{name}: 1 and 3 threads differ");
        let mut back = Vec::new();
        match *ext {
            "gz" => {
                flate2::read::MultiGzDecoder::new(&files[0][..])
                    .read_to_end(&mut back)
                    .unwrap();
                // More than one member: a one-member reader stops early.
                let mut first = Vec::new();
                flate2::read::GzDecoder::new(&files[0][..])
                    .read_to_end(&mut first)
                    .unwrap();
                assert!(first.len() < plain.len(), "{name}: one member");
            }
            _ => back = zstd::decode_all(&files[0][..]).unwrap(),
        }
        assert!(back == plain, "{name}: decompressed differs");
        match Command::new(tool[0])
            .args(&tool[1..])
            .arg(dir.join(format!("out-1.{ext}")))
            .output()
        {
            Ok(out) => {
                assert!(out.status.success(), "{name}: {tool:?} failed");
                assert!(out.stdout == plain, "{name}: {tool:?} reads other bytes");
            }
            // The tool is not installed: the decoders above stand.
            Err(e) => eprintln!("{name}: {tool:?} not run: {e}"),
        }
    }
    let bad = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(["convert", "--level", "12", log_s, "-o"])
        .arg(dir.join("bad.gz"))
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(2));
    let err = String::from_utf8_lossy(&bad.stderr);
    assert!(err.contains("gzip levels are 1 to 9"), "{err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fb COMMAND --json --threads N` for N = 1, 2, 4, the same bytes; the
/// report (empty when the run stops at damage).
fn same_json_for_every_thread_count(command: &str, inputs: &[&str], flags: &[&str]) -> String {
    let mut outputs = Vec::new();
    for threads in ["1", "2", "4"] {
        let mut args = vec![command, "--json", "-q", "--threads", threads];
        args.extend_from_slice(flags);
        args.extend_from_slice(inputs);
        outputs.push(run(&args));
    }
    assert!(
        outputs[0] == outputs[1],
        "{command} {inputs:?} {flags:?}: 1 vs 2 threads"
    );
    assert!(
        outputs[0] == outputs[2],
        "{command} {inputs:?} {flags:?}: 1 vs 4 threads"
    );
    String::from_utf8(outputs.swap_remove(0)).unwrap()
}

/// `fb stats`' report, the same bytes on 1, 2 and 4 threads.
fn same_stats_for_every_thread_count(inputs: &[&str], flags: &[&str]) -> String {
    same_json_for_every_thread_count("stats", inputs, flags)
}

#[test]
fn stats_are_the_same_bytes_for_every_thread_count_on_every_corpus_log() {
    let manifest = std::fs::read_to_string(data("expected/MANIFEST.tsv")).unwrap();
    let (mut files, mut reports) = (0, 0);
    for row in manifest
        .lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
    {
        let cols: Vec<&str> = row.split('\t').collect();
        let flags: Vec<&str> = if cols[1] == "-" {
            vec![]
        } else {
            cols[1].split(' ').collect()
        };
        let path = data(cols[0]);
        let report = same_stats_for_every_thread_count(&[path.to_str().unwrap()], &flags);
        reports += usize::from(!report.is_empty());
        files += 1;
    }
    assert!(
        files >= 49 && reports >= 40,
        "{files} files, {reports} reports"
    );
    // Folders of logs, each one run (a session on several threads), and
    // several files as one log.
    for dir in ["valid_joined_logs", "skip_learn/ccb", "skip_learn/cb"] {
        let path = data(dir);
        let report = same_stats_for_every_thread_count(&[path.to_str().unwrap()], &[]);
        assert!(report.contains("\"kept\""), "{dir}: {report}");
    }
    let (a, b) = (
        data("valid_joined_logs/ccb_sum_reward_100_interactions.fb"),
        data("valid_joined_logs/ccb_deferred_actions_w_activations_and_apprentice_20.fb"),
    );
    let report =
        same_stats_for_every_thread_count(&[a.to_str().unwrap(), b.to_str().unwrap()], &[]);
    assert!(report.contains("\"inputs\":2"), "{report}");
}

/// `fb evaluate`'s report, the same bytes on 1, 2 and 4 threads: one
/// thread takes the records, reads prediction files along and adds the
/// sums in log order, however many join.
fn same_evaluation_for_every_thread_count(inputs: &[&str], flags: &[&str]) -> String {
    same_json_for_every_thread_count("evaluate", inputs, flags)
}

/// The policies `fb evaluate` is asked for in these tests, windows by
/// hour: per-window sums as well as the whole run's.
const POLICIES: &[&str] = &[
    "--policy", "baseline", "--policy", "uniform", "--by", "hour",
];

#[test]
fn evaluations_are_the_same_bytes_for_every_thread_count_on_corpus_logs() {
    // (log or folder, flags beside POLICIES)
    let cases: [(&str, &[&str]); 6] = [
        ("valid_joined_logs/cb_joined_with_pdrop_05.fb", &[]),
        ("valid_joined_logs/ccb_sum_reward_100_interactions.fb", &[]),
        (
            "valid_joined_logs/slates_average_reward_100_interactions.fb",
            &[],
        ),
        (
            "valid_joined_logs/multistep_3_deferred_episodes.fb",
            &["--multistep"],
        ),
        (
            "valid_joined_logs/ca_loop_simple.fb",
            &["--cats", "4,10,0,100"],
        ),
        ("valid_joined_logs", &[]),
    ];
    for (rel, extra) in cases {
        let path = data(rel);
        let mut flags = POLICIES.to_vec();
        flags.extend_from_slice(extra);
        let report = same_evaluation_for_every_thread_count(&[path.to_str().unwrap()], &flags);
        let v: serde_json::Value = serde_json::from_str(&report).unwrap();
        assert!(v["events"].as_u64().unwrap() > 0, "{rel}: {report}");
    }
}

/// The figures of a stats report that do not say how the log was cut
/// into files.
fn sums(report: &str) -> serde_json::Value {
    let mut v: serde_json::Value = serde_json::from_str(report).unwrap();
    for key in ["inputs", "logs", "bytes", "messages"] {
        v.as_object_mut().unwrap().remove(key);
    }
    v
}

#[test]
fn generated_logs_and_their_pieces_give_the_same_stats_for_every_thread_count() {
    let dir = common::scratch_dir("stats-threads");
    // Uniform rewards and pass probabilities below 1: sums whose last
    // digits depend on the order of their terms.
    let cases: &[(&str, &[&str])] = &[
        (
            "cb",
            &[
                "--problem-type",
                "cb",
                "--checkpoint-every",
                "3",
                "--zstd",
                "--dedup",
                "--events-per-message",
                "2",
                "--reward",
                "uniform:-1:2",
                "--pass-probability",
                "0.8",
            ],
        ),
        (
            "ccb",
            &[
                "--problem-type",
                "ccb",
                "--checkpoint-every",
                "5",
                "--dedup",
                "--deferred",
                "0.3",
                "--activated",
                "0.5",
                "--reward",
                "uniform:0:3",
            ],
        ),
        (
            "slates",
            &[
                "--problem-type",
                "slates",
                "--checkpoint-every",
                "7",
                "--zstd",
                "--reward",
                "uniform:-2:1",
                "--pass-probability",
                "0.5",
            ],
        ),
        (
            "ca",
            &[
                "--problem-type",
                "ca",
                "--checkpoint-every",
                "2",
                "--reward",
                "uniform",
            ],
        ),
        (
            "multistep",
            &["--problem-type", "multistep", "--checkpoint-every", "4"],
        ),
    ];
    for (name, flags) in cases {
        let log = dir.join(format!("{name}.fb"));
        let mut args = vec![
            "gen",
            "-q",
            "--events",
            "5000",
            "--seed",
            "11",
            "-o",
            log.to_str().unwrap(),
        ];
        args.extend_from_slice(flags);
        run(&args);
        let size = std::fs::metadata(&log).unwrap().len();
        assert!(size > 2 << 20, "{name}: the log has only {size} bytes");
        let extra: &[&str] = if *name == "multistep" {
            &["--multistep"]
        } else {
            &[]
        };
        let whole = same_stats_for_every_thread_count(&[log.to_str().unwrap()], extra);
        assert!(whole.contains("\"kept\":"), "{name}: {whole}");
        // The log cut into self-contained pieces, read as a folder: the
        // same events, so the same sums to the last digit.
        let pieces = dir.join(format!("{name}-pieces"));
        run(&[
            "split",
            "-q",
            log.to_str().unwrap(),
            "--max-size",
            "300KiB",
            "-o",
            pieces.to_str().unwrap(),
        ]);
        let count = std::fs::read_dir(&pieces).unwrap().count();
        assert!(count > 5, "{name}: {count} pieces");
        let cut = same_stats_for_every_thread_count(&[pieces.to_str().unwrap()], extra);
        assert_eq!(sums(&cut), sums(&whole), "{name}: pieces vs the whole log");
        // The evaluation likewise, of the log and of its pieces, with a
        // prediction file read along: VW's `0:1` on every line of the
        // DSJSON is the baseline of CB (action 1), so it must give the
        // baseline's figures.
        let mut flags = POLICIES.to_vec();
        flags.extend_from_slice(extra);
        let lines = run(&["convert", "-q", log.to_str().unwrap()]);
        let lines = lines.iter().filter(|&&b| b == b'\n').count();
        let pred = dir.join(format!("{name}.pred"));
        std::fs::write(&pred, "0:1\n".repeat(lines)).unwrap();
        let arg = format!("predictions:{}", pred.to_str().unwrap());
        if *name == "cb" {
            flags.extend_from_slice(&["--policy", &arg]);
        }
        if *name == "ca" {
            flags.extend_from_slice(&["--cats", "8,5,0,100"]);
        }
        let whole = same_evaluation_for_every_thread_count(&[log.to_str().unwrap()], &flags);
        let cut = same_evaluation_for_every_thread_count(&[pieces.to_str().unwrap()], &flags);
        assert_eq!(whole, cut, "{name}: evaluate, pieces vs the whole log");
        let v: serde_json::Value = serde_json::from_str(&whole).unwrap();
        let kind = &v["by_problem_type"][*name];
        let decisions = kind["decisions"].as_u64().unwrap_or(0);
        assert!(decisions > 1000, "{name}: {decisions} decisions: {whole}");
        if *name == "cb" {
            let policies = kind["policies"].as_array().unwrap();
            assert_eq!(policies.len(), 4, "{whole}");
            assert_eq!(policies[3]["ips"], policies[1]["ips"], "{whole}");
            assert!(policies[3]["ips"].is_f64(), "{whole}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
