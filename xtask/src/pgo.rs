//! `cargo xtask pgo`: the release `fb` built with profile-guided
//! optimization, at `target/pgo/fb`.
//!
//! Three steps, each in a target directory of its own under `target/pgo`
//! so that the plain release build is left alone:
//!
//! 1. `fb` built with `-Cprofile-generate` (counters in every branch);
//! 2. that `fb` run on training logs: `fb gen` logs of every problem type
//!    (seeds and sizes that are not the bench's) and the corpus shipped in
//!    `tests/data`, through `convert` in both modes and on two threads,
//!    `export`, `stats`, `index`, `sample`, `validate` and `inspect`, so
//!    that no command's code is laid out as cold;
//! 3. the counters merged by `llvm-profdata` (of the LLVM major version
//!    rustc uses), and `fb` built again with `-Cprofile-use`.
//!
//! The profile lays the hot paths out straight and together, and tells
//! inlining and register allocation where the time goes: bench/NOTES.md
//! (issue 18) has what it changed. Behaviour does not change: the golden
//! tests run on the result with `FB_BIN=target/pgo/fb`.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The training logs, about 6 MiB each: a name, `fb gen`'s arguments
/// and the joining flags their readers need.
const TRAINING: &[(&str, &[&str], &[&str])] = &[
    ("cb", &["--seed", "21", "--outcomes", "2"], &[]),
    (
        "cb-100",
        &[
            "--seed",
            "22",
            "--events-per-message",
            "100",
            "--outcomes",
            "3",
        ],
        &[],
    ),
    ("cb-zstd-dedup", &["--seed", "23", "--zstd", "--dedup"], &[]),
    (
        "ccb",
        &[
            "--seed",
            "24",
            "--problem-type",
            "ccb",
            "--activated",
            "0.2",
        ],
        &[],
    ),
    ("slates", &["--seed", "25", "--problem-type", "slates"], &[]),
    ("ca", &["--seed", "26", "--problem-type", "ca"], &[]),
    (
        "multistep",
        &["--seed", "27", "--problem-type", "multistep"],
        &["--multistep"],
    ),
];

pub fn run(root: &Path) -> Result<(), String> {
    let pgo = root.join("target/pgo");
    let profiles = pgo.join("profiles");
    // Counters of an earlier run would be merged in with these.
    let _ = std::fs::remove_dir_all(&profiles);
    std::fs::create_dir_all(&profiles).map_err(|e| format!("{}: {e}", profiles.display()))?;
    let profdata_tool = llvm_profdata()?;

    eprintln!("pgo: 1/3 building fb with counters (target/pgo/gen)");
    let generate = format!("-Cprofile-generate={}", profiles.display());
    let counted = build(root, &pgo.join("gen"), &generate)?;

    eprintln!("pgo: 2/3 training on target/pgo/train");
    train(root, &counted, &pgo.join("train"))?;
    let merged = pgo.join("fb.profdata");
    crate::run(
        Command::new(&profdata_tool)
            .arg("merge")
            .arg("-o")
            .arg(&merged)
            .arg(&profiles),
    )?;

    eprintln!("pgo: 3/3 building fb with the profile (target/pgo/use)");
    let used = build(
        root,
        &pgo.join("use"),
        &format!("-Cprofile-use={}", merged.display()),
    )?;
    let out = pgo.join("fb");
    // Through a temporary name: a half-copied binary is never `fb`.
    let tmp = pgo.join("fb.tmp");
    std::fs::copy(&used, &tmp).map_err(|e| format!("{}: {e}", tmp.display()))?;
    std::fs::rename(&tmp, &out).map_err(|e| format!("{}: {e}", out.display()))?;
    println!("pgo: wrote {}", out.display());
    Ok(())
}

/// Builds the release `fb` into `target_dir` with `flags` added to the
/// rustflags; returns the binary.
fn build(root: &Path, target_dir: &Path, flags: &str) -> Result<PathBuf, String> {
    // Added to whatever the caller's environment asks for.
    let rustflags = match std::env::var("RUSTFLAGS") {
        Ok(own) if !own.trim().is_empty() => format!("{own} {flags}"),
        _ => flags.to_string(),
    };
    crate::run(
        Command::new("cargo")
            .current_dir(root)
            .args(["build", "--release", "--quiet", "-p", "fb-cli"])
            .env("RUSTFLAGS", rustflags)
            .env("CARGO_TARGET_DIR", target_dir),
    )?;
    Ok(target_dir.join("release/fb"))
}

/// Runs the counting `fb` on the training logs.
fn train(root: &Path, fb: &Path, dir: &Path) -> Result<(), String> {
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let null = OsStr::new("/dev/null");
    for (name, gen, join) in TRAINING {
        let log = dir.join(format!("{name}.fb"));
        let log = log.as_os_str();
        let join = join.iter().map(|w| OsStr::new(*w));
        let mut args = words(&["gen", "-q", "--size", "6MiB"]);
        args.extend([OsStr::new("-o"), log]);
        args.extend(gen.iter().map(|w| OsStr::new(*w)));
        fb_ok(fb, &args)?;
        for run in [
            &["convert", "-q", "--threads", "1", "--compat", "reference"][..],
            &["convert", "-q", "--threads", "1"],
            &["convert", "-q", "--threads", "2"],
        ] {
            let mut args = words(run);
            args.extend([OsStr::new("-o"), null, log]);
            args.extend(join.clone());
            fb_ok(fb, &args)?;
        }
        for run in [&["stats", "-q"][..], &["validate", "-q"]] {
            let mut args = words(run);
            args.push(log);
            args.extend(join.clone());
            fb_ok(fb, &args)?;
        }
        fb_ok(fb, &[OsStr::new("inspect"), OsStr::new("--count"), log])?;
    }
    // The corpus: every valid log of the reference's tests, both modes.
    let corpus = root.join("tests/data/valid_joined_logs");
    for run in [
        &["convert", "-q"][..],
        &["convert", "-q", "--compat", "reference"],
    ] {
        let mut args = words(run);
        args.extend([OsStr::new("-o"), null, corpus.as_os_str()]);
        fb_ok(fb, &args)?;
    }
    // Columnar export, the index and a sample of one CB log.
    let cb = dir.join("cb-100.fb");
    let cb = cb.as_os_str();
    let parquet = dir.join("cb.parquet");
    let mut export = words(&["export", "-q", "-o"]);
    export.extend([parquet.as_os_str(), cb]);
    fb_ok(fb, &export)?;
    fb_ok(fb, &[OsStr::new("index"), OsStr::new("-q"), cb])?;
    let mut sample = words(&["sample", "-q", "--fraction", "0.1", "-o"]);
    sample.extend([null, cb]);
    fb_ok(fb, &sample)
}

fn words<'a>(words: &[&'a str]) -> Vec<&'a OsStr> {
    words.iter().map(|w| OsStr::new(*w)).collect()
}

/// Runs `fb` with `args`. What it prints goes to /dev/null (a training
/// log may hold what `validate` lists); a failure says which run.
fn fb_ok(fb: &Path, args: &[&OsStr]) -> Result<(), String> {
    let status = Command::new(fb)
        .args(args)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .map_err(|e| format!("{}: {e}", fb.display()))?;
    if status.success() {
        Ok(())
    } else {
        Err(format!("training run `fb {args:?}` failed with {status}"))
    }
}

/// `llvm-profdata` of the LLVM rustc is built on (`LLVM_PROFDATA` if
/// set): a profile written by one major version is not read by another.
fn llvm_profdata() -> Result<PathBuf, String> {
    if let Some(path) = std::env::var_os("LLVM_PROFDATA") {
        return Ok(PathBuf::from(path));
    }
    let out = Command::new("rustc")
        .arg("-vV")
        .output()
        .map_err(|e| format!("rustc -vV: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let major = text
        .lines()
        .find_map(|l| l.strip_prefix("LLVM version: "))
        .and_then(|v| v.split('.').next())
        .ok_or("rustc -vV does not say its LLVM version")?
        .to_string();
    let candidates = [
        PathBuf::from(format!("/usr/lib/llvm-{major}/bin/llvm-profdata")),
        PathBuf::from(format!("llvm-profdata-{major}")),
    ];
    for tool in candidates {
        let works = Command::new(&tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| {
                o.status.success()
                    && String::from_utf8_lossy(&o.stdout).contains(&format!("version {major}."))
            });
        if works {
            return Ok(tool);
        }
    }
    Err(format!(
        "no llvm-profdata of LLVM {major} (rustc's): install it with \
         `apt-get install llvm-{major}`, or name one in LLVM_PROFDATA"
    ))
}
