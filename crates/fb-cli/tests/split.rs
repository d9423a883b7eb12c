//! `fb split`: every piece is a valid log of its own, and converting the
//! pieces one by one gives the whole log's lines, byte for byte.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use std::path::{Path, PathBuf};

use common::{data, fb, p, scratch_dir};
use fb_format::{MessageKind, Payload, PayloadDecoder, SliceReader};
use fb_join::{Compat, Options};

/// The DSJSON of `log` read on its own.
fn convert(log: &[u8], opts: Options) -> Vec<u8> {
    let mut out = Vec::new();
    fb_join::convert(log, &mut out, opts).unwrap();
    out
}

/// The pieces `fb split` writes, in name order.
fn split(log: &Path, dir: &Path, flags: &[&str]) -> (i32, Vec<PathBuf>) {
    let mut args = vec!["split", "-q", p(log), "-o", p(dir), "--force"];
    args.extend_from_slice(flags);
    let out = fb(&args);
    assert!(out.code <= 1, "{}: {}", log.display(), out.stderr);
    // A run that ends in error keeps its pieces aside, in DIR.partial; one
    // on a file that is not a log writes none.
    let from = match out.code {
        0 => dir.to_path_buf(),
        _ => PathBuf::from(format!("{}.partial", dir.display())),
    };
    let mut pieces: Vec<PathBuf> = match std::fs::read_dir(&from) {
        Ok(entries) => entries.map(|e| e.unwrap().path()).collect(),
        Err(_) if out.stderr.contains("not a joined binary log") => {
            let _ = std::fs::remove_dir_all(&from);
            Vec::new()
        }
        Err(e) => panic!("{}: {e}: {}", from.display(), out.stderr),
    };
    pieces.sort();
    (out.code, pieces)
}

/// Splits `log` and checks the pieces convert to the whole log's lines
/// under each option set; returns how many pieces it made.
fn split_converts_as_whole(name: &str, log: &Path, dir: &Path, flags: &[&str]) -> usize {
    let whole = std::fs::read(log).unwrap();
    let (code, pieces) = split(log, dir, flags);
    let multistep = name.contains("multistep");
    let option_sets = [
        ("sane", Options::default()),
        ("reference", Options::default().compat(Compat::Reference)),
        ("inline dedup", Options::default().inline_dedup(true)),
    ];
    for (what, opts) in option_sets {
        let opts = opts.multistep(multistep);
        let mut joined = Vec::new();
        for piece in &pieces {
            joined.extend(convert(&std::fs::read(piece).unwrap()[..], opts.clone()));
        }
        let expected = convert(&whole, opts);
        assert!(
            joined == expected,
            "{name} {flags:?} ({what}): {} pieces give {} bytes, the whole log {}",
            pieces.len(),
            joined.len(),
            expected.len()
        );
    }
    // No piece is made of a header and checkpoints alone: each holds a
    // REGULAR message when the log has one.
    let regulars = |bytes: &[u8]| {
        SliceReader::new(bytes)
            .map_while(Result::ok)
            .filter(|m| m.kind == MessageKind::Regular)
            .count()
    };
    if regulars(&whole) > 0 {
        for piece in &pieces {
            let bytes = std::fs::read(piece).unwrap();
            assert!(
                regulars(&bytes) > 0,
                "{name} {flags:?}: {piece:?} holds no REGULAR"
            );
        }
    }
    // A log that validates gives pieces that do; each starts as the log
    // does (with its file magic, when it has one).
    if code == 0 && fb(&["validate", "-q", p(log)]).code == 0 {
        let starts = SliceReader::new(&whole).next().unwrap().unwrap().kind;
        for piece in &pieces {
            let bytes = std::fs::read(piece).unwrap();
            let first = SliceReader::new(&bytes).next().unwrap().unwrap();
            if starts == MessageKind::FileMagic {
                assert_eq!(first.kind, starts, "{name}: {piece:?}");
            }
            let out = fb(&["validate", "-q", p(piece)]);
            assert_eq!(out.code, 0, "{name}: {piece:?}: {}", out.stderr);
        }
    }
    pieces.len()
}

#[test]
fn corpus_logs_split_then_converted_give_the_whole_logs_lines() {
    let dir = scratch_dir("split-corpus");
    let mut logs = Vec::new();
    for sub in [
        "valid_joined_logs",
        "invalid_joined_logs",
        "skip_learn/cb",
        "skip_learn/ccb",
        "skip_learn/slates",
        "skip_learn/ca",
        "literal_outcomes",
    ] {
        for entry in std::fs::read_dir(data(sub)).unwrap() {
            logs.push(entry.unwrap().path());
        }
    }
    logs.sort();
    let mut pieces = 0;
    for log in &logs {
        let name = log.display().to_string();
        // Every REGULAR message a piece of its own (with the checkpoints
        // before it): the most state to carry.
        pieces += split_converts_as_whole(&name, log, &dir.join("each"), &["--max-size", "1"]);
        split_converts_as_whole(&name, log, &dir.join("4k"), &["--max-size", "4KiB"]);
    }
    assert!(logs.len() >= 40, "{} logs", logs.len());
    assert!(pieces > logs.len(), "{pieces} pieces");
}

#[test]
fn generated_logs_split_then_converted_give_the_whole_logs_lines() {
    let dir = scratch_dir("split-gen");
    // (name, gen flags): each problem type, with and without zstd, dedup.
    let cases: &[(&str, &[&str])] = &[
        ("cb", &["--problem-type", "cb", "--events-per-message", "3"]),
        (
            "cb-zstd-dedup",
            &["--problem-type", "cb", "--zstd", "--dedup"],
        ),
        (
            "ccb-dedup",
            &[
                "--problem-type",
                "ccb",
                "--dedup",
                "--checkpoint-every",
                "9",
            ],
        ),
        ("ccb-zstd", &["--problem-type", "ccb", "--zstd"]),
        (
            "slates",
            &["--problem-type", "slates", "--reward-function", "sum"],
        ),
        ("ca", &["--problem-type", "ca", "--deferred", "0.2"]),
        ("multistep", &["--problem-type", "multistep", "--dedup"]),
    ];
    for (name, flags) in cases {
        let log = dir.join(format!("{name}.fb"));
        let mut args = vec!["gen", "-q", "--events", "400", "--seed", "4", "-o", p(&log)];
        args.extend_from_slice(flags);
        assert_eq!(fb(&args).code, 0, "{name}");
        let n = split_converts_as_whole(name, &log, &dir.join("out"), &["--max-size", "8KiB"]);
        assert!(n > 5, "{name}: {n} pieces");
        // No piece is larger than asked unless one message is.
        let (_, pieces) = split(&log, &dir.join("out"), &["--max-size", "8KiB"]);
        for piece in &pieces {
            let bytes = std::fs::read(piece).unwrap();
            let largest = SliceReader::new(&bytes)
                .map(|m| m.unwrap().len)
                .max()
                .unwrap();
            assert!(
                bytes.len() <= 8192 || largest > 4096,
                "{name}: {piece:?} has {} bytes",
                bytes.len()
            );
        }
    }
}

#[test]
fn a_log_spanning_hours_splits_by_hour() {
    let dir = scratch_dir("split-hour");
    let log = dir.join("cb.fb");
    // About a decision a second: some three hours.
    let out = fb(&[
        "gen",
        "-q",
        "--events",
        "11000",
        "--seed",
        "6",
        "-o",
        p(&log),
    ]);
    assert_eq!(out.code, 0);
    let n = split_converts_as_whole("by hour", &log, &dir.join("h"), &["--by", "hour"]);
    assert!((3..=5).contains(&n), "{n} pieces");
}

/// The ids of a piece's synthetic DedupInfo (its first REGULAR message,
/// when that holds a DedupInfo alone).
fn carried_ids(piece: &[u8]) -> Vec<u64> {
    let mut decoder = PayloadDecoder::default();
    let Some(msg) = SliceReader::new(piece)
        .map(Result::unwrap)
        .find(|m| m.kind == MessageKind::Regular)
    else {
        return Vec::new();
    };
    let views: Vec<_> = msg.events().unwrap().map(Result::unwrap).collect();
    match (
        views.len(),
        views.first().map(|v| decoder.payload(v).unwrap()),
    ) {
        (1, Some(Payload::Dedup(info))) => info.ids().unwrap().iter().collect(),
        _ => Vec::new(),
    }
}

#[test]
fn a_piece_carries_the_dedup_entries_and_checkpoints_it_needs() {
    let dir = scratch_dir("split-dedup");
    let log = dir.join("dedup.fb");
    let bytes = common::carrying_log();
    std::fs::write(&log, &bytes).unwrap();
    // The whole log inlines every action and sums two outcomes.
    let whole = String::from_utf8(convert(&bytes, Options::default().inline_dedup(true))).unwrap();
    assert_eq!(whole.lines().count(), 13);
    assert!(!whole.contains("__aid"), "{whole}");
    assert!(
        whole.lines().all(|l| l.starts_with(r#"{"_label_cost":-3"#)),
        "{whole}"
    );

    let n = split_converts_as_whole("dedup", &log, &dir.join("each"), &["--max-size", "1"]);
    assert!(n >= 13, "{n} pieces");
    let (_, pieces) = split(&log, &dir.join("each"), &["--max-size", "1"]);
    let carried: Vec<Vec<u64>> = pieces
        .iter()
        .map(|piece| carried_ids(&std::fs::read(piece).unwrap()))
        .collect();
    // Exactly the referenced entry: never 3, and none where the piece
    // brings its own DedupInfo or holds no decision.
    let wanted: Vec<Vec<u64>> = pieces
        .iter()
        .map(|piece| {
            let text =
                String::from_utf8(convert(&std::fs::read(piece).unwrap(), Options::default()))
                    .unwrap();
            let own = text.contains(r#""i":0,"#) || text.contains(r#""i":9,"#);
            match text.find(r#""__aid":"#) {
                Some(at) if !own => vec![u64::from(text.as_bytes()[at + 8] - b'0')],
                _ => Vec::new(),
            }
        })
        .collect();
    assert_eq!(carried, wanted);
    assert!(
        carried.iter().filter(|c| !c.is_empty()).count() >= 10,
        "{carried:?}"
    );

    // By day and by hour: names carry the period and sort in log order.
    let (_, days) = split(&log, &dir.join("days"), &["--by", "day"]);
    let names: Vec<String> = days
        .iter()
        .map(|d| d.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        [
            "part-00000-2026-03-01.fb",
            "part-00001-2026-03-02.fb",
            "part-00002-2026-03-03.fb",
            "part-00003-2026-03-04.fb"
        ]
    );
    split_converts_as_whole("dedup", &log, &dir.join("days"), &["--by", "day"]);
    let (_, hours) = split(&log, &dir.join("hours"), &["--by", "hour"]);
    assert_eq!(hours.len(), 13);
    assert!(
        hours[1].ends_with("part-00001-2026-03-01T07.fb"),
        "{hours:?}"
    );
}

#[test]
fn existing_outputs_damage_and_inputs_inside_the_output() {
    let dir = scratch_dir("split-safety");
    let log = dir.join("log.fb");
    std::fs::copy(
        data("valid_joined_logs/ccb_sum_reward_100_interactions.fb"),
        &log,
    )
    .unwrap();
    let out_dir = dir.join("out");
    std::fs::create_dir(&out_dir).unwrap();
    std::fs::write(out_dir.join("keep"), b"x").unwrap();
    // (case, arguments, exit code, what stderr says)
    let cases: [(&str, Vec<&str>, i32, &str); 3] = [
        (
            "output exists",
            vec!["split", p(&log), "--max-size", "1", "-o", p(&out_dir)],
            2,
            "--force",
        ),
        (
            "input inside the output",
            vec![
                "split",
                p(&log),
                "--max-size",
                "1",
                "-o",
                p(&dir),
                "--force",
            ],
            2,
            "inside",
        ),
        (
            "no rule",
            vec!["split", p(&log), "-o", p(&out_dir)],
            2,
            "--max-size",
        ),
    ];
    for (case, args, code, says) in cases {
        let out = fb(&args);
        assert_eq!(out.code, code, "{case}: {}", out.stderr);
        assert!(out.stderr.contains(says), "{case}: {}", out.stderr);
    }
    assert!(out_dir.join("keep").exists());
    assert!(log.exists());

    // A cut log: the pieces hold what comes before the damage, exit 1.
    let bytes = std::fs::read(&log).unwrap();
    let cut = dir.join("cut.fb");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 4]).unwrap();
    let (code, pieces) = split(&cut, &dir.join("cut"), &["--max-size", "1"]);
    assert_eq!(code, 1);
    assert!(!pieces.is_empty());
    assert!(
        !dir.join("cut").exists(),
        "a failed split put its pieces in place"
    );
    split_converts_as_whole("cut", &cut, &dir.join("cut"), &["--max-size", "1"]);
    assert!(!dir.read_dir().unwrap().any(|e| e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".tmp")));
}

#[test]
fn pieces_are_the_same_bytes_on_any_number_of_threads() {
    let dir = scratch_dir("split-threads");
    let carrying = dir.join("carrying.fb");
    std::fs::write(&carrying, common::carrying_log()).unwrap();
    let made = |name: &str, flags: &[&str]| {
        let log = dir.join(name);
        let gen = ["gen", "-q", "--events", "600", "--seed", "9", "-o", p(&log)];
        assert_eq!(fb(&[&gen[..], flags].concat()).code, 0, "{name}");
        log
    };
    let zstd = made("cb-zstd-dedup.fb", &["--zstd", "--dedup"]);
    let ccb = made(
        "ccb.fb",
        &[
            "--problem-type",
            "ccb",
            "--dedup",
            "--checkpoint-every",
            "9",
        ],
    );
    let bytes = std::fs::read(&ccb).unwrap();
    let cut = dir.join("cut.fb");
    std::fs::write(&cut, &bytes[..bytes.len() * 3 / 4]).unwrap();
    // (case, log, flags, exit code)
    let cases: [(&str, &Path, &[&str], i32); 5] = [
        (
            "dedup carried, a piece a message",
            &carrying,
            &["--max-size", "1"],
            0,
        ),
        ("by hour", &carrying, &["--by", "hour"], 0),
        (
            "corpus ccb, a piece a message",
            &ccb,
            &["--max-size", "1"],
            0,
        ),
        (
            "damaged: pieces before the damage",
            &cut,
            &["--max-size", "1"],
            1,
        ),
        ("zstd and dedup", &zstd, &["--max-size", "4KiB"], 0),
    ];
    for (case, log, flags, code) in cases {
        let mut folders = Vec::new();
        // Read a window at a time, and, with --mmap, in memory.
        let runs: [&[&str]; 4] = [
            &["--threads", "1"],
            &["--threads", "2"],
            &["--threads", "5"],
            &["--threads", "2", "--mmap"],
        ];
        for run in runs {
            let threads = run.join(" ");
            let out_dir = dir.join(format!("t{}", run.join("")));
            let (got, pieces) = split(log, &out_dir, &[flags, run].concat());
            assert_eq!(got, code, "{case}, {threads} threads");
            assert!(pieces.len() > 2, "{case}: {} pieces", pieces.len());
            let at = pieces[0].parent().unwrap().to_path_buf();
            folders.push((threads, common::tree(&at)));
            std::fs::remove_dir_all(&at).unwrap();
        }
        let (_, one) = &folders[0];
        for (threads, many) in &folders[1..] {
            assert!(
                many == one,
                "{case}: `{threads}` wrote other pieces than one thread"
            );
        }
    }
}

/// A log given as a pipe (`fb split <(zcat log.gz)`) has no offsets to
/// read at: it is read whole, and split as the file is.
#[test]
fn a_log_given_as_a_pipe_splits_as_the_file() {
    let dir = scratch_dir("split-pipe");
    let log = data("valid_joined_logs/average_reward_100_interactions.fb");
    let fifo = dir.join("pipe.fb");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status();
    assert!(made.unwrap().success(), "mkfifo");
    let bytes = std::fs::read(&log).unwrap();
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::write(&fifo, &bytes).unwrap())
    };
    let (piped_code, piped) = split(&fifo, &dir.join("piped"), &["--max-size", "1"]);
    writer.join().unwrap();
    let (filed_code, filed) = split(&log, &dir.join("filed"), &["--max-size", "1"]);
    assert_eq!((piped_code, filed_code), (0, 0));
    assert!(filed.len() > 1, "{} pieces", filed.len());
    let read = |pieces: &[PathBuf]| -> Vec<Vec<u8>> {
        pieces.iter().map(|p| std::fs::read(p).unwrap()).collect()
    };
    assert!(read(&piped) == read(&filed), "the pipe's pieces differ");
}
