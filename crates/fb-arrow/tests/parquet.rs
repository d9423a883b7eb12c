//! Parquet files as written: row groups end at their byte bound, pages
//! are v2, and every row reads back.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_arrow::{BatchWriter, ParquetFile};
use parquet::file::reader::{FileReader, SerializedFileReader};

mod common;
use common::corpus_batch;

#[test]
fn row_groups_end_at_their_byte_bound_and_pages_are_v2() {
    let batch = corpus_batch();
    let n = batch.num_rows() * 20;
    let total: usize = batch
        .columns()
        .iter()
        .map(|c| c.to_data().get_slice_memory_size().unwrap())
        .sum();
    // Twenty batches, a row group ending at each fifth: four.
    let bound = total * 5;
    let mut writer = ParquetFile::with_limits(Vec::new(), 1 << 20, bound).unwrap();
    for _ in 0..20 {
        writer.write(&batch).unwrap();
    }
    let bytes = bytes::Bytes::from(writer.finish().unwrap());
    let reader = SerializedFileReader::new(bytes).unwrap();
    let meta = reader.metadata();
    let groups: Vec<i64> = meta.row_groups().iter().map(|g| g.num_rows()).collect();
    let one = batch.num_rows() as i64;
    assert_eq!(groups, [5 * one, 5 * one, 5 * one, 5 * one]);
    let rows: i64 = meta.row_groups().iter().map(|g| g.num_rows()).sum();
    assert_eq!(rows, n as i64);
    let group = reader.get_row_group(0).unwrap();
    let mut pages = group.get_column_page_reader(0).unwrap();
    let mut kinds = Vec::new();
    while let Some(page) = pages.get_next_page().unwrap() {
        kinds.push(page.page_type());
    }
    assert!(!kinds.is_empty());
    assert!(
        kinds
            .iter()
            .all(|k| *k == parquet::basic::PageType::DATA_PAGE_V2
                || *k == parquet::basic::PageType::DICTIONARY_PAGE),
        "{kinds:?}"
    );
}

#[test]
fn columns_are_zstd_but_the_timestamps() {
    let batch = corpus_batch();
    let mut writer = ParquetFile::new(Vec::new(), 1 << 20).unwrap();
    writer.write(&batch).unwrap();
    let bytes = bytes::Bytes::from(writer.finish().unwrap());
    let reader = SerializedFileReader::new(bytes).unwrap();
    let group = reader.metadata().row_group(0);
    let codec = |path: &str| {
        group
            .columns()
            .iter()
            .find(|c| c.column_path().string() == path)
            .map(|c| c.compression())
            .unwrap_or_else(|| panic!("no column {path}"))
    };
    let plain = parquet::basic::Compression::UNCOMPRESSED;
    for path in ["timestamp", "client_time", "outcomes.list.item.time"] {
        assert_eq!(codec(path), plain, "{path}");
    }
    for path in [
        "event_id",
        "context",
        "reward",
        "outcomes.list.item.event_id",
    ] {
        assert!(
            matches!(codec(path), parquet::basic::Compression::ZSTD(_)),
            "{path}: {:?}",
            codec(path)
        );
    }
}

/// Where statistics are: per page on the top-level columns a reader
/// filters on, per chunk only on the random ids, none on the contexts and
/// inside lists.
#[test]
fn statistics_are_where_readers_use_them() {
    let batch = corpus_batch();
    let mut writer = ParquetFile::new(Vec::new(), 1 << 20).unwrap();
    writer.write(&batch).unwrap();
    let bytes = bytes::Bytes::from(writer.finish().unwrap());
    let options = parquet::file::serialized_reader::ReadOptionsBuilder::new()
        .with_page_index()
        .build();
    let reader = SerializedFileReader::new_with_options(bytes, options).unwrap();
    let meta = reader.metadata();
    let group = meta.row_group(0);
    let column_index = meta.column_index().expect("a page index");
    let at = |path: &str| {
        group
            .columns()
            .iter()
            .position(|c| c.column_path().string() == path)
            .unwrap_or_else(|| panic!("no column {path}"))
    };
    // (column, chunk statistics, page statistics)
    let cases = [
        ("timestamp", true, true),
        ("reward", true, true),
        ("model_id", true, true),
        ("event_id", true, false),
        ("context", false, false),
        ("outcomes.list.item.event_id", false, false),
        ("outcomes.list.item.value", false, false),
        ("slots.list.item.probabilities.list.item", false, false),
        ("probabilities.list.item", false, false),
    ];
    for (path, chunk, page) in cases {
        let i = at(path);
        let stats = group.column(i).statistics();
        assert_eq!(
            stats.is_some_and(|s| s.min_bytes_opt().is_some()),
            chunk,
            "{path}: chunk statistics {stats:?}"
        );
        let pages = !matches!(
            column_index[0][i],
            parquet::file::page_index::column_index::ColumnIndexMetaData::NONE
        );
        assert_eq!(pages, page, "{path}: page statistics");
    }
}
