//! Where finished batches go, and Parquet files with bounded row groups
//! (Arrow IPC files and streams are in `ipc.rs`).

use std::io::Write;
use std::sync::Arc;

use arrow_array::RecordBatch;
use parquet::column::page_store::{InMemoryPageStoreFactory, PageStoreFactory};

use crate::error::Error;
use crate::even::Pieces;
use crate::lanes::LaneWriter;
use crate::page_store::PackedPagesFactory;
use crate::row_bytes::{arrow_bytes, pieces_bytes};
use crate::schema::schema;

/// Where finished batches go.
pub trait BatchWriter {
    /// What finishing gives back (the output).
    type Output;

    /// Writes one batch.
    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error>;

    /// Writes the rows of `pieces` as one batch: joined (copied) here by
    /// default; a writer on a thread of its own ([`crate::Offload`])
    /// joins them there.
    fn write_pieces(&mut self, pieces: Pieces) -> Result<(), Error> {
        self.write(&pieces.join()?)
    }

    /// Writes what closes the file (footer, end of stream) and gives the
    /// output back.
    fn finish(self) -> Result<Self::Output, Error>;
}

/// A Parquet file: data pages v2, zstd at level 1 (on the 200 MiB CB
/// bench log, level 3 made a 16.0 MB file in 0.64 s, level 1 19.4 MB in
/// 0.48 s), row groups of at most `row_group` rows and
/// [`ROW_GROUP_BYTES`], statistics per page, dictionaries where columns
/// repeat.
pub struct ParquetFile<W: Write + Send> {
    writer: Encoder<W>,
    /// Rows at most in a row group.
    rows: usize,
    /// The batches' schema.
    schema: arrow_schema::SchemaRef,
    /// Arrow bytes of the rows in the open row group.
    pending: usize,
    /// Where a row group ends, in Arrow bytes.
    bytes: usize,
}

/// Where a row group ends, in bytes of the Arrow rows written into it:
/// the bound on a Parquet export's memory, whatever the input's size.
/// Counted before encoding because what waits for the row group to be
/// written is not the packed bytes alone: arrow-rs' own page store keeps
/// each v2 page in a buffer reserved to its uncompressed size
/// (on [`ParquetPath::Plain`]; the fast path copies it out,
/// `page_store.rs`).
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// The zstd level of Parquet column chunks. A Parquet file does not record
/// it (a reader sees only "ZSTD"), so the bench's compressor-alone
/// measurement (`examples/parquet_compressor.rs`) takes it from here.
pub const PARQUET_ZSTD_LEVEL: i32 = 1;

/// Text columns whose values repeat (a few distinct per file): the only
/// ones with dictionaries. Elsewhere zstd does the work of a dictionary
/// for less: dictionaries on every column cost more instructions than the
/// bytes they saved were worth (bench/NOTES.md).
const REPEATED: &[&[&str]] = &[
    &["problem_type"],
    &["learning_mode"],
    &["model_id"],
    &["episode_id"],
    &["slots", "list", "item", "id"],
    &["outcomes", "list", "item", "literal"],
    &["outcomes", "list", "item", "index_id"],
];

/// Long or unique texts: lengths delta-encoded, bytes as they are (the v2
/// default, prefix deltas, compares every value with the one before, for
/// nothing on such texts).
const PLAIN_TEXT: &[&[&str]] = &[
    &["event_id"],
    &["context"],
    &["outcomes", "list", "item", "event_id"],
];

/// The values inside lists: no statistics. A page's bounds on a list's
/// elements (a slot's probabilities, an outcome's value) let no reader
/// skip a page, and working them out took a twentieth of a CCB export's
/// instructions (bench/NOTES.md).
const LIST_LEAVES: &[&[&str]] = &[
    &["actions", "list", "item"],
    &["probabilities", "list", "item"],
    &["baseline_actions", "list", "item"],
    &["outcomes", "list", "item", "value"],
    &["outcomes", "list", "item", "literal"],
    &["outcomes", "list", "item", "index"],
    &["outcomes", "list", "item", "index_id"],
    &["outcomes", "list", "item", "event_id"],
    &["outcomes", "list", "item", "action_taken"],
    &["outcomes", "list", "item", "time"],
    &["slots", "list", "item", "id"],
    &["slots", "list", "item", "actions", "list", "item"],
    &["slots", "list", "item", "probabilities", "list", "item"],
    &["slots", "list", "item", "reward"],
    &["slots", "list", "item", "original_reward"],
];

/// Times: v2 pages hold them as deltas bit-packed, which leaves zstd
/// nothing to find: compressing them again costs time for no bytes
/// (bench/NOTES.md).
const DELTA_PACKED: &[&[&str]] = &[
    &["timestamp"],
    &["client_time"],
    &["outcomes", "list", "item", "time"],
];

impl<W: Write + Send> ParquetFile<W> {
    /// Starts a file on `out`, row groups of at most `row_group` rows and
    /// [`ROW_GROUP_BYTES`].
    pub fn new(out: W, row_group: usize) -> Result<Self, Error> {
        Self::with_limits(out, row_group, ROW_GROUP_BYTES)
    }

    /// Starts a file on `out`, row groups of at most `rows` rows and
    /// `bytes` bytes of Arrow rows.
    pub fn with_limits(out: W, rows: usize, bytes: usize) -> Result<Self, Error> {
        Self::with_schema(out, rows, bytes, schema())
    }

    /// As [`ParquetFile::with_limits`], for batches of `schema` (see
    /// [`Columns`](crate::Columns)).
    pub fn with_schema(
        out: W,
        rows: usize,
        bytes: usize,
        schema: arrow_schema::SchemaRef,
    ) -> Result<Self, Error> {
        Self::on_path(out, rows, bytes, schema, ParquetPath::Fast)
    }

    /// As [`ParquetFile::with_schema`], encoded on `path` (the same bytes
    /// either way).
    pub fn on_path(
        out: W,
        rows: usize,
        bytes: usize,
        schema: arrow_schema::SchemaRef,
        path: ParquetPath,
    ) -> Result<Self, Error> {
        use parquet::arrow::arrow_writer::ArrowWriterOptions;
        use parquet::basic::{Compression, Encoding, ZstdLevel};
        use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
        use parquet::schema::types::ColumnPath;
        let col_path =
            |parts: &[&str]| ColumnPath::new(parts.iter().map(|p| p.to_string()).collect());
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(PARQUET_ZSTD_LEVEL)?))
            .set_max_row_group_row_count(Some(rows.max(1)))
            // Data pages v2: levels stay out of the compressed block and
            // a page is copied once less; on the 1 GiB CB bench log the
            // export takes 1.64 s against 1.86 s. Every reader we test
            // takes them (pyarrow, DuckDB, Polars, pandas, Spark).
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_dictionary_enabled(false)
            // The minimum and maximum of JSON texts select nothing.
            .set_column_statistics_enabled(col_path(&["context"]), EnabledStatistics::None);
        for column in REPEATED {
            props = props.set_column_dictionary_enabled(col_path(column), true);
        }
        for column in PLAIN_TEXT {
            props = props.set_column_encoding(col_path(column), Encoding::DELTA_LENGTH_BYTE_ARRAY);
        }
        // Random ids: page bounds would skip no page; the column chunk's
        // are kept (they tell a file's range for an id lookup).
        props =
            props.set_column_statistics_enabled(col_path(&["event_id"]), EnabledStatistics::Chunk);
        for column in LIST_LEAVES {
            props = props.set_column_statistics_enabled(col_path(column), EnabledStatistics::None);
        }
        for column in DELTA_PACKED {
            props = props.set_column_compression(col_path(column), Compression::UNCOMPRESSED);
        }
        let writer = parquet::arrow::ArrowWriter::try_new_with_options(
            out,
            schema.clone(),
            ArrowWriterOptions::new()
                .with_properties(props.build())
                .with_page_store_factory(path.page_store()),
        )?;
        let writer = match path {
            // The caller's thread, with fewer copies of the text columns.
            ParquetPath::Fast => Encoder::Lanes(LaneWriter::new(
                writer,
                schema.clone(),
                Some(rows.max(1)),
                0,
                0,
                true,
            )?),
            ParquetPath::Plain => Encoder::Plain(writer),
        };
        Ok(Self {
            writer,
            schema,
            rows: rows.max(1),
            pending: 0,
            bytes,
        })
    }

    /// Encodes the columns on `threads` threads when more than one (see
    /// `lanes.rs`), with threads that compress the text columns' pages
    /// where the machine has cores the lanes leave (`packers.rs`); the
    /// file is the same bytes for any number. Call before the first batch.
    pub fn encoding_threads(self, threads: usize) -> Result<Self, Error> {
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        self.encoding_threads_on(threads, cores)
    }

    /// As [`ParquetFile::encoding_threads`] on a machine of `cores` cores,
    /// which decides whether the text columns' pages are compressed on
    /// threads of their own (the same bytes either way).
    pub fn encoding_threads_on(self, threads: usize, cores: usize) -> Result<Self, Error> {
        let lanes = lanes_for(threads);
        self.encoders(lanes, crate::lanes::packers_for(lanes, cores))
    }

    /// As [`ParquetFile::encoding_threads_on`], the text columns' packers
    /// started only once the file's first row group is written: a file of
    /// one row group (an hour's partition of a busy log) has too few
    /// pages to share, and starting and joining their threads for each
    /// such file cost a 16-thread export by hour a fifth of its time
    /// (bench/NOTES.md). The same bytes either way.
    pub fn encoding_threads_packed_later(
        self,
        threads: usize,
        cores: usize,
    ) -> Result<Self, Error> {
        let lanes = lanes_for(threads);
        let later = crate::lanes::packers_for(lanes, cores);
        let mut file = self.encoders(lanes, 0)?;
        if let Encoder::Lanes(writer) = &mut file.writer {
            writer.packers_later(later);
        }
        Ok(file)
    }

    /// Row groups written to the file so far (not the one in progress).
    pub fn row_groups_written(&self) -> usize {
        match &self.writer {
            Encoder::Plain(w) => w.flushed_row_groups().len(),
            Encoder::Lanes(w) => w.row_groups_written(),
        }
    }

    /// Threads compressing the text columns' pages now.
    #[cfg(test)]
    pub(crate) fn packer_threads(&self) -> usize {
        match &self.writer {
            Encoder::Lanes(w) => w.packer_threads(),
            Encoder::Plain(_) => 0,
        }
    }

    /// Encodes on `lanes` lanes (none: the caller's thread) with
    /// `packers` packers.
    fn encoders(self, lanes: usize, packers: usize) -> Result<Self, Error> {
        let writer = match self.writer {
            Encoder::Lanes(mut writer) => {
                writer.set_lanes(lanes, packers);
                Encoder::Lanes(writer)
            }
            Encoder::Plain(writer) if lanes == 0 || writer.in_progress_rows() > 0 => {
                Encoder::Plain(writer)
            }
            // The plain path on lanes: arrow-rs' column writers only.
            Encoder::Plain(writer) => Encoder::Lanes(LaneWriter::new(
                writer,
                self.schema.clone(),
                Some(self.rows),
                lanes,
                0,
                false,
            )?),
        };
        Ok(Self { writer, ..self })
    }
}

/// Lanes for `threads` encoding threads: none (the caller's thread) for
/// one.
fn lanes_for(threads: usize) -> usize {
    if threads < 2 {
        0
    } else {
        threads
    }
}

/// Which code writes a Parquet file: the same bytes either way, which
/// `tests/lanes.rs` checks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ParquetPath {
    /// A row group's pages packed into buffers of their own size while
    /// they wait (`page_store.rs`), and required UTF-8 columns (the
    /// `context`) written with fewer copies (`text_chunk.rs`).
    #[default]
    Fast,
    /// arrow-rs' writer alone, with its own page store
    /// (`fb export --no-caches`).
    Plain,
}

impl ParquetPath {
    /// Where arrow-rs' writer keeps a row group's pages on this path.
    fn page_store(self) -> Arc<dyn PageStoreFactory> {
        match self {
            Self::Fast => Arc::new(PackedPagesFactory),
            Self::Plain => Arc::new(InMemoryPageStoreFactory),
        }
    }
}

/// What encodes a Parquet file's columns: arrow-rs' writer on the
/// caller's thread (the plain path), or lanes of threads.
enum Encoder<W: Write + Send> {
    Plain(parquet::arrow::ArrowWriter<W>),
    Lanes(LaneWriter<W>),
}

impl<W: Write + Send> Encoder<W> {
    fn in_progress_rows(&self) -> usize {
        match self {
            Self::Plain(w) => w.in_progress_rows(),
            Self::Lanes(w) => w.in_progress_rows(),
        }
    }

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        match self {
            Self::Plain(w) => w.write(batch)?,
            Self::Lanes(w) => w.write(batch)?,
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<(), Error> {
        match self {
            Self::Plain(w) => w.flush()?,
            Self::Lanes(w) => w.flush()?,
        }
        Ok(())
    }

    fn into_inner(self) -> Result<W, Error> {
        Ok(match self {
            Self::Plain(w) => w.into_inner()?,
            Self::Lanes(w) => w.into_inner()?,
        })
    }
}

impl<W: Write + Send> ParquetFile<W> {
    /// Bytes of the rows in the row group in progress (as
    /// [`ROW_GROUP_BYTES`] counts them): about what the file holds until
    /// it is written.
    pub fn pending_bytes(&self) -> usize {
        self.pending
    }

    /// Counts `bytes` of rows written after `before` rows were in
    /// progress, and ends the row group at [`ROW_GROUP_BYTES`].
    fn written(&mut self, before: usize, rows: usize, bytes: usize) -> Result<(), Error> {
        if self.writer.in_progress_rows() < before + rows {
            // The writer ended a row group on its own bounds.
            self.pending = 0;
        }
        self.pending += bytes;
        if self.pending >= self.bytes {
            self.writer.flush()?;
            self.pending = 0;
        }
        Ok(())
    }
}

impl<W: Write + Send> BatchWriter for ParquetFile<W> {
    type Output = W;

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        let before = self.writer.in_progress_rows();
        self.writer.write(batch)?;
        self.written(before, batch.num_rows(), arrow_bytes(batch))
    }

    /// On lanes, each lane joins its own columns of the pieces (the same
    /// columns, so the same file); arrow-rs' writer, and a batch that
    /// crosses the end of a row group, get the pieces joined here.
    fn write_pieces(&mut self, pieces: Pieces) -> Result<(), Error> {
        let Encoder::Lanes(lanes) = &mut self.writer else {
            return self.write(&pieces.join()?);
        };
        let rows = pieces.num_rows();
        let before = lanes.in_progress_rows();
        if before + rows > self.rows {
            return self.write(&pieces.join()?);
        }
        let bytes = pieces_bytes(pieces.batches());
        lanes.write_pieces(pieces, rows)?;
        self.written(before, rows, bytes)
    }

    fn finish(self) -> Result<W, Error> {
        self.writer.into_inner()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) mod tests {
    use super::*;

    /// Rows `from..from + n` an hour apart from `hour` (since 1970), with
    /// a required text named `context`, which packers compress (the
    /// export's own field names).
    pub(crate) fn timed_rows(hour: i64, from: i64, n: i64) -> RecordBatch {
        use arrow_array::{ArrayRef, StringArray, TimestampMicrosecondArray};
        use arrow_schema::{DataType, Field, Schema, TimeUnit};
        let utc = DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()));
        let schema = Schema::new(vec![
            Field::new("timestamp", utc, false),
            Field::new("context", DataType::Utf8, false),
        ]);
        let ids: Vec<i64> = (from..from + n).collect();
        let times = ids.iter().map(|i| hour * 3_600_000_000 + i);
        let texts = ids.iter().map(|i| format!("{{\"row\":{i}}}"));
        let columns: Vec<ArrayRef> = vec![
            std::sync::Arc::new(
                TimestampMicrosecondArray::from_iter_values(times).with_timezone("UTC"),
            ),
            std::sync::Arc::new(StringArray::from_iter_values(texts)),
        ];
        RecordBatch::try_new(std::sync::Arc::new(schema), columns).unwrap()
    }

    /// Packers held back start once the first row group is written (not
    /// while it is open), as many as the threads and cores give.
    #[test]
    fn packers_held_back_start_after_the_first_row_group() {
        let cases = [
            // (name, threads, cores, packers after the first row group)
            ("16 cores", 8, 16, 3),
            ("2 cores", 8, 2, 0),
            ("one thread", 1, 16, 0),
        ];
        for (name, threads, cores, want) in cases {
            let schema = timed_rows(0, 0, 1).schema();
            let mut file = ParquetFile::with_schema(Vec::new(), 100, ROW_GROUP_BYTES, schema)
                .unwrap()
                .encoding_threads_packed_later(threads, cores)
                .unwrap();
            file.write(&timed_rows(0, 0, 60)).unwrap();
            assert_eq!(file.packer_threads(), 0, "{name}: first row group");
            assert_eq!(file.row_groups_written(), 0, "{name}");
            // Rows 60..120: the first row group ends at 100.
            file.write(&timed_rows(0, 60, 60)).unwrap();
            assert_eq!(file.row_groups_written(), 1, "{name}");
            assert_eq!(file.packer_threads(), want, "{name}: after the first");
            file.finish().unwrap();
        }
    }
}
