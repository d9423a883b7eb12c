//! `fb export` as a user runs it: every row of a folder of logs, in a file
//! every Arrow and Parquet reader takes, never half-written.

mod common;

use arrow_array::RecordBatch;
use common::{data, fb, p, scratch_dir};

fn lines_of(dir: &str) -> usize {
    fb(&["convert", "-q", dir]).stdout.lines().count()
}

fn rows(batches: &[RecordBatch]) -> usize {
    batches.iter().map(RecordBatch::num_rows).sum()
}

/// The batches of an Arrow IPC file.
fn arrow_batches(path: &std::path::Path) -> Vec<RecordBatch> {
    let file = std::fs::File::open(path).unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(file, None).unwrap();
    reader.map(|b| b.unwrap()).collect()
}

/// The batches of a Parquet file.
fn parquet_batches(path: &std::path::Path) -> Vec<RecordBatch> {
    let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
    parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
        .unwrap()
        .build()
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

/// The rows of `batches` as one batch.
fn one_batch(batches: &[RecordBatch]) -> RecordBatch {
    arrow_select::concat::concat_batches(&batches[0].schema(), batches).unwrap()
}

#[test]
fn export_writes_every_joined_event_in_each_format() {
    let dir = scratch_dir("export");
    let logs = data("valid_joined_logs");
    let want = lines_of(p(&logs));
    assert!(want > 100);
    for threads in ["1", "2"] {
        let arrow = dir.join(format!("t{threads}.arrow"));
        let out = fb(&[
            "export",
            "-q",
            "--format",
            "arrow",
            "--batch-rows",
            "7",
            "--threads",
            threads,
            p(&logs),
            "-o",
            p(&arrow),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            rows(&arrow_batches(&arrow)),
            want,
            "arrow, {threads} threads"
        );

        let parquet = dir.join(format!("t{threads}.parquet"));
        let out = fb(&[
            "export",
            "-q",
            "--threads",
            threads,
            p(&logs),
            "-o",
            p(&parquet),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        assert_eq!(
            rows(&parquet_batches(&parquet)),
            want,
            "parquet, {threads} threads"
        );
    }
    // An Arrow stream on standard output.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_fb"))
        .args(["export", "-q", p(&logs), "-o", "-"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let batches: Vec<RecordBatch> =
        arrow_ipc::reader::StreamReader::try_new(std::io::Cursor::new(out.stdout), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    assert_eq!(rows(&batches), want, "stream");
}

#[test]
fn export_keeps_an_existing_file_unless_forced() {
    let dir = scratch_dir("export-force");
    let target = dir.join("out.parquet");
    std::fs::write(&target, "keep me").unwrap();
    let log = data("valid_joined_logs/cb_simple.log");
    let out = fb(&["export", p(&log), "-o", p(&target)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("--force"), "{}", out.stderr);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep me");
    let out = fb(&["export", "--force", p(&log), "-o", p(&target)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(std::fs::read(&target).unwrap().starts_with(b"PAR1"));
    // An input is never the output, forced or not.
    let out = fb(&["export", "--force", p(&target), "-o", p(&target)]);
    assert_eq!(out.code, 2);
    assert!(out.stderr.contains("is also an input"), "{}", out.stderr);
}

#[test]
fn a_partitioned_export_is_a_hive_tree_of_every_row() {
    use arrow_array::cast::AsArray;
    use arrow_array::types::TimestampMicrosecondType;
    let dir = scratch_dir("export-partitioned");
    let logs = data("valid_joined_logs");
    let want = lines_of(p(&logs));
    for by in ["date", "hour"] {
        let out_dir = dir.join(by);
        let out = fb(&[
            "export",
            "-q",
            "--partition-by",
            by,
            p(&logs),
            "-o",
            p(&out_dir),
        ]);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let mut total = 0;
        let mut parts = 0;
        for day in std::fs::read_dir(&out_dir).unwrap() {
            let day = day.unwrap().path();
            let date = day.file_name().unwrap().to_string_lossy().into_owned();
            assert!(date.starts_with("date="), "{date}");
            let leaves: Vec<std::path::PathBuf> = if by == "hour" {
                std::fs::read_dir(&day)
                    .unwrap()
                    .map(|h| h.unwrap().path())
                    .collect()
            } else {
                vec![day.clone()]
            };
            for leaf in leaves {
                parts += 1;
                for batch in parquet_batches(&leaf.join("part-00000.parquet")) {
                    total += batch.num_rows();
                    let ts = batch
                        .column_by_name("timestamp")
                        .unwrap()
                        .as_primitive::<TimestampMicrosecondType>();
                    for &t in ts.values() {
                        // Every row's day is its directory's.
                        let days = t.div_euclid(86_400_000_000);
                        let first = data_day(&date[5..]);
                        assert_eq!(days, first, "{by}: {leaf:?}");
                    }
                }
            }
        }
        assert!(parts > 1, "{by}: {parts} partitions");
        assert_eq!(total, want, "{by}");
    }
}

/// Days since 1970 of `YYYY-MM-DD`.
fn data_day(date: &str) -> i64 {
    let mut it = date.split('-').map(|x| x.parse::<i64>().unwrap());
    let (y, m, d) = (it.next().unwrap(), it.next().unwrap(), it.next().unwrap());
    fb_schema::calendar::days_from_civil(y, m as u32, d as u32)
}

/// `--columns` writes those columns of the full export, in that order,
/// in each format; a wrong name is a usage error that lists the columns.
#[test]
fn export_columns_are_the_full_exports_columns() {
    let dir = scratch_dir("export-columns");
    let logs = data("valid_joined_logs");
    let full = dir.join("full.arrow");
    let out = fb(&[
        "export",
        "-q",
        "--format",
        "arrow",
        p(&logs),
        "-o",
        p(&full),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let full = one_batch(&arrow_batches(&full));
    let schema = full.schema();
    let at = |n: &str| schema.index_of(n).unwrap();
    let want = full
        .project(&[at("reward"), at("event_id"), at("outcomes")])
        .unwrap();

    let narrow = dir.join("narrow.arrow");
    let out = fb(&[
        "export",
        "-q",
        "--format",
        "arrow",
        "--columns",
        "reward,event_id,outcomes",
        p(&logs),
        "-o",
        p(&narrow),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(one_batch(&arrow_batches(&narrow)), want);

    let parquet = dir.join("narrow.parquet");
    let out = fb(&[
        "export",
        "-q",
        "--columns",
        "reward,event_id,outcomes",
        p(&logs),
        "-o",
        p(&parquet),
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let got = one_batch(&parquet_batches(&parquet));
    assert_eq!(got.columns(), want.columns());

    struct Case {
        name: &'static str,
        args: &'static [&'static str],
        says: &'static str,
    }
    let cases = [
        Case {
            name: "unknown column",
            args: &["--columns", "reward,rewards"],
            says: "no column `rewards`; the columns are event_id",
        },
        Case {
            name: "twice",
            args: &["--columns", "reward,reward"],
            says: "column `reward` chosen twice",
        },
        Case {
            name: "partitions without their timestamp",
            args: &["--columns", "reward", "--partition-by", "date"],
            says: "add `timestamp` to --columns",
        },
    ];
    for case in cases {
        let bad = dir.join(format!("{}.out", case.name.replace(' ', "-")));
        let mut args = vec!["export", "-q"];
        args.extend_from_slice(case.args);
        args.extend_from_slice(&[p(&logs), "-o", p(&bad)]);
        let out = fb(&args);
        assert_eq!(out.code, 2, "{}: {}", case.name, out.stderr);
        assert!(
            out.stderr.contains(case.says),
            "{}: {}",
            case.name,
            out.stderr
        );
        assert!(!bad.exists(), "{}: nothing written", case.name);
    }
}
