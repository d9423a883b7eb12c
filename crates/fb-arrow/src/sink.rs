//! The Arrow sink of a pipeline: rows made on every thread, batches
//! handed to a [`BatchWriter`] in log order.

use fb_join::JoinedEvent;

use crate::columns::Columns;
use crate::error::Error;
use crate::even::Even;
use crate::rows::Rows;
use crate::writers::BatchWriter;

/// The Arrow [`fb_join::Sink`]: rows made on every thread, batches of
/// `batch_rows` rows each, the last fewer, handed to the writer in log
/// order. Batches run across inputs: they are the same for any number of
/// threads and any cut of the rows into files, so an IPC or Parquet file
/// is the same bytes. (A batch ends early only where its texts or lists
/// would pass 1 GiB.)
pub struct ArrowSink<B> {
    writer: B,
    batch_rows: usize,
    prepared_memory: bool,
    columns: Columns,
    rows: u64,
    /// The rows of the last input on one thread, kept for the next
    /// ([`fb_join::Sink::recycle`]): their builders keep the room they
    /// grew to, so each small file of a folder does not grow them again.
    spare_rows: Option<Rows>,
    /// The pieces waiting for a batch.
    even: Even,
    /// Rows handed over short of a batch, kept in their builders while
    /// nothing waits in `even`: one thread goes on filling them with the
    /// next input ([`fb_join::Sink::first_batch`]), so a folder of small
    /// files is cut into batches without copying a row.
    carry: Option<Rows>,
    /// How many rows the batch [`fb_join::Sink::first_batch`] lent out
    /// held then: the carry's, counted in `rows` when they were taken
    /// before. The next [`fb_join::Sink::take`] of that batch counts only
    /// the rows added since.
    lent_rows: u64,
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
            spare_rows: None,
            even: Even::new(batch_rows),
            carry: None,
            lent_rows: 0,
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

    /// Rows taken so far (all written once [`ArrowSink::finish`] returns).
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Writes the rows still waiting, closes the output (footer, end of
    /// stream) and gives it back.
    pub fn finish(mut self) -> Result<B::Output, Error> {
        self.write_carry()?;
        let writer = &mut self.writer;
        self.even.flush(&mut |pieces| writer.write_pieces(pieces))?;
        self.writer.finish()
    }

    /// Hands the rows kept in `carry` on to `even`.
    fn write_carry(&mut self) -> Result<(), Error> {
        let Some(mut carry) = self.carry.take() else {
            return Ok(());
        };
        let batch = carry.finish()?;
        let writer = &mut self.writer;
        self.even
            .push(batch, &mut |pieces| writer.write_pieces(pieces))?;
        self.spare_rows = Some(carry);
        Ok(())
    }

    /// Takes `rows` into the batches.
    fn take_even(&mut self, rows: &mut Rows) -> Result<(), Error> {
        let waiting = self.carry.is_some() || !self.even.is_empty();
        if !waiting && rows.len() == self.batch_rows {
            // One thread's whole batch, as most are: no copy.
            let batch = rows.finish()?;
            self.writer.write(&batch)?;
            rows.give_back(batch);
            return Ok(());
        }
        if !waiting && !rows.full(self.batch_rows) {
            // Short: the end of an input on one thread, or of a worker's
            // chunk. Kept in its builders; the caller goes on with spare
            // ones.
            let spare = match self.spare_rows.take() {
                Some(spare) if spare.is_empty() => spare,
                _ => Rows::with_columns(self.columns.clone(), self.prepared_memory),
            };
            self.carry = Some(std::mem::replace(rows, spare));
            return Ok(());
        }
        self.write_carry()?;
        let batch = rows.finish()?;
        let writer = &mut self.writer;
        self.even
            .push(batch, &mut |pieces| writer.write_pieces(pieces))?;
        Ok(())
    }
}

/// Jobs in flight at most on any number of threads: as many as four
/// threads hold. A job's rows are its megabyte of messages built into
/// columns, two or three megabytes (bench/NOTES.md): at three jobs a
/// thread, 16 threads held 48 of them and a partitioned export passed the
/// 256 MiB bound on its peak memory. Past four threads an export is
/// limited by its writer, not by joining (the 16-core tables in
/// bench/RESULTS.md), so more jobs in flight buy no speed.
const JOBS_IN_FLIGHT: usize = 12;

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

    fn first_batch(&mut self, maker: &mut RowMaker) -> Rows {
        if let Some(carry) = self.carry.take() {
            // The rows of the input before, short of a batch: this input
            // completes it.
            self.lent_rows = carry.len() as u64;
            return carry;
        }
        self.lent_rows = 0;
        match self.spare_rows.take() {
            Some(rows) if rows.is_empty() => rows,
            _ => fb_join::Maker::batch(maker),
        }
    }

    fn recycle(&mut self, _: RowMaker, rows: Rows) {
        self.spare_rows = Some(rows);
    }

    fn batches_may_join(&self) -> bool {
        // Batches are cut again from the rows, wherever those end.
        true
    }

    fn jobs_in_flight(&self) -> Option<usize> {
        Some(JOBS_IN_FLIGHT)
    }

    fn take(&mut self, rows: &mut Rows) -> Result<(), fb_join::Error> {
        if rows.is_empty() {
            return Ok(());
        }
        // Rows carried from the input before were counted when they were
        // first taken.
        let n = (rows.len() as u64).saturating_sub(std::mem::take(&mut self.lent_rows));
        self.take_even(rows).map_err(write_error)?;
        self.rows += n;
        Ok(())
    }
}

/// An error of the writer as the pipeline reports it: an I/O error keeps
/// its kind (a closed pipe stays one) and the system's words.
fn write_error(e: Error) -> fb_join::Error {
    fb_join::Error::Write {
        written: 0,
        source: e.into_output_error(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ipc::IpcStream;
    use fb_join::Sink as _;

    /// One thread's rows outlive their input: the next input starts in
    /// them (with the room their builders grew to), unless they still
    /// hold rows, which are never handed out twice.
    #[test]
    fn the_rows_of_an_input_start_the_next() {
        let mut sink = ArrowSink::new(IpcStream::new(Vec::new()).unwrap(), 8);
        let mut maker = sink.maker();
        let mut rows = sink.first_batch(&mut maker);
        rows.lend_context_room(Vec::with_capacity(12_345));
        sink.recycle(maker, rows);
        let mut maker = sink.maker();
        let rows = sink.first_batch(&mut maker);
        assert_eq!(rows.context_room_capacity(), 12_345, "kept");
        assert!(sink.spare_rows.is_none());
        let fresh = sink.first_batch(&mut maker);
        assert_eq!(fresh.context_room_capacity(), 0, "none kept: new rows");

        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/valid_joined_logs/average_reward_100_interactions.fb");
        let log = std::fs::read(dir).unwrap();
        let ev = fb_join::JoinedEvents::new(&log[..], fb_join::Options::default())
            .next()
            .unwrap();
        let mut held = rows;
        held.add(&ev);
        held.lend_context_room(Vec::with_capacity(777));
        sink.recycle(maker, held);
        let mut maker = sink.maker();
        let next = sink.first_batch(&mut maker);
        assert!(next.is_empty(), "rows never handed out twice");
        assert_eq!(next.context_room_capacity(), 0);
    }
}
