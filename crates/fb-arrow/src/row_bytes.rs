//! How many bytes rows take in Arrow, counted from the rows alone: the
//! bound of a Parquet row group, and of a batch gathered from pieces.

use arrow_array::RecordBatch;

/// Bytes of the rows of `batch`, as built afresh: a function of the rows
/// alone, not of how they were cut or sliced, so that a Parquet file's
/// row groups end at the same rows for any number of threads.
pub(crate) fn arrow_bytes(batch: &RecordBatch) -> usize {
    batch
        .columns()
        .iter()
        .map(|c| content_bytes(c.as_ref()))
        .sum()
}

/// Bytes of `array`'s values, offsets and validity (counted for every
/// array, whether or not it has a null buffer), its children's within it.
fn content_bytes(array: &dyn arrow_array::Array) -> usize {
    use arrow_array::cast::AsArray;
    use arrow_schema::DataType;
    let n = array.len();
    let bits = n.div_ceil(8);
    let own = match array.data_type() {
        DataType::Utf8 => {
            let offsets = array.as_string::<i32>().value_offsets();
            4 * (n + 1) + span(offsets)
        }
        DataType::List(_) => {
            let list = array.as_list::<i32>();
            let offsets = list.value_offsets();
            let from = offsets.first().map_or(0, |&o| o as usize);
            let values = list.values().slice(from, span(offsets));
            4 * (n + 1) + content_bytes(values.as_ref())
        }
        DataType::Struct(_) => array
            .as_struct()
            .columns()
            .iter()
            .map(|c| content_bytes(c.as_ref()))
            .sum(),
        DataType::Boolean => bits,
        other => other.primitive_width().unwrap_or(0) * n,
    };
    own + bits
}

/// Values between the first and last of `offsets`.
fn span(offsets: &[i32]) -> usize {
    match (offsets.first(), offsets.last()) {
        (Some(&first), Some(&last)) => usize::try_from(last - first).unwrap_or(0),
        _ => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::builder::{Int64Builder, ListBuilder};
    use arrow_array::{ArrayRef, StringArray};

    /// Rows `from..to` of a batch with a list, texts and nulls.
    fn rows(from: usize, to: usize) -> RecordBatch {
        let mut lists = ListBuilder::new(Int64Builder::new());
        for i in from..to {
            match i % 3 {
                0 => lists.append_null(),
                _ => lists.append_value((0..i as i64 % 5).map(Some)),
            }
        }
        let texts: StringArray = (from..to)
            .map(|i| (i % 4 != 0).then(|| "x".repeat(i)))
            .collect();
        RecordBatch::try_from_iter([
            ("list", Arc::new(lists.finish()) as ArrayRef),
            ("text", Arc::new(texts) as ArrayRef),
        ])
        .unwrap()
    }

    /// A slice counts what the same rows built afresh count: its buffers'
    /// rows outside it and its null buffer (present in the slice, absent
    /// in rows without nulls) do not count.
    #[test]
    fn bytes_are_the_rows_not_their_buffers() {
        let cases = [
            ("middle", 4, 11),
            ("no nulls", 4, 6),
            ("first", 0, 1),
            ("all", 0, 20),
        ];
        let whole = rows(0, 20);
        for (name, from, to) in cases {
            let slice = whole.slice(from, to - from);
            assert_eq!(arrow_bytes(&slice), arrow_bytes(&rows(from, to)), "{name}");
        }
        assert!(arrow_bytes(&whole.slice(4, 7)) < arrow_bytes(&whole.slice(4, 8)));
    }
}
