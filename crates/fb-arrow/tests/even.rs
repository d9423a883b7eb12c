//! An export is the same file, byte for byte, for any number of threads
//! and any way of feeding the same rows: record batches of exactly
//! `batch_rows` rows (the last fewer), Parquet row groups that end at the
//! same rows.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use arrow_array::RecordBatch;
use fb_arrow::{ArrowSink, BatchWriter, IpcEncoding, IpcFile, ParquetFile, Pieces};
use fb_join::{Options, Pipeline, Source};
use fb_writer::synth::{generate, GenConfig, Limit, Problem};

fn generated(problem: Problem, events: u64, per_message: usize, seed: u64) -> Vec<u8> {
    let config = GenConfig {
        problem,
        limit: Limit::Events(events),
        events_per_message: per_message,
        seed,
        ..GenConfig::default()
    };
    let mut bytes = Vec::new();
    generate(&config, &mut bytes).expect("a generated log");
    bytes
}

/// How the inputs are fed.
#[derive(Debug, Clone, Copy)]
enum Way {
    /// Each with its own `Pipeline::feed`.
    Feeds,
    /// One session, each input a reader.
    Session,
}

/// What a pipeline on `threads` threads writes of `inputs`, fed as `way`
/// says, through `writer`, in batches of `batch_rows`.
fn export<B: BatchWriter + Send>(
    inputs: &[Vec<u8>],
    threads: usize,
    way: Way,
    writer: B,
    batch_rows: usize,
) -> B::Output {
    let sink = ArrowSink::new(writer, batch_rows);
    let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, threads);
    feed(&mut pipeline, inputs, way);
    pipeline.finish().1.finish().unwrap()
}

/// Feeds `inputs` to `pipeline` as `way` says.
fn feed<S: fb_join::Sink + Send, K: Fn(&fb_join::JoinedEvent<'_>) -> bool + Sync>(
    pipeline: &mut Pipeline<S, K>,
    inputs: &[Vec<u8>],
    way: Way,
) {
    let start = fb_format::Position::START;
    match way {
        Way::Feeds => {
            for input in inputs {
                pipeline
                    .feed(Source::Slice(input), start, &|| false, &mut |_| {})
                    .unwrap();
            }
        }
        Way::Session => {
            pipeline
                .session(|session| {
                    for input in inputs {
                        session.begin_input().unwrap();
                        let source = Source::Stream(Box::new(std::io::Cursor::new(input.clone())));
                        session.feed(source, start, &|| false, &mut |_| {}).unwrap();
                    }
                })
                .unwrap();
        }
    }
}

fn ipc_batches(file: &[u8]) -> Vec<RecordBatch> {
    arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(file), None)
        .unwrap()
        .map(|b| b.unwrap())
        .collect()
}

fn row_groups(file: Vec<u8>) -> Vec<i64> {
    use parquet::file::reader::{FileReader, SerializedFileReader};
    let reader = SerializedFileReader::new(bytes::Bytes::from(file)).unwrap();
    let groups = reader.metadata().row_groups().iter();
    groups.map(|g| g.num_rows()).collect()
}

/// The inputs of each case: larger than a worker's chunk of messages
/// (1 MiB), so that several threads hand over pieces of batches; messages
/// of one event and of many.
fn cases() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    vec![
        (
            "cb, one event a message",
            vec![generated(Problem::Cb, 6_000, 1, 1)],
        ),
        (
            "ccb, 37 events a message",
            vec![generated(Problem::Ccb, 3_000, 37, 2)],
        ),
        (
            "three logs of a folder",
            vec![
                generated(Problem::Cb, 2_500, 1, 3),
                generated(Problem::Slates, 333, 5, 4),
                generated(Problem::Ccb, 2_000, 7, 5),
            ],
        ),
    ]
}

/// How many pieces each batch reached the writer in.
#[derive(Default)]
struct PieceCount(Vec<usize>);

impl BatchWriter for PieceCount {
    type Output = Self;

    fn write(&mut self, _: &RecordBatch) -> Result<(), fb_arrow::Error> {
        self.0.push(1);
        Ok(())
    }

    fn write_pieces(&mut self, pieces: Pieces) -> Result<(), fb_arrow::Error> {
        self.0.push(pieces.count());
        Ok(())
    }

    fn finish(self) -> Result<Self, fb_arrow::Error> {
        Ok(self)
    }
}

fn ipc_file(encoding: IpcEncoding) -> IpcFile<Vec<u8>> {
    IpcFile::with_encoding(Vec::new(), &fb_arrow::schema(), encoding).unwrap()
}

/// The same IPC file at any thread count, and whether a batch's pieces
/// are written one after the other or joined first (the plain path: on
/// one thread, arrow-ipc's writer on the batches as they were built).
#[test]
fn ipc_files_are_the_same_at_any_thread_count() {
    const BATCH: usize = 1_000;
    for (name, inputs) in cases() {
        let want = export(&inputs, 1, Way::Feeds, ipc_file(IpcEncoding::Joined), BATCH);
        let batches = ipc_batches(&want);
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert!(rows > 2 * BATCH, "{name}: {rows} rows");
        let (last, whole) = batches.split_last().unwrap();
        assert!(whole.iter().all(|b| b.num_rows() == BATCH), "{name}");
        assert!(last.num_rows() <= BATCH && last.num_rows() > 0, "{name}");
        // On threads, batches reach the writer in pieces: the workers'
        // chunks end elsewhere than batches do.
        let counted = export(&inputs, 3, Way::Feeds, PieceCount::default(), BATCH);
        assert!(counted.0.iter().any(|n| *n > 1), "{name}: {:?}", counted.0);
        for encoding in [IpcEncoding::Pieces, IpcEncoding::Joined] {
            for threads in [1, 2, 3] {
                for way in [Way::Feeds, Way::Session] {
                    let got = export(&inputs, threads, way, ipc_file(encoding), BATCH);
                    assert!(
                        got == want,
                        "{name}: {encoding:?}, {threads} threads, {way:?}"
                    );
                }
            }
        }
    }
}

/// The same Parquet file, row groups ending at the same rows, at any
/// thread count: arrow-rs' writer on the batches joined from their pieces
/// (the plain path), or lanes that each join their own columns.
#[test]
fn parquet_row_groups_end_at_the_same_rows_at_any_thread_count() {
    const BATCH: usize = 500;
    // Row groups end on bytes long before rows; on lanes, or not.
    let writer = |lanes: usize| {
        ParquetFile::with_limits(Vec::new(), 1 << 20, 300 << 10)
            .and_then(|w| w.encoding_threads(lanes))
            .unwrap()
    };
    for (name, inputs) in cases() {
        let want = export(&inputs, 1, Way::Feeds, writer(1), BATCH);
        let groups = row_groups(want.clone());
        assert!(groups.len() > 2, "{name}: {groups:?}");
        let last = groups.last().unwrap();
        assert!(groups
            .iter()
            .all(|n| (*n as usize).is_multiple_of(BATCH) || n == last));
        for lanes in [1, 2] {
            for threads in [1, 2, 3] {
                for way in [Way::Feeds, Way::Session] {
                    let got = export(&inputs, threads, way, writer(lanes), BATCH);
                    let what = format!("{name}: {lanes} lanes, {threads} threads, {way:?}");
                    assert_eq!(row_groups(got.clone()), groups, "{what}");
                    assert!(got == want, "{what}");
                }
            }
        }
    }
}

/// Row groups that end inside a batch of pieces (rows, not bytes): the
/// lanes get that batch joined and cut, as arrow-rs' writer does.
#[test]
fn parquet_row_groups_cut_inside_a_batch_of_pieces() {
    const BATCH: usize = 500;
    let writer = |lanes: usize| {
        ParquetFile::with_limits(Vec::new(), 1_234, 1 << 30)
            .and_then(|w| w.encoding_threads(lanes))
            .unwrap()
    };
    let inputs = vec![generated(Problem::Ccb, 3_000, 37, 2)];
    let want = export(&inputs, 1, Way::Feeds, writer(1), BATCH);
    let groups = row_groups(want.clone());
    assert!(groups.len() > 2 && groups[0] == 1_234, "{groups:?}");
    for threads in [2, 3] {
        let got = export(&inputs, threads, Way::Feeds, writer(2), BATCH);
        assert!(got == want, "{threads} threads");
    }
}

/// The rows a sink says it took are the rows its writer got, however the
/// inputs end inside batches: on one thread the rows of an input short of
/// a batch are carried into the next input's, and were once counted again
/// with it (a folder of ten files exported on one thread said 11,000 rows
/// for the 2,000 it wrote).
#[test]
fn the_rows_counted_are_the_rows_written() {
    for (name, inputs) in cases() {
        for batch_rows in [1_000, 1 << 20] {
            for threads in [1, 2, 3] {
                for way in [Way::Feeds, Way::Session] {
                    let sink = ArrowSink::new(ipc_file(IpcEncoding::Pieces), batch_rows);
                    let mut pipeline =
                        Pipeline::new(Options::default(), |_: &_| true, sink, threads);
                    feed(&mut pipeline, &inputs, way);
                    let (_, sink) = pipeline.finish();
                    let counted = sink.rows();
                    let batches = ipc_batches(&sink.finish().unwrap());
                    let written: usize = batches.iter().map(RecordBatch::num_rows).sum();
                    assert!(written > 1_000, "{name}: {written} rows");
                    assert_eq!(
                        counted, written as u64,
                        "{name}: batches of {batch_rows}, {threads} threads, {way:?}"
                    );
                }
            }
        }
    }
}
