//! `fb convert --no-caches` (every speed cache, memo and shortcut off)
//! against `fb convert` on generated logs of every problem type, plain,
//! compressed, deduplicated or both: the same bytes and exit code, in both
//! compatibility modes, with dedup references kept or inlined.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;
use std::process::Command;

mod common;

/// `fb` with `args`: its exit code and standard output.
fn fb(args: &[&str]) -> (i32, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(args)
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    assert!(
        code <= 1,
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (code, out.stdout)
}

/// The problem types, each with the `fb gen` flags that vary it: zstd
/// and dedup do not apply to multistep logs.
const CASES: &[(&str, &[&[&str]])] = &[
    (
        "cb",
        &[&[], &["--zstd"], &["--dedup"], &["--zstd", "--dedup"]],
    ),
    (
        "ccb",
        &[&[], &["--zstd"], &["--dedup"], &["--zstd", "--dedup"]],
    ),
    (
        "slates",
        &[&[], &["--zstd"], &["--dedup"], &["--zstd", "--dedup"]],
    ),
    (
        "ca",
        &[&[], &["--zstd"], &["--dedup"], &["--zstd", "--dedup"]],
    ),
    ("multistep", &[&[]]),
];

fn convert(log: &Path, flags: &[&str]) -> (i32, Vec<u8>) {
    let mut args = vec!["convert", "-q", "--threads", "1"];
    args.extend_from_slice(flags);
    args.push(log.to_str().unwrap());
    fb(&args)
}

#[test]
fn generated_logs_of_every_problem_type_give_the_same_bytes_without_caches() {
    let dir = common::scratch_dir("caches");
    let mut compared = 0;
    for (problem, variants) in CASES {
        for variant in *variants {
            let name = format!("{problem}{}", variant.concat());
            let log = dir.join(format!("{name}.fb"));
            let mut args = vec!["gen", "-q", "--events", "600", "--seed", "3"];
            args.extend(["--problem-type", problem, "--checkpoint-every", "4"]);
            args.extend(["--deferred", "0.3", "--activated", "0.5", "-o"]);
            args.push(log.to_str().unwrap());
            args.extend_from_slice(variant);
            fb(&args);
            let multistep: &[&str] = match *problem {
                "multistep" => &["--multistep"],
                _ => &[],
            };
            for compat in ["sane", "reference"] {
                for inline in [&[][..], &["--inline-dedup"]] {
                    let mut flags = vec!["--compat", compat];
                    flags.extend_from_slice(multistep);
                    flags.extend_from_slice(inline);
                    let (code, cached) = convert(&log, &flags);
                    assert!(!cached.is_empty(), "{name} {flags:?}: no DSJSON");
                    flags.push("--no-caches");
                    let (code_plain, plain) = convert(&log, &flags);
                    assert_eq!(code, code_plain, "{name} {flags:?}: exit code");
                    assert!(cached == plain, "{name} {flags:?}: output differs");
                    compared += 1;
                }
            }
        }
    }
    assert_eq!(compared, 17 * 4);
    std::fs::remove_dir_all(&dir).unwrap();
}
