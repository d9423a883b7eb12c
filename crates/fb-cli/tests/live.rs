//! Logs that another process changes while `fb` reads them: appended to,
//! truncated. The output is a prefix of the log's lines, the exit says
//! what happened, and no signal ever ends the run.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;

use common::{scratch, scratch_dir};

/// Writes a generated log of `size` with `seed` at `path`: generated once
/// per test binary (a debug build takes seconds for 24 MiB), then copied
/// for each case, which meddles with its own copy.
fn gen(path: &Path, size: &str, seed: &str) {
    static MADE: Mutex<BTreeMap<(String, String), PathBuf>> = Mutex::new(BTreeMap::new());
    let mut made = MADE.lock().unwrap_or_else(|p| p.into_inner());
    let key = (size.to_string(), seed.to_string());
    let original = made
        .entry(key)
        .or_insert_with(|| {
            let original = scratch(&format!("live-gen-{size}-{seed}.fb"));
            let status = Command::new(env!("CARGO_BIN_EXE_fb"))
                .args(["gen", "-q", "--force", "--size", size, "--seed", seed, "-o"])
                .arg(&original)
                .status()
                .unwrap();
            assert!(status.success());
            original
        })
        .clone();
    drop(made);
    std::fs::copy(original, path).unwrap();
}

fn convert_all(path: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(["convert", "-q", "--threads", "1"])
        .arg(path)
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap()
}

/// The REGULAR messages of a log, as raw bytes.
fn regular_messages(log: &[u8]) -> Vec<Vec<u8>> {
    fb_format::SliceReader::new(log)
        .flatten()
        .filter(|m| m.kind == fb_format::MessageKind::Regular)
        .map(|m| log[m.offset as usize..m.offset as usize + m.len].to_vec())
        .collect()
}

/// Thread counts and `--mmap` of the logs appended to or rewritten while
/// they are converted. On 8 threads the file is read ahead, a chunk at a
/// time, until a read gives nothing (fb-run's `ahead`).
const CHANGING_CASES: [(&str, bool); 5] = [
    ("1", false),
    ("2", false),
    ("8", false),
    ("1", true),
    ("2", true),
];

/// Runs `fb convert` on `log` while `meddle` changes it from another
/// thread once the first output has come; returns exit code, stdout and
/// stderr.
fn convert_while(
    log: &Path,
    threads: &str,
    flags: &[&str],
    meddle: impl FnOnce() + Send,
) -> (Option<i32>, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(["convert", "--threads", threads])
        .args(flags)
        .arg(log)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let mut out = Vec::new();
    std::thread::scope(|scope| {
        let err = scope.spawn(move || {
            let mut text = String::new();
            stderr.read_to_string(&mut text).unwrap();
            text
        });
        // Some output first: `fb` is under way, and blocks on the pipe
        // until it is read.
        let mut first = vec![0u8; 4096];
        stdout.read_exact(&mut first).unwrap();
        out.extend(first);
        let meddler = scope.spawn(meddle);
        stdout.read_to_end(&mut out).unwrap();
        meddler.join().unwrap();
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(
            status.signal(),
            None,
            "ended by a signal: {}",
            err.join().unwrap()
        );
        (
            status.code(),
            String::from_utf8(out).unwrap(),
            err.join().unwrap(),
        )
    })
}

fn assert_prefix(name: &str, got: &str, whole: &str) {
    assert!(!got.is_empty(), "{name}: no output");
    assert!(got.ends_with('\n'), "{name}: a cut line");
    assert!(
        whole.starts_with(got),
        "{name}: not a prefix of the log's lines"
    );
}

#[test]
fn a_log_appended_to_while_it_is_converted_gives_a_prefix() {
    let dir = scratch_dir("append");
    let extra = dir.join("extra.fb");
    gen(&extra, "2MiB", "9");
    let more = regular_messages(&std::fs::read(&extra).unwrap());
    for (threads, mmap) in CHANGING_CASES {
        let flags: &[&str] = if mmap { &["--mmap"] } else { &[] };
        // The writer keeps the file open, as a logger does (no lease can be
        // had: `fb` reads), or opens it for each message (with --mmap `fb`
        // maps it under a lease, is told, and reads on from where it was).
        for reopen in [false, true] {
            let name = format!("threads {threads}, reopen {reopen}, mmap {mmap}");
            let log = dir.join(format!("live-{threads}-{reopen}-{mmap}.fb"));
            gen(&log, "6MiB", "3");
            let held = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
            let held = (!reopen).then_some(held);
            let (code, out, err) = convert_while(&log, threads, flags, || {
                let mut held = held;
                for m in &more {
                    match &mut held {
                        Some(f) => f.write_all(m).unwrap(),
                        None => std::fs::OpenOptions::new()
                            .append(true)
                            .open(&log)
                            .unwrap()
                            .write_all(m)
                            .unwrap(),
                    }
                }
            });
            // A message caught half written at the end is a truncation
            // (exit 1); anything else is a clean read.
            assert!(matches!(code, Some(0) | Some(1)), "{name}: {code:?} {err}");
            assert_prefix(&name, &out, &convert_all(&log));
        }
    }
}

#[test]
fn a_log_truncated_while_it_is_converted_is_an_error_not_a_signal() {
    let dir = scratch_dir("truncate");
    // Every case cuts its own copy of one log.
    let original = dir.join("original.fb");
    gen(&original, "24MiB", "4");
    let whole = convert_all(&original);
    for (threads, mmap) in [("1", false), ("2", false), ("1", true), ("2", true)] {
        let flags: &[&str] = if mmap { &["--mmap"] } else { &[] };
        // Read (the default, or held open for writing from the start: no
        // lease), the cut lands while `fb` reads, which says so. With
        // --mmap and no writer yet, `fb` maps it under a lease and the cut
        // waits for `fb` to let go: on one thread at the next message, and
        // on two at the end of the section (256 MiB), so past this small
        // log's end, which then converts whole.
        for held in [true, false] {
            let name = format!("threads {threads}, held open {held}, mmap {mmap}");
            let log = dir.join(format!("cut-{threads}-{held}-{mmap}.fb"));
            gen(&log, "24MiB", "4");
            let len = std::fs::metadata(&log).unwrap().len();
            let writer = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
            let writer = held.then_some(writer);
            let (code, out, err) = convert_while(&log, threads, flags, || {
                let file = writer
                    .unwrap_or_else(|| std::fs::OpenOptions::new().write(true).open(&log).unwrap());
                file.set_len(len / 3).unwrap();
            });
            if code == Some(0) {
                assert!(
                    mmap && !held && threads == "2",
                    "{name}: the cut went unnoticed: {err}"
                );
                assert_eq!(out, whole, "{name}");
                continue;
            }
            assert_eq!(code, Some(1), "{name}: {err}");
            assert!(err.contains("shrank from"), "{name}: {err}");
            assert_prefix(&name, &out, &whole);
        }
    }
}

/// Another process opens the log for writing and rewrites its middle
/// while `fb` converts it: read (the default), the bytes `fb` verified are
/// its own copy, whatever the writer does; with --mmap, the lease makes
/// the writer wait until `fb` reads on through `read`. Either way no
/// signal, no panic, exit 0 or 1, and every line written is whole JSON.
#[test]
fn a_log_rewritten_while_it_is_converted_gives_whole_lines() {
    let dir = scratch_dir("rewrite");
    for (threads, mmap) in CHANGING_CASES {
        let flags: &[&str] = if mmap { &["--mmap"] } else { &[] };
        let name = format!("threads {threads}, mmap {mmap}");
        let log = dir.join(format!("rewrite-{threads}-{mmap}.fb"));
        gen(&log, "24MiB", "4");
        let len = std::fs::metadata(&log).unwrap().len();
        let (code, out, err) = convert_while(&log, threads, flags, || {
            use std::os::unix::fs::FileExt;
            let file = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
            // The middle third, and every size field in it, garbage.
            let garbage = vec![0xA5u8; (len / 3) as usize];
            file.write_all_at(&garbage, len / 3).unwrap();
        });
        assert!(matches!(code, Some(0) | Some(1)), "{name}: {code:?} {err}");
        assert!(!out.is_empty(), "{name}: no output");
        for line in out.lines() {
            serde_json::from_str::<serde_json::Value>(line)
                .unwrap_or_else(|e| panic!("{name}: a line that is not JSON ({e}): {line}"));
        }
    }
}
