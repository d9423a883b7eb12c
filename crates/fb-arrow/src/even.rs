//! Record batches of an even number of rows, whatever the pipeline hands
//! over: on one thread it hands a batch per `batch_rows` rows and one at
//! each input's end; on several, one per chunk of messages a worker
//! joined. Cutting the rows again at every `batch_rows` makes an output
//! (the batches of an IPC file, the row groups of a Parquet file, which
//! end after a batch) the same bytes for any number of threads and any
//! cut of the same rows into inputs.

use arrow_array::{Array, ArrayRef, RecordBatch};

use crate::error::Error;
use crate::row_bytes::arrow_bytes;

/// Most Arrow bytes gathered into one batch: half of what the 32-bit
/// offsets of its texts and lists address, as [`crate::Rows::full`]
/// allows. Only rows far larger than any real event's reach it; a batch
/// then ends early, where the gathered pieces end.
const EVEN_BYTES: usize = (i32::MAX / 2) as usize;

/// Cuts rows handed over in batches of any sizes into batches of exactly
/// `rows` rows (the last of a run, or before a [`Even::flush`], fewer),
/// each handed on as its [`Pieces`].
pub struct Even {
    rows: usize,
    pending: Vec<RecordBatch>,
    pending_rows: usize,
    pending_bytes: usize,
    /// Whether some piece waiting is a slice of a batch handed over: its
    /// buffers hold rows outside it, so it is copied even alone (a batch
    /// is the same bytes in a writer however its rows were cut).
    sliced: bool,
}

impl Even {
    /// Batches of `rows` rows (at least 1).
    pub fn new(rows: usize) -> Self {
        Self {
            rows: rows.max(1),
            pending: Vec::new(),
            pending_rows: 0,
            pending_bytes: 0,
            sliced: false,
        }
    }

    /// Whether no rows are waiting.
    pub fn is_empty(&self) -> bool {
        self.pending_rows == 0
    }

    /// Adds the rows of `batch` after those waiting, and hands `out` each
    /// batch they complete.
    pub fn push(
        &mut self,
        mut batch: RecordBatch,
        out: &mut impl FnMut(Pieces) -> Result<(), Error>,
    ) -> Result<(), Error> {
        while batch.num_rows() > 0 {
            let bytes = arrow_bytes(&batch);
            if self.pending_rows > 0 && self.pending_bytes + bytes > EVEN_BYTES {
                self.flush(out)?;
            }
            let need = self.rows - self.pending_rows;
            let n = batch.num_rows();
            if n < need {
                self.pending_rows += n;
                self.pending_bytes += bytes;
                self.pending.push(batch);
                return Ok(());
            }
            let rest = batch.slice(need, n - need);
            let head = match n == need {
                true => batch,
                false => {
                    self.sliced = true;
                    batch.slice(0, need)
                }
            };
            self.pending_rows += need;
            self.pending.push(head);
            self.flush(out)?;
            self.sliced |= rest.num_rows() > 0;
            batch = rest;
        }
        Ok(())
    }

    /// Hands `out` the rows waiting as one batch (the last, shorter one).
    pub fn flush(
        &mut self,
        out: &mut impl FnMut(Pieces) -> Result<(), Error>,
    ) -> Result<(), Error> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let pieces = Pieces {
            pieces: std::mem::take(&mut self.pending),
            sliced: self.sliced,
        };
        (self.pending_rows, self.pending_bytes, self.sliced) = (0, 0, false);
        out(pieces)
    }
}

/// The rows of one record batch, in the pieces they were handed over in:
/// joined into one batch where they are written
/// ([`crate::BatchWriter::write_pieces`]), which may be another thread.
pub struct Pieces {
    pieces: Vec<RecordBatch>,
    /// Whether a piece is a slice of a larger batch (see [`Even`]).
    pub(crate) sliced: bool,
}

impl Pieces {
    /// One whole batch.
    pub fn one(batch: RecordBatch) -> Self {
        Self::whole(vec![batch])
    }

    /// Whole batches whose rows make one, in order.
    pub fn whole(batches: Vec<RecordBatch>) -> Self {
        Self {
            pieces: batches,
            sliced: false,
        }
    }

    /// Slices of batches whose rows make one, in order: copied when
    /// joined, as a slice is in [`Even`].
    pub(crate) fn slices(batches: Vec<RecordBatch>) -> Self {
        Self {
            pieces: batches,
            sliced: true,
        }
    }

    /// How many pieces the rows are in.
    pub fn count(&self) -> usize {
        self.pieces.len()
    }

    /// The pieces, in order (slices of batches among them).
    pub(crate) fn batches(&self) -> &[RecordBatch] {
        &self.pieces
    }

    /// Rows of all the pieces.
    pub(crate) fn num_rows(&self) -> usize {
        self.pieces.iter().map(RecordBatch::num_rows).sum()
    }

    /// Column `i` of the rows, joined as [`Pieces::join`] joins the batch:
    /// a whole batch's as it is, pieces' copied.
    pub(crate) fn column(&self, i: usize) -> Result<ArrayRef, Error> {
        let columns: Vec<&ArrayRef> = self
            .pieces
            .iter()
            .filter_map(|p| p.columns().get(i))
            .collect();
        Ok(match (columns.as_slice(), self.sliced) {
            ([], _) => {
                let why = format!("no column {i}");
                return Err(arrow_schema::ArrowError::InvalidArgumentError(why).into());
            }
            ([one], false) => ArrayRef::clone(one),
            // `concat` hands a single array back as it is: one piece is
            // copied with an empty one.
            ([one], true) => arrow_select::concat::concat(&[one.as_ref(), &one.slice(0, 0)])?,
            (many, _) => {
                let many: Vec<&dyn Array> = many.iter().map(|c| c.as_ref()).collect();
                arrow_select::concat::concat(&many)?
            }
        })
    }

    /// The rows as one batch: a whole batch as it is, pieces copied into
    /// new buffers (a slice too, so that a batch is the same bytes in a
    /// writer however its rows were cut).
    pub fn join(self) -> Result<RecordBatch, Error> {
        let Some(first) = self.pieces.first() else {
            let why = "no rows to join".to_string();
            return Err(arrow_schema::ArrowError::InvalidArgumentError(why).into());
        };
        if let ([one], false) = (self.pieces.as_slice(), self.sliced) {
            return Ok(one.clone());
        }
        let schema = first.schema();
        let columns = (0..schema.fields().len())
            .map(|i| self.column(i))
            .collect::<Result<Vec<_>, _>>()?;
        let rows = arrow_array::RecordBatchOptions::new().with_row_count(Some(self.num_rows()));
        Ok(RecordBatch::try_new_with_options(schema, columns, &rows)?)
    }
}

/// Rows `from..from + n` as a batch of two columns, a number and a text
/// (tests of whatever cuts and joins batches).
#[cfg(test)]
#[allow(clippy::unwrap_used)]
pub(crate) fn numbered_rows(from: i64, n: i64) -> RecordBatch {
    use arrow_array::{Int64Array, StringArray};
    let ids: Vec<i64> = (from..from + n).collect();
    let texts: Vec<String> = ids.iter().map(|i| format!("row {i}")).collect();
    RecordBatch::try_from_iter([
        ("id", std::sync::Arc::new(Int64Array::from(ids)) as ArrayRef),
        (
            "text",
            std::sync::Arc::new(StringArray::from(texts)) as ArrayRef,
        ),
    ])
    .unwrap()
}

#[cfg(test)]
mod tests {
    use super::numbered_rows as batch;
    use super::*;

    /// The same rows cut into pieces of any sizes come out as the same
    /// batches: `rows` each, the last fewer.
    #[test]
    fn any_cut_of_the_rows_gives_the_same_batches() {
        let cases: &[(&str, &[i64])] = &[
            ("whole batches", &[4, 4, 4, 3]),
            ("one piece", &[15]),
            ("single rows", &[1; 15]),
            ("pieces across batches", &[3, 2, 6, 1, 3]),
            ("a short first", &[1, 14]),
        ];
        let want = batch(0, 15);
        for (name, pieces) in cases {
            let mut even = Even::new(4);
            let mut got = Vec::new();
            let mut out = |p: Pieces| {
                got.push(p.join()?);
                Ok(())
            };
            let mut from = 0;
            for &n in *pieces {
                even.push(batch(from, n), &mut out).unwrap();
                from += n;
            }
            even.flush(&mut out).unwrap();
            assert!(even.is_empty(), "{name}");
            let sizes: Vec<usize> = got.iter().map(|b| b.num_rows()).collect();
            assert_eq!(sizes, [4, 4, 4, 3], "{name}");
            let all = arrow_select::concat::concat_batches(&want.schema(), &got).unwrap();
            assert_eq!(all, want, "{name}");
        }
    }
}
