//! What an output's name means: `fb export` writes the format the name
//! says, and a text output refuses a columnar name rather than put
//! DSJSON or HTML under it.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

mod common;

use common::{
    arrow_batches, arrow_stream_batches, data, fb, p, parquet_batches, rows, scratch_dir,
};

fn lines_of(dir: &str) -> usize {
    fb(&["convert", "-q", dir]).stdout.lines().count()
}

/// What an export file holds, by its first bytes.
#[derive(Debug, PartialEq)]
enum Kind {
    Parquet,
    IpcFile,
    IpcStream,
}

fn kind_of(bytes: &[u8]) -> Option<Kind> {
    match bytes {
        [b'P', b'A', b'R', b'1', ..] => Some(Kind::Parquet),
        [b'A', b'R', b'R', b'O', b'W', b'1', ..] => Some(Kind::IpcFile),
        [0xff, 0xff, 0xff, 0xff, ..] => Some(Kind::IpcStream),
        _ => None,
    }
}

/// Without `--format`, OUT's name says what is written: `-o x.arrow`
/// once wrote Parquet under that name. `--format` wins over the name.
#[test]
fn the_output_name_chooses_the_format_unless_format_is_given() {
    let dir = scratch_dir("export-names");
    let logs = data("valid_joined_logs");
    let want = lines_of(p(&logs));
    let cases: [(&str, &str, Option<&str>, Kind); 9] = [
        ("parquet", "a.parquet", None, Kind::Parquet),
        ("no extension", "a", None, Kind::Parquet),
        ("unknown extension", "a.data", None, Kind::Parquet),
        ("arrow", "a.arrow", None, Kind::IpcFile),
        ("upper case", "b.ARROW", None, Kind::IpcFile),
        ("feather", "a.feather", None, Kind::IpcFile),
        ("ipc", "a.ipc", None, Kind::IpcFile),
        ("arrows is a stream", "a.arrows", None, Kind::IpcStream),
        ("--format wins", "c.arrow", Some("parquet"), Kind::Parquet),
    ];
    for (name, file, format, kind) in cases {
        let out = dir.join(file);
        let mut args = vec!["export", "-q", "--force", p(&logs), "-o", p(&out)];
        if let Some(format) = format {
            args.extend(["--format", format]);
        }
        let run = fb(&args);
        assert_eq!(run.code, 0, "{name}: {}", run.stderr);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(kind_of(&bytes), Some(kind), "{name}");
        let read = match kind_of(&bytes) {
            Some(Kind::Parquet) => parquet_batches(&out),
            Some(Kind::IpcFile) => arrow_batches(&out),
            _ => arrow_stream_batches(&out),
        };
        assert_eq!(rows(&read), want, "{name}");
    }
}

/// `fb convert -o events.parquet` wrote DSJSON lines under that name.
/// Every text output now refuses a columnar name, before it reads
/// anything, and leaves no file.
#[test]
fn a_text_output_refuses_a_columnar_name() {
    let dir = scratch_dir("names-text");
    let log = data("valid_joined_logs/cb_simple.log");
    let cases: [(&str, &str, &[&str], &str); 6] = [
        (
            "convert to parquet",
            "a.parquet",
            &["convert"],
            "not Parquet",
        ),
        ("convert to pq", "a.pq", &["convert"], "not Parquet"),
        (
            "convert to arrow",
            "a.arrow",
            &["convert"],
            "not an Arrow IPC file",
        ),
        (
            "convert to arrows",
            "a.ARROWS",
            &["convert"],
            "not an Arrow IPC stream",
        ),
        (
            "sample as dsjson",
            "s.feather",
            &["sample", "--format", "dsjson", "--decisions", "1"],
            "not an Arrow IPC file",
        ),
        ("report page", "r.parquet", &["report"], "not Parquet"),
    ];
    for (name, file, command, says) in cases {
        let out = dir.join(file);
        let mut args = command.to_vec();
        args.extend([p(&log), "-o", p(&out)]);
        let run = fb(&args);
        assert_eq!(run.code, 2, "{name}: {}", run.stderr);
        assert!(run.stderr.contains(says), "{name}: {}", run.stderr);
        assert!(run.stderr.contains("fb export"), "{name}: {}", run.stderr);
        assert!(!out.exists(), "{name}: nothing written");
    }
    // The same names are fine for a binary log.
    let out = dir.join("log.parquet");
    let run = fb(&["repair", p(&log), "-o", p(&out)]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(std::fs::read(&out).unwrap().starts_with(b"VWFB"));
}
