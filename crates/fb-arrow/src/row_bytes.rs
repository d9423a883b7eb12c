//! How many bytes rows take in Arrow, counted from the rows alone: the
//! bound of a Parquet row group, and of a batch gathered from pieces.

use arrow_array::{Array, ArrayRef, RecordBatch};

/// Bytes of the rows of `batch`, as built afresh: a function of the rows
/// alone, not of how they were cut or sliced, so that a Parquet file's
/// row groups end at the same rows for any number of threads.
pub(crate) fn arrow_bytes(batch: &RecordBatch) -> usize {
    pieces_bytes(std::slice::from_ref(batch))
}

/// Bytes of the rows of `pieces` joined into one batch (what
/// [`arrow_bytes`] counts of it), without joining them.
pub(crate) fn pieces_bytes(pieces: &[RecordBatch]) -> usize {
    let columns = pieces.first().map_or(0, RecordBatch::num_columns);
    (0..columns)
        .map(|i| {
            let arrays: Vec<&dyn Array> = pieces
                .iter()
                .filter_map(|p| p.columns().get(i))
                .map(|c| c.as_ref())
                .collect();
            content_bytes(&arrays)
        })
        .sum()
}

/// Bytes of the values, offsets and validity of `arrays` as one array
/// (validity counted for every array, whether or not it has a null
/// buffer), its children's within it.
fn content_bytes(arrays: &[&dyn Array]) -> usize {
    use arrow_array::cast::AsArray;
    use arrow_schema::DataType;
    let Some(first) = arrays.first() else {
        return 0;
    };
    let n: usize = arrays.iter().map(|a| a.len()).sum();
    let bits = n.div_ceil(8);
    let own = match first.data_type() {
        DataType::Utf8 => {
            let spans = arrays.iter().filter_map(|a| a.as_string_opt::<i32>());
            4 * (n + 1) + spans.map(|s| span(s.value_offsets())).sum::<usize>()
        }
        DataType::List(_) => {
            let items: Vec<ArrayRef> = arrays
                .iter()
                .filter_map(|a| a.as_list_opt::<i32>())
                .map(|list| {
                    let offsets = list.value_offsets();
                    let from = offsets.first().map_or(0, |&o| o as usize);
                    list.values().slice(from, span(offsets))
                })
                .collect();
            let items: Vec<&dyn Array> = items.iter().map(|a| a.as_ref()).collect();
            4 * (n + 1) + content_bytes(&items)
        }
        DataType::Struct(fields) => (0..fields.len())
            .map(|i| {
                let children: Vec<&dyn Array> = arrays
                    .iter()
                    .filter_map(|a| a.as_struct_opt())
                    .filter_map(|s| s.columns().get(i))
                    .map(|c| c.as_ref())
                    .collect();
                content_bytes(&children)
            })
            .sum(),
        DataType::Boolean => bits,
        other => other.primitive_width().unwrap_or(0) * n,
    };
    own + bits
}

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

    /// Pieces count what the batch they join into counts.
    #[test]
    fn pieces_count_as_their_joined_batch() {
        let whole = rows(0, 29);
        let cases: &[(&str, &[(usize, usize)])] = &[
            ("one piece", &[(0, 29)]),
            ("two", &[(0, 13), (13, 16)]),
            ("odd bits", &[(0, 3), (3, 5), (8, 1), (9, 20)]),
            ("an empty piece", &[(0, 0), (0, 29)]),
        ];
        for (name, cuts) in cases {
            let pieces: Vec<RecordBatch> = cuts.iter().map(|&(f, n)| whole.slice(f, n)).collect();
            let joined = arrow_select::concat::concat_batches(&whole.schema(), &pieces).unwrap();
            assert_eq!(pieces_bytes(&pieces), arrow_bytes(&joined), "{name}");
        }
    }
}
