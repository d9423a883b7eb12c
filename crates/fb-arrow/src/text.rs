//! A UTF-8 column over buffers of our own. Arrow's `StringBuilder` takes
//! its memory where it likes; this one starts from a buffer it is given,
//! so the largest column of a batch can start in memory that a
//! [`Prepare`](crate::prepare::Prepare) thread has already faulted in.

use arrow_array::StringArray;
use arrow_buffer::{Buffer, OffsetBuffer, ScalarBuffer};

/// Text values appended row by row.
pub(crate) struct Text {
    /// Where each value starts, then where the last ends.
    offsets: Vec<i32>,
    /// The values' bytes, one after another. Only whole `&str`s are ever
    /// appended, so these bytes are UTF-8 and every offset falls between
    /// two characters: what [`Text::finish`] relies on.
    values: Vec<u8>,
}

impl Text {
    /// An empty column whose values go into `values` (cleared first).
    pub(crate) fn new(mut values: Vec<u8>, rows: usize) -> Self {
        values.clear();
        let mut offsets = Vec::with_capacity(rows + 1);
        offsets.push(0);
        Self { offsets, values }
    }

    /// Appends one value.
    ///
    /// A column never grows past `i32::MAX` bytes: the caller ends the
    /// batch well before ([`Text::bytes`]); past it, the offsets saturate and
    /// [`Text::finish`] reports an error instead of a wrong column.
    pub(crate) fn push(&mut self, s: &str) {
        self.values.extend_from_slice(s.as_bytes());
        self.offsets
            .push(i32::try_from(self.values.len()).unwrap_or(i32::MAX));
    }

    /// Rows appended.
    pub(crate) fn len(&self) -> usize {
        self.offsets.len() - 1
    }

    /// Bytes of text appended.
    pub(crate) fn bytes(&self) -> usize {
        self.values.len()
    }

    /// The column, and this one empty again over `room` for the next batch.
    pub(crate) fn finish(
        &mut self,
        room: Vec<u8>,
    ) -> Result<StringArray, arrow_schema::ArrowError> {
        let rows = self.len();
        let done = std::mem::replace(self, Text::new(room, rows));
        if i32::try_from(done.values.len()).is_err() {
            return Err(arrow_schema::ArrowError::ComputeError(format!(
                "a text column of {} bytes does not fit 32-bit offsets",
                done.values.len()
            )));
        }
        let offsets = OffsetBuffer::new(ScalarBuffer::from(done.offsets));
        let values = Buffer::from_vec(done.values);
        // SAFETY: `values` holds only whole `&str`s appended by `push`, so
        // it is UTF-8 and each offset (the end of one such `&str`, checked
        // above to fit an `i32`) is a character boundary; offsets start at
        // 0, never decrease, and end at `values.len()`. There are no nulls.
        // Skipping the check saves a second UTF-8 pass over the largest
        // column of the batch.
        Ok(unsafe { StringArray::new_unchecked(offsets, values, None) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use arrow_array::Array;

    #[test]
    fn values_come_back_in_order_and_the_column_is_empty_after() {
        let mut t = Text::new(Vec::new(), 0);
        for s in ["", "a", "ünïcødé", "{\"x\":1}"] {
            t.push(s);
        }
        assert_eq!((t.len(), t.bytes()), (4, 19));
        let a = t.finish(Vec::with_capacity(64)).unwrap();
        let got: Vec<&str> = a.iter().map(|v| v.unwrap()).collect();
        assert_eq!(got, ["", "a", "ünïcødé", "{\"x\":1}"]);
        assert_eq!(a.null_count(), 0);
        a.to_data().validate_full().unwrap();
        assert_eq!((t.len(), t.bytes()), (0, 0));
        t.push("next");
        assert_eq!(t.finish(Vec::new()).unwrap().value(0), "next");
    }

    #[test]
    fn a_room_with_old_bytes_starts_empty() {
        let mut t = Text::new(b"stale".to_vec(), 1);
        t.push("fresh");
        assert_eq!(t.finish(Vec::new()).unwrap().value(0), "fresh");
    }
}
