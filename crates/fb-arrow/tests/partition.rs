//! A partitioned export keeps every row, each under its own date, in log
//! order, with a bounded number of files open: a partition left and
//! needed again continues in its next part file.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{ArrayRef, RecordBatch, TimestampMicrosecondArray};
use fb_arrow::{BatchWriter, Partitioned, Partitioning};

mod common;
use common::corpus_batch;

const DAY: i64 = 86_400_000_000;

/// `batch` with row `i` at `micros(i)` (µs since 1970, UTC).
fn with_times(batch: &RecordBatch, micros: impl Fn(usize) -> i64) -> RecordBatch {
    let ts: TimestampMicrosecondArray = (0..batch.num_rows())
        .map(|i| Some(micros(i)))
        .collect::<TimestampMicrosecondArray>()
        .with_timezone("UTC");
    let at = batch.schema().index_of("timestamp").unwrap();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns[at] = Arc::new(ts);
    RecordBatch::try_new(batch.schema(), columns).unwrap()
}

/// `batch` with row `i` moved to day `days[i % days.len()]` (its time of
/// day kept as the row number, in µs, to find it again).
fn spread(batch: &RecordBatch, days: &[i64]) -> RecordBatch {
    with_times(batch, |i| days[i % days.len()] * DAY + i as i64)
}

fn scratch(name: &str) -> PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fb-arrow-{name}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Every `part-*.parquet` under `dir`, sorted by path.
fn parts(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            out.extend(parts(&path));
        } else {
            out.push(path);
        }
    }
    out.sort();
    out
}

/// The row numbers (time of day) in a Parquet file, in order.
fn rows_of(path: &Path) -> Vec<i64> {
    let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
    let reader = parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap();
    let mut out = Vec::new();
    for batch in reader {
        let batch = batch.unwrap();
        let ts = batch
            .column_by_name("timestamp")
            .unwrap()
            .as_primitive::<TimestampMicrosecondType>();
        out.extend(ts.values().iter().copied());
    }
    out
}

#[test]
fn partitions_past_the_open_limit_continue_in_new_parts() {
    let batch = corpus_batch();
    let n = batch.num_rows();
    assert!(n > 100, "{n} rows");
    // Six days, more than files may be open: every batch of 7 rows
    // touches most of them, so files are closed and reopened as parts.
    let days = [20_000, 20_001, 20_002, 20_003, 20_004, 20_005];
    assert!(days.len() > Partitioned::OPEN);
    let spread = spread(&batch, &days);
    let dir = scratch("partition-reopen");
    let mut writer = Partitioned::new(&dir, Partitioning::Date, 1 << 20);
    let mut at = 0;
    while at < n {
        let len = 7.min(n - at);
        writer.write(&spread.slice(at, len)).unwrap();
        at += len;
    }
    let files = writer.finish().unwrap();
    let found = parts(&dir);
    assert_eq!(files, found.len());
    assert!(
        found.iter().any(|p| p.ends_with("part-00001.parquet")),
        "no partition was reopened: {found:?}"
    );
    let mut seen = Vec::new();
    for day in days {
        let (y, m, d) = fb_schema::calendar::civil_from_days(day);
        let sub = dir.join(format!("date={y:04}-{m:02}-{d:02}"));
        // Parts in order hold the partition's rows in log order.
        let mut rows = Vec::new();
        for part in parts(&sub) {
            rows.extend(rows_of(&part));
        }
        assert!(rows.iter().all(|t| t.div_euclid(DAY) == day), "{sub:?}");
        let numbers: Vec<i64> = rows.iter().map(|t| t.rem_euclid(DAY)).collect();
        let want: Vec<i64> = (0..n as i64)
            .filter(|i| days[*i as usize % days.len()] == day)
            .collect();
        assert_eq!(numbers, want, "{sub:?}");
        seen.extend(numbers);
    }
    seen.sort_unstable();
    assert_eq!(seen, (0..n as i64).collect::<Vec<_>>());
}

#[test]
fn hours_are_directories_under_their_date() {
    let batch = corpus_batch();
    let dir = scratch("partition-hours");
    let mut writer = Partitioned::new(&dir, Partitioning::Hour, 1 << 20);
    // Rows an hour apart across midnight, before 1970 too.
    let hours: Vec<i64> = (-3..3).collect();
    writer
        .write(&with_times(&batch, |i| {
            hours[i % hours.len()] * 3_600_000_000
        }))
        .unwrap();
    writer.finish().unwrap();
    let found: Vec<String> = parts(&dir)
        .iter()
        .map(|p| p.strip_prefix(&dir).unwrap().to_string_lossy().into_owned())
        .collect();
    // Six hours, six files (more than OPEN: the earliest were closed).
    assert_eq!(
        found,
        [
            "date=1969-12-31/hour=21/part-00000.parquet",
            "date=1969-12-31/hour=22/part-00000.parquet",
            "date=1969-12-31/hour=23/part-00000.parquet",
            "date=1970-01-01/hour=00/part-00000.parquet",
            "date=1970-01-01/hour=01/part-00000.parquet",
            "date=1970-01-01/hour=02/part-00000.parquet",
        ]
    );
    let total: usize = parts(&dir).iter().map(|p| rows_of(p).len()).sum();
    assert_eq!(total, batch.num_rows());
}

/// The hour (since 1970) of row `i`.
type HourOf = fn(i64) -> i64;

/// `batch` repeated `times` times, row `i`'s time in hour `hour(i)`,
/// its number within the hour kept as µs.
fn hourly(batch: &RecordBatch, times: usize, hour: HourOf) -> RecordBatch {
    let copies = vec![batch.clone(); times];
    let all = arrow_select::concat::concat_batches(&batch.schema(), &copies).unwrap();
    with_times(&all, |i| hour(i as i64) * 3_600_000_000 + i as i64)
}

/// Every file under `dir` by its path under it, with its bytes.
fn tree(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    parts(dir)
        .into_iter()
        .map(|p| {
            let bytes = std::fs::read(&p).unwrap();
            (p.strip_prefix(dir).unwrap().to_path_buf(), bytes)
        })
        .collect()
}

/// The fast path (each partition's rows as slices of the batch, files
/// left finished on a thread of their own where lanes encode) writes the
/// same files as the plain one (rows filtered, each file finished before
/// the next), whatever the order of the rows' times, the number of
/// encoding threads and the cut of a batch into pieces.
#[test]
fn partition_paths_write_the_same_files() {
    let batch = corpus_batch();
    let cases: &[(&str, HourOf)] = &[
        // A batch of 97 rows spans three hours.
        ("hours in order", |i| i / 40),
        // Every 13th row an hour late: runs go back to a partition.
        ("late rows", |i| i / 40 - i64::from(i % 13 == 0)),
        // Seven hours in turn, five rows each: more partitions than open
        // files, so parts are reopened.
        ("hours in turn", |i| (i / 5) % 7),
        // A new hour at every row: past the runs a batch is cut in, the
        // rows are filtered on either path.
        ("a new hour each row", |i| i % 3),
        // Four hundred rows an hour: files of several row groups, whose
        // text pages go to packers from the second on (16 cores).
        ("long hours", |i| i / 400),
    ];
    for (name, hour) in cases {
        let rows = hourly(&batch, 6, *hour);
        let write = |path: fb_arrow::ParquetPath, threads: usize, cores: usize, pieces: bool| {
            let dir = scratch(&format!("partition-paths-{threads}-{pieces}-{path:?}"));
            let mut writer = Partitioned::new(&dir, Partitioning::Hour, 50)
                .encoding_threads_on(threads, cores)
                .parquet_path(path);
            let mut at = 0;
            while at < rows.num_rows() {
                let len = 97.min(rows.num_rows() - at);
                let part = rows.slice(at, len);
                if pieces {
                    let cut = (len / 3).max(1).min(len);
                    let split = vec![part.slice(0, cut), part.slice(cut, len - cut)];
                    writer.write_pieces(fb_arrow::Pieces::whole(split)).unwrap();
                } else {
                    writer.write(&part).unwrap();
                }
                at += len;
            }
            let files = writer.finish().unwrap();
            let found = tree(&dir);
            assert_eq!(files, found.len(), "{name}");
            found
        };
        let want = write(fb_arrow::ParquetPath::Plain, 1, 2, false);
        assert!(want.len() > 3, "{name}: {} files", want.len());
        for (threads, cores, pieces) in [(1, 2, false), (2, 2, false), (3, 2, true), (8, 16, true)]
        {
            let got = write(fb_arrow::ParquetPath::Fast, threads, cores, pieces);
            let paths =
                |t: &[(PathBuf, Vec<u8>)]| t.iter().map(|f| f.0.clone()).collect::<Vec<_>>();
            assert_eq!(paths(&got), paths(&want), "{name}, {threads} threads");
            for ((path, a), (_, b)) in got.iter().zip(&want) {
                assert!(a == b, "{name}, {threads} threads: {path:?} differs");
            }
        }
    }
}
