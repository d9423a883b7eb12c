//! `fb validate --threads N` on one log: its messages are checked and
//! joined on the pipeline's workers, and the listing is the one a single
//! thread makes, damage and joinability warnings alike, from a file or a
//! pipe, and past the joiner's 10,000 kept diagnostics.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{fb, p, scratch_dir};
use std::path::{Path, PathBuf};

const FILEMAGIC: u32 = 0x4246_5756;
const CHECKPOINT: u32 = 0x1111_1111;
const REGULAR: u32 = 0xFFFF_FFFF;
const EOF: u32 = 0xAAAA_AAAA;
const UNKNOWN: u32 = 0xDEAD_BEEF;

/// A CB log of `size` from `fb gen`, a checkpoint every `every` messages.
fn generated(dir: &Path, seed: &str, every: &str, size: &str) -> Vec<u8> {
    let path = dir.join(format!("sound-{seed}.fb"));
    let gen = fb(&[
        "gen",
        "--problem-type",
        "cb",
        "--seed",
        seed,
        "--checkpoint-every",
        every,
        "--size",
        size,
        "-o",
        p(&path),
    ]);
    assert_eq!(gen.code, 0, "{}", gen.stderr);
    std::fs::read(&path).unwrap()
}

/// Each message of `log` as framing finds it: offset, type, payload
/// size, and length with its padding (FILEMAGIC's payload is inline).
fn frames(log: &[u8]) -> Vec<(usize, u32, usize, usize)> {
    let word = |o: usize| u32::from_le_bytes(log[o..o + 4].try_into().unwrap());
    let mut all = Vec::new();
    let mut offset = 0;
    while offset + 8 <= log.len() {
        let (kind, size) = (word(offset), word(offset + 4) as usize);
        let len = match kind {
            FILEMAGIC | EOF => 8,
            _ => 8 + size + size % 8,
        };
        all.push((offset, kind, size, len));
        offset += len;
    }
    assert_eq!(offset, log.len(), "the log frames whole");
    all
}

/// `log` damaged the same way every run: bits flipped in REGULAR
/// messages and checkpoints, a few REGULAR messages' types made unknown.
/// Framing is left sound, so every message is read.
fn damaged(log: &[u8]) -> Vec<u8> {
    let mut out = log.to_vec();
    let mut state = 0x9E37_79B9_7F4A_7C15_u64;
    let mut next = |n: usize| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state % n as u64) as usize
    };
    let (mut flipped, mut unknown) = (0, 0);
    for (i, (offset, kind, size, _)) in frames(log).into_iter().enumerate() {
        if kind == CHECKPOINT && i % 3 == 0 || kind == REGULAR && i % 11 == 0 {
            out[offset + 8 + next(size)] ^= 1 << next(8);
            flipped += 1;
        } else if kind == REGULAR && i % 97 == 50 {
            out[offset..offset + 4].copy_from_slice(&UNKNOWN.to_le_bytes());
            unknown += 1;
        }
    }
    assert!(
        flipped > 100 && unknown > 5,
        "{flipped} flipped, {unknown} unknown"
    );
    out
}

fn validate(log: &Path, threads: &str, max: &str) -> common::Out {
    fb(&[
        "validate",
        "--threads",
        threads,
        "--max-errors",
        max,
        p(log),
    ])
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

#[test]
fn one_damaged_log_lists_the_same_problems_at_any_thread_count() {
    let dir = scratch_dir("validate-one-log");
    let log = write(
        &dir,
        "damaged.fb",
        &damaged(&generated(&dir, "9", "30", "4MiB")),
    );
    let one = validate(&log, "1", "100000");
    assert_eq!(one.code, 1, "{}", one.stderr);
    let lines: Vec<&str> = one.stdout.lines().collect();
    let listed = |what: &str| lines.iter().filter(|l| l.contains(what)).count();
    assert!(lines.len() > 100, "{} lines", lines.len());
    assert!(listed("unknown") > 5, "{}", one.stdout);
    assert!(listed("CheckpointInfo") > 5, "{}", one.stdout);
    assert!(listed(": warning: ") > 5 && listed(": error: ") > 50);
    // The damage is listed in the order of the messages (the joiner's
    // warnings follow, in theirs).
    let indices: Vec<u64> = lines
        .iter()
        .filter(|l| l.contains(": error: "))
        .filter_map(|l| l.split(", message ").nth(1))
        .map(|rest| rest.split([',', ':']).next().unwrap().parse().unwrap())
        .collect();
    assert!(indices.windows(2).all(|w| w[0] <= w[1]), "{indices:?}");
    let few = validate(&log, "1", "7");
    assert!(few.stdout.contains("more problems"), "{}", few.stdout);
    for (threads, max, want) in [
        ("2", "100000", &one),
        ("3", "100000", &one),
        ("4", "100000", &one),
        ("8", "100000", &one),
        ("2", "7", &few),
        ("3", "7", &few),
    ] {
        let again = validate(&log, threads, max);
        let how = format!("{threads} threads, --max-errors {max}");
        assert_eq!(again.code, want.code, "{how}");
        assert!(again.stdout == want.stdout, "{how}: the listing");
        assert_eq!(again.stderr, want.stderr, "{how}");
    }
    // Through a pipe: the same lines, under the name of standard input.
    let piped = std::process::Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(["validate", "--threads", "3", "--max-errors", "100000", "-"])
        .stdin(std::fs::File::open(&log).unwrap())
        .output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(1));
    let piped = String::from_utf8(piped.stdout).unwrap();
    assert!(piped == one.stdout.replace(p(&log), "<stdin>"), "piped");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Past the 10,000 diagnostics the joiner keeps in full, a log checked on
/// several threads keeps the same ones as on one: those first in the log
/// (here the REGULAR messages read before any checkpoint could be, then
/// messages of unknown type), so the same warnings are listed.
#[test]
fn the_same_warnings_are_listed_past_the_joiners_limit() {
    let dir = scratch_dir("validate-many-diagnostics");
    let log = generated(&dir, "2", "40", "2MiB");
    // The first checkpoint unreadable (its root offset far past its end),
    // and 12,000 empty messages of unknown type before the log's last.
    let all = frames(&log);
    let (first_checkpoint, ..) = *all.iter().find(|f| f.1 == CHECKPOINT).unwrap();
    let (last, ..) = *all.last().unwrap();
    let mut out = log[..last].to_vec();
    out[first_checkpoint + 8..first_checkpoint + 12]
        .copy_from_slice(&0xFFFF_FF00_u32.to_le_bytes());
    for _ in 0..12_000 {
        out.extend_from_slice(&UNKNOWN.to_le_bytes());
        out.extend_from_slice(&0_u32.to_le_bytes());
    }
    out.extend_from_slice(&log[last..]);
    let damaged = write(&dir, "damaged.fb", &out);
    let one = validate(&damaged, "1", "100000");
    assert_eq!(one.code, 1, "{}", one.stderr);
    let before_any_checkpoint = one
        .stdout
        .lines()
        .filter(|l| l.contains("before any checkpoint"))
        .count();
    assert!(before_any_checkpoint >= 30, "{}", &one.stdout[..2000]);
    assert!(one.stdout.lines().count() > 10_000);
    for threads in ["2", "3"] {
        let again = validate(&damaged, threads, "100000");
        assert_eq!(again.code, one.code);
        assert!(again.stdout == one.stdout, "{threads} threads: the listing");
        assert_eq!(again.stderr, one.stderr, "{threads} threads");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A folder of logs is checked log by log, each on its own, though the
/// speed caches of one log's check go on to the next's: what the folder
/// lists is what each log lists alone, in the folder's order, on one
/// thread or several, with the caches or without.
#[test]
fn a_folder_lists_what_each_of_its_logs_lists_alone() {
    let dir = scratch_dir("validate-folder-alone");
    let logs = dir.join("logs");
    std::fs::create_dir_all(&logs).unwrap();
    // A log whose first checkpoint cannot be read: its first messages'
    // events wait for a configuration, which the joiner warns about.
    let late = generated(&dir, "4", "25", "512KiB");
    let (first_checkpoint, ..) = *frames(&late).iter().find(|f| f.1 == CHECKPOINT).unwrap();
    let mut no_checkpoint = late.clone();
    no_checkpoint[first_checkpoint + 8..first_checkpoint + 12]
        .copy_from_slice(&0xFFFF_FF00_u32.to_le_bytes());
    let files = [
        ("a-damaged.fb", damaged(&generated(&dir, "9", "30", "1MiB"))),
        ("b-sound.fb", generated(&dir, "3", "30", "512KiB")),
        ("c-no-checkpoint.fb", no_checkpoint),
        ("d-damaged.fb", damaged(&generated(&dir, "5", "30", "1MiB"))),
        ("e-sound.fb", late),
    ];
    let mut alone = String::new();
    let mut problems = 0;
    for (name, bytes) in &files {
        let path = write(&logs, name, bytes);
        let one = validate(&path, "1", "100000");
        alone.push_str(&one.stdout);
        problems += one.stdout.lines().count();
    }
    assert!(problems > 200, "{alone}");
    assert!(alone.contains("before any checkpoint"), "{alone}");
    for (threads, caches) in [("1", true), ("2", true), ("3", true), ("1", false)] {
        let mut args = vec!["validate", "--threads", threads, "--max-errors", "100000"];
        if !caches {
            args.push("--no-caches");
        }
        args.push(p(&logs));
        let folder = fb(&args);
        let how = format!("{threads} threads, caches {caches}");
        assert_eq!(folder.code, 1, "{how}: {}", folder.stderr);
        assert!(folder.stdout == alone, "{how}: the listing");
        assert!(
            folder.stderr.contains("5 inputs"),
            "{how}: {}",
            folder.stderr
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// A generated log of `problem` (with `extra` arguments to `fb gen`).
fn generated_kind(dir: &Path, name: &str, problem: &str, extra: &[&str]) -> Vec<u8> {
    let path = dir.join(format!("{name}.fb"));
    let mut args = vec![
        "gen",
        "--problem-type",
        problem,
        "--events",
        "300",
        "--checkpoint-every",
        "7",
        "-o",
        p(&path),
    ];
    args.extend_from_slice(extra);
    let gen = fb(&args);
    assert_eq!(gen.code, 0, "{}", gen.stderr);
    std::fs::read(&path).unwrap()
}

/// `log` with every seventh REGULAR message's first context made not
/// JSON (its opening brace a letter: the payload still decodes), and bits
/// flipped in every thirteenth.
fn contexts_and_bits_damaged(log: &[u8]) -> Vec<u8> {
    let mut out = log.to_vec();
    let mut state = 0x2545_F491_4F6C_DD1D_u64;
    for (i, (offset, kind, size, _)) in frames(log).into_iter().enumerate() {
        if kind != REGULAR {
            continue;
        }
        let payload = offset + 8..offset + 8 + size;
        if i % 7 == 3 {
            if let Some(at) = log[payload.clone()].windows(2).position(|w| w == b"{\"") {
                out[offset + 8 + at] = b'X';
            }
        } else if i % 13 == 5 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            out[offset + 8 + (state % size as u64) as usize] ^= 1 << (state % 8);
        }
    }
    out
}

/// The joiner's reading of a message stands in for validate's own check
/// of it where it read the message whole (the fast path); `--no-caches`
/// checks every message again (its plain twin). Both list the same
/// problems for damaged logs of every kind, on one thread and three.
#[test]
fn the_check_the_joiner_stands_in_for_lists_what_the_plain_check_lists() {
    let dir = scratch_dir("validate-joiner-stands-in");
    let kinds: [(&str, &str, &[&str]); 7] = [
        ("cb", "cb", &[]),
        ("ccb", "ccb", &["--events-per-message", "3"]),
        ("slates", "slates", &[]),
        ("ca", "ca", &[]),
        ("multistep", "multistep", &[]),
        ("cb-zstd", "cb", &["--zstd", "--outcomes", "2"]),
        (
            "ccb-dedup",
            "ccb",
            &["--dedup", "--events-per-message", "2"],
        ),
    ];
    let mut not_json = 0;
    for (name, problem, extra) in kinds {
        let log = generated_kind(&dir, name, problem, extra);
        let path = write(
            &dir,
            &format!("{name}-damaged.fb"),
            &contexts_and_bits_damaged(&log),
        );
        for threads in ["1", "3"] {
            let plain = fb(&[
                "validate",
                "--no-caches",
                "--threads",
                threads,
                "--max-errors",
                "100000",
                p(&path),
            ]);
            let fast = validate(&path, threads, "100000");
            let how = format!("{name}, {threads} threads");
            assert_eq!(plain.code, 1, "{how}: {}", plain.stderr);
            assert_eq!(fast.code, plain.code, "{how}");
            assert!(fast.stdout == plain.stdout, "{how}: the listing");
            assert_eq!(fast.stderr, plain.stderr, "{how}");
            not_json += fast.stdout.matches("context is not valid JSON").count();
        }
    }
    assert!(not_json > 20, "{not_json} contexts found not JSON");
    let _ = std::fs::remove_dir_all(&dir);
}
