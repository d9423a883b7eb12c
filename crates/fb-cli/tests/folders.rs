//! Folders of many logs: `fb split`'s pieces read as one run (a session:
//! the workers kept from one file to the next) give the whole log's
//! DSJSON at any `--threads`, and damaged pieces the same messages.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{fb, p, scratch_dir};
use std::path::Path;

/// A CCB log of several megabytes (many batches) with checkpoints,
/// zstd and dedup, and its pieces of at most 200 KiB.
fn log_and_pieces(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let whole = dir.join("whole.fb");
    let gen = fb(&[
        "gen",
        "--problem-type",
        "ccb",
        "--seed",
        "4",
        "--zstd",
        "--dedup",
        "--size",
        "3MiB",
        "-o",
        p(&whole),
    ]);
    assert_eq!(gen.code, 0, "{}", gen.stderr);
    let pieces = dir.join("pieces");
    let split = fb(&["split", p(&whole), "--max-size", "200KiB", "-o", p(&pieces)]);
    assert_eq!(split.code, 0, "{}", split.stderr);
    let count = std::fs::read_dir(&pieces).unwrap().count();
    assert!(count > 10, "{count} pieces");
    (whole, pieces)
}

/// Standard error without the summary line's timing.
fn messages(stderr: &str) -> String {
    stderr
        .lines()
        .map(|l| match l.find(" in ") {
            Some(at) if l.starts_with("fb: ") && l.contains("MB/s") => &l[..at],
            _ => l,
        })
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn split_pieces_give_the_whole_logs_dsjson_at_any_thread_count() {
    let dir = scratch_dir("folders-split");
    let (whole, pieces) = log_and_pieces(&dir);
    let one = fb(&["convert", "-q", "--threads", "1", p(&whole)]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(one.stdout.lines().count() > 1000);
    // From 8 threads the files are read ahead (fb-run's `ahead`).
    for threads in ["1", "2", "4", "8"] {
        for extra in [&[][..], &["--inline-dedup"][..]] {
            let mut args = vec!["convert", "-q", "--threads", threads];
            args.extend_from_slice(extra);
            let whole_out = fb(&[&args[..], &[p(&whole)]].concat());
            let pieces_out = fb(&[&args[..], &[p(&pieces)]].concat());
            assert_eq!(pieces_out.code, 0, "{}", pieces_out.stderr);
            assert!(
                pieces_out.stdout == whole_out.stdout,
                "{threads} threads {extra:?}: the pieces differ from the whole log"
            );
            if extra.is_empty() {
                assert!(
                    whole_out.stdout == one.stdout,
                    "{threads} threads: differs from one thread"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn damaged_pieces_give_the_same_messages_at_any_thread_count() {
    let dir = scratch_dir("folders-damaged");
    let (_, pieces) = log_and_pieces(&dir);
    let mut names: Vec<_> = std::fs::read_dir(&pieces)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    // Each case damages one piece: cut in the middle, a message's size
    // past any limit, a checkpoint's payload garbled.
    let cut = std::fs::read(&names[2]).unwrap();
    std::fs::write(&names[2], &cut[..cut.len() / 2]).unwrap();
    let mut big = std::fs::read(&names[5]).unwrap();
    let at = big.len() / 3;
    big[at..at + 8].copy_from_slice(&[0xFF; 8]);
    std::fs::write(&names[5], &big).unwrap();
    let mut garbled = std::fs::read(&names[8]).unwrap();
    for b in garbled.iter_mut().skip(40).take(64) {
        *b ^= 0x5A;
    }
    std::fs::write(&names[8], &garbled).unwrap();
    let runs: Vec<_> = ["1", "2", "4", "8"]
        .iter()
        .map(|threads| fb(&["convert", "-v", "--threads", threads, p(&pieces)]))
        .collect();
    assert_eq!(runs[0].code, 1, "{}", runs[0].stderr);
    for piece in [&names[2], &names[5]] {
        let name = piece.file_name().unwrap().to_str().unwrap();
        assert!(runs[0].stderr.contains(name), "{name}: {}", runs[0].stderr);
    }
    for (run, threads) in runs.iter().zip(["1", "2", "4", "8"]).skip(1) {
        assert_eq!(run.code, runs[0].code, "{threads} threads");
        assert!(run.stdout == runs[0].stdout, "{threads} threads: output");
        assert_eq!(
            messages(&run.stderr),
            messages(&runs[0].stderr),
            "{threads} threads: messages"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_full_output_ends_a_folder_run_with_one_error() {
    if !Path::new("/dev/full").exists() {
        return;
    }
    let dir = scratch_dir("folders-full");
    let (_, pieces) = log_and_pieces(&dir);
    for threads in ["1", "2", "4", "8"] {
        let out = fb(&[
            "convert",
            "--threads",
            threads,
            p(&pieces),
            "-o",
            "/dev/full",
        ]);
        assert_eq!(out.code, 2, "{threads} threads: {}", out.stderr);
        let errors = out.stderr.lines().filter(|l| l.contains("error")).count();
        assert_eq!(errors, 1, "{threads} threads: {}", out.stderr);
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Files read ahead (from 8 threads, for DSJSON and statistics) give
/// what the plain path (`--no-caches`: each file opened where it is
/// framed) and one thread give: the same DSJSON, messages and exit code,
/// the same statistics. The folder holds every kind of input read-ahead
/// tells apart: an empty file, small pieces, a log larger than what is
/// read ahead at once, and one cut short.
#[test]
fn files_read_ahead_give_what_the_plain_path_gives() {
    let dir = scratch_dir("folders-ahead");
    let (whole, pieces) = log_and_pieces(&dir);
    let size = std::fs::metadata(&whole).unwrap().len();
    assert!(
        size > 2 << 20,
        "the whole log is read ahead in chunks: {size}"
    );
    std::fs::copy(&whole, pieces.join("zz-whole.fb")).unwrap();
    std::fs::write(pieces.join("part-00003-empty.fb"), b"").unwrap();
    let cut = std::fs::read(&whole).unwrap();
    std::fs::write(pieces.join("zz-whole-cut.fb"), &cut[..cut.len() / 2 + 7]).unwrap();
    let hows = [
        &["--threads", "1"][..],
        &["--threads", "8", "--no-caches"],
        &["--threads", "8"],
    ];
    let runs: Vec<_> = hows
        .iter()
        .map(|how| {
            let convert = fb(&[&["convert", "-v"][..], how, &[p(&pieces)]].concat());
            let stats = fb(&[&["stats", "-q", "--json"][..], how, &[p(&pieces)]].concat());
            (how, convert, stats)
        })
        .collect();
    let (_, first, stats) = &runs[0];
    assert_eq!(first.code, 1, "{}", first.stderr);
    assert!(first.stderr.contains("empty"), "{}", first.stderr);
    assert!(first.stdout.lines().count() > 2000);
    assert!(stats.stdout.contains("\"joined\""), "{}", stats.stdout);
    for (how, run, run_stats) in &runs[1..] {
        assert_eq!(run.code, first.code, "{how:?}");
        assert!(run.stdout == first.stdout, "{how:?}: output");
        assert_eq!(messages(&run.stderr), messages(&first.stderr), "{how:?}");
        assert_eq!(run_stats.code, stats.code, "{how:?}");
        assert_eq!(run_stats.stdout, stats.stdout, "{how:?}: statistics");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn validate_lists_the_same_problems_at_any_thread_count() {
    let dir = scratch_dir("folders-validate");
    let (_, pieces) = log_and_pieces(&dir);
    let mut names: Vec<_> = std::fs::read_dir(&pieces)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    names.sort();
    let cut = std::fs::read(&names[3]).unwrap();
    std::fs::write(&names[3], &cut[..cut.len() - 100]).unwrap();
    let corpus = common::data("invalid_joined_logs");
    for max in ["100", "3"] {
        let runs: Vec<_> = ["1", "2", "4"]
            .iter()
            .map(|threads| {
                fb(&[
                    "validate",
                    "--threads",
                    threads,
                    "--max-errors",
                    max,
                    p(&corpus),
                    p(&pieces),
                ])
            })
            .collect();
        assert_eq!(runs[0].code, 1, "{}", runs[0].stderr);
        assert!(runs[0].stdout.lines().count() >= 3, "{}", runs[0].stdout);
        for run in &runs[1..] {
            assert_eq!(run.code, runs[0].code, "--max-errors {max}");
            assert_eq!(run.stdout, runs[0].stdout, "--max-errors {max}");
            assert_eq!(run.stderr, runs[0].stderr, "--max-errors {max}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn sample_is_the_same_at_any_thread_count() {
    let dir = scratch_dir("folders-sample");
    let (whole, _) = log_and_pieces(&dir);
    for index in [false, true] {
        if index {
            let made = fb(&["index", p(&whole)]);
            assert_eq!(made.code, 0, "{}", made.stderr);
        }
        let runs: Vec<_> = ["1", "2", "4"]
            .iter()
            .map(|threads| {
                fb(&[
                    "sample",
                    "-q",
                    "--threads",
                    threads,
                    "--fraction",
                    "0.3",
                    "--seed",
                    "7",
                    p(&whole),
                ])
            })
            .collect();
        assert_eq!(runs[0].code, 0, "{}", runs[0].stderr);
        assert!(runs[0].stdout.lines().count() > 100);
        for run in &runs[1..] {
            assert!(
                run.stdout == runs[0].stdout,
                "index {index}: sample differs"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_time_window_over_indexed_pieces_is_the_whole_logs_at_any_thread_count() {
    let dir = scratch_dir("folders-window");
    let (whole, pieces) = log_and_pieces(&dir);
    let indexed = fb(&["index", "-q", p(&pieces)]);
    assert_eq!(indexed.code, 0, "{}", indexed.stderr);
    let window = [
        "--since",
        "2024-01-01T00:10:00Z",
        "--until",
        "2024-01-01T00:30:00Z",
    ];
    let mut args = vec!["convert", "-q", "--threads", "1", "--no-index"];
    args.extend_from_slice(&window);
    args.push(p(&whole));
    let expected = fb(&args);
    assert_eq!(expected.code, 0, "{}", expected.stderr);
    let lines = expected.stdout.lines().count();
    let all = fb(&["convert", "-q", p(&whole)]).stdout.lines().count();
    assert!(lines > 100 && lines < all, "{lines} of {all} lines");
    for threads in ["1", "2", "4"] {
        let mut args = vec!["convert", "-q", "--threads", threads];
        args.extend_from_slice(&window);
        args.push(p(&pieces));
        let out = fb(&args);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert!(
            out.stdout == expected.stdout,
            "{threads} threads: the window over the pieces differs"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// The number in export's summary line ("N rows written") of the rows of
/// a folder's pieces, on one thread and on several, to a Parquet file, an
/// Arrow file and a partitioned tree: the rows the output holds, which
/// are the whole log's DSJSON lines. On one thread the rows of a piece
/// short of a batch were once counted again with the next piece's.
#[test]
fn export_says_how_many_rows_it_wrote_from_a_folder() {
    use common::{arrow_batches, parquet_batches, rows};
    let dir = scratch_dir("folders-rows");
    let (whole, pieces) = log_and_pieces(&dir);
    let lines = fb(&["convert", "-q", p(&whole)]).stdout.lines().count();
    assert!(lines > 1000, "{lines}");
    let said = |stderr: &str| -> usize {
        let line = stderr.lines().find(|l| l.contains(" rows written "));
        let line = line.unwrap_or_else(|| panic!("no summary line: {stderr}"));
        let (head, _) = line.split_once(" rows written ").unwrap();
        head.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let hows = [
        &["--threads", "1"][..],
        &["--threads", "1", "--no-caches"],
        &["--threads", "2"],
        &["--threads", "4"],
    ];
    for how in hows {
        let file = dir.join("out.parquet");
        let run = fb(&[
            &["export", "--force"][..],
            how,
            &[p(&pieces), "-o", p(&file)],
        ]
        .concat());
        assert_eq!(run.code, 0, "{how:?}: {}", run.stderr);
        assert_eq!(rows(&parquet_batches(&file)), lines, "{how:?}: the file");
        assert_eq!(said(&run.stderr), lines, "{how:?}: Parquet");

        let file = dir.join("out.arrow");
        let args = [&["export", "--force", "--format", "arrow"][..], how];
        let run = fb(&[&args.concat()[..], &[p(&pieces), "-o", p(&file)]].concat());
        assert_eq!(run.code, 0, "{how:?}: {}", run.stderr);
        assert_eq!(
            rows(&arrow_batches(&file)),
            lines,
            "{how:?}: the Arrow file"
        );
        assert_eq!(said(&run.stderr), lines, "{how:?}: Arrow");

        let tree = dir.join("tree");
        let args = [&["export", "--force", "--partition-by", "date"][..], how];
        let run = fb(&[&args.concat()[..], &[p(&pieces), "-o", p(&tree)]].concat());
        assert_eq!(run.code, 0, "{how:?}: {}", run.stderr);
        let files = common::tree(&tree);
        assert!(!files.is_empty(), "{how:?}: no files");
        let in_tree: usize = files
            .iter()
            .map(|(name, _)| rows(&parquet_batches(&tree.join(name))))
            .sum();
        assert_eq!(in_tree, lines, "{how:?}: the tree's files");
        assert_eq!(said(&run.stderr), lines, "{how:?}: partitioned");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `fb evaluate` of the pieces is the whole log's evaluation (the logged
/// and the uniform policy, every window) on one thread, where each piece's first batch
/// reuses the one before's, and on three.
#[test]
fn evaluate_of_the_pieces_is_the_whole_logs_at_any_thread_count() {
    let dir = scratch_dir("folders-evaluate");
    let (whole, pieces) = log_and_pieces(&dir);
    let evaluate = |input: &Path, threads: &str| {
        let out = fb(&[
            "evaluate",
            "-q",
            "--threads",
            threads,
            "--policy",
            "uniform",
            "--by",
            "hour",
            "--format",
            "csv",
            p(input),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        out.stdout
    };
    let want = evaluate(&whole, "1");
    assert!(want.lines().count() > 6, "{want}");
    for threads in ["1", "3"] {
        assert!(evaluate(&pieces, threads) == want, "{threads} threads");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
