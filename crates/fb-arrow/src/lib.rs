//! Joined events of Vowpal Wabbit joined logs as Arrow record batches, in
//! one documented [`schema`], and their export to Arrow IPC and Parquet.
//!
//! [`ArrowSink`] is a [`fb_join::Sink`]: a pipeline fills its batches of
//! rows where events are joined (on every worker thread), and the sink
//! hands finished `RecordBatch`es in log order to a [`BatchWriter`]: an
//! Arrow IPC file or stream, or a Parquet file (zstd, bounded row groups,
//! statistics, dictionaries for the repeated text columns).
//!
//! The schema is one for every problem type: columns that do not apply to
//! an event are null (`actions` for a CCB decision, `slots` for a CB one).
//! One schema lets a month of mixed logs be one table in every engine;
//! `problem_type` says which columns to read. Its version is in the
//! metadata (`fb.schema_version`); `docs/arrow-schema.md` describes every
//! column.
//!
//! ```
//! use fb_arrow::{ArrowSink, IpcFile};
//! use fb_join::{Options, Pipeline, Source};
//!
//! let log = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/cb_simple.log"
//! ))
//! .unwrap();
//! let sink = ArrowSink::new(IpcFile::new(Vec::new()).unwrap(), 65_536);
//! let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, 1);
//! pipeline.feed(Source::Slice(&log), (0, 0), &|| false, &mut |_| {}).unwrap();
//! let (_, sink) = pipeline.finish();
//! let bytes = sink.finish().unwrap();
//! let batches = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
//! assert_eq!(batches.map(|b| b.unwrap().num_rows()).sum::<usize>(), 1);
//! ```

mod columns;
mod partition;
mod prepare;
mod rows;
mod schema;
mod text;

use std::io::Write;

use arrow_array::RecordBatch;
use fb_join::JoinedEvent;

pub use columns::Columns;
pub use partition::{Partitioned, Partitioning};
pub use rows::{micros, Rows};
pub use schema::{schema, SCHEMA_VERSION, VERSION_KEY};

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Arrow refused a batch or the IPC writer failed.
    #[error("writing Arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The Parquet writer failed.
    #[error("writing Parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// A choice of columns names no column, an unknown one or one twice.
    #[error("columns: {0}")]
    Columns(String),
    /// A partition's file or directory could not be made.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

/// Where finished batches go.
pub trait BatchWriter {
    /// What finishing gives back (the output).
    type Output;

    /// Writes one batch.
    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error>;

    /// Writes what closes the file (footer, end of stream) and gives the
    /// output back.
    fn finish(self) -> Result<Self::Output, Error>;
}

/// The Arrow IPC writers, file and stream, as [`BatchWriter`]s.
macro_rules! ipc {
    ($(#[$doc:meta])* $name:ident, $writer:ident) => {
        $(#[$doc])*
        pub struct $name<W: Write>(arrow_ipc::writer::$writer<W>);

        impl<W: Write> $name<W> {
            /// Starts writing to `out`, every column.
            pub fn new(out: W) -> Result<Self, Error> {
                Self::with_schema(out, &schema())
            }

            /// Starts writing batches of `schema` (see [`Columns`]) to `out`.
            pub fn with_schema(out: W, schema: &arrow_schema::Schema) -> Result<Self, Error> {
                Ok(Self(arrow_ipc::writer::$writer::try_new(out, schema)?))
            }
        }

        impl<W: Write> BatchWriter for $name<W> {
            type Output = W;

            fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
                Ok(self.0.write(batch)?)
            }

            fn finish(mut self) -> Result<W, Error> {
                self.0.finish()?;
                Ok(self.0.into_inner()?)
            }
        }
    };
}

ipc!(
    /// An Arrow IPC file (random access; `.arrow`).
    IpcFile,
    FileWriter
);
ipc!(
    /// An Arrow IPC stream (for pipes).
    IpcStream,
    StreamWriter
);

/// A Parquet file: data pages v2, zstd at level 1 (on the 200 MiB CB
/// bench log, level 3 made a 16.0 MB file in 0.64 s, level 1 19.4 MB in
/// 0.48 s), row groups of at most `row_group` rows and
/// [`ROW_GROUP_BYTES`], statistics per page, dictionaries where columns
/// repeat.
pub struct ParquetFile<W: Write + Send> {
    writer: parquet::arrow::ArrowWriter<W>,
    /// Arrow bytes of the rows in the open row group.
    pending: usize,
    /// Where a row group ends, in Arrow bytes.
    bytes: usize,
}

/// Where a row group ends, in bytes of the Arrow rows written into it:
/// the bound on a Parquet export's memory, whatever the input's size.
/// Counted before encoding because parquet-rs keeps each v2 page in a
/// buffer of its uncompressed size until the row group is written.
pub const ROW_GROUP_BYTES: usize = 64 << 20;

/// Text columns whose values repeat (a few distinct per file): the only
/// ones with dictionaries. Elsewhere zstd does the work of a dictionary
/// for less: with dictionaries on every column the export took 9% more
/// instructions (callgrind, 20 MiB CB log) for a file 2% smaller.
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
/// default, prefix deltas, compares every value with the one before; 3%
/// of the instructions).
const PLAIN_TEXT: &[&[&str]] = &[
    &["event_id"],
    &["context"],
    &["outcomes", "list", "item", "event_id"],
];

/// Times: v2 pages hold them as deltas bit-packed, which leaves zstd
/// nothing to find (on the 20 MiB CB bench log the three columns came
/// out of it the same size, for 0.8% of the export's instructions).
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
    /// [`Columns`]).
    pub fn with_schema(
        out: W,
        rows: usize,
        bytes: usize,
        schema: arrow_schema::SchemaRef,
    ) -> Result<Self, Error> {
        use parquet::basic::{Compression, Encoding, ZstdLevel};
        use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
        use parquet::schema::types::ColumnPath;
        let path = |parts: &[&str]| ColumnPath::new(parts.iter().map(|p| p.to_string()).collect());
        let mut props = WriterProperties::builder()
            .set_compression(Compression::ZSTD(ZstdLevel::try_new(1)?))
            .set_max_row_group_row_count(Some(rows.max(1)))
            // Data pages v2: levels stay out of the compressed block and
            // a page is copied once less; on the 1 GiB CB bench log the
            // export takes 1.64 s against 1.86 s. Every reader we test
            // takes them (pyarrow, DuckDB, Polars, pandas, Spark).
            .set_writer_version(WriterVersion::PARQUET_2_0)
            .set_statistics_enabled(EnabledStatistics::Page)
            .set_dictionary_enabled(false)
            // The minimum and maximum of JSON texts select nothing.
            .set_column_statistics_enabled(path(&["context"]), EnabledStatistics::None);
        for column in REPEATED {
            props = props.set_column_dictionary_enabled(path(column), true);
        }
        for column in PLAIN_TEXT {
            props = props.set_column_encoding(path(column), Encoding::DELTA_LENGTH_BYTE_ARRAY);
        }
        // Random ids: page bounds would skip no page; the column chunk's
        // are kept (they tell a file's range for an id lookup).
        for column in [&["event_id"][..], &["outcomes", "list", "item", "event_id"]] {
            props = props.set_column_statistics_enabled(path(column), EnabledStatistics::Chunk);
        }
        for column in DELTA_PACKED {
            props = props.set_column_compression(path(column), Compression::UNCOMPRESSED);
        }
        Ok(Self {
            writer: parquet::arrow::ArrowWriter::try_new(out, schema, Some(props.build()))?,
            pending: 0,
            bytes,
        })
    }
}

/// Bytes of the rows of `batch`: of its slice, not of the buffers a slice
/// shares with the rest, except below a list, whose values count whole
/// (a sliced batch then ends its row group early, never late).
fn arrow_bytes(batch: &RecordBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|c| {
            c.to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| c.get_array_memory_size())
        })
        .sum()
}

impl<W: Write + Send> BatchWriter for ParquetFile<W> {
    type Output = W;

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        let before = self.writer.in_progress_rows();
        self.writer.write(batch)?;
        if self.writer.in_progress_rows() < before + batch.num_rows() {
            // The writer ended a row group on its own bounds.
            self.pending = 0;
        }
        self.pending += arrow_bytes(batch);
        if self.pending >= self.bytes {
            self.writer.flush()?;
            self.pending = 0;
        }
        Ok(())
    }

    fn finish(self) -> Result<W, Error> {
        Ok(self.writer.into_inner()?)
    }
}

/// The Arrow [`fb_join::Sink`]: rows made on every thread, batches of at
/// most `batch_rows` handed to the writer in log order.
pub struct ArrowSink<B> {
    writer: B,
    batch_rows: usize,
    prepared_memory: bool,
    columns: Columns,
    rows: u64,
}

impl<B: BatchWriter> ArrowSink<B> {
    /// Batches of at most `batch_rows` rows to `writer`.
    pub fn new(writer: B, batch_rows: usize) -> Self {
        Self {
            writer,
            batch_rows: batch_rows.max(1),
            prepared_memory: false,
            columns: Columns::all(),
            rows: 0,
        }
    }

    /// Builds only `columns`, in their order: the writer must take
    /// batches of [`Columns::schema`].
    pub fn with_columns(mut self, columns: Columns) -> Self {
        self.columns = columns;
        self
    }

    /// Builds with [`Rows::with_prepared_memory`]: worth a thread when
    /// the reader keeps every batch and a core would otherwise wait.
    pub fn with_prepared_memory(mut self) -> Self {
        self.prepared_memory = true;
        self
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Closes the output (footer, end of stream) and gives it back.
    pub fn finish(self) -> Result<B::Output, Error> {
        self.writer.finish()
    }
}

/// Fills [`Rows`] for an [`ArrowSink`], one per thread.
pub struct RowMaker {
    batch_rows: usize,
    prepared_memory: bool,
    columns: Columns,
}

impl fb_join::Maker for RowMaker {
    type Batch = Rows;

    fn batch(&mut self) -> Rows {
        Rows::with_columns(self.columns.clone(), self.prepared_memory)
    }

    fn add(&mut self, batch: &mut Rows, ev: &JoinedEvent<'_>) {
        batch.add(ev);
    }

    fn full(&self, batch: &Rows) -> bool {
        batch.full(self.batch_rows)
    }

    fn clear(&mut self, _: &mut Rows) {
        // `finish` in `take` leaves the builders empty.
    }
}

impl<B: BatchWriter> fb_join::Sink for ArrowSink<B> {
    type Batch = Rows;
    type Maker = RowMaker;

    fn maker(&self) -> RowMaker {
        RowMaker {
            batch_rows: self.batch_rows,
            prepared_memory: self.prepared_memory,
            columns: self.columns.clone(),
        }
    }

    fn take(&mut self, rows: &mut Rows) -> Result<(), fb_join::Error> {
        if rows.is_empty() {
            return Ok(());
        }
        let n = rows.len() as u64;
        // An I/O error keeps its kind (a closed pipe stays one).
        let write = |e: Error| {
            let kind = match &e {
                Error::Arrow(arrow_schema::ArrowError::IoError(_, io)) => io.kind(),
                _ => std::io::ErrorKind::Other,
            };
            fb_join::Error::Write {
                written: 0,
                source: std::io::Error::new(kind, e),
            }
        };
        let batch = rows.finish().map_err(|e| write(e.into()))?;
        self.writer.write(&batch).map_err(write)?;
        self.rows += n;
        Ok(())
    }
}
