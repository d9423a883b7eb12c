//! Parquet on the fast path (lanes of threads, or none; pages packed
//! while they wait; the context's chunks written by fb) is the same file,
//! byte for byte, as arrow-rs' own writer makes on one thread with its
//! own page store (the plain twin), for any number of lanes, row-group
//! bounds and batch cuts.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use arrow_array::RecordBatch;
use fb_arrow::{BatchWriter, Columns, ParquetFile, ParquetPath};

mod common;
use common::corpus_batch;

/// One way to write a file: its row-group bounds and how its rows are
/// cut into batches.
struct Case {
    name: &'static str,
    /// Rows per row group at most.
    rows: usize,
    /// Arrow bytes per row group at most (a multiple of the corpus').
    bytes_of_corpus: f64,
    /// Batch sizes, taken in turn.
    cuts: &'static [usize],
    /// Times the corpus is written.
    repeats: usize,
    /// Only these columns (all when empty).
    columns: &'static [&'static str],
}

const CASES: &[Case] = &[
    Case {
        name: "one row group, whole batches",
        rows: 1 << 20,
        bytes_of_corpus: 100.0,
        cuts: &[1 << 20],
        repeats: 3,
        columns: &[],
    },
    Case {
        name: "row bound inside batches",
        rows: 97,
        bytes_of_corpus: 100.0,
        cuts: &[40, 1, 130],
        repeats: 4,
        columns: &[],
    },
    Case {
        name: "byte bound ends row groups",
        rows: 1 << 20,
        bytes_of_corpus: 0.7,
        cuts: &[64],
        repeats: 5,
        columns: &[],
    },
    Case {
        name: "single rows",
        rows: 50,
        bytes_of_corpus: 100.0,
        cuts: &[1],
        repeats: 1,
        columns: &[],
    },
    Case {
        name: "fewer columns than lanes",
        rows: 120,
        bytes_of_corpus: 100.0,
        cuts: &[33],
        repeats: 2,
        columns: &["event_id", "slots", "reward"],
    },
];

fn corpus_bytes(batch: &RecordBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|c| c.to_data().get_slice_memory_size().unwrap())
        .sum()
}

/// The batches of a case, cut from the corpus rows.
fn batches(case: &Case, corpus: &RecordBatch) -> Vec<RecordBatch> {
    let mut out = Vec::new();
    let mut cut = case.cuts.iter().cycle();
    for _ in 0..case.repeats {
        let mut at = 0;
        while at < corpus.num_rows() {
            let n = (*cut.next().unwrap()).min(corpus.num_rows() - at);
            out.push(corpus.slice(at, n));
            at += n;
        }
    }
    out
}

/// Writes `batches` on `threads` threads as on a machine of 16 cores:
/// past four threads the context's pages are packed on threads of their
/// own.
fn write(
    case: &Case,
    batches: &[RecordBatch],
    bytes: usize,
    threads: usize,
    path: ParquetPath,
) -> Vec<u8> {
    let schema = batches[0].schema();
    let mut file = ParquetFile::on_path(Vec::new(), case.rows, bytes, schema, path)
        .unwrap()
        .encoding_threads_on(threads, 16)
        .unwrap();
    for batch in batches {
        file.write(batch).unwrap();
    }
    file.finish().unwrap()
}

#[test]
fn lanes_write_the_plain_writers_bytes() {
    let all = corpus_batch();
    for case in CASES {
        let corpus = if case.columns.is_empty() {
            all.clone()
        } else {
            let names: Vec<String> = case.columns.iter().map(|c| c.to_string()).collect();
            let columns = Columns::named(&names).unwrap();
            let schema = columns.schema();
            let picked = schema
                .fields()
                .iter()
                .map(|f| all.column_by_name(f.name()).unwrap().clone())
                .collect();
            RecordBatch::try_new(schema, picked).unwrap()
        };
        let bytes = (corpus_bytes(&corpus) as f64 * case.bytes_of_corpus) as usize;
        let batches = batches(case, &corpus);
        let plain = write(case, &batches, bytes, 1, ParquetPath::Plain);
        let groups =
            parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(plain.clone()))
                .map(|r| parquet::file::reader::FileReader::metadata(&r).num_row_groups())
                .unwrap();
        assert!(groups >= 1, "{}: no row group", case.name);
        // 5 and 8 threads: packers, one and the most (these contexts fill
        // a page or two a row group; `text_chunk_tests.rs` packs many).
        for threads in [1, 2, 3, 5, 8] {
            let lanes = write(case, &batches, bytes, threads, ParquetPath::Fast);
            assert!(
                lanes == plain,
                "{}: {threads} lanes, pages packed, wrote {} bytes, the plain writer {} ({groups} row groups)",
                case.name,
                lanes.len(),
                plain.len()
            );
        }
    }
}

#[test]
fn the_row_bound_cuts_the_same_row_groups_on_lanes() {
    let corpus = corpus_batch();
    let case = &CASES[1];
    let batches = batches(case, &corpus);
    let file = write(case, &batches, usize::MAX, 4, ParquetPath::Fast);
    let reader =
        parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(file)).unwrap();
    let meta = parquet::file::reader::FileReader::metadata(&reader);
    let total = (corpus.num_rows() * case.repeats) as i64;
    let groups: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
    assert_eq!(groups.iter().sum::<i64>(), total);
    assert!(
        groups[..groups.len() - 1].iter().all(|&n| n == 97),
        "{groups:?}"
    );
}
