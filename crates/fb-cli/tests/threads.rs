//! `fb convert --threads N` writes the same bytes whatever N.

use std::path::{Path, PathBuf};
use std::process::Command;

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
    let dir = std::env::temp_dir().join(format!("fb-threads-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
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
