//! What the CLI tests share: running the binary, the vendored data, and
//! scratch space.
#![allow(dead_code)] // each test file uses its own part

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A file or directory of `tests/data/`.
pub fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data")
        .join(rel)
}

/// What a run of `fb` gave.
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `fb` with `args`, no standard input.
pub fn fb<S: AsRef<std::ffi::OsStr>>(args: &[S]) -> Out {
    let out = Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Where tests write: cargo's scratch folder for integration tests
/// (`target/tmp`, gone with `cargo clean`), under names without the
/// process id, so that each run replaces the last one's files instead of
/// leaving them behind (a run leaves some hundreds of megabytes). Two
/// runs of the same tests at once in one target folder would share them.
pub fn tmp() -> &'static Path {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
}

/// A fresh, empty directory for one test.
pub fn scratch_dir(test: &str) -> PathBuf {
    let dir = tmp().join(format!("fb-cli-{test}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// A path in this test binary's scratch directory, emptied when the
/// binary first asks for one (the last run's files would be in the way).
pub fn scratch(name: &str) -> PathBuf {
    static DIR: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    let dir = DIR.get_or_init(|| {
        let dir = tmp().join(concat!("fb-cli-files-", env!("CARGO_CRATE_NAME")));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    });
    dir.join(name)
}

/// A path as the command line takes it.
pub fn p(path: &Path) -> &str {
    path.to_str().unwrap()
}

/// A CB log (the state a reader must carry between messages) whose first
/// message defines actions 1, 2 and 3 that the next
/// eight messages refer to (1 or 2, never 3), seven hours apart; a
/// checkpoint with a reward function out of range (the previous one, sum,
/// stays in force) comes before the sixth; contexts carry 40 KB of padding; the tenth message defines
/// action 4 alone, which the last three use.
pub fn carrying_log() -> Vec<u8> {
    let texts = [
        r#"{"TAction":{"a":1}}"#,
        r#"{"TAction":{"a":2}}"#,
        r#"{"TAction":{"a":3}}"#,
        r#"{"TAction":{"a":4}}"#,
    ];
    let config = fb_writer::CheckpointConfig {
        reward_function: fb_schema::RewardFunctionType::Sum,
        ..fb_writer::CheckpointConfig::default()
    };
    let contexts: Vec<String> = (0..13)
        .map(|i| {
            let aid = if i >= 9 { 4 } else { i % 2 + 1 };
            // 40 KB of padding: the messages after the out-of-range
            // checkpoint fill more than one 256 KiB block of an index.
            let pad = "x".repeat(40_000);
            format!(r#"{{"U":{{"i":{i},"pad":"{pad}"}},"_multi":[{{"__aid":{aid}}}]}}"#)
        })
        .collect();
    let ids: Vec<String> = (0..13).map(|i| format!("decision-{i}")).collect();
    let mut w = fb_writer::LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    let start = fb_schema::TimeStamp::new(2026, 3, 1, 0, 30, 0, 0);
    w.header(&[("joiner", "split test")], start).unwrap();
    w.checkpoint(&config).unwrap();
    for i in 0..13 {
        let hours = 7 * i as u32;
        let at = fb_schema::TimeStamp::new(
            2026,
            3,
            1 + (hours / 24) as u8,
            (hours % 24) as u8,
            30,
            0,
            0,
        );
        if i == 5 {
            w.checkpoint(&fb_writer::CheckpointConfig {
                reward_function: fb_schema::RewardFunctionType(99),
                default_reward: -2.0,
                ..config
            })
            .unwrap();
        }
        if i == 0 {
            w.push_event(&fb_writer::JoinedEventSpec::new(
                "dedup-a",
                at,
                fb_writer::PayloadSpec::Dedup(fb_writer::DedupSpec {
                    ids: &[1, 2, 3],
                    values: &texts[..3],
                }),
            ))
            .unwrap();
        }
        if i == 9 {
            w.push_event(&fb_writer::JoinedEventSpec::new(
                "dedup-b",
                at,
                fb_writer::PayloadSpec::Dedup(fb_writer::DedupSpec {
                    ids: &[4],
                    values: &texts[3..],
                }),
            ))
            .unwrap();
        }
        w.push_event(&fb_writer::JoinedEventSpec::new(
            &ids[i],
            at,
            fb_writer::PayloadSpec::Cb(fb_writer::CbSpec {
                action_ids: Some(&[1]),
                probabilities: Some(&[1.0]),
                context: Some(contexts[i].as_bytes()),
                ..fb_writer::CbSpec::default()
            }),
        ))
        .unwrap();
        for value in [1.0, 2.0] {
            w.push_event(&fb_writer::JoinedEventSpec::new(
                &ids[i],
                at,
                fb_writer::PayloadSpec::Outcome(fb_schema::OutcomeEventArgs {
                    value: fb_schema::UnionArg::Numeric(value),
                    index: fb_schema::UnionArg::None,
                    action_taken: false,
                }),
            ))
            .unwrap();
        }
        w.end_regular().unwrap();
    }
    w.eof().unwrap();
    w.into_inner()
}

/// Every file of a tree, by its path under `root`, with its bytes.
pub fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    let mut dirs = vec![root.to_path_buf()];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                let name = path.strip_prefix(root).unwrap().display().to_string();
                out.push((name, std::fs::read(&path).unwrap()));
            }
        }
    }
    out.sort();
    out
}

/// The rows of `batches`.
pub fn rows(batches: &[arrow_array::RecordBatch]) -> usize {
    batches.iter().map(arrow_array::RecordBatch::num_rows).sum()
}

/// The batches of an Arrow IPC file.
pub fn arrow_batches(path: &Path) -> Vec<arrow_array::RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    reader.map(|b| b.unwrap()).collect()
}

/// The batches of an Arrow IPC stream in a file.
pub fn arrow_stream_batches(path: &Path) -> Vec<arrow_array::RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    let reader = arrow_ipc::reader::StreamReader::try_new(file, None).unwrap();
    reader.map(|b| b.unwrap()).collect()
}

/// The batches of a Parquet file.
pub fn parquet_batches(path: &Path) -> Vec<arrow_array::RecordBatch> {
    let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}
