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

/// `batch` with row `i` moved to day `days[i % days.len()]` (its time of
/// day kept as the row number, in µs, to find it again).
fn spread(batch: &RecordBatch, days: &[i64]) -> RecordBatch {
    let ts: TimestampMicrosecondArray = (0..batch.num_rows())
        .map(|i| Some(days[i % days.len()] * DAY + i as i64))
        .collect::<TimestampMicrosecondArray>()
        .with_timezone("UTC");
    let at = batch.schema().index_of("timestamp").unwrap();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns[at] = Arc::new(ts);
    RecordBatch::try_new(batch.schema(), columns).unwrap()
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
    let ts: TimestampMicrosecondArray = (0..batch.num_rows())
        .map(|i| Some(hours[i % hours.len()] * 3_600_000_000))
        .collect::<TimestampMicrosecondArray>()
        .with_timezone("UTC");
    let at = batch.schema().index_of("timestamp").unwrap();
    let mut columns: Vec<ArrayRef> = batch.columns().to_vec();
    columns[at] = Arc::new(ts);
    writer
        .write(&RecordBatch::try_new(batch.schema(), columns).unwrap())
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
