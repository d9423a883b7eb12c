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
        let file = std::fs::File::open(&arrow).unwrap();
        let batches: Vec<RecordBatch> = arrow_ipc::reader::FileReader::try_new(file, None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
        assert_eq!(rows(&batches), want, "arrow, {threads} threads");

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
        let bytes = bytes::Bytes::from(std::fs::read(&parquet).unwrap());
        let batches: Vec<RecordBatch> =
            parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
                .unwrap()
                .build()
                .unwrap()
                .map(|b| b.unwrap())
                .collect();
        assert_eq!(rows(&batches), want, "parquet, {threads} threads");
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
