//! Rules every command keeps: numbers that rewards and probabilities
//! can be, what happens to an output when a run fails or is
//! interrupted, when an output may be replaced, pipes, standard input and
//! terminals.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{data, fb, p, scratch_dir};

/// A reward or probability that is not a finite float32 (`nan`, `inf`,
/// `1e400`) is refused by every flag that takes one, before anything is
/// written: DSJSON would hold `null`, which VW cannot read.
#[test]
fn non_finite_rewards_and_probabilities_are_refused() {
    let dir = scratch_dir("rules-finite");
    let log = data("valid_joined_logs/cb_simple.log");
    let raw = data("reward_functions/cb/cb_v2.fb");
    let obs = data("reward_functions/cb/f-reward_3obs_v2.fb");
    let out = dir.join("out");
    for value in ["nan", "NaN", "inf", "-inf", "1e400", "-3.5e38x"] {
        // (case, arguments)
        let cases: [(&str, Vec<&str>); 7] = [
            ("convert", vec!["convert", p(&log), "-o", p(&out)]),
            ("stats", vec!["stats", p(&log)]),
            ("export", vec!["export", p(&log), "-o", p(&out)]),
            (
                "join",
                vec![
                    "join",
                    "--interactions",
                    p(&raw),
                    "--observations",
                    p(&obs),
                    "-o",
                    p(&out),
                ],
            ),
            ("gen", vec!["gen", "--events", "3", "-o", p(&out)]),
            ("gen --reward", vec!["gen", "--events", "3", "-o", p(&out)]),
            ("gen --pass-probability", vec!["gen", "-o", p(&out)]),
        ];
        for (case, mut args) in cases {
            let flag = match case {
                "gen --reward" => format!("--reward=constant:{value}"),
                "gen --pass-probability" => format!("--pass-probability={value}"),
                _ => format!("--default-reward={value}"),
            };
            args.push(&flag);
            let run = fb(&args);
            assert_eq!(run.code, 2, "{case} {value}: {}", run.stderr);
            let said = run.stderr.to_lowercase();
            assert!(
                said.contains(&value.trim_start_matches('-').to_lowercase())
                    || said.contains("inf"),
                "{case} {value}: {}",
                run.stderr
            );
            assert!(run.stdout.is_empty(), "{case} {value}");
            assert!(!out.exists(), "{case} {value}: an output was written");
        }
    }
    // Finite values, negative ones included, are taken.
    let run = fb(&["convert", "--default-reward", "-1.5e3", p(&log)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
}

/// `fb ARGS` with `envs`, standard input from `stdin` (bytes).
fn fb_with(args: &[&str], stdin: &[u8], envs: &[(&str, &str)]) -> common::Out {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(args)
        .envs(envs.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let feeder = std::thread::spawn(move || {
        let _ = input.write_all(&bytes);
    });
    let out = child.wait_with_output().unwrap();
    feeder.join().unwrap();
    common::Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// The names in `dir`, hidden ones included, sorted.
fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// A generated log (300 decisions, a message each) whose first 60% is
/// intact and then cut: its lines before the cut convert, and the run
/// ends in error (exit 1).
fn cut_log(dir: &std::path::Path) -> Vec<u8> {
    let whole = dir.join("whole.fb");
    let run = fb(&[
        "gen",
        "-q",
        "--events",
        "300",
        "--seed",
        "1",
        "-o",
        p(&whole),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let whole = std::fs::read(&whole).unwrap();
    whole[..whole.len() * 6 / 10].to_vec()
}

/// A run that ends in error never replaces an output: what it wrote goes
/// to `OUT.partial`, the old output stays, and the error is said with
/// `-q` too. A run that succeeds with --force replaces it.
#[test]
fn a_failed_run_never_replaces_an_output() {
    let dir = scratch_dir("rules-failed");
    let cut = dir.join("cut.fb");
    std::fs::write(&cut, cut_log(&dir)).unwrap();
    let img = dir.join("img.fb");
    std::fs::write(&img, b"\x89PNG\r\n\x1a\n0000").unwrap();
    let good = data("valid_joined_logs/ccb_simple.log");
    let want_partial = fb(&["convert", "-q", p(&cut)]);
    assert_eq!(want_partial.code, 1, "{}", want_partial.stderr);
    assert!(want_partial.stdout.lines().count() > 10);

    let out = dir.join("out.dsjson");
    let partial = dir.join("out.dsjson.partial");
    // (case, the inputs, the partial lines wanted)
    let cases: [(&str, Vec<&str>, Option<&str>); 3] = [
        ("not a log", vec![p(&img)], None),
        ("cut short", vec![p(&cut)], Some(&want_partial.stdout)),
        ("a log then not a log", vec![p(&good), p(&img)], None),
    ];
    for (case, inputs, lines) in cases {
        let _ = std::fs::remove_file(&partial);
        std::fs::write(&out, b"the old output\n").unwrap();
        let mut args = vec!["convert", "-q", "--force", "-o", p(&out)];
        args.extend(&inputs);
        let run = fb(&args);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        assert_eq!(std::fs::read(&out).unwrap(), b"the old output\n", "{case}");
        assert!(!run.stderr.is_empty(), "{case}: -q hid the error");
        match (case, lines) {
            (_, Some(lines)) => {
                assert_eq!(std::fs::read_to_string(&partial).unwrap(), lines, "{case}");
                assert!(run.stderr.contains(p(&partial)), "{case}: {}", run.stderr);
            }
            ("a log then not a log", None) => {
                let lines = std::fs::read_to_string(&partial).unwrap();
                assert_eq!(lines.lines().count(), 1, "{case}: {lines}");
            }
            _ => assert!(!partial.exists(), "{case}: nothing was written"),
        }
        // No output yet: the same, nothing put in place.
        std::fs::remove_file(&out).unwrap();
        let run = fb(&args);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        assert!(!out.exists(), "{case}: a failed run made the output");
    }
    // With --recover, the salvage is what was asked for: put in place.
    let run = fb(&["convert", "-q", "--recover", "-o", p(&out), p(&cut)]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(std::fs::read_to_string(&out).unwrap(), want_partial.stdout);

    // Export and split keep the same rule.
    let parquet = dir.join("events.parquet");
    std::fs::write(&parquet, b"old").unwrap();
    let run = fb(&["export", "--force", "-o", p(&parquet), p(&cut)]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(std::fs::read(&parquet).unwrap(), b"old");
    let partial = dir.join("events.parquet.partial");
    let kept = std::fs::read(&partial).unwrap();
    assert_eq!(&kept[..4], b"PAR1");
    // The summary names where the rows are.
    let written = format!("rows written to {} in ", p(&partial));
    assert!(run.stderr.contains(&written), "{}", run.stderr);
    let pieces = dir.join("pieces");
    std::fs::create_dir(&pieces).unwrap();
    std::fs::write(pieces.join("old"), b"old").unwrap();
    let run = fb(&[
        "split",
        "--force",
        "--max-size",
        "8KiB",
        "-o",
        p(&pieces),
        p(&cut),
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(listing(&pieces), ["old"]);
    assert!(listing(&dir.join("pieces.partial")).len() > 1);
}

/// One rule for every command that writes a file: an output that exists
/// is refused without --force, and untouched; with --force it is
/// replaced. Devices are written to, and an empty folder takes pieces,
/// without --force.
#[test]
fn every_command_refuses_to_replace_an_output_without_force() {
    let dir = scratch_dir("rules-force");
    let log = data("valid_joined_logs/average_reward_100_interactions.fb");
    let raw = data("reward_functions/cb/cb_v2.fb");
    let obs = data("reward_functions/cb/f-reward_3obs_v2.fb");
    let out = dir.join("out");
    // (case, arguments before the output)
    let cases: [(&str, Vec<&str>); 9] = [
        ("convert", vec!["convert", p(&log), "-o"]),
        ("export", vec!["export", p(&log), "-o"]),
        ("gen", vec!["gen", "--events", "5", "-o"]),
        (
            "join",
            vec![
                "join",
                "--interactions",
                p(&raw),
                "--observations",
                p(&obs),
                "-o",
            ],
        ),
        ("repair", vec!["repair", p(&log), "-o"]),
        ("sample", vec!["sample", "--decisions", "3", p(&log), "-o"]),
        (
            "sample log",
            vec![
                "sample",
                "--decisions",
                "3",
                "--format",
                "log",
                p(&log),
                "-o",
            ],
        ),
        ("index", vec!["index", p(&log), "-o"]),
        ("split", vec!["split", "--max-size", "16KiB", p(&log), "-o"]),
    ];
    for (case, args) in cases {
        let _ = std::fs::remove_dir_all(&out);
        std::fs::write(&out, b"precious").unwrap();
        let mut refused = args.clone();
        refused.push(p(&out));
        let run = fb(&refused);
        assert_eq!(run.code, 2, "{case}: {}", run.stderr);
        assert!(
            run.stderr.contains("pass --force"),
            "{case}: {}",
            run.stderr
        );
        assert_eq!(std::fs::read(&out).unwrap(), b"precious", "{case}");
        refused.push("--force");
        let run = fb(&refused);
        assert_eq!(run.code, 0, "{case}: {}", run.stderr);
        assert_ne!(
            std::fs::read(&out).ok().as_deref(),
            Some(&b"precious"[..]),
            "{case}"
        );
        assert_eq!(
            listing(&dir),
            ["out"],
            "{case}: something was left beside it"
        );
        if case != "split" {
            // A device is written to, not replaced.
            let mut to_null = args.clone();
            to_null.push("/dev/null");
            let run = fb(&to_null);
            assert_eq!(run.code, 0, "{case} /dev/null: {}", run.stderr);
        }
    }
    // An empty folder holds nothing to lose: split fills it.
    let _ = std::fs::remove_dir_all(&out);
    std::fs::create_dir(&out).unwrap();
    let run = fb(&["split", "--max-size", "16KiB", p(&log), "-o", p(&out)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(listing(&out).len() > 1);
    // An index beside its log is replaced at will: it is rebuilt from it.
    let copy = dir.join("copy.fb");
    std::fs::copy(&log, &copy).unwrap();
    for _ in 0..2 {
        let run = fb(&["index", p(&copy)]);
        assert_eq!(run.code, 0, "{}", run.stderr);
    }
}

/// Ctrl-C, SIGTERM and SIGHUP stop a run at once, by that signal, and
/// leave the old output and no temporary file or folder: each command
/// reads half a log from a pipe that stays open, so that it is surely
/// under way when the signal comes.
#[test]
fn an_interrupted_run_leaves_the_old_output_and_no_temporary_file() {
    use std::io::Write;
    use std::os::unix::process::ExitStatusExt;
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let dir = scratch_dir("rules-interrupt");
    let whole = dir.join("whole.fb");
    let run = fb(&[
        "gen",
        "-q",
        "--events",
        "3000",
        "--seed",
        "2",
        "-o",
        p(&whole),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let half = std::fs::read(&whole).unwrap();
    let half = half[..half.len() / 2].to_vec();
    let work = dir.join("work");
    std::fs::create_dir(&work).unwrap();
    // (case, arguments, signal, named temporary files)
    let cases: [(&str, &[&str], i32, bool); 8] = [
        (
            "convert",
            &["convert", "-", "--force", "-o", "out"],
            libc::SIGINT,
            false,
        ),
        (
            "convert named",
            &["convert", "-", "--force", "-o", "out"],
            libc::SIGINT,
            true,
        ),
        (
            "convert .gz",
            &["convert", "-", "--force", "-o", "out.gz"],
            libc::SIGTERM,
            true,
        ),
        (
            "export",
            &["export", "-", "--force", "-o", "out"],
            libc::SIGHUP,
            true,
        ),
        (
            "export by date",
            &[
                "export",
                "-",
                "--force",
                "--partition-by",
                "date",
                "-o",
                "out",
            ],
            libc::SIGINT,
            false,
        ),
        (
            "repair",
            &["repair", "-", "--force", "-o", "out"],
            libc::SIGINT,
            true,
        ),
        (
            "sample",
            &["sample", "-", "--decisions", "9", "--force", "-o", "out"],
            libc::SIGINT,
            true,
        ),
        (
            "split",
            &["split", "-", "--max-size", "4KiB", "--force", "-o", "out"],
            libc::SIGTERM,
            true,
        ),
    ];
    for (case, args, signal, named) in cases {
        for name in listing(&work) {
            let path = work.join(name);
            let _ = std::fs::remove_dir_all(&path).or_else(|_| std::fs::remove_file(&path));
        }
        let old = if case.contains("date") || case == "split" {
            std::fs::create_dir(work.join("out")).unwrap();
            std::fs::write(work.join("out/old"), b"old").unwrap();
            None
        } else {
            let name = args[args.len() - 1];
            std::fs::write(work.join(name), b"old").unwrap();
            Some(name)
        };
        let before = listing(&work);
        let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
            .args(args)
            .current_dir(&work)
            .env_remove("FB_NAMED_TEMP")
            .envs(named.then_some(("FB_NAMED_TEMP", "1")))
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut input = child.stdin.take().unwrap();
        input.write_all(&half).unwrap();
        // Under way: its temporary file or folder is there (named), or it
        // has had time to make one.
        let started = Instant::now();
        if named && !matches!(case, "sample" | "split") {
            while listing(&work) == before {
                assert!(
                    started.elapsed() < Duration::from_secs(20),
                    "{case}: no temporary"
                );
                std::thread::sleep(Duration::from_millis(10));
            }
        } else {
            std::thread::sleep(Duration::from_millis(300));
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "{case}: ended before the signal"
        );
        // SAFETY: kill with a live child's pid and a signal number.
        assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
        let signalled = Instant::now();
        let status = loop {
            if let Some(status) = child.try_wait().unwrap() {
                break status;
            }
            assert!(
                signalled.elapsed() < Duration::from_secs(5),
                "{case}: not stopped"
            );
            std::thread::sleep(Duration::from_millis(5));
        };
        drop(input);
        assert_eq!(status.signal(), Some(signal), "{case}: {status:?}");
        assert_eq!(listing(&work), before, "{case}: something was left");
        match old {
            Some(name) => assert_eq!(std::fs::read(work.join(name)).unwrap(), b"old", "{case}"),
            None => assert_eq!(listing(&work.join("out")), ["old"], "{case}"),
        }
    }
}

/// A reader that goes away (`fb ... | head -1`) ends every command that
/// writes to standard output quietly, with exit 0.
#[test]
fn a_closed_pipe_ends_every_command_quietly() {
    use std::io::{BufRead, BufReader};
    use std::process::{Command, Stdio};
    let dir = scratch_dir("rules-pipe");
    let log = dir.join("log.fb");
    let run = fb(&[
        "gen",
        "-q",
        "--events",
        "20000",
        "--seed",
        "3",
        "-o",
        p(&log),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    // (case, arguments)
    let cases: [(&str, Vec<&str>); 7] = [
        ("convert", vec!["convert", p(&log)]),
        (
            "convert one thread",
            vec!["convert", "--threads", "1", p(&log)],
        ),
        ("sample", vec!["sample", "--fraction", "0.5", p(&log)]),
        (
            "sample log",
            vec!["sample", "--fraction", "0.5", "--format", "log", p(&log)],
        ),
        ("inspect", vec!["inspect", p(&log)]),
        ("inspect events", vec!["inspect", "--events", p(&log)]),
        ("repair", vec!["repair", p(&log)]),
    ];
    for (case, args) in cases {
        let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut first = Vec::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_until(b'\n', &mut first)
            .unwrap();
        assert!(!first.is_empty(), "{case}");
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{case}: {stderr}");
        assert!(!stderr.contains("error"), "{case}: {stderr}");
    }
}

/// `-` reads the log from standard input for the commands that take one
/// log (read into memory): the same output as from the file.
#[test]
fn sample_repair_and_split_read_standard_input() {
    let dir = scratch_dir("rules-stdin");
    let log = data("valid_joined_logs/average_reward_100_interactions.fb");
    let bytes = std::fs::read(&log).unwrap();
    // (case, arguments with FROM for the input and OUT for the output)
    let cases: [(&str, &[&str]); 4] = [
        (
            "sample",
            &[
                "sample",
                "--decisions",
                "7",
                "--seed",
                "3",
                "FROM",
                "-o",
                "OUT",
            ],
        ),
        (
            "sample log",
            &[
                "sample",
                "--decisions",
                "7",
                "--format",
                "log",
                "FROM",
                "-o",
                "OUT",
            ],
        ),
        ("repair", &["repair", "FROM", "-o", "OUT"]),
        (
            "split",
            &["split", "--max-size", "16KiB", "FROM", "-o", "OUT"],
        ),
    ];
    for (case, args) in cases {
        let mut outputs = Vec::new();
        for from in [p(&log), "-"] {
            let out = dir.join(format!("{case}-{}", outputs.len()));
            let args: Vec<&str> = args
                .iter()
                .map(|a| match *a {
                    "FROM" => from,
                    "OUT" => p(&out),
                    a => a,
                })
                .collect();
            let run = fb_with(&args, &bytes, &[]);
            assert_eq!(run.code, 0, "{case} {from}: {}", run.stderr);
            outputs.push(match out.is_dir() {
                true => listing(&out)
                    .into_iter()
                    .map(|name| std::fs::read(out.join(name)).unwrap())
                    .collect(),
                false => vec![std::fs::read(&out).unwrap()],
            });
        }
        assert!(
            !outputs[0].is_empty() && !outputs[0][0].is_empty(),
            "{case}"
        );
        assert_eq!(outputs[0], outputs[1], "{case}");
    }
}

/// A pseudo-terminal: its leader (to read what is shown) and its follower
/// (a terminal to give a program).
fn terminal() -> (std::os::fd::OwnedFd, std::os::fd::OwnedFd) {
    use std::os::fd::{FromRawFd, OwnedFd};
    let (mut leader, mut follower) = (0, 0);
    // SAFETY: openpty writes two descriptors, which we then own.
    let opened = unsafe {
        libc::openpty(
            &mut leader,
            &mut follower,
            std::ptr::null_mut(),
            std::ptr::null(),
            std::ptr::null(),
        )
    };
    assert_eq!(opened, 0, "{}", std::io::Error::last_os_error());
    // SAFETY: both descriptors were just opened and are owned here.
    unsafe { (OwnedFd::from_raw_fd(leader), OwnedFd::from_raw_fd(follower)) }
}

/// Binary output is refused on a terminal by every command that writes
/// one to standard output; text goes to it.
#[test]
fn binary_output_is_refused_on_a_terminal() {
    use std::process::{Command, Stdio};
    let log = data("valid_joined_logs/cb_simple.log");
    // (case, arguments, refused)
    let cases: [(&str, Vec<&str>, bool); 6] = [
        ("gen", vec!["gen", "--events", "2"], true),
        (
            "sample log",
            vec!["sample", "--decisions", "1", "--format", "log", p(&log)],
            true,
        ),
        ("repair", vec!["repair", p(&log)], true),
        ("export", vec!["export", p(&log), "-o", "-"], true),
        ("convert", vec!["convert", p(&log)], false),
        ("sample", vec!["sample", "--decisions", "1", p(&log)], false),
    ];
    for (case, args, refused) in cases {
        let (leader, follower) = terminal();
        let out = Command::new(env!("CARGO_BIN_EXE_fb"))
            .args(&args)
            .stdin(Stdio::null())
            .stdout(Stdio::from(follower))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        drop(leader);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if refused {
            assert_eq!(out.status.code(), Some(2), "{case}: {stderr}");
            assert!(stderr.contains("terminal"), "{case}: {stderr}");
        } else {
            assert_eq!(out.status.code(), Some(0), "{case}: {stderr}");
        }
    }
}

/// A file that is not a log (a PNG renamed), or an empty one, is called
/// what it is by every command, with exit 1, and leaves no output.
#[test]
fn every_command_says_a_file_is_not_a_log() {
    let dir = scratch_dir("rules-not-a-log");
    let img = dir.join("img.fb");
    std::fs::write(&img, b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR").unwrap();
    let empty = dir.join("zero.fb");
    std::fs::write(&empty, b"").unwrap();
    let out = dir.join("out");
    // (case, arguments before the input)
    let cases: [(&str, &[&str]); 9] = [
        ("convert", &["convert", "-o", p(&out)]),
        ("export", &["export", "-o", p(&out)]),
        ("stats", &["stats"]),
        ("validate", &["validate"]),
        ("inspect", &["inspect"]),
        ("index", &["index", "-o", p(&out)]),
        ("sample", &["sample", "--decisions", "3", "-o", p(&out)]),
        ("split", &["split", "--max-size", "1KiB", "-o", p(&out)]),
        ("repair", &["repair", "-o", p(&out)]),
    ];
    for (case, args) in cases {
        let mut all = args.to_vec();
        all.push(p(&img));
        let run = fb(&all);
        // validate lists what it finds on standard output.
        let said = format!("{}{}", run.stdout, run.stderr);
        let want = if case == "repair" {
            "nothing"
        } else {
            "not a joined binary log"
        };
        assert!(said.contains(want), "{case}: {said}");
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        if case != "repair" {
            assert!(!out.exists(), "{case}: an output was left");
        }
        let _ = std::fs::remove_file(&out);
        assert_eq!(listing(&dir), ["img.fb", "zero.fb"], "{case}");
    }
    // Empty: nothing to index (a warning), nothing to sample (exit 1).
    let run = fb(&["index", p(&empty)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(run.stderr.contains("empty file"), "{}", run.stderr);
    assert!(!run.stderr.contains('%'), "{}", run.stderr);
    let run = fb(&["sample", "--decisions", "3", p(&empty)]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("empty file"), "{}", run.stderr);
    // A log without decisions: said, exit 1.
    let magic_only = dir.join("magic.fb");
    std::fs::write(&magic_only, b"VWFB\x01\0\0\0").unwrap();
    let run = fb(&["sample", "--decisions", "3", p(&magic_only)]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(run.stderr.contains("no decision"), "{}", run.stderr);
}

/// Every command that works through a whole log draws a progress bar on
/// a terminal once the work takes long enough (`FB_PROGRESS_AFTER_MS=0`
/// here: at once), and none with `-q`.
#[test]
fn long_work_shows_a_progress_bar_on_a_terminal() {
    use std::io::Read;
    use std::process::{Command, Stdio};
    let dir = scratch_dir("rules-progress");
    let log = dir.join("log.fb");
    let run = fb(&[
        "gen",
        "-q",
        "--events",
        "20000",
        "--seed",
        "4",
        "--raw-streams",
        "-o",
        p(&log),
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let (i, o) = (
        dir.join("log.interactions.fb"),
        dir.join("log.observations.fb"),
    );
    let out = dir.join("out");
    // (case, arguments)
    let cases: [(&str, Vec<&str>); 10] = [
        (
            "join",
            vec![
                "join",
                "--interactions",
                p(&i),
                "--observations",
                p(&o),
                "-o",
                p(&out),
            ],
        ),
        ("convert", vec!["convert", p(&log), "-o", "/dev/null"]),
        ("gen", vec!["gen", "--size", "4MiB", "-o", p(&out)]),
        ("index", vec!["index", p(&log), "-o", p(&out)]),
        ("repair", vec!["repair", p(&log), "-o", p(&out)]),
        (
            "split",
            vec!["split", "--max-size", "64KiB", p(&log), "-o", p(&out)],
        ),
        ("stats", vec!["stats", p(&log)]),
        (
            "stats on 1 thread",
            vec!["stats", "--threads", "1", p(&log)],
        ),
        (
            "stats on 2 threads",
            vec!["stats", "--threads", "2", p(&log)],
        ),
        (
            "report on 2 threads",
            vec!["report", "--threads", "2", p(&log), "-o", p(&out)],
        ),
    ];
    for (case, args) in cases {
        for quiet in [false, true] {
            let _ = std::fs::remove_dir_all(&out).or_else(|_| std::fs::remove_file(&out));
            let (leader, follower) = terminal();
            let mut child = Command::new(env!("CARGO_BIN_EXE_fb"))
                .args(&args)
                .args(quiet.then_some("-q"))
                .env("FB_PROGRESS_AFTER_MS", "0")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::from(follower))
                .spawn()
                .unwrap();
            // Read until the terminal closes (EIO once the child is gone).
            let mut screen = Vec::new();
            let _ = std::fs::File::from(leader).read_to_end(&mut screen);
            let status = child.wait().unwrap();
            assert!(status.success(), "{case}: {status:?}");
            let screen = String::from_utf8_lossy(&screen);
            assert_eq!(
                screen.contains("MB/s"),
                !quiet,
                "{case} quiet={quiet}: {screen}"
            );
        }
    }
}
