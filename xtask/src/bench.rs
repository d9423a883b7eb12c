//! `cargo xtask bench`: end-to-end throughput and memory of the `fb`
//! binary on generated 1 GiB logs, with `cat` as this machine's ceiling.
//!
//! Logs are generated once with fixed seeds into `bench/cache/` and reused.
//! Each command runs several times; the table gives median, min and max
//! wall time, input MB/s and events/s at the median, and the peak RSS of
//! the child (from wait4). Results go to `bench/RESULTS.md`.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

struct Log {
    name: &'static str,
    gen: &'static [&'static str],
}

const LOGS: &[Log] = &[
    Log {
        name: "cb",
        gen: &["--problem-type", "cb", "--seed", "1"],
    },
    Log {
        name: "ccb",
        gen: &["--problem-type", "ccb", "--seed", "2"],
    },
    Log {
        name: "cb-zstd-dedup",
        gen: &["--problem-type", "cb", "--zstd", "--dedup", "--seed", "3"],
    },
];

struct Sample {
    secs: f64,
    max_rss_kb: i64,
}

/// Runs `cmd` to completion with stdout to /dev/null; wall time and the
/// child's peak RSS.
fn measure(program: &Path, args: &[String]) -> Result<Sample, String> {
    let start = Instant::now();
    let child = Command::new(program)
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{}: {e}", program.display()))?;
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: pid is a child of this process that nothing else waits for.
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let secs = start.elapsed().as_secs_f64();
    if r != pid {
        return Err(format!("wait4 failed for {}", program.display()));
    }
    if !libc::WIFEXITED(status) || libc::WEXITSTATUS(status) > 1 {
        return Err(format!(
            "{} {args:?} failed with status {status}",
            program.display()
        ));
    }
    Ok(Sample {
        secs,
        max_rss_kb: usage.ru_maxrss,
    })
}

fn sh(cmd: &mut Command) -> Result<String, String> {
    let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
    if !out.status.success() {
        return Err(format!("{cmd:?}: {}", String::from_utf8_lossy(&out.stderr)));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn json_number(text: &str, key: &str) -> Option<u64> {
    let at = text.find(&format!("\"{key}\":"))? + key.len() + 3;
    text[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .ok()
}

pub fn run(root: &Path, args: &[String]) -> Result<(), String> {
    let runs: usize = args
        .iter()
        .position(|a| a == "--runs")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let size = args
        .iter()
        .position(|a| a == "--size")
        .and_then(|i| args.get(i + 1))
        .cloned()
        .unwrap_or_else(|| "1GiB".to_string());
    let status = Command::new("cargo")
        .current_dir(root)
        .args(["build", "--release", "--quiet", "-p", "fb-cli"])
        .status()
        .map_err(|e| format!("cargo build: {e}"))?;
    if !status.success() {
        return Err("cargo build --release -p fb-cli failed".into());
    }
    let fb = root.join("target/release/fb");
    let cache = root.join("bench/cache");
    std::fs::create_dir_all(&cache).map_err(|e| format!("{}: {e}", cache.display()))?;

    let mut table = String::new();
    // (log, command) -> (median seconds, MB/s, peak RSS MiB)
    let mut seen: Vec<(String, String, f64, f64, f64)> = Vec::new();
    let _ = writeln!(
        table,
        "| log | command | median s | min s | max s | MB/s | events/s | peak RSS MiB |\n|---|---|---:|---:|---:|---:|---:|---:|"
    );
    for log in LOGS {
        let path: PathBuf = cache.join(format!("{}-{size}.fb", log.name));
        if !path.exists() {
            eprintln!("bench: generating {}", path.display());
            let mut gen = vec![
                "gen".to_string(),
                "-q".into(),
                "--size".into(),
                size.clone(),
            ];
            gen.extend(log.gen.iter().map(|s| s.to_string()));
            gen.extend(["-o".to_string(), path.display().to_string()]);
            measure(&fb, &gen)?;
        }
        let bytes = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
        let p = path.display().to_string();
        let stats = sh(Command::new(&fb).args(["stats", "--json", "-q", &p]))?;
        let events = json_number(&stats, "joined").unwrap_or(0);
        let convert = |extra: &[&str]| -> Vec<String> {
            ["convert", "-q"]
                .iter()
                .chain(extra)
                .map(|s| s.to_string())
                .chain([p.clone(), "-o".into(), "/dev/null".into()])
                .collect()
        };
        let commands: Vec<(&str, PathBuf, Vec<String>)> = vec![
            ("cat (ceiling)", PathBuf::from("/bin/cat"), vec![p.clone()]),
            (
                "fb inspect --count",
                fb.clone(),
                vec!["inspect".into(), "--count".into(), p.clone()],
            ),
            (
                "fb convert --threads 1",
                fb.clone(),
                convert(&["--threads", "1"]),
            ),
            (
                "fb convert --threads 2",
                fb.clone(),
                convert(&["--threads", "2"]),
            ),
            (
                "fb convert --threads 1 --compat reference",
                fb.clone(),
                convert(&["--threads", "1", "--compat", "reference"]),
            ),
            (
                "fb stats",
                fb.clone(),
                vec!["stats".into(), "-q".into(), p.clone()],
            ),
        ];
        // Rounds of one run of each command, so that a noisy moment of a
        // shared host weighs on all of them alike and their ratios hold.
        let mut all: Vec<Vec<Sample>> = commands.iter().map(|_| Vec::new()).collect();
        for _ in 0..runs {
            for ((_, program, argv), samples) in commands.iter().zip(all.iter_mut()) {
                samples.push(measure(program, argv)?);
            }
        }
        for ((label, _, _), mut samples) in commands.into_iter().zip(all) {
            samples.sort_by(|a, b| a.secs.total_cmp(&b.secs));
            let median = &samples[samples.len() / 2];
            let rss = samples.iter().map(|s| s.max_rss_kb).max().unwrap_or(0);
            let eps = if label.starts_with("fb convert") || label == "fb stats" {
                format!("{:.0}", events as f64 / median.secs)
            } else {
                "-".into()
            };
            let _ = writeln!(
                table,
                "| {} | `{label}` | {:.3} | {:.3} | {:.3} | {:.0} | {eps} | {:.1} |",
                log.name,
                median.secs,
                samples[0].secs,
                samples[samples.len() - 1].secs,
                bytes as f64 / 1e6 / median.secs,
                rss as f64 / 1024.0
            );
            seen.push((
                log.name.to_string(),
                label.to_string(),
                median.secs,
                bytes as f64 / 1e6 / median.secs,
                rss as f64 / 1024.0,
            ));
            eprintln!("bench: {} {label}: {:.3} s", log.name, median.secs);
        }
    }
    let mut huge_note = String::new();
    if args.iter().any(|a| a == "--huge") {
        // Memory must stay flat in the file size: one 10 GiB conversion.
        let path = cache.join("cb-10GiB.fb");
        if !path.exists() {
            eprintln!("bench: generating {}", path.display());
            let gen: Vec<String> = ["gen", "-q", "--size", "10GiB", "--seed", "9", "-o"]
                .iter()
                .map(|s| s.to_string())
                .chain([path.display().to_string()])
                .collect();
            measure(&fb, &gen)?;
        }
        let bytes = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
        // Read it once untimed, as the 1 GiB logs are by their first runs:
        // otherwise the first conversion measures the disk.
        measure(Path::new("/bin/cat"), &[path.display().to_string()])?;
        // Rounds of one run each, the two thread counts alternating, so
        // that a noisy moment of a shared host weighs on both alike.
        let huge_runs: usize = args
            .iter()
            .position(|a| a == "--huge-runs")
            .and_then(|i| args.get(i + 1))
            .and_then(|n| n.parse().ok())
            .unwrap_or(3)
            .max(1);
        huge_note = format!("; 10 GiB: {huge_runs} rounds, 1 and 2 threads alternating");
        let thread_counts = ["1", "2"];
        let mut samples: Vec<Vec<Sample>> = thread_counts.iter().map(|_| Vec::new()).collect();
        for _ in 0..huge_runs {
            for (threads, runs) in thread_counts.iter().zip(samples.iter_mut()) {
                let argv: Vec<String> = ["convert", "-q", "--threads", threads]
                    .iter()
                    .map(|s| s.to_string())
                    .chain([path.display().to_string(), "-o".into(), "/dev/null".into()])
                    .collect();
                let s = measure(&fb, &argv)?;
                eprintln!("bench: 10 GiB convert --threads {threads}: {:.3} s", s.secs);
                runs.push(s);
            }
        }
        for (threads, mut runs) in thread_counts.iter().zip(samples) {
            runs.sort_by(|a, b| a.secs.total_cmp(&b.secs));
            let (Some(min), Some(median), Some(max)) =
                (runs.first(), runs.get(runs.len() / 2), runs.last())
            else {
                continue;
            };
            let rss = runs.iter().map(|s| s.max_rss_kb).max().unwrap_or(0);
            let _ = writeln!(
                table,
                "| cb 10 GiB | `fb convert --threads {threads}` | {:.3} | {:.3} | {:.3} | {:.0} | - | {:.1} |",
                median.secs,
                min.secs,
                max.secs,
                bytes as f64 / 1e6 / median.secs,
                rss as f64 / 1024.0
            );
            seen.push((
                "cb 10 GiB".to_string(),
                format!("fb convert --threads {threads}"),
                median.secs,
                bytes as f64 / 1e6 / median.secs,
                rss as f64 / 1024.0,
            ));
        }
    }
    let machine = format!(
        "- cores: {}\n- cpu: {}\n- memory: {}\n- {}\n- commit: {}\n- runs per command: {runs}; log size {size}{huge_note}\n",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(|c| c.lines().find(|l| l.starts_with("model name")).map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string()))
            .unwrap_or_default(),
        std::fs::read_to_string("/proc/meminfo")
            .ok()
            .and_then(|m| m.lines().next().map(|l| l.split_whitespace().skip(1).collect::<Vec<_>>().join(" ")))
            .unwrap_or_default(),
        sh(Command::new("rustc").arg("--version")).unwrap_or_default().trim(),
        sh(Command::new("git").current_dir(root).args(["rev-parse", "--short", "HEAD"])).unwrap_or_default().trim(),
    );
    let find = |log: &str, cmd: &str| seen.iter().find(|r| r.0 == log && r.1 == cmd);
    let mut targets = String::from("| log | framing scan / cat | convert 1 thread MB/s (target 1000) | same, `--compat reference` | 2 threads / 1 thread (target 1.7) | peak RSS MiB, 1 and 2 threads (target < 64) |\n|---|---:|---:|---:|---:|---|\n");
    for log in LOGS {
        let (Some(cat), Some(scan), Some(t1), Some(t2)) = (
            find(log.name, "cat (ceiling)"),
            find(log.name, "fb inspect --count"),
            find(log.name, "fb convert --threads 1"),
            find(log.name, "fb convert --threads 2"),
        ) else {
            continue;
        };
        let reference = find(log.name, "fb convert --threads 1 --compat reference")
            .map_or("-".to_string(), |r| format!("{:.0}", r.3));
        let _ = writeln!(
            targets,
            "| {} | {:.0}% | {:.0} | {reference} | {:.2}x | {:.1}, {:.1} |",
            log.name,
            100.0 * cat.2 / scan.2,
            t1.3,
            t1.2 / t2.2,
            t1.4,
            t2.4
        );
    }
    if let (Some(t1), Some(t2)) = (
        find("cb 10 GiB", "fb convert --threads 1"),
        find("cb 10 GiB", "fb convert --threads 2"),
    ) {
        let _ = writeln!(
            targets,
            "| cb 10 GiB | - | {:.0} | - | {:.2}x | {:.1}, {:.1} |",
            t1.3,
            t1.2 / t2.2,
            t1.4,
            t2.4
        );
    }
    let out = root.join("bench/RESULTS.md");
    let text = format!(
        "# Benchmark results\n\nWritten by `cargo xtask bench` (see `xtask/src/bench.rs`). Input MB/s is \
         the log's size over the median wall time; files are in the page cache after the first \
         run, so `cat` is the ceiling of this machine. Each round runs every command of a log \
         once, so that a noisy moment of the shared host weighs on all of them alike. \
         `--compat reference` writes the reference's bytes, and so does not check that every \
         context is JSON, which the default mode does.\n\n## Machine\n\n{machine}\n## Against the targets\n\n{targets}\n## Results\n\n{table}"
    );
    std::fs::write(&out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    eprintln!("bench: wrote {}", out.display());
    Ok(())
}
