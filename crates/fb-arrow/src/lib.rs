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
//! pipeline.feed(Source::Slice(&log), fb_format::Position::START, &|| false, &mut |_| {}).unwrap();
//! let (_, sink) = pipeline.finish();
//! let bytes = sink.finish().unwrap();
//! let batches = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
//! assert_eq!(batches.map(|b| b.unwrap().num_rows()).sum::<usize>(), 1);
//! ```

mod closer;
mod columns;
mod delta_lengths;
mod error;
mod even;
mod ipc;
mod ipc_body;
mod join_ahead;
mod lanes;
mod offload;
mod packers;
mod page_store;
mod partition;
mod prepare;
mod row_bytes;
mod rows;
mod schema;
mod sink;
mod text;
mod text_chunk;
mod writers;

pub use columns::Columns;
pub use error::Error;
pub use even::Pieces;
pub use ipc::{IpcEncoding, IpcFile, IpcStream};
pub use join_ahead::{
    join_ahead, join_lanes_for, AheadReceiver, AheadSender, Closed, Handed, MAX_JOIN_LANES,
};
pub use offload::Offload;
pub use partition::{Partitioned, Partitioning};
pub use rows::{micros, Rows};
pub use schema::{schema, SCHEMA_VERSION, VERSION_KEY};
pub use sink::{ArrowSink, RowMaker};
pub use writers::{BatchWriter, ParquetFile, ParquetPath, PARQUET_ZSTD_LEVEL, ROW_GROUP_BYTES};
