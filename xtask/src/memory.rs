//! `cargo xtask bench --only memory`: an export's peak memory on any
//! number of threads (issue 39: under 256 MiB at any size).
//!
//! Memory depends on the threads asked for, not on the cores that run
//! them, so a 2-core machine can measure 16 or 64 threads. What it cannot
//! have by itself is the allocator of a machine with that many cores:
//! glibc makes up to eight arenas per core, each keeping what its threads
//! freed. Each run is therefore given `glibc.malloc.arena_max` of eight per
//! thread, as a machine with a core per thread has (bench/NOTES.md,
//! 2026-11-30, fourteenth stop: 230 MiB with this machine's 16 arenas,
//! 256 MiB with 128, for the same run).
//!
//! The bench's CB and CCB logs (`--size`, 1 GiB by default) are exported
//! as Parquet, as Arrow IPC and as Parquet partitioned by hour and by date,
//! on 1, 2 and the machine's cores, 16 and 64 threads; the table gives the
//! largest peak RSS of `--runs` runs.

use std::fmt::Write as _;
use std::path::Path;

use crate::bench::{generated, measure_with, LOGS};

/// The bound on an export's peak memory, in MiB.
const BOUND_MIB: f64 = 256.0;

/// An export of the table: its name and its arguments after the input,
/// `{out}` standing for the output's path.
const EXPORTS: &[(&str, &[&str])] = &[
    ("Parquet", &["-o", "{out}"]),
    ("Arrow", &["--format", "arrow", "-o", "{out}"]),
    ("by hour", &["--partition-by", "hour", "-o", "{out}"]),
    ("by date", &["--partition-by", "date", "-o", "{out}"]),
];

/// Removes a previous run's output, a file or a tree.
fn remove(out: &Path) {
    let _ = std::fs::remove_file(out);
    let _ = std::fs::remove_dir_all(out);
}

/// The largest peak RSS in MiB of `runs` runs of one export.
fn peak(
    fb: &Path,
    args: &[String],
    threads: usize,
    runs: usize,
    out: &Path,
) -> Result<f64, String> {
    let arenas = format!("glibc.malloc.arena_max={}", 8 * threads);
    let mut most = 0;
    for _ in 0..runs.max(1) {
        remove(out);
        let sample = measure_with(fb, args, &[("GLIBC_TUNABLES", arenas.as_str())])?;
        most = most.max(sample.max_rss_kb);
    }
    Ok(most as f64 / 1024.0)
}

/// The section's table, as Markdown.
pub fn section(fb: &Path, cache: &Path, size: &str, runs: usize) -> Result<String, String> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = vec![1, 2, cores, 16, 64];
    threads.sort_unstable();
    threads.dedup();
    let out = cache.join("memory-out");
    let mut table = String::new();
    let _ = writeln!(
        table,
        "Peak RSS (MiB) of `fb export`, the largest of {}, {size} logs, \
         glibc arenas as a machine with a core per thread has. \
         Target: under {BOUND_MIB:.0} MiB.\n\n\
         | log | threads | {} |\n|---|---:|{}",
        match runs {
            0 | 1 => "one run".to_string(),
            n => format!("{n} runs"),
        },
        EXPORTS
            .iter()
            .map(|(name, _)| *name)
            .collect::<Vec<_>>()
            .join(" | "),
        "---:|".repeat(EXPORTS.len())
    );
    let mut largest: (f64, String) = (0.0, String::new());
    for log in LOGS.iter().filter(|l| l.name == "cb" || l.name == "ccb") {
        let input = generated(fb, cache, log, size)?;
        for &n in &threads {
            let mut cells = Vec::new();
            for (name, rest) in EXPORTS {
                let mut args: Vec<String> = ["export", "-q", "--force", "--threads"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                args.push(n.to_string());
                args.push(input.display().to_string());
                args.extend(
                    rest.iter()
                        .map(|a| a.replace("{out}", &out.display().to_string())),
                );
                let mib = peak(fb, &args, n, runs, &out)?;
                if mib > largest.0 {
                    largest = (mib, format!("{} {name} on {n} threads", log.name));
                }
                cells.push(format!("{mib:.0}"));
            }
            let _ = writeln!(table, "| {} | {n} | {} |", log.name, cells.join(" | "));
        }
    }
    remove(&out);
    let met = match largest.0 < BOUND_MIB {
        true => "met",
        false => "not met",
    };
    let _ = writeln!(
        table,
        "\n- Largest: {:.0} MiB ({}): {met}.",
        largest.0, largest.1
    );
    Ok(table)
}
