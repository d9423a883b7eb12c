//! `cargo xtask bench --only folders`: a folder of many small logs against
//! the same bytes in one file, on 1, 2 and all of the machine's cores
//! (issue 39).
//!
//! A CCB log (`--size`, 200 MiB by default) is cut by `fb split --max-size
//! 200KiB` into about a thousand self-contained pieces. Each command runs
//! on the file and on the folder at each thread count; the table gives the
//! best of `--runs` wall times and the folder's speed as a share of the
//! file's, next to the target. Two more rows compare Parquet
//! export with convert on one thread and with itself on two.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::bench::{cache_as_read_from_disk, measure};

/// Where a timed command's output goes.
#[derive(Clone, Copy)]
enum Out {
    /// `-o /dev/null`.
    DevNull,
    /// `-o FILE` (Parquet needs one it can seek, a page is written aside).
    File,
    /// Printed on standard output (`stats`, `evaluate`), which the bench
    /// sends to /dev/null.
    Printed,
}

/// A command of the table: its name and its arguments before the input.
struct Timed {
    name: &'static str,
    args: &'static [&'static str],
    /// Where its output goes.
    out: Out,
    /// Takes `--threads`.
    threads: bool,
}

const COMMANDS: &[Timed] = &[
    Timed {
        name: "convert",
        args: &["convert", "-q"],
        out: Out::DevNull,
        threads: true,
    },
    Timed {
        name: "stats",
        args: &["stats", "-q"],
        out: Out::Printed,
        threads: true,
    },
    Timed {
        name: "validate",
        args: &["validate", "-q"],
        out: Out::Printed,
        threads: true,
    },
    Timed {
        name: "report",
        args: &["report", "-q", "--force"],
        out: Out::File,
        threads: true,
    },
    Timed {
        name: "evaluate",
        args: &["evaluate", "-q", "--json", "--policy", "uniform"],
        out: Out::Printed,
        threads: true,
    },
    Timed {
        name: "export (Parquet)",
        args: &["export", "-q", "--force"],
        out: Out::File,
        threads: true,
    },
    Timed {
        name: "export (Arrow)",
        args: &["export", "-q", "--force", "--format", "arrow"],
        out: Out::File,
        threads: true,
    },
];

/// Best wall time of `runs` runs, or why it could not run. `out` is
/// removed before each run: a file renamed over an existing one has its
/// data written out by ext4 at the rename (`auto_da_alloc`), which times
/// the disk instead of `fb` (bench/NOTES.md, 2026-11-29, fifth stop).
fn best(fb: &Path, args: &[String], runs: usize, out: &Path) -> Result<f64, String> {
    let mut best = f64::INFINITY;
    for _ in 0..runs.max(1) {
        let _ = std::fs::remove_file(out);
        best = best.min(measure(fb, args)?.secs);
    }
    Ok(best)
}

fn args_of(cmd: &Timed, threads: usize, input: &Path, out: &Path) -> Vec<String> {
    let mut args: Vec<String> = cmd.args.iter().map(|s| s.to_string()).collect();
    if cmd.threads {
        args.extend(["--threads".to_string(), threads.to_string()]);
    }
    args.push(input.display().to_string());
    match cmd.out {
        Out::DevNull => args.extend(["-o".into(), "/dev/null".into()]),
        Out::File => args.extend(["-o".into(), out.display().to_string()]),
        Out::Printed => {}
    }
    args
}

/// The CCB log of `size` and the folder of its pieces, made when missing
/// (the vwlogs section reads them too).
pub(crate) fn inputs(fb: &Path, cache: &Path, size: &str) -> Result<(PathBuf, PathBuf), String> {
    let log = cache.join(format!("ccb-folders-{size}.fb"));
    let pieces = cache.join(format!("ccb-folders-{size}.pieces"));
    if !log.exists() {
        eprintln!("bench: generating {}", log.display());
        let gen = [
            "gen",
            "-q",
            "--problem-type",
            "ccb",
            "--seed",
            "4",
            "--size",
            size,
            "-o",
        ];
        let mut gen: Vec<String> = gen.iter().map(|s| s.to_string()).collect();
        gen.push(log.display().to_string());
        measure(fb, &gen)?;
    }
    if !pieces.exists() {
        let split = ["split", "-q", "--max-size", "200KiB"];
        let mut split: Vec<String> = split.iter().map(|s| s.to_string()).collect();
        split.extend([
            log.display().to_string(),
            "-o".into(),
            pieces.display().to_string(),
        ]);
        measure(fb, &split)?;
    }
    Ok((log, pieces))
}

/// The section's table, as Markdown.
pub fn section(fb: &Path, cache: &Path, size: &str, runs: usize) -> Result<String, String> {
    let (log, pieces) = inputs(fb, cache, size)?;
    cache_as_read_from_disk(&log)?;
    // The pieces too: written by `fb split`, their pages would be the
    // small ones of a file just written, against the file's read ahead.
    let files = std::fs::read_dir(&pieces)
        .map_err(|e| format!("{}: {e}", pieces.display()))?
        .map(|entry| {
            let path = entry
                .map_err(|e| format!("{}: {e}", pieces.display()))?
                .path();
            cache_as_read_from_disk(&path)
        })
        .collect::<Result<Vec<()>, String>>()?
        .len();
    let out = cache.join("folders-out");
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = vec![1, 2, cores];
    threads.dedup();

    let mut table = String::new();
    let _ = writeln!(
        table,
        "Folder of {files} pieces against the one file ({size} CCB), best of {runs}, \
         {cores} cores. Target: the folder at 90% of the file's speed or more.\n\n\
         | command | threads | file s | folder s | folder speed / file speed |\n\
         |---|---:|---:|---:|---:|"
    );
    let mut parquet_one = None;
    let mut parquet_two = None;
    for cmd in COMMANDS {
        for &n in &threads {
            if !cmd.threads && n > 1 {
                continue;
            }
            let file = best(fb, &args_of(cmd, n, &log, &out), runs, &out);
            let folder = best(fb, &args_of(cmd, n, &pieces, &out), runs, &out);
            if cmd.name == "export (Parquet)" {
                match n {
                    1 => parquet_one = file.as_ref().ok().copied(),
                    2 => parquet_two = file.as_ref().ok().copied(),
                    _ => {}
                }
            }
            let cell = |r: &Result<f64, String>| match r {
                Ok(s) => format!("{s:.3}"),
                Err(_) => "failed".into(),
            };
            let ratio = match (&file, &folder) {
                (Ok(f), Ok(d)) if *d > 0.0 => format!("{:.0}%", 100.0 * f / d),
                _ => "-".into(),
            };
            let _ = writeln!(
                table,
                "| {} | {n} | {} | {} | {ratio} |",
                cmd.name,
                cell(&file),
                cell(&folder)
            );
        }
    }
    let convert_one = best(fb, &args_of(&COMMANDS[0], 1, &log, &out), runs, &out).ok();
    let _ = std::fs::remove_file(&out);
    let _ = writeln!(table);
    if let (Some(c), Some(p)) = (convert_one, parquet_one) {
        let _ = writeln!(
            table,
            "- Parquet export on one thread at {:.0}% of convert's speed (target 50%).",
            100.0 * c / p
        );
    }
    if let (Some(one), Some(two)) = (parquet_one, parquet_two) {
        let _ = writeln!(
            table,
            "- Parquet export on two threads at {:.2}x one thread (target 1.8x).",
            one / two
        );
    }
    Ok(table)
}
