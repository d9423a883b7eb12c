//! The bench's Python sections, in the venv `.ci/run` uses
//! (`target/py-venv`) with a wheel of vwlogs built and installed first:
//! `--python` (vwlogs against `fb export`, and Spark) and `--only vwlogs`
//! (`vwlogs.read(...).read_all()` on 1, 2 and all cores, issue 39).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::bench::{cache_as_read_from_disk, measure, sh};

/// Pinned as in `.ci/run`.
const PYARROW: &str = "pyarrow==21.0.0";
const MATURIN: &str = "maturin==1.16.0";

/// `target/py-venv`, made when missing, with pyarrow and maturin in it;
/// the path of its Python.
fn venv(root: &Path) -> Result<PathBuf, String> {
    let dir = root.join("target/py-venv");
    let python = dir.join("bin/python");
    if !python.is_file() {
        eprintln!("bench: making {}", dir.display());
        sh(Command::new("python3").arg("-m").arg("venv").arg(&dir))?;
    }
    let has = |module: &str| {
        Command::new(&python)
            .args(["-c", &format!("import {module}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let mut missing = Vec::new();
    if !has("pyarrow") {
        missing.push(PYARROW);
    }
    if !dir.join("bin/maturin").is_file() {
        missing.push(MATURIN);
    }
    if !missing.is_empty() {
        eprintln!(
            "bench: installing {} into {}",
            missing.join(" "),
            dir.display()
        );
        sh(pip_install(&python).args(&missing))?;
    }
    Ok(python)
}

/// `python -m pip install`, quietly, without pip's version check.
fn pip_install(python: &Path) -> Command {
    let mut pip = Command::new(python);
    pip.args([
        "-m",
        "pip",
        "install",
        "--quiet",
        "--disable-pip-version-check",
    ]);
    pip
}

/// Builds the vwlogs wheel with cargo profile `profile` and installs it
/// into the venv, whatever was installed before (.ci/run installs a
/// debug one).
fn install_wheel(root: &Path, profile: &str) -> Result<(), String> {
    let wheels = root.join("target/wheels-bench");
    // Only this build's wheel in the folder, so that the one installed is
    // never an older version's.
    let _ = std::fs::remove_dir_all(&wheels);
    sh(Command::new(root.join("target/py-venv/bin/maturin"))
        .current_dir(root.join("crates/fb-py"))
        .args(["build", "--quiet", "--profile", profile, "-o"])
        .arg(&wheels))?;
    let wheel = std::fs::read_dir(&wheels)
        .map_err(|e| format!("{}: {e}", wheels.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| p.to_string_lossy().ends_with(".whl"))
        .ok_or("maturin built no wheel")?;
    sh(pip_install(&root.join("target/py-venv/bin/python"))
        .args(["--force-reinstall", "--no-deps"])
        .arg(&wheel))?;
    Ok(())
}

/// `--python`: `bench/spark_scaling.py` in the venv of `.ci/run`, with the
/// release wheel of vwlogs built and installed first: `vwlogs.read`
/// against `fb export --format arrow` on the 1 GiB CB log, and Spark
/// `local[1]` against `local[2]` over eight generated 100 MB logs. A
/// section of RESULTS.md.
pub(crate) fn python_bench(root: &Path, fb: &Path, cache: &Path) -> Result<String, String> {
    let python = root.join("target/py-venv/bin/python");
    install_wheel(root, "release")?;
    let folder = cache.join("spark8");
    std::fs::create_dir_all(&folder).map_err(|e| format!("{}: {e}", folder.display()))?;
    for i in 1..=8 {
        let path = folder.join(format!("cb{i}.fb"));
        if !path.exists() {
            let gen: Vec<String> = [
                "gen",
                "-q",
                "--problem-type",
                "cb",
                "--size",
                "100MB",
                "--seed",
            ]
            .iter()
            .map(|s| s.to_string())
            .chain([
                format!("{}", 100 + i),
                "-o".into(),
                path.display().to_string(),
            ])
            .collect();
            measure(fb, &gen)?;
        }
    }
    let log = cache.join("cb-1GiB.fb");
    let text = sh(Command::new(&python).current_dir(root).args([
        "bench/spark_scaling.py".to_string(),
        fb.display().to_string(),
        folder.display().to_string(),
        log.display().to_string(),
    ]))?;
    eprint!("{text}");
    Ok(format!(
        "### Python and Spark (`--python`, bench/spark_scaling.py; best of two, Spark best of three after three warm-up queries)\n\n```\n{text}```\n\n"
    ))
}

/// bench/vwlogs_threads.py's lines: (input, threads, best seconds).
type Timings = Vec<(String, usize, f64)>;

/// Reads bench/vwlogs_threads.py's lines.
fn parse_threads(text: &str) -> Result<Timings, String> {
    text.lines()
        .map(|line| {
            let f: Vec<&str> = line.split('\t').collect();
            match (
                f.first().copied(),
                f.get(1).and_then(|n| n.parse().ok()),
                f.get(2).and_then(|s| s.parse().ok()),
            ) {
                (Some(input @ ("file" | "folder")), Some(n), Some(secs)) => {
                    Ok((input.to_string(), n, secs))
                }
                _ => Err(format!("bench/vwlogs_threads.py printed {line:?}")),
            }
        })
        .collect()
}

/// `--only vwlogs`: `vwlogs.read(...).read_all()` on 1, 2 and all of the
/// machine's cores, on the CCB log of `--only folders` and on the folder
/// of its pieces (bench/vwlogs_threads.py), with the wheel built with
/// cargo profile `profile`. Without a venv that can be made, or a wheel
/// that builds, the section says so and is skipped.
pub(crate) fn vwlogs_section(
    root: &Path,
    fb: &Path,
    cache: &Path,
    size: &str,
    runs: usize,
    profile: &str,
) -> Result<String, String> {
    let python = match venv(root).and_then(|p| install_wheel(root, profile).map(|()| p)) {
        Ok(python) => python,
        Err(why) => {
            return Ok(format!(
                "vwlogs section skipped: no venv with vwlogs under target/py-venv \
                 (python3 -m venv, pip install {PYARROW} {MATURIN}, maturin build): {why}\n"
            ))
        }
    };
    let (log, pieces) = crate::folders::inputs(fb, cache, size)?;
    cache_as_read_from_disk(&log)?;
    // The pieces read once, so that the folder is in the page cache as the
    // file is.
    for piece in std::fs::read_dir(&pieces).map_err(|e| format!("{}: {e}", pieces.display()))? {
        let path = piece
            .map_err(|e| format!("{}: {e}", pieces.display()))?
            .path();
        let mut file =
            std::fs::File::open(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        std::io::copy(&mut file, &mut std::io::sink())
            .map_err(|e| format!("{}: {e}", path.display()))?;
    }
    let bytes = std::fs::metadata(&log)
        .map_err(|e| format!("{}: {e}", log.display()))?
        .len();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut threads = vec![1, 2, cores];
    threads.sort_unstable();
    threads.dedup();
    let mut argv = vec![
        "bench/vwlogs_threads.py".to_string(),
        log.display().to_string(),
        pieces.display().to_string(),
        runs.to_string(),
    ];
    argv.extend(threads.iter().map(|n| n.to_string()));
    let text = sh(Command::new(&python).current_dir(root).args(&argv))?;
    let rows = parse_threads(&text)?;
    let find = |input: &str, n: usize| rows.iter().find(|r| r.0 == input && r.1 == n).map(|r| r.2);
    let files = std::fs::read_dir(&pieces).map_or(0, |d| d.count());
    let mut table = String::new();
    let _ = writeln!(
        table,
        "`vwlogs.read(...).read_all()`, {size} CCB log and the folder of its {files} pieces, \
         best of {runs}, {cores} cores, wheel built with profile `{profile}`. Targets: two \
         threads at 1.7x one or more; the folder at 90% of the file's speed or more.\n\n\
         | threads | file s | file MB/s | over 1 thread | folder s | folder MB/s | over 1 thread | folder speed / file speed |\n\
         |---:|---:|---:|---:|---:|---:|---:|---:|"
    );
    let mb = bytes as f64 / 1e6;
    for &n in &threads {
        let (Some(file), Some(folder)) = (find("file", n), find("folder", n)) else {
            continue;
        };
        let over = |input: &str, secs: f64| {
            find(input, 1).map_or("-".into(), |one| format!("{:.2}x", one / secs))
        };
        let _ = writeln!(
            table,
            "| {n} | {file:.3} | {:.0} | {} | {folder:.3} | {:.0} | {} | {:.0}% |",
            mb / file,
            over("file", file),
            mb / folder,
            over("folder", folder),
            100.0 * file / folder
        );
    }
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_the_script_prints() {
        let cases: [(&str, &str, Result<Timings, String>); 3] = [
            (
                "file and folder",
                "file\t1\t1.072\t40000\nfolder\t2\t1.637\t40000\n",
                Ok(vec![("file".into(), 1, 1.072), ("folder".into(), 2, 1.637)]),
            ),
            (
                "threads not a number",
                "file\tall\t1.0\t4\n",
                Err("bench/vwlogs_threads.py printed \"file\\tall\\t1.0\\t4\"".into()),
            ),
            (
                "a traceback line",
                "Traceback (most recent call last):\n",
                Err(
                    "bench/vwlogs_threads.py printed \"Traceback (most recent call last):\"".into(),
                ),
            ),
        ];
        for (name, text, want) in cases {
            assert_eq!(parse_threads(text), want, "{name}");
        }
    }
}
