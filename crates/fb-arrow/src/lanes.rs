//! Parquet column chunks encoded on several threads.
//!
//! arrow-rs' `ArrowWriter` encodes every column of a row group on the
//! caller's thread, so an export runs no faster than one core encodes and
//! compresses. Here each top-level column belongs to one of a few *lanes*,
//! threads that own that column's writers for the row group in progress.
//! Every batch is handed to every lane (a `RecordBatch` is shared, not
//! copied); each lane cuts its own columns into leaves and encodes them.
//! When the row group ends, the lanes close their writers and the caller
//! appends the chunks in leaf order.
//!
//! The bytes are those of `ArrowWriter`: each column writer sees the same
//! calls with the same leaves, in the same order, and the row groups are
//! cut at the same rows (the row bound below mirrors `ArrowWriter::write`).
//! Which lane owns a column changes only when the work is done, never what
//! is written; `tests/lanes.rs` compares the two writers byte for byte.
//!
//! Memory: a lane holds at most [`QUEUE`] batches it has not encoded yet
//! beside the encoded pages of the row group in progress, which
//! `ArrowWriter` holds too.
//!
//! With no lanes, the same writers encode on the caller's thread: the
//! one-thread export, which then also writes its UTF-8 columns with
//! [`TextChunk`] where that writes parquet-rs' bytes.
//!
//! Lanes are not on `fb_join`'s ordered pool: a lane's column writers are
//! per-field state that must see every batch in order, so its work cannot
//! go to whichever thread is free, and a pool of interchangeable workers
//! would have to hold the whole row group to encode it at its end.

use std::io::Write;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::SchemaRef;
use bytes::Bytes;
use parquet::arrow::arrow_writer::{
    compute_leaves, ArrowColumnChunk, ArrowColumnWriter, ArrowRowGroupWriterFactory,
};
use parquet::arrow::ArrowWriter;
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::writer::{SerializedFileWriter, SerializedRowGroupWriter};

use crate::even::Pieces;
use crate::packers::{Packers, MAX_PACKERS};
use crate::text_chunk::TextChunk;

/// Batches a lane may have waiting: enough that a lane that is a little
/// behind does not stop the others, few enough to bound memory.
const QUEUE: usize = 2;

/// Lanes of one file at most, whatever number of threads is asked for.
/// A column is never split between lanes, so no file encodes faster than
/// its costliest column alone: `context` holds about half of a row
/// group's bytes and of its encoding time (the bench's CB and CCB logs),
/// so a third or fourth lane already holds only small columns, and on 16
/// cores Parquet export was no faster on 8 or 16 threads than on 4. More
/// lanes only add threads and queues, in every open file of a partitioned
/// export (bench/NOTES.md). Past them, the context's pages are compressed
/// on packers (`packers.rs`), which is most of that column's work.
pub(crate) const MAX_LANES: usize = 4;

/// Packers for a file encoded on `threads` threads on a machine of
/// `cores` cores: as many as the lanes leave, at most [`MAX_PACKERS`].
/// On fewer cores than that every core is busy already, and more threads
/// only contend for them.
pub(crate) fn packers_for(threads: usize, cores: usize) -> usize {
    threads
        .min(cores)
        .saturating_sub(MAX_LANES)
        .min(MAX_PACKERS)
}

/// What writes one leaf column of a row group.
enum LeafWriter {
    Arrow(ArrowColumnWriter),
    /// A required top-level UTF-8 column, the field's only leaf.
    Text(TextChunk),
}

/// A leaf's finished column chunk.
enum LeafChunk {
    Arrow(ArrowColumnChunk),
    Text(Bytes, ColumnCloseResult),
}

impl LeafChunk {
    fn append_to<W: Write + Send>(
        self,
        group: &mut SerializedRowGroupWriter<'_, W>,
    ) -> Result<(), ParquetError> {
        match self {
            Self::Arrow(chunk) => chunk.append_to_row_group(group),
            Self::Text(bytes, close) => group.append_column(&bytes, close),
        }
    }
}

/// The columns of one top-level field, with the index of each leaf.
type FieldWriters = (usize, Vec<(usize, LeafWriter)>);

/// What a lane is told to do.
enum Job {
    /// A row group starts: the writers of this lane's fields.
    Start(Vec<FieldWriters>),
    /// Encode this batch's columns of this lane's fields.
    Batch(Shared),
    /// The row group ends: close the writers and send the chunks back.
    Close,
}

/// A batch as the lanes get it: whole, or the pieces several threads
/// handed over, each lane joining only its own columns (the copy that
/// joins a batch is shared out among the lanes, off the thread that
/// feeds them).
#[derive(Clone)]
enum Shared {
    Whole(RecordBatch),
    Pieces(Arc<Pieces>),
}

impl Shared {
    /// Column `i` of each piece, not joined (the whole batch's alone).
    fn columns(&self, i: usize) -> Result<Vec<ArrayRef>, ParquetError> {
        let missing = || ParquetError::General(format!("a batch has no column {i}"));
        let batches = match self {
            Self::Whole(batch) => std::slice::from_ref(batch),
            Self::Pieces(pieces) => pieces.batches(),
        };
        batches
            .iter()
            .map(|b| b.columns().get(i).cloned().ok_or_else(missing))
            .collect()
    }

    /// Column `i`, joined from the pieces as [`Pieces::join`] joins it.
    fn column(&self, i: usize) -> Result<ArrayRef, ParquetError> {
        let missing = || ParquetError::General(format!("a batch has no column {i}"));
        match self {
            Self::Whole(batch) => batch.columns().get(i).cloned().ok_or_else(missing),
            Self::Pieces(pieces) => pieces.column(i).map_err(|e| match e {
                crate::Error::Arrow(e) => ParquetError::ArrowError(e.to_string()),
                other => ParquetError::General(other.to_string()),
            }),
        }
    }
}

/// The chunks of a lane's columns with their leaf indexes, or why not.
type Closed = Result<Vec<(usize, LeafChunk)>, ParquetError>;

struct Lane {
    jobs: Option<SyncSender<Job>>,
    closed: Receiver<Closed>,
    thread: Option<JoinHandle<()>>,
}

/// A Parquet file whose row groups are encoded on several lanes, or on
/// the caller's thread when there are none.
pub(crate) struct LaneWriter<W: Write + Send> {
    file: SerializedFileWriter<W>,
    factory: ArrowRowGroupWriterFactory,
    schema: SchemaRef,
    /// The top-level field each leaf column belongs to, in leaf order.
    leaf_fields: Vec<usize>,
    /// The leaves [`TextChunk`] writes (none on the plain path).
    pub(crate) text_leaves: Vec<bool>,
    /// The bytes of each text leaf's last chunk: the next one's buffer is
    /// reserved to about that, not grown from empty a copy at a time.
    text_bytes: Vec<usize>,
    max_rows: Option<usize>,
    lanes: Lanes,
    /// Threads that compress the text leaves' pages, past the lanes.
    packers: Option<Arc<Packers>>,
    /// The writers of the row group in progress when there are no lanes.
    here: Vec<FieldWriters>,
    /// Which lane encodes each top-level field; chosen at the first batch.
    lane_of_field: Vec<usize>,
    /// Rows of the row group in progress; `None` when none is open.
    open: Option<usize>,
    /// Packers to start once a row group has ended (see
    /// [`LaneWriter::packers_later`]).
    packers_later: usize,
}

impl<W: Write + Send> LaneWriter<W> {
    /// Takes over `writer`, which must have no rows in progress, with
    /// `lanes` threads (none: the caller's; at most one per column and
    /// [`MAX_LANES`]). With `text_chunks`, the leaves that
    /// [`TextChunk::fits`] are written by it (the same bytes), their pages
    /// compressed on `packers` threads when there are lanes.
    pub(crate) fn new(
        writer: ArrowWriter<W>,
        schema: SchemaRef,
        max_rows: Option<usize>,
        lanes: usize,
        packers: usize,
        text_chunks: bool,
    ) -> Result<Self, ParquetError> {
        let (file, factory) = writer.into_serialized_writer()?;
        let descr = file.schema_descr();
        let leaf_fields: Vec<usize> = (0..descr.num_columns())
            .map(|leaf| descr.get_column_root_idx(leaf))
            .collect();
        let text_leaves = leaf_fields
            .iter()
            .enumerate()
            .map(|(leaf, &field)| {
                text_chunks
                    && schema
                        .fields()
                        .get(field)
                        .is_some_and(|f| TextChunk::fits(f, &descr.column(leaf), file.properties()))
            })
            .collect();
        let mut writer = Self {
            file,
            factory,
            schema,
            text_bytes: vec![0; leaf_fields.len()],
            leaf_fields,
            text_leaves,
            max_rows,
            lanes: Lanes(Vec::new()),
            packers: None,
            here: Vec::new(),
            lane_of_field: Vec::new(),
            open: None,
            packers_later: 0,
        };
        writer.set_lanes(lanes, packers);
        Ok(writer)
    }

    /// Encodes on `lanes` threads from the next row group on (none: on
    /// the caller's thread), the text leaves' pages compressed on
    /// `packers` more (at most [`MAX_PACKERS`]). Ignored while a row
    /// group is open.
    pub(crate) fn set_lanes(&mut self, lanes: usize, packers: usize) {
        if self.open.is_some() {
            return;
        }
        let packers = match lanes > 0 && self.text_leaves.contains(&true) {
            true => packers.min(MAX_PACKERS),
            false => 0,
        };
        if self.packers.as_ref().map_or(0, |p| p.threads()) != packers {
            self.packers = Packers::spawn(packers);
        }
        let lanes = lanes.min(self.schema.fields().len().clamp(1, MAX_LANES));
        if lanes == self.lanes.0.len() {
            return;
        }
        self.lanes = Lanes(
            (0..lanes)
                .map(|_| Lane::spawn(self.schema.clone()))
                .collect(),
        );
        self.lane_of_field.clear();
    }
}

impl<W: Write + Send> LaneWriter<W> {
    /// Starts `packers` threads to compress the text leaves' pages once
    /// the row group in progress (or the next one) has ended, not before
    /// and not at the file's end: a file of one row group never starts
    /// them. The row group after shares the columns out again, the text
    /// as packed.
    pub(crate) fn packers_later(&mut self, packers: usize) {
        self.packers_later = packers;
    }

    /// Threads compressing the text leaves' pages.
    #[cfg(test)]
    pub(crate) fn packer_threads(&self) -> usize {
        self.packers.as_ref().map_or(0, |p| p.threads())
    }

    /// Rows in the row group in progress.
    pub(crate) fn in_progress_rows(&self) -> usize {
        self.open.unwrap_or(0)
    }

    /// Encodes `batch`, ending row groups where `ArrowWriter` would.
    pub(crate) fn write(&mut self, batch: &RecordBatch) -> Result<(), ParquetError> {
        if batch.num_rows() == 0 {
            return Ok(());
        }
        if self.open.is_none() {
            self.start(batch)?;
        }
        let buffered = self.in_progress_rows();
        if let Some(max) = self.max_rows {
            if buffered + batch.num_rows() > max {
                let first = max - buffered;
                self.write(&batch.slice(0, first))?;
                return self.write(&batch.slice(first, batch.num_rows() - first));
            }
        }
        self.send_all(Shared::Whole(batch.clone()), batch.num_rows())
    }

    /// Encodes the rows of `pieces`, `rows` of them, as one batch, each
    /// lane joining its own columns. The caller joins a batch that would
    /// cross the end of a row group and calls [`Self::write`], which cuts
    /// it there.
    pub(crate) fn write_pieces(&mut self, pieces: Pieces, rows: usize) -> Result<(), ParquetError> {
        let Some(first) = pieces.batches().first().cloned() else {
            return Ok(());
        };
        if rows == 0 {
            return Ok(());
        }
        if self
            .max_rows
            .is_some_and(|max| self.in_progress_rows() + rows > max)
        {
            let why = "pieces that cross the end of a row group are joined first";
            return Err(ParquetError::General(why.into()));
        }
        if self.open.is_none() {
            self.start(&first)?;
        }
        self.send_all(Shared::Pieces(Arc::new(pieces)), rows)
    }

    /// Hands `batch` of `rows` rows to every lane; ends the row group at
    /// its row bound.
    fn send_all(&mut self, batch: Shared, rows: usize) -> Result<(), ParquetError> {
        if self.lanes.0.is_empty() {
            encode(&self.schema, &batch, &mut self.here)?;
        }
        for lane in 0..self.lanes.0.len() {
            self.send(lane, Job::Batch(batch.clone()))?;
        }
        let rows = self.in_progress_rows() + rows;
        self.open = Some(rows);
        if self.max_rows.is_some_and(|max| rows >= max) {
            self.flush()?;
        }
        Ok(())
    }

    /// Ends the row group in progress, if any.
    pub(crate) fn flush(&mut self) -> Result<(), ParquetError> {
        if self.open.take().is_none() {
            return Ok(());
        }
        for lane in 0..self.lanes.0.len() {
            self.send(lane, Job::Close)?;
        }
        let mut chunks = Vec::with_capacity(self.leaf_fields.len());
        if self.lanes.0.is_empty() {
            chunks = close(std::mem::take(&mut self.here))?;
        }
        let mut first_error = None;
        for lane in &self.lanes.0 {
            match lane.closed.recv() {
                Ok(Ok(mine)) => chunks.extend(mine),
                Ok(Err(e)) => {
                    first_error.get_or_insert(e);
                }
                Err(_) => {
                    first_error.get_or_insert(lane_gone());
                }
            }
        }
        if let Some(e) = first_error {
            return Err(e);
        }
        chunks.sort_unstable_by_key(|(leaf, _)| *leaf);
        let mut group = self.file.next_row_group()?;
        for (leaf, chunk) in chunks {
            if let (LeafChunk::Text(bytes, _), Some(size)) = (&chunk, self.text_bytes.get_mut(leaf))
            {
                *size = bytes.len();
            }
            chunk.append_to(&mut group)?;
        }
        group.close()?;
        if self.packers_later > 0 && !self.lanes.0.is_empty() && self.packers.is_none() {
            let packers = std::mem::take(&mut self.packers_later);
            self.set_lanes(self.lanes.0.len(), packers);
            self.lane_of_field.clear();
        }
        Ok(())
    }

    /// Row groups written to the file so far.
    pub(crate) fn row_groups_written(&self) -> usize {
        self.file.flushed_row_groups().len()
    }

    /// Ends the last row group, writes the footer and gives `W` back.
    pub(crate) fn into_inner(mut self) -> Result<W, ParquetError> {
        // No row group comes after this one: no packers to start.
        self.packers_later = 0;
        self.flush()?;
        let Self { file, lanes, .. } = self;
        drop(lanes);
        file.into_inner()
    }

    /// Opens a row group: new writers, shared out among the lanes.
    fn start(&mut self, first: &RecordBatch) -> Result<(), ParquetError> {
        if self.lane_of_field.is_empty() {
            // A text field whose pages the packers compress costs its
            // lane little more than a copy of its bytes.
            let packed: Vec<bool> = (0..self.schema.fields().len())
                .map(|field| {
                    self.packers.is_some()
                        && self
                            .leaf_fields
                            .iter()
                            .zip(&self.text_leaves)
                            .any(|(&f, &t)| f == field && t)
                })
                .collect();
            self.lane_of_field = share_out(first, self.lanes.0.len(), &packed);
        }
        let index = self.file.flushed_row_groups().len();
        let writers = self.factory.create_column_writers(index)?;
        let mut per_lane: Vec<Vec<FieldWriters>> =
            (0..self.lanes.0.len().max(1)).map(|_| Vec::new()).collect();
        for (leaf, writer) in writers.into_iter().enumerate() {
            // arrow-rs makes every leaf's writer; a text leaf's is dropped
            // unused (it has touched no memory yet).
            let writer = match self.text_leaves.get(leaf) {
                Some(true) => {
                    let descr = self.file.schema_descr().column(leaf);
                    let last = self.text_bytes.get(leaf).copied().unwrap_or(0);
                    let packers = self.packers.clone();
                    LeafWriter::Text(TextChunk::new(
                        descr,
                        self.file.properties(),
                        last,
                        packers,
                    )?)
                }
                _ => LeafWriter::Arrow(writer),
            };
            let field = self.leaf_fields.get(leaf).copied().unwrap_or(0);
            let lane = self.lane_of_field.get(field).copied().unwrap_or(0);
            let Some(mine) = per_lane.get_mut(lane) else {
                return Err(lane_gone());
            };
            match mine.last_mut() {
                Some((f, leaves)) if *f == field => leaves.push((leaf, writer)),
                _ => mine.push((field, vec![(leaf, writer)])),
            }
        }
        if self.lanes.0.is_empty() {
            self.here = per_lane.into_iter().flatten().collect();
        } else {
            for (lane, fields) in per_lane.into_iter().enumerate() {
                self.send(lane, Job::Start(fields))?;
            }
        }
        self.open = Some(0);
        Ok(())
    }

    /// Hands `job` to a lane; a lane that has stopped reports its error
    /// when the row group closes, so here it only says that it is gone.
    fn send(&self, lane: usize, job: Job) -> Result<(), ParquetError> {
        let sent = self
            .lanes
            .0
            .get(lane)
            .and_then(|l| l.jobs.as_ref())
            .map(|jobs| jobs.send(job).is_ok());
        match sent {
            Some(true) => Ok(()),
            _ => Err(lane_gone()),
        }
    }
}

/// The lanes of a writer; dropping them closes their queues and waits
/// for their threads.
struct Lanes(Vec<Lane>);

impl Drop for Lanes {
    fn drop(&mut self) {
        for lane in &mut self.0 {
            lane.jobs = None;
        }
        for lane in &mut self.0 {
            if let Some(thread) = lane.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

impl Lane {
    fn spawn(schema: SchemaRef) -> Self {
        let (jobs, queue) = sync_channel::<Job>(QUEUE);
        let (done, closed) = sync_channel::<Closed>(1);
        let thread = std::thread::Builder::new()
            .name("fb-parquet-lane".into())
            .spawn(move || run_lane(&schema, &queue, &done))
            .ok();
        Self {
            // A lane whose thread could not start has no queue: sending to
            // it fails, and the export says so.
            jobs: thread.as_ref().map(|_| jobs),
            closed,
            thread,
        }
    }
}

/// A lane's loop: encode what it is given until its queue closes.
fn run_lane(schema: &SchemaRef, queue: &Receiver<Job>, done: &SyncSender<Closed>) {
    let mut fields: Vec<FieldWriters> = Vec::new();
    let mut failed: Option<ParquetError> = None;
    for job in queue {
        match job {
            Job::Start(mine) => {
                fields = mine;
                failed = None;
            }
            Job::Batch(batch) => {
                if failed.is_none() {
                    if let Err(e) = encode(schema, &batch, &mut fields) {
                        failed = Some(e);
                    }
                }
            }
            Job::Close => {
                let closed = match failed.take() {
                    Some(e) => Err(e),
                    None => close(std::mem::take(&mut fields)),
                };
                if done.send(closed).is_err() {
                    return;
                }
            }
        }
    }
}

/// Writes this lane's columns of `batch`, leaf by leaf, as
/// `ArrowWriter` does.
fn encode(
    schema: &SchemaRef,
    batch: &Shared,
    fields: &mut [FieldWriters],
) -> Result<(), ParquetError> {
    for (field, writers) in fields {
        let Some(f) = schema.fields().get(*field) else {
            return Err(ParquetError::General(format!(
                "a batch has no column {field}"
            )));
        };
        if let [(_, LeafWriter::Text(text))] = writers.as_mut_slice() {
            text.write(&batch.columns(*field)?)?;
            continue;
        }
        let column = batch.column(*field)?;
        let leaves = compute_leaves(f.as_ref(), &column)?;
        if leaves.len() != writers.len() {
            return Err(ParquetError::General(format!(
                "column {} has {} leaves, its writers {}",
                f.name(),
                leaves.len(),
                writers.len()
            )));
        }
        for (leaf, (_, writer)) in leaves.iter().zip(writers.iter_mut()) {
            match writer {
                LeafWriter::Arrow(writer) => writer.write(leaf)?,
                LeafWriter::Text(_) => {
                    return Err(ParquetError::General(format!(
                        "column {} has a text leaf among others",
                        f.name()
                    )))
                }
            }
        }
    }
    Ok(())
}

fn close(fields: Vec<FieldWriters>) -> Closed {
    fields
        .into_iter()
        .flat_map(|(_, writers)| writers)
        .map(|(leaf, writer)| match writer {
            LeafWriter::Arrow(w) => w.close().map(|chunk| (leaf, LeafChunk::Arrow(chunk))),
            LeafWriter::Text(w) => w
                .close()
                .map(|(bytes, close)| (leaf, LeafChunk::Text(bytes, close))),
        })
        .collect()
}

fn lane_gone() -> ParquetError {
    ParquetError::General("a Parquet encoding thread stopped".into())
}

/// A text column whose pages are packed elsewhere counts as this share of
/// its bytes when the lanes are loaded: its lane only copies them
/// (bench/NOTES.md, fifteenth stop: `context` alone cost its lane 76 ms
/// of a 1 GiB CCB export, `slots` 264 ms with a fraction of its bytes).
const PACKED_TEXT_SHARE: usize = 8;

/// Which lane encodes each field: the largest columns of the first batch
/// first, each to the lane with the least so far, so that the lanes
/// finish together (longest-processing-time-first); a field `packed`
/// counts an eighth of its bytes.
fn share_out(batch: &RecordBatch, lanes: usize, packed: &[bool]) -> Vec<usize> {
    let mut sizes: Vec<(usize, usize)> = batch
        .columns()
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let bytes = c
                .to_data()
                .get_slice_memory_size()
                .unwrap_or_else(|_| c.get_array_memory_size());
            match packed.get(i) {
                Some(true) => (i, bytes / PACKED_TEXT_SHARE),
                _ => (i, bytes),
            }
        })
        .collect();
    sizes.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    let mut load = vec![0usize; lanes.max(1)];
    let mut lane_of = vec![0usize; sizes.len()];
    for (field, bytes) in sizes {
        let (lane, _) = load
            .iter()
            .enumerate()
            .min_by_key(|(i, l)| (**l, *i))
            .unwrap_or((0, &0));
        if let Some(l) = load.get_mut(lane) {
            *l += bytes.max(1);
        }
        if let Some(slot) = lane_of.get_mut(field) {
            *slot = lane;
        }
    }
    lane_of
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_schema::{DataType, Field, Schema};

    /// A text column of 63 kB (offsets too) and number columns of 8, 4
    /// and 2 kB.
    fn text_and_numbers() -> RecordBatch {
        use arrow_array::{Int16Array, Int32Array, Int64Array, StringArray};
        let texts = StringArray::from_iter_values((0..1_000).map(|i| format!("{i:0>59}")));
        RecordBatch::try_from_iter(vec![
            ("text", Arc::new(texts) as ArrayRef),
            (
                "a",
                Arc::new(Int64Array::from_iter_values(0..1_000)) as ArrayRef,
            ),
            (
                "b",
                Arc::new(Int32Array::from_iter_values(0..1_000)) as ArrayRef,
            ),
            (
                "c",
                Arc::new(Int16Array::from_iter_values(0..1_000)) as ArrayRef,
            ),
        ])
        .unwrap_or_else(|e| panic!("{e}"))
    }

    /// Lanes loaded largest first; a packed text column counts an eighth.
    #[test]
    fn share_out_weighs_packed_text_less() {
        let batch = text_and_numbers();
        let cases = [
            ("two lanes", 2, vec![false; 4], vec![0, 1, 1, 1]),
            ("three lanes", 3, vec![false; 4], vec![0, 1, 2, 2]),
            // 63 kB / 8 is less than 8 kB: the text goes after column a.
            (
                "two lanes, text packed",
                2,
                vec![true, false, false, false],
                vec![1, 0, 1, 0],
            ),
            (
                "three lanes, text packed",
                3,
                vec![true, false, false, false],
                vec![1, 0, 2, 2],
            ),
        ];
        for (name, lanes, packed, want) in cases {
            assert_eq!(share_out(&batch, lanes, &packed), want, "{name}");
        }
    }

    /// Threads asked for against lanes spawned: never more than the
    /// columns, nor than [`MAX_LANES`].
    #[test]
    fn lanes_are_capped_by_columns_and_max_lanes() {
        let wide = crate::schema();
        let two = Arc::new(Schema::new(vec![
            Field::new("a", DataType::Int64, false),
            Field::new("b", DataType::Utf8, false),
        ]));
        let cases = [
            ("two threads", &wide, 2, 2),
            ("three threads", &wide, 3, 3),
            ("as many as the cap", &wide, MAX_LANES, MAX_LANES),
            ("sixteen threads", &wide, 16, MAX_LANES),
            ("more threads than columns", &two, 16, 2),
        ];
        assert!(wide.fields().len() > MAX_LANES);
        for (name, schema, threads, want) in cases {
            let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), None);
            let writer = writer.unwrap_or_else(|e| panic!("{name}: {e}"));
            let lanes = LaneWriter::new(writer, schema.clone(), None, threads, 0, true);
            let lanes = lanes.unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(lanes.lanes.0.len(), want, "{name}");
        }
    }
}
