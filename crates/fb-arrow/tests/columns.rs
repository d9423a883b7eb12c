//! A choice of columns gives exactly those columns of the full export,
//! in the order asked for, for every log shape, thread count and writer.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use arrow_array::RecordBatch;
use fb_arrow::{ArrowSink, Columns, IpcFile, ParquetFile};
use fb_join::{Options, Pipeline, Source};

/// The valid corpus logs and the multistep ones, each with its options.
fn logs() -> Vec<(String, Vec<u8>, Options)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let mut out = Vec::new();
    for dir in [
        "valid_joined_logs",
        "skip_learn/ccb",
        "skip_learn/slates",
        "skip_learn/ca",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                continue;
            }
            let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
            let opts = Options::default().multistep(name.contains("multistep"));
            out.push((name, std::fs::read(&path).unwrap(), opts));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn ipc(log: &[u8], opts: &Options, columns: Columns, threads: usize) -> RecordBatch {
    let schema = columns.schema();
    let sink =
        ArrowSink::new(IpcFile::with_schema(Vec::new(), &schema).unwrap(), 5).with_columns(columns);
    let mut p = Pipeline::new(opts.clone(), |_: &_| true, sink, threads);
    let _ = p.feed(
        Source::Slice(log),
        fb_format::Position::START,
        &|| false,
        &mut |_| {},
    );
    let bytes = p.finish().1.finish().unwrap();
    let batches: Vec<RecordBatch> =
        arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}

fn parquet(log: &[u8], opts: &Options, columns: Columns) -> RecordBatch {
    let schema = columns.schema();
    let out = ParquetFile::with_schema(Vec::new(), 7, 1 << 20, schema.clone()).unwrap();
    let sink = ArrowSink::new(out, 3).with_columns(columns);
    let mut p = Pipeline::new(opts.clone(), |_: &_| true, sink, 2);
    let _ = p.feed(
        Source::Slice(log),
        fb_format::Position::START,
        &|| false,
        &mut |_| {},
    );
    let bytes = bytes::Bytes::from(p.finish().1.finish().unwrap());
    let batches: Vec<RecordBatch> =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes)
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    arrow_select::concat::concat_batches(&schema, &batches).unwrap()
}

#[test]
fn chosen_columns_are_the_full_exports_columns() {
    let choices: &[(&str, &[&str])] = &[
        ("a number alone", &["reward"]),
        ("text, reordered", &["context", "event_id"]),
        (
            "the decision's columns",
            &["slots", "actions", "ca_action", "baseline_actions"],
        ),
        ("one column of the decision", &["pdf_value"]),
        (
            "outcomes and the episode",
            &["episode_id", "outcomes", "timestamp"],
        ),
        (
            "everything but the context",
            &[
                "event_id",
                "timestamp",
                "client_time",
                "problem_type",
                "learning_mode",
                "model_id",
                "deferred",
                "skip_learn",
                "pass_probability",
                "reward",
                "original_reward",
                "actions",
                "probabilities",
                "chosen_action",
                "outcomes",
                "slots",
                "baseline_actions",
                "ca_action",
                "pdf_value",
                "episode_id",
            ],
        ),
    ];
    let mut rows = 0;
    for (name, log, opts) in logs() {
        let full = ipc(&log, &opts, Columns::all(), 1);
        rows += full.num_rows();
        for (what, names) in choices {
            let columns = Columns::named(names).unwrap();
            let want = full.project(&indexes(names)).unwrap();
            for threads in [1, 2] {
                let got = ipc(&log, &opts, columns.clone(), threads);
                assert_eq!(got, want, "{name}: {what}, {threads} threads");
            }
            let got = parquet(&log, &opts, columns.clone());
            assert_eq!(got.columns(), want.columns(), "{name}: {what}, parquet");
        }
    }
    assert!(rows > 300, "{rows} rows compared");
}

fn indexes(names: &[&str]) -> Vec<usize> {
    let schema = fb_arrow::schema();
    names.iter().map(|n| schema.index_of(n).unwrap()).collect()
}
