//! The logs of the issue "Ten times the reference on one core": 200 MB
//! each, one built from the shipped corpus, and the compressed outputs.
//!
//! The reference's speeds are the measurements of `vw
//! --binary_to_json --binary_parser` (Release) on this machine class, or,
//! with `--reference VW` (a `vw` built with the binary parser, see
//! bench/reference/build.sh), measured here in the same rounds as `fb`.
//! The reference writes its DSJSON beside its input, named after it: it
//! reads a link to the log from a directory of its own, where the name it
//! writes is a link to /dev/null, as `fb` writes there.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use crate::bench::{cache_as_read_from_disk, measure, sh, Sample};

/// A log of the issue, and the reference's speed on it in MB/s.
struct SpeedLog {
    name: &'static str,
    /// `fb gen` arguments, or none for the corpus-built log.
    gen: &'static [&'static str],
    reference: f64,
}

const SPEED_LOGS: &[SpeedLog] = &[
    SpeedLog {
        name: "corpus-cb",
        gen: &[],
        reference: 173.0,
    },
    SpeedLog {
        name: "ccb-seed4",
        gen: &["--problem-type", "ccb", "--seed", "4"],
        reference: 168.0,
    },
    SpeedLog {
        name: "cb-zstd-dedup-seed3",
        gen: &["--zstd", "--dedup", "--seed", "3"],
        reference: 30.0,
    },
];

/// The corpus file the first log repeats.
const CORPUS: &str = "tests/data/valid_joined_logs/average_reward_100_interactions.fb";

/// Bytes of each log of the issue.
const SIZE: u64 = 200 << 20;

/// `OUT`: the corpus log's messages up to its first checkpoint, then its
/// REGULAR messages again and again until the log holds [`SIZE`] bytes.
/// Message bounds come from `fb inspect`'s listing.
fn repeat_corpus(root: &Path, fb: &Path, out: &Path) -> Result<(), String> {
    let corpus = root.join(CORPUS);
    let data = std::fs::read(&corpus).map_err(|e| format!("{}: {e}", corpus.display()))?;
    let listing = sh(std::process::Command::new(fb).arg("inspect").arg(&corpus))?;
    // (offset, type) of each message, in order.
    let messages: Vec<(usize, String)> = listing
        .lines()
        .skip(1)
        .filter_map(|l| {
            let mut cols = l.split_whitespace();
            let _index = cols.next()?;
            let offset = cols.next()?.parse().ok()?;
            Some((offset, cols.next()?.to_string()))
        })
        .collect();
    let end_of = |i: usize| messages.get(i + 1).map_or(data.len(), |m| m.0);
    let first_checkpoint = messages
        .iter()
        .position(|m| m.1 == "CHECKPOINT")
        .ok_or("the corpus log has no checkpoint")?;
    let prefix = data
        .get(..end_of(first_checkpoint))
        .ok_or("listing beyond the file")?;
    let mut regular = Vec::new();
    for (i, (offset, kind)) in messages.iter().enumerate() {
        if kind == "REGULAR" {
            regular.extend_from_slice(
                data.get(*offset..end_of(i))
                    .ok_or("listing beyond the file")?,
            );
        }
    }
    if regular.is_empty() {
        return Err("the corpus log has no REGULAR message".into());
    }
    // Written as it is made: a 200 MB buffer here would count in the peak
    // RSS of every child measured after (a forked child starts with its
    // parent's high-water mark).
    use std::io::Write as _;
    let file = std::fs::File::create(out).map_err(|e| format!("{}: {e}", out.display()))?;
    let mut w = std::io::BufWriter::new(file);
    let failed = |e: std::io::Error| format!("{}: {e}", out.display());
    w.write_all(prefix).map_err(failed)?;
    let mut written = prefix.len() as u64;
    while written < SIZE {
        w.write_all(&regular).map_err(failed)?;
        written += regular.len() as u64;
    }
    w.flush().map_err(failed)
}

/// A directory of its own for the reference's run on `log`: a link to it
/// named `NAME.fb`, and `NAME.dsjson`, where the reference writes, a link
/// to /dev/null. Returns the input's path.
fn reference_input(cache: &Path, log: &Path, name: &str) -> Result<PathBuf, String> {
    let dir = cache.join("reference");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let log = std::fs::canonicalize(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let input = dir.join(format!("{name}.fb"));
    let output = dir.join(format!("{name}.dsjson"));
    for (link, target) in [(&input, log.as_path()), (&output, Path::new("/dev/null"))] {
        // A file left there (an earlier run's real output) is replaced.
        match std::fs::symlink_metadata(link) {
            Ok(_) => std::fs::remove_file(link).map_err(|e| format!("{}: {e}", link.display()))?,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(format!("{}: {e}", link.display())),
        }
        std::os::unix::fs::symlink(target, link).map_err(|e| format!("{}: {e}", link.display()))?;
    }
    Ok(input)
}

/// Runs every command of every log `runs` times (rounds of one run each)
/// and returns the section of RESULTS.md.
pub fn section(
    root: &Path,
    fb: &Path,
    cache: &Path,
    runs: usize,
    vw: Option<&Path>,
) -> Result<String, String> {
    let mut rows = String::new();
    let mut targets = String::new();
    for log in SPEED_LOGS {
        let path: PathBuf = cache.join(format!("{}-200MiB.fb", log.name));
        if !path.exists() {
            eprintln!("bench: making {}", path.display());
            if log.gen.is_empty() {
                repeat_corpus(root, fb, &path)?;
            } else {
                let mut gen: Vec<String> = ["gen", "-q", "--size", "200MiB"]
                    .iter()
                    .map(|s| s.to_string())
                    .collect();
                gen.extend(log.gen.iter().map(|s| s.to_string()));
                gen.extend(["-o".to_string(), path.display().to_string()]);
                measure(fb, &gen)?;
            }
        }
        let bytes = std::fs::metadata(&path).map_err(|e| e.to_string())?.len();
        cache_as_read_from_disk(&path)?;
        let p = path.display().to_string();
        let zst = cache.join("speed-out.dsjson.zst");
        let gz = cache.join("speed-out.dsjson.gz");
        let convert = |extra: &[&str], out: &Path| -> Vec<String> {
            ["convert", "-q"]
                .iter()
                .chain(extra)
                .map(|s| s.to_string())
                .chain([p.clone(), "-o".into(), out.display().to_string()])
                .collect()
        };
        let null = Path::new("/dev/null");
        let commands: Vec<(&str, PathBuf, Vec<String>)> = vec![
            ("cat (ceiling)", PathBuf::from("/bin/cat"), vec![p.clone()]),
            (
                "fb convert --threads 1 --compat reference",
                fb.to_path_buf(),
                convert(&["--threads", "1", "--compat", "reference"], null),
            ),
            (
                "fb convert --threads 1",
                fb.to_path_buf(),
                convert(&["--threads", "1"], null),
            ),
            (
                "fb convert --threads 2",
                fb.to_path_buf(),
                convert(&["--threads", "2"], null),
            ),
            // `--force`: each run after the first replaces the file the
            // run before wrote (without it, convert refuses to).
            (
                "fb convert --threads 2 -o x.zst",
                fb.to_path_buf(),
                convert(&["--threads", "2", "--force"], &zst),
            ),
            (
                "fb convert --threads 2 -o x.gz",
                fb.to_path_buf(),
                convert(&["--threads", "2", "--force"], &gz),
            ),
        ];
        let mut commands = commands;
        if let Some(vw) = vw {
            let input = reference_input(cache, &path, log.name)?;
            commands.push((
                "vw --binary_parser --binary_to_json (the reference)",
                vw.to_path_buf(),
                [
                    "-d",
                    &input.display().to_string(),
                    "--binary_parser",
                    "--binary_to_json",
                    "--cb_explore_adf",
                    "--quiet",
                ]
                .iter()
                .map(|s| s.to_string())
                .collect(),
            ));
        }
        let mut all: Vec<Vec<Sample>> = commands.iter().map(|_| Vec::new()).collect();
        for _ in 0..runs {
            for ((_, program, argv), samples) in commands.iter().zip(all.iter_mut()) {
                samples.push(measure(program, argv)?);
            }
        }
        let sizes = [&zst, &gz].map(|f| std::fs::metadata(f).map_or(0, |m| m.len()));
        let _ = std::fs::remove_file(&zst);
        let _ = std::fs::remove_file(&gz);
        let mut speed = Vec::new();
        for ((label, _, _), mut samples) in commands.into_iter().zip(all) {
            samples.sort_by(|a, b| a.secs.total_cmp(&b.secs));
            let median = samples[samples.len() / 2].secs;
            let mbs = bytes as f64 / 1e6 / median;
            let rss = samples.iter().map(|s| s.max_rss_kb).max().unwrap_or(0);
            let _ = writeln!(
                rows,
                "| {} | `{label}` | {median:.3} | {:.3} | {:.3} | {mbs:.0} | {:.1} |",
                log.name,
                samples[0].secs,
                samples[samples.len() - 1].secs,
                rss as f64 / 1024.0
            );
            eprintln!("bench: {} {label}: {median:.3} s", log.name);
            speed.push(mbs);
        }
        let (cat, reference, t1, t2, zst_mbs, gz_mbs, vw_mbs) = match speed[..] {
            [cat, reference, t1, t2, zst, gz] => (cat, reference, t1, t2, zst, gz, None),
            [cat, reference, t1, t2, zst, gz, vw] => (cat, reference, t1, t2, zst, gz, Some(vw)),
            _ => continue,
        };
        let base = vw_mbs.unwrap_or(log.reference);
        let measured = match vw_mbs {
            Some(vw) => format!("{vw:.0} measured ({:.0} in the issue)", log.reference),
            None => format!("{:.0} (the issue's)", log.reference),
        };
        let _ = writeln!(
            targets,
            "| {} | {measured} | {reference:.0} ({:.1}x) | {t1:.0} ({:.1}x) | {:.2}x | {zst_mbs:.0} ({:.0}%), {:.1} MB | {gz_mbs:.0}, {:.1} MB | {cat:.0} |",
            log.name,
            reference / base,
            t1 / base,
            t2 / t1,
            100.0 * zst_mbs / t2,
            sizes[0] as f64 / 1e6,
            sizes[1] as f64 / 1e6,
        );
    }
    Ok(format!(
        "### The logs of \"Ten times the reference\" (200 MiB)\n\n\
         `corpus-cb` repeats the REGULAR messages of `{CORPUS}` after its first \
         checkpoint; the other two are `fb gen --size 200MiB` with the arguments in \
         their names. Reference MB/s are measured here when `--reference VW` is \
         given (the C++ converter, its output to /dev/null; ratios are against it), \
         else the issue's measurements on this machine class. Compressed outputs go \
         to a file (level 1, the default); the others to /dev/null.\n\n\
         | log | reference MB/s | `--compat reference`, 1 thread (target 10x) | default, 1 thread | 2 threads / 1 (target 1.8x) | `.zst`, 2 threads (target 70% of plain), size | `.gz`, 2 threads MB/s (target 300), size | cat MB/s |\n\
         |---|---:|---:|---:|---:|---:|---:|---:|\n{targets}\n\
         | log | command | median s | min s | max s | MB/s | peak RSS MiB |\n\
         |---|---|---:|---:|---:|---:|---:|\n{rows}\n"
    ))
}
