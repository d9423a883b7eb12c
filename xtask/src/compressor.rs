//! `cargo xtask bench --only compressor`: Parquet export on one thread
//! against convert and against its compressor alone (issue 39: export at
//! 50% of convert's speed, or, if that is lower, at the speed at which
//! zstd alone packs the same column bytes).
//!
//! For the CB and CCB bench logs of `--size`: the best of `--runs` wall
//! times of `fb convert --threads 1` and `fb export --threads 1` (both to
//! /dev/null, as in the main table); then the export is written once to a
//! file and `crates/fb-arrow/examples/parquet_compressor.rs` packs again,
//! on one thread, every page the export compressed, as parquet's ZSTD
//! codec does (its comment says how). Its time, against the log's size,
//! is the compressor's speed in MB/s of the log.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use crate::bench::{cache_as_read_from_disk, generated, measure, sh, LOGS};

/// Best wall time of `runs` runs.
fn best(fb: &Path, args: &[String], runs: usize) -> Result<f64, String> {
    let mut best = f64::INFINITY;
    for _ in 0..runs.max(1) {
        best = best.min(measure(fb, args)?.secs);
    }
    Ok(best)
}

/// `words`, then the log and the output.
fn argv(words: &[&str], log: &Path, out: &str) -> Vec<String> {
    words
        .iter()
        .map(|s| s.to_string())
        .chain([log.display().to_string(), "-o".into(), out.into()])
        .collect()
}

/// The example, built with cargo profile `profile`.
fn build(root: &Path, profile: &str) -> Result<std::path::PathBuf, String> {
    sh(Command::new("cargo").current_dir(root).args([
        "build",
        "--quiet",
        "--profile",
        profile,
        "-p",
        "fb-arrow",
        "--example",
        "parquet_compressor",
    ]))?;
    let dir = match profile {
        "dev" | "test" => "debug",
        other => other,
    };
    Ok(root.join(format!("target/{dir}/examples/parquet_compressor")))
}

/// What parquet_compressor printed.
#[derive(Debug, PartialEq)]
struct Packed {
    bytes_in: f64,
    bytes_out: f64,
    /// Best seconds of a whole pass.
    secs: f64,
    /// (column, pages, bytes in, bytes out, seconds)
    columns: Vec<(String, f64, f64, f64, f64)>,
}

/// Reads parquet_compressor's lines (its module comment has the format).
fn parse(text: &str) -> Result<Packed, String> {
    let mut total = None;
    let mut columns = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let num = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
        let bad = || format!("parquet_compressor printed {line:?}");
        match (f.first(), f.get(1)) {
            (Some(&"total"), _) => {
                let (Some(bytes_in), Some(bytes_out), Some(secs)) = (num(1), num(2), num(4)) else {
                    return Err(bad());
                };
                total = Some((bytes_in, bytes_out, secs));
            }
            (Some(&"column"), Some(name)) => {
                let (Some(bytes_in), Some(bytes_out), Some(pages), Some(secs)) =
                    (num(3), num(4), num(5), num(6))
                else {
                    return Err(bad());
                };
                columns.push((name.to_string(), pages, bytes_in, bytes_out, secs));
            }
            _ => return Err(bad()),
        }
    }
    let (bytes_in, bytes_out, secs) = total.ok_or("parquet_compressor printed no total")?;
    Ok(Packed {
        bytes_in,
        bytes_out,
        secs,
        columns,
    })
}

/// The section's tables, as Markdown.
pub fn section(
    root: &Path,
    fb: &Path,
    cache: &Path,
    size: &str,
    runs: usize,
    profile: &str,
) -> Result<String, String> {
    let packer = build(root, profile)?;
    let mut table = String::new();
    let mut columns = String::new();
    let _ = writeln!(
        table,
        "Parquet export on one thread against convert and against zstd alone packing the \
         pages the export compressed (examples/parquet_compressor.rs built with profile \
         `{profile}`), best of {runs}. Target: export at min(50% of convert, zstd alone).\n\n\
         | log | MB | convert MB/s | Parquet export MB/s | export / convert | MB zstd packs (in, out) | zstd alone MB/s of the log | zstd alone / convert | export / zstd alone | target MB/s | met |\n\
         |---|---:|---:|---:|---:|---|---:|---:|---:|---:|---|"
    );
    let _ = writeln!(
        columns,
        "| log | column | pages | MB in | MB out | s | share of zstd's time |\n\
         |---|---|---:|---:|---:|---:|---:|"
    );
    for log in LOGS.iter().filter(|l| l.name == "cb" || l.name == "ccb") {
        let path = generated(fb, cache, log, size)?;
        cache_as_read_from_disk(&path)?;
        let mb = std::fs::metadata(&path)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .len() as f64
            / 1e6;
        let convert = best(
            fb,
            &argv(&["convert", "-q", "--threads", "1"], &path, "/dev/null"),
            runs,
        )?;
        let export = best(
            fb,
            &argv(&["export", "-q", "--threads", "1"], &path, "/dev/null"),
            runs,
        )?;
        let parquet = cache.join(format!("{}-{size}.compressor.parquet", log.name));
        let out = parquet.display().to_string();
        measure(
            fb,
            &argv(&["export", "-q", "--force", "--threads", "1"], &path, &out),
        )?;
        let text = sh(Command::new(&packer).args([out.clone(), runs.to_string()]));
        let _ = std::fs::remove_file(&parquet);
        let text = text?;
        let Packed {
            bytes_in: packed_in,
            bytes_out: packed_out,
            secs: zstd,
            columns: mut per_column,
        } = parse(&text)?;
        // The columns that take 1% of zstd's time or more, by time; the
        // rest summed in one row.
        per_column.sort_by(|a, b| b.4.total_cmp(&a.4));
        let (mut rest, mut rest_in, mut rest_out, mut rest_s) = (0, 0.0, 0.0, 0.0);
        for (name, pages, inb, outb, s) in per_column {
            if s < 0.01 * zstd {
                rest += 1;
                rest_in += inb;
                rest_out += outb;
                rest_s += s;
                continue;
            }
            let _ = writeln!(
                columns,
                "| {} | {name} | {pages:.0} | {:.1} | {:.1} | {s:.3} | {:.0}% |",
                log.name,
                inb / 1e6,
                outb / 1e6,
                100.0 * s / zstd.max(1e-9)
            );
        }
        let _ = writeln!(
            columns,
            "| {} | {rest} other columns | - | {:.1} | {:.1} | {rest_s:.3} | {:.0}% |",
            log.name,
            rest_in / 1e6,
            rest_out / 1e6,
            100.0 * rest_s / zstd.max(1e-9)
        );
        let (c, e, z) = (mb / convert, mb / export, mb / zstd);
        let target = (0.5 * c).min(z);
        let _ = writeln!(
            table,
            "| {} | {mb:.0} | {c:.0} | {e:.0} | {:.0}% | {:.0}, {:.0} | {z:.0} | {:.0}% | {:.0}% | {target:.0} | {} |",
            log.name,
            100.0 * e / c,
            packed_in / 1e6,
            packed_out / 1e6,
            100.0 * z / c,
            100.0 * e / z,
            if e >= target { "yes" } else { "no" }
        );
        eprintln!(
            "bench: {} convert {convert:.3} s, export {export:.3} s, zstd alone {zstd:.3} s",
            log.name
        );
    }
    Ok(format!(
        "{table}\nPer column (zstd alone, best pass):\n\n{columns}"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_what_the_example_prints() {
        struct Case {
            name: &'static str,
            text: &'static str,
            want: Result<Packed, &'static str>,
        }
        let cases = [
            Case {
                name: "a column and the total",
                text: "column\tcontext\tzstd(1)\t7400\t500\t7\t0.013\ntotal\t7400\t500\t7\t0.014\n",
                want: Ok(Packed {
                    bytes_in: 7400.0,
                    bytes_out: 500.0,
                    secs: 0.014,
                    columns: vec![("context".into(), 7.0, 7400.0, 500.0, 0.013)],
                }),
            },
            Case {
                name: "no total",
                text: "column\tcontext\tzstd(1)\t7400\t500\t7\t0.013\n",
                want: Err("parquet_compressor printed no total"),
            },
            Case {
                name: "a column line cut short",
                text: "column\tcontext\tzstd(1)\t7400\ntotal\t1\t1\t1\t1\n",
                want: Err("parquet_compressor printed \"column\\tcontext\\tzstd(1)\\t7400\""),
            },
            Case {
                name: "a line of another kind",
                text: "error: no such file\n",
                want: Err("parquet_compressor printed \"error: no such file\""),
            },
        ];
        for case in cases {
            let got = parse(case.text);
            assert_eq!(got, case.want.map_err(String::from), "{}", case.name);
        }
    }
}
