//! What `fb` must never do, whatever the user types: destroy an input,
//! panic on a full disk or a closed pipe, accept absurd options, take an
//! empty file for a log, lose a compressor's error.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::io::Read;
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::{data, fb, p, scratch_dir as scratch};

const LOG: &str = "valid_joined_logs/cb_simple.log";

#[test]
fn an_output_that_is_an_input_is_refused_and_the_input_kept() {
    let dir = scratch("same");
    let log = dir.join("a.log");
    std::fs::copy(data(LOG), &log).unwrap();
    let before = std::fs::read(&log).unwrap();
    std::os::unix::fs::symlink(&log, dir.join("link.log")).unwrap();
    std::fs::hard_link(&log, dir.join("hard.log")).unwrap();
    let to = |input: &std::path::Path, output: &str| -> Vec<String> {
        vec![
            "convert".into(),
            p(input).into(),
            "-o".into(),
            p(&dir.join(output)).into(),
        ]
    };
    let to_folder = |command: &[&str]| -> Vec<String> {
        let mut args: Vec<String> = command.iter().map(|a| a.to_string()).collect();
        args.extend([
            p(&log).into(),
            "-o".into(),
            p(&log).into(),
            "--force".into(),
        ]);
        args
    };
    let cases: [(&str, Vec<String>); 7] = [
        ("convert, same path", to(&log, "a.log")),
        (
            "export by date, same path",
            to_folder(&["export", "--partition-by", "date"]),
        ),
        (
            "split, same path",
            to_folder(&["split", "--max-size", "1KiB"]),
        ),
        ("convert, symlink", to(&log, "link.log")),
        ("convert, hard link", to(&log, "hard.log")),
        ("convert, input in a directory", to(&dir, "a.log")),
        (
            "repair, hard link",
            vec![
                "repair".into(),
                p(&log).into(),
                p(&dir.join("hard.log")).into(),
            ],
        ),
    ];
    for (name, args) in cases {
        let out = fb(&args);
        assert_eq!(out.code, 2, "{name}: {}", out.stderr);
        assert!(
            out.stderr.contains("is also an input"),
            "{name}: {}",
            out.stderr
        );
        assert_eq!(
            std::fs::read(&log).unwrap(),
            before,
            "{name}: the input changed"
        );
    }
}

#[test]
fn a_killed_conversion_leaves_the_old_output_or_a_complete_one() {
    let dir = scratch("killed");
    let log = dir.join("big.fb");
    let gen = fb(&["gen", "-q", "--size", "8MiB", "--seed", "5", "-o", p(&log)]);
    assert_eq!(gen.code, 0, "{}", gen.stderr);
    let complete = fb(&["convert", "-q", "--threads", "1", p(&log)]).stdout;
    let target = dir.join("out.dsjson");
    for delay_ms in [0, 20, 80, 300] {
        std::fs::write(&target, "old\n").unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
            .args([
                "convert",
                "-q",
                "--threads",
                "1",
                "--force",
                p(&log),
                "-o",
                p(&target),
            ])
            .spawn()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(delay_ms));
        let _ = child.kill();
        child.wait().unwrap();
        let now = std::fs::read_to_string(&target).unwrap();
        assert!(
            now == "old\n" || now == complete,
            "after {delay_ms} ms: a partial output of {} bytes replaced the old one",
            now.len()
        );
    }
    // A finished run puts the whole output in place; the killed ones wrote
    // to unnamed files, which nothing leaves behind.
    let out = fb(&["convert", "-q", "--force", p(&log), "-o", p(&target)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), complete);
    let names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("out.dsjson"))
        .collect();
    assert_eq!(names, ["out.dsjson"]);
}

/// Commands whose results go to standard output, with inputs that make
/// them write something.
fn writers() -> Vec<(&'static str, Vec<String>)> {
    let log = p(&data(LOG)).to_string();
    let invalid = p(&data("invalid_joined_logs")).to_string();
    vec![
        (
            "convert",
            vec![
                "convert".into(),
                "--threads".into(),
                "1".into(),
                log.clone(),
            ],
        ),
        (
            "convert on 2 threads",
            vec![
                "convert".into(),
                "--threads".into(),
                "2".into(),
                log.clone(),
            ],
        ),
        ("stats", vec!["stats".into(), log.clone()]),
        (
            "stats --json",
            vec!["stats".into(), "--json".into(), log.clone()],
        ),
        ("validate", vec!["validate".into(), invalid]),
        ("inspect", vec!["inspect".into(), log.clone()]),
        (
            "inspect --events",
            vec!["inspect".into(), "--events".into(), log.clone()],
        ),
        ("gen", vec!["gen".into(), "--events".into(), "10".into()]),
        (
            "export to an Arrow stream",
            vec!["export".into(), log.clone(), "-o".into(), "-".into()],
        ),
        (
            "export to an Arrow stream on 2 threads",
            vec![
                "export".into(),
                "--threads".into(),
                "2".into(),
                log,
                "-o".into(),
                "-".into(),
            ],
        ),
    ]
}

#[test]
fn a_full_disk_is_one_error_naming_the_output() {
    for (name, args) in writers() {
        let out = Command::new(env!("CARGO_BIN_EXE_fb"))
            .args(&args)
            .stdout(
                std::fs::OpenOptions::new()
                    .write(true)
                    .open("/dev/full")
                    .unwrap(),
            )
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(
            stderr.contains("writing standard output failed: No space left on device"),
            "{name}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
    }
}

/// Parquet and Arrow files on a full disk: the error says what the
/// system said, not how arrow-rs wrapped it ("External:", "Io error:").
#[test]
fn an_export_to_a_full_disk_says_what_the_system_said() {
    if !std::path::Path::new("/dev/full").exists() {
        return;
    }
    let log = p(&data(LOG)).to_string();
    for format in ["parquet", "arrow"] {
        for threads in ["1", "2"] {
            let out = fb(&[
                "export",
                "--format",
                format,
                "--threads",
                threads,
                &log,
                "-o",
                "/dev/full",
            ]);
            let case = format!("{format}, {threads} threads");
            assert_eq!(out.code, 2, "{case}: {}", out.stderr);
            let want = "fb: error: writing /dev/full failed: No space left on device";
            assert!(out.stderr.starts_with(want), "{case}: {}", out.stderr);
            assert_eq!(out.stderr.lines().count(), 1, "{case}: {}", out.stderr);
        }
    }
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let big = scratch("pipe").join("big.fb");
    assert_eq!(fb(&["gen", "-q", "--size", "4MiB", "-o", p(&big)]).code, 0);
    let mut cases = writers();
    cases.push(("convert of 4 MiB", vec!["convert".into(), p(&big).into()]));
    for (name, args) in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before anything is read.
        drop(child.stdout.take());
        let mut stderr = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut stderr)
            .unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(0), "{name}: {stderr}");
        assert!(!stderr.contains("panicked"), "{name}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{name}: {stderr}");
    }
}

#[test]
fn a_compressor_that_cannot_finish_is_an_error() {
    let dir = scratch("finish");
    for (ext, threads) in [("gz", "1"), ("zst", "1"), ("gz", "2"), ("zst", "2")] {
        // A name that asks for compression, on a device whose every write
        // fails: the compressed bytes only go out when it finishes.
        let target = dir.join(format!("full-{threads}.{ext}"));
        std::os::unix::fs::symlink("/dev/full", &target).unwrap();
        let out = fb(&[
            "convert",
            "-q",
            "--threads",
            threads,
            p(&data(LOG)),
            "-o",
            p(&target),
        ]);
        assert_eq!(out.code, 2, "{ext}: {}", out.stderr);
        assert!(
            out.stderr
                .contains(&format!("writing {} failed", target.display())),
            "{ext}: {}",
            out.stderr
        );
    }
}

#[test]
fn thread_counts_out_of_range_are_refused() {
    for n in ["0", "257", "20000", "-1", "many"] {
        let out = fb(&["convert", &format!("--threads={n}"), p(&data(LOG))]);
        assert_eq!(out.code, 2, "--threads {n}");
        assert!(
            out.stderr.contains("from 1 to 256"),
            "--threads {n}: {}",
            out.stderr
        );
    }
    let out = fb(&["convert", "-q", "--threads", "256", p(&data(LOG))]);
    assert_eq!(out.code, 0, "{}", out.stderr);
}

#[test]
fn an_empty_file_is_not_a_log() {
    let dir = scratch("empty");
    let empty = dir.join("empty.fb");
    std::fs::write(&empty, b"").unwrap();
    for path in [p(&empty), "/dev/null"] {
        let out = fb(&["validate", path]);
        assert_eq!(out.code, 1, "{path}: {}", out.stdout);
        assert!(
            out.stdout.contains("empty file: not a joined log"),
            "{path}: {}",
            out.stdout
        );
        assert!(!out.stderr.contains(": valid"), "{path}: {}", out.stderr);
        let out = fb(&["convert", path]);
        assert_eq!(out.stdout, "");
        assert!(
            out.stderr.contains(&format!("warning: {path}: empty file")),
            "{path}: {}",
            out.stderr
        );
    }
}

#[test]
fn stats_of_no_log_prints_no_table() {
    let text = scratch("stats").join("notes.txt");
    std::fs::write(&text, "hello, world\n").unwrap();
    let out = fb(&["stats", p(&text)]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "", "a table for a file that is not a log");
    assert!(
        out.stderr.contains("not a joined binary log"),
        "{}",
        out.stderr
    );
}

#[test]
fn inspect_of_a_directory_lists_every_file_by_name() {
    let dir = data("skip_learn/cb");
    let out = fb(&["inspect", p(&dir)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let mut names: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    assert!(names.len() > 1);
    let headers: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("==> "))
        .collect();
    let want: Vec<String> = names
        .iter()
        .map(|n| format!("==> {} <==", n.display()))
        .collect();
    assert_eq!(headers, want);
    // Each listing is the one the file gives alone.
    let alone = fb(&["inspect", p(&names[1])]).stdout;
    assert!(
        out.stdout.contains(&format!("{}\n{alone}", want[1])),
        "{}",
        out.stdout
    );
    // Offsets belong to one file.
    let out = fb(&["inspect", "--offset", "8", p(&dir)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("name one file"), "{}", out.stderr);
}

#[test]
fn since_after_until_is_an_error() {
    let out = fb(&[
        "convert",
        "--since",
        "2021-06-02",
        "--until",
        "2021-06-01T21:00:00-02:00",
        p(&data(LOG)),
    ]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("--since is not before --until"),
        "{}",
        out.stderr
    );
    let out = fb(&["convert", "--since", "2021-02-31", p(&data(LOG))]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("2021-02-31"), "{}", out.stderr);
}

/// What the system prints when a thread that did start ran out of memory
/// (glibc, Rust's allocator, or std setting up the thread's signal stack).
fn out_of_memory(stderr: &str) -> bool {
    [
        "out of memory",
        "memory allocation of",
        "failed to allocate an alternative stack",
    ]
    .iter()
    .any(|m| stderr.contains(m))
}

/// Under a tight address-space limit thread stacks cannot all be mapped:
/// starting a worker fails, which is an error that says what to do, never
/// a panic or an abort.
#[test]
fn a_worker_that_cannot_start_is_an_error() {
    let script = format!(
        "ulimit -v 100000 && exec '{}' convert -q --threads 256 '{}'",
        env!("CARGO_BIN_EXE_fb"),
        p(&data(LOG))
    );
    // One malloc arena: per-thread arenas would take the address space
    // first and make threads that did start fail inside glibc instead.
    let out = Command::new("sh")
        .args(["-c", &script])
        .env("MALLOC_ARENA_MAX", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    match out.status.code() {
        // The system had room for every thread after all.
        Some(0) => assert!(!out.stdout.is_empty()),
        Some(2) => assert!(
            stderr.contains("starting worker thread") && stderr.contains("try fewer threads"),
            "{stderr}"
        ),
        // Threads that did start can run out of memory too under such a
        // limit, inside glibc (an abort, not a panic): the environment,
        // not the spawn failure, ended the run.
        _ if out_of_memory(&stderr) => {}
        other => panic!("exit {other:?}: {stderr}"),
    }
}

/// Readable but odd data is a warning: every shipped valid sample passes.
#[test]
fn every_shipped_valid_log_validates() {
    for dir in [
        "valid_joined_logs",
        "skip_learn/cb",
        "skip_learn/ccb",
        "skip_learn/ca",
    ] {
        for entry in std::fs::read_dir(data(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                continue;
            }
            let out = fb(&["validate", p(&path)]);
            assert_eq!(
                out.code,
                0,
                "{}: {}{}",
                path.display(),
                out.stdout,
                out.stderr
            );
        }
    }
}
