//! [`TextChunk`](super::TextChunk) against parquet-rs: the same file bytes
//! for every way a page can end, every value shape and every writer
//! setting it takes, and parquet-rs alone where it does not fit.

use std::sync::Arc;

use arrow_array::{Array, ArrayRef, Int64Array, RecordBatch, StringArray};
use arrow_schema::{DataType, Field, Schema, SchemaRef};
use bytes::Bytes;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::basic::{Compression, Encoding, ZstdLevel};
use parquet::file::properties::{
    EnabledStatistics, WriterProperties, WriterPropertiesBuilder, WriterVersion,
};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::schema::types::ColumnPath;

use crate::even::Pieces;
use crate::lanes::LaneWriter;
use crate::packers::{Packers, MAX_PACKERS};
use crate::text_chunk::TextChunk;

/// Writer settings, made anew for each writer.
type Props = fn() -> WriterPropertiesBuilder;

/// One input: the context values, how they are cut into batches and row
/// groups, the writer's settings, and the fewest context pages it must
/// make (so that the case reaches what its name says).
struct Case {
    name: &'static str,
    values: fn() -> Vec<String>,
    batch_rows: usize,
    row_group_rows: usize,
    props: Props,
    pages_at_least: usize,
    /// Of which stored uncompressed, as zstd saved too little.
    raw_pages_at_least: usize,
}

/// The export's settings for `context` (`writers.rs`).
fn export_like() -> WriterPropertiesBuilder {
    let context = ColumnPath::from("context");
    WriterProperties::builder()
        .set_writer_version(WriterVersion::PARQUET_2_0)
        .set_compression(Compression::ZSTD(ZstdLevel::try_new(1).unwrap()))
        .set_dictionary_enabled(false)
        .set_statistics_enabled(EnabledStatistics::Page)
        .set_column_statistics_enabled(context.clone(), EnabledStatistics::None)
        .set_column_encoding(context, Encoding::DELTA_LENGTH_BYTE_ARRAY)
}

/// JSON-like contexts of about `len` bytes that zstd packs well.
fn contexts(rows: usize, len: usize) -> Vec<String> {
    (0..rows)
        .map(|i| {
            let mut s = format!("{{\"i\":{i},\"f\":\"");
            while s.len() < len + (i * 7) % 13 {
                s.push_str("abc");
            }
            s.push_str("\"}");
            s
        })
        .collect()
}

/// Bytes zstd cannot pack (a fixed xorshift), as text.
fn noise(rows: usize, len: usize) -> Vec<String> {
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    (0..rows)
        .map(|_| {
            (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    char::from(b'!' + (x % 90) as u8)
                })
                .collect()
        })
        .collect()
}

const CASES: &[Case] = &[
    Case {
        name: "pages end on bytes",
        values: || contexts(6_000, 500),
        batch_rows: 2_500,
        row_group_rows: 1 << 20,
        props: export_like,
        pages_at_least: 2,
        raw_pages_at_least: 0,
    },
    Case {
        name: "pages end on rows",
        values: || contexts(45_000, 3),
        batch_rows: 8_192,
        row_group_rows: 1 << 20,
        props: export_like,
        pages_at_least: 3,
        raw_pages_at_least: 0,
    },
    Case {
        name: "mini-batches cut by the byte budget",
        values: || contexts(1_500, 2_000),
        batch_rows: 1_500,
        row_group_rows: 1 << 20,
        props: export_like,
        pages_at_least: 2,
        raw_pages_at_least: 0,
    },
    Case {
        name: "one value larger than a page",
        values: || {
            let mut v = contexts(10, 100);
            v.insert(4, "x".repeat(3 << 20));
            v
        },
        batch_rows: 6,
        row_group_rows: 1 << 20,
        props: export_like,
        pages_at_least: 2,
        raw_pages_at_least: 0,
    },
    Case {
        name: "incompressible pages kept raw",
        values: || noise(2_000, 700),
        batch_rows: 300,
        row_group_rows: 1 << 20,
        props: || export_like().set_data_page_v2_compression_ratio_threshold(0.5),
        pages_at_least: 2,
        raw_pages_at_least: 2,
    },
    Case {
        name: "empty texts",
        values: || vec![String::new(); 3_000],
        batch_rows: 1_000,
        row_group_rows: 1 << 20,
        props: export_like,
        pages_at_least: 1,
        raw_pages_at_least: 0,
    },
    Case {
        name: "row groups end inside batches",
        values: || contexts(5_000, 40),
        batch_rows: 333,
        row_group_rows: 1_234,
        props: export_like,
        pages_at_least: 1,
        raw_pages_at_least: 0,
    },
    Case {
        name: "lengths widen after the first page",
        values: || {
            let mut v = vec!["ab".to_string(); 300];
            v.extend(
                noise(2_000, 1)
                    .into_iter()
                    .enumerate()
                    .map(|(i, s)| s.repeat(1 + i * 37 % 900)),
            );
            v
        },
        batch_rows: 1_000,
        row_group_rows: 1 << 20,
        props: || export_like().set_data_page_row_count_limit(300),
        pages_at_least: 3,
        raw_pages_at_least: 0,
    },
    Case {
        name: "small pages, small mini-batches",
        values: || contexts(3_000, 60),
        batch_rows: 700,
        row_group_rows: 1 << 20,
        props: || {
            export_like()
                .set_data_page_size_limit(4_096)
                .set_write_batch_size(7)
        },
        pages_at_least: 20,
        raw_pages_at_least: 0,
    },
    Case {
        name: "uncompressed",
        values: || contexts(6_000, 300),
        batch_rows: 1_024,
        row_group_rows: 1 << 20,
        props: || export_like().set_compression(Compression::UNCOMPRESSED),
        pages_at_least: 2,
        raw_pages_at_least: 0,
    },
    Case {
        name: "no offset index, zstd level 3, a lower ratio threshold",
        values: || contexts(3_000, 200),
        batch_rows: 1_024,
        row_group_rows: 1 << 20,
        props: || {
            export_like()
                .set_offset_index_disabled(true)
                .set_compression(Compression::ZSTD(ZstdLevel::try_new(3).unwrap()))
                .set_data_page_v2_compression_ratio_threshold(0.05)
        },
        pages_at_least: 1,
        raw_pages_at_least: 0,
    },
];

fn schema() -> SchemaRef {
    Arc::new(Schema::new(vec![
        Field::new("n", DataType::Int64, false),
        Field::new("context", DataType::Utf8, false),
    ]))
}

/// The case's batches, each a slice of one whole batch (offsets not at 0).
fn batches(case: &Case) -> Vec<RecordBatch> {
    let values = (case.values)();
    let n = values.len();
    let whole = RecordBatch::try_new(
        schema(),
        vec![
            Arc::new(Int64Array::from_iter_values(0..n as i64)) as ArrayRef,
            Arc::new(StringArray::from(values)) as ArrayRef,
        ],
    )
    .unwrap();
    (0..n)
        .step_by(case.batch_rows)
        .map(|at| whole.slice(at, case.batch_rows.min(n - at)))
        .collect()
}

fn props(case: &Case) -> WriterProperties {
    (case.props)()
        .set_max_row_group_row_count(Some(case.row_group_rows))
        .build()
}

fn plain(case: &Case, batches: &[RecordBatch]) -> Vec<u8> {
    let mut w = ArrowWriter::try_new(Vec::new(), schema(), Some(props(case))).unwrap();
    for b in batches {
        w.write(b).unwrap();
    }
    w.into_inner().unwrap()
}

/// How the batches reach the writer.
#[derive(Debug, Clone, Copy)]
enum Handed {
    Whole,
    /// Each batch as three pieces (the lanes join the other columns;
    /// `TextChunk` writes the pieces one after another).
    Pieces,
}

fn ours(case: &Case, batches: &[RecordBatch], lanes: usize, handed: Handed) -> Vec<u8> {
    let w = ArrowWriter::try_new(Vec::new(), schema(), Some(props(case))).unwrap();
    // Packers as a machine with a core for each thread would have them.
    let packers = lanes.saturating_sub(crate::lanes::MAX_LANES);
    let rows = Some(case.row_group_rows);
    let mut w = LaneWriter::new(w, schema(), rows, lanes, packers, true).unwrap();
    assert_eq!(w.text_leaves, vec![false, true], "{}", case.name);
    assert_eq!(
        w.packer_threads(),
        packers.min(MAX_PACKERS),
        "{}, {lanes} lanes",
        case.name
    );
    for b in batches {
        let rows = b.num_rows();
        match handed {
            Handed::Pieces if w.in_progress_rows() + rows <= case.row_group_rows => {
                let (a, c) = (rows / 3, rows - rows / 2);
                let pieces = vec![b.slice(0, a), b.slice(a, c - a), b.slice(c, rows - c)];
                w.write_pieces(Pieces::whole(pieces), rows).unwrap();
            }
            _ => w.write(b).unwrap(),
        }
    }
    w.into_inner().unwrap()
}

/// Context pages of the file, and those of them stored uncompressed.
fn context_pages(file: &[u8]) -> (usize, usize) {
    let reader = SerializedFileReader::new(Bytes::from(file.to_vec())).unwrap();
    let mut pages = (0, 0);
    for g in 0..reader.metadata().num_row_groups() {
        let group = reader.get_row_group(g).unwrap();
        for page in group.get_column_page_reader(1).unwrap() {
            pages.0 += 1;
            if let parquet::column::page::Page::DataPageV2 {
                is_compressed: false,
                ..
            } = page.unwrap()
            {
                pages.1 += 1;
            }
        }
    }
    pages
}

#[test]
fn text_chunks_write_parquet_rs_bytes() {
    for case in CASES {
        let batches = batches(case);
        let want = plain(case, &batches);
        let (pages, raw) = context_pages(&want);
        assert!(
            pages >= case.pages_at_least && raw >= case.raw_pages_at_least,
            "{}: {pages} context pages, {raw} raw; the case wants {} and {} at least",
            case.name,
            case.pages_at_least,
            case.raw_pages_at_least
        );
        for (lanes, handed) in [
            (0, Handed::Whole),
            (2, Handed::Whole),
            (0, Handed::Pieces),
            (2, Handed::Pieces),
            // With packers: 5 threads make one, 16 the most.
            (5, Handed::Whole),
            (16, Handed::Whole),
            (16, Handed::Pieces),
        ] {
            let got = ours(case, &batches, lanes, handed);
            assert!(
                got == want,
                "{}, {lanes} lanes, {handed:?}: {} bytes against parquet-rs' {}",
                case.name,
                got.len(),
                want.len()
            );
        }
        // And the values read back (the bytes above are parquet-rs').
        let read: Vec<String> = ParquetRecordBatchReaderBuilder::try_new(Bytes::from(want))
            .unwrap()
            .build()
            .unwrap()
            .flat_map(|b| {
                let b = b.unwrap();
                let texts = b
                    .column(1)
                    .as_any()
                    .downcast_ref::<StringArray>()
                    .unwrap()
                    .clone();
                (0..texts.len()).map(move |i| texts.value(i).to_string())
            })
            .collect();
        assert_eq!(read, (case.values)(), "{}", case.name);
    }
}

#[test]
fn columns_it_does_not_fit_stay_with_parquet_rs() {
    let cases: &[(&str, Props)] = &[
        ("statistics", || {
            export_like().set_column_statistics_enabled("context".into(), EnabledStatistics::Chunk)
        }),
        ("dictionary", || {
            export_like().set_column_dictionary_enabled("context".into(), true)
        }),
        ("another encoding", || {
            export_like().set_column_encoding("context".into(), Encoding::PLAIN)
        }),
        ("data pages v1", || {
            export_like().set_writer_version(WriterVersion::PARQUET_1_0)
        }),
        ("another codec", || {
            export_like()
                .set_compression(Compression::UNCOMPRESSED)
                .set_column_compression("context".into(), Compression::GZIP(Default::default()))
        }),
        ("a bloom filter", || {
            export_like().set_column_bloom_filter_enabled("context".into(), true)
        }),
    ];
    let parquet_schema = parquet::arrow::ArrowSchemaConverter::new()
        .convert(&schema())
        .unwrap();
    let schema = schema();
    let text = schema.field(1);
    let descr = parquet_schema.column(1);
    for (name, props) in cases {
        assert!(
            !super::TextChunk::fits(text, &descr, &props().build()),
            "{name}"
        );
    }
    assert!(
        super::TextChunk::fits(text, &descr, &export_like().build()),
        "the export's settings"
    );
    // Not a required top-level text: the number column, a nullable text.
    let numbers = parquet_schema.column(0);
    assert!(!super::TextChunk::fits(
        schema.field(0),
        &numbers,
        &export_like().build()
    ));
    let nullable = text.clone().with_nullable(true);
    assert!(!super::TextChunk::fits(
        &nullable,
        &descr,
        &export_like().build()
    ));
}

/// A chunk whose packers stop taking pages, or drop one they took, ends
/// with an error instead of waiting for pages that never come back.
#[test]
fn pages_lost_by_packers_are_an_error() {
    type MakePackers = fn() -> Arc<Packers>;
    let cases: [(&str, MakePackers); 2] = [
        ("no packer takes pages", Packers::stopped),
        ("a packer drops the pages it takes", Packers::dropping),
    ];
    let case = &CASES[0];
    let batches = batches(case);
    let props = props(case);
    let descr = parquet::arrow::ArrowSchemaConverter::new()
        .convert(&schema())
        .unwrap()
        .column(1);
    for (name, packers) in cases {
        let mut chunk = TextChunk::new(descr.clone(), &props, 0, Some(packers())).unwrap();
        let wrote = batches
            .iter()
            .try_for_each(|b| chunk.write(std::slice::from_ref(b.column(1))));
        let err = match wrote {
            Err(e) => e,
            Ok(()) => match chunk.close() {
                Err(e) => e,
                Ok(_) => panic!("{name}: the chunk closed without its pages"),
            },
        };
        assert!(
            err.to_string().contains("compression thread stopped"),
            "{name}: {err}"
        );
    }
}
