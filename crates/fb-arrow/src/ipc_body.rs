//! The body of an Arrow IPC record batch message, planned from the pieces
//! of one batch (`even.rs`) without joining them: each buffer of the
//! batch is the pieces' runs of that buffer one after the other. Values
//! are written from the pieces' own memory; offsets are rebased and bits
//! shifted into memory of our own. The nodes, buffers and bytes are those
//! arrow-ipc writes for the pieces joined into one batch (`ipc.rs` holds
//! the message around them, and the test that compares the two).

use std::io::Write;
use std::ops::Range;

use arrow_array::RecordBatch;
use arrow_buffer::bit_mask::set_bits;
use arrow_buffer::bit_util::set_bit;
use arrow_data::ArrayData;
use arrow_ipc::{Buffer as BodyBuffer, FieldNode};
use arrow_schema::{DataType, Schema};

/// Where each buffer of a body ends: arrow-ipc's default alignment, so
/// that the bytes are those it writes.
pub(crate) const ALIGNMENT: usize = 64;

/// Zeros to pad with.
const PADDING: [u8; ALIGNMENT] = [0; ALIGNMENT];

/// Writes `n` zeros.
pub(crate) fn write_zeros(out: &mut impl Write, mut n: usize) -> std::io::Result<()> {
    while n > 0 {
        let zeros = PADDING.get(..n.min(ALIGNMENT)).unwrap_or_default();
        out.write_all(zeros)?;
        n -= zeros.len();
    }
    Ok(())
}

/// Bytes that end a run of `len` bytes on [`ALIGNMENT`].
pub(crate) fn padding(len: usize) -> usize {
    len.next_multiple_of(ALIGNMENT) - len
}

/// Whether every column of `schema` is of a type the plan encodes; the
/// others (dictionaries, views, unions, ...) are written by arrow-ipc.
pub(crate) fn supported(schema: &Schema) -> bool {
    schema
        .fields()
        .iter()
        .all(|f| supported_type(f.data_type()))
}

fn supported_type(dt: &DataType) -> bool {
    match dt {
        DataType::Utf8 | DataType::Binary | DataType::Boolean => true,
        DataType::List(item) => supported_type(item.data_type()),
        DataType::Struct(fields) => fields.iter().all(|f| supported_type(f.data_type())),
        dt => (dt.is_numeric() || dt.is_temporal()) && dt.primitive_width().is_some(),
    }
}

/// The pieces cannot be planned: a type or a buffer is not as the plan
/// expects. The caller joins them and lets arrow-ipc encode the batch.
#[derive(Debug)]
pub(crate) struct Unfit;

/// `len` rows of one piece's array, from its logical row `start`.
#[derive(Clone, Copy)]
struct View<'a> {
    data: &'a ArrayData,
    start: usize,
    len: usize,
}

/// A run of a body's bytes.
enum Run<'a> {
    /// Bytes of a piece, written as they are.
    Piece(&'a [u8]),
    /// Bytes made here (rebased offsets, shifted bits): a range of
    /// [`Body::made`].
    Made(Range<usize>),
    /// Zeros up to the next buffer.
    Pad(usize),
}

/// A record batch's body: its nodes and buffers for the message, and
/// where each of its bytes comes from.
pub(crate) struct Body<'a> {
    rows: usize,
    nodes: Vec<FieldNode>,
    buffers: Vec<BodyBuffer>,
    runs: Vec<Run<'a>>,
    made: Vec<u8>,
    /// Bytes of the body so far (padded buffers).
    len: usize,
    /// Where the buffer being planned starts, and its bytes so far.
    buffer_start: usize,
    buffer_len: usize,
}

/// The columns of `pieces`, each as its pieces' arrays, for [`Body::plan`]
/// to borrow. `None` when a piece's columns are not the schema's.
pub(crate) fn columns(schema: &Schema, pieces: &[RecordBatch]) -> Option<Vec<Vec<ArrayData>>> {
    let fields = schema.fields();
    let mut columns: Vec<Vec<ArrayData>> = fields.iter().map(|_| Vec::new()).collect();
    for piece in pieces {
        if piece.num_columns() != fields.len() {
            return None;
        }
        for ((column, field), datas) in piece.columns().iter().zip(fields).zip(&mut columns) {
            if column.data_type() != field.data_type() {
                return None;
            }
            datas.push(column.to_data());
        }
    }
    Some(columns)
}

impl<'a> Body<'a> {
    /// Plans the body of the batch whose columns are `columns` (from
    /// [`columns`]), making its own bytes in `made` (cleared; handed back
    /// by [`Body::into_made`] so that its memory serves the next batch).
    pub(crate) fn plan(columns: &'a [Vec<ArrayData>], made: Vec<u8>) -> Result<Self, Unfit> {
        let mut body = Body {
            rows: 0,
            nodes: Vec::new(),
            buffers: Vec::new(),
            runs: Vec::new(),
            made,
            len: 0,
            buffer_start: 0,
            buffer_len: 0,
        };
        body.made.clear();
        let mut views = Vec::new();
        for (i, datas) in columns.iter().enumerate() {
            views.clear();
            views.extend(datas.iter().map(|data| View {
                data,
                start: 0,
                len: data.len(),
            }));
            let Some(first) = datas.first() else {
                return Err(Unfit);
            };
            let rows = datas.iter().map(ArrayData::len).sum();
            if i > 0 && rows != body.rows {
                return Err(Unfit);
            }
            body.rows = rows;
            body.node(first.data_type(), &views)?;
        }
        Ok(body)
    }

    /// Rows of the batch.
    pub(crate) fn rows(&self) -> usize {
        self.rows
    }

    /// The nodes of the message, one per array, depth first.
    pub(crate) fn nodes(&self) -> &[FieldNode] {
        &self.nodes
    }

    /// The buffers of the message: where each lies in the body.
    pub(crate) fn buffers(&self) -> &[BodyBuffer] {
        &self.buffers
    }

    /// Bytes of the body, padding included.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// Writes the body's bytes to `out`.
    pub(crate) fn write_to(&self, out: &mut impl Write) -> std::io::Result<()> {
        for run in &self.runs {
            match run {
                Run::Piece(bytes) => out.write_all(bytes)?,
                Run::Made(range) => match self.made.get(range.clone()) {
                    Some(bytes) => out.write_all(bytes)?,
                    None => return Err(std::io::Error::other("an IPC body's run out of range")),
                },
                Run::Pad(n) => write_zeros(out, *n)?,
            }
        }
        Ok(())
    }

    /// The memory of the bytes made here, for the next batch.
    pub(crate) fn into_made(self) -> Vec<u8> {
        self.made
    }

    /// One array of `dt` made of `views`, and the arrays under it, in the
    /// order arrow-ipc writes them: its node, its validity (empty when no
    /// row is null), its own buffers, then its children.
    fn node(&mut self, dt: &DataType, views: &[View<'a>]) -> Result<(), Unfit> {
        let len: usize = views.iter().map(|v| v.len).sum();
        let mut nulls = 0;
        for view in views {
            nulls += null_count(view)?;
        }
        self.nodes
            .push(FieldNode::new(as_i64(len)?, as_i64(nulls)?));
        self.begin();
        if nulls > 0 {
            self.bits(len, views, |v| {
                v.data
                    .nulls()
                    .map(|n| (n.buffer().as_slice(), n.offset() + v.start))
            })?;
        }
        self.end()?;
        match dt {
            DataType::Utf8 | DataType::Binary => {
                let ranges = self.offsets(views)?;
                self.begin();
                for (view, range) in views.iter().zip(ranges) {
                    let values = view.data.buffers().get(1).ok_or(Unfit)?;
                    self.piece(values.as_slice().get(range).ok_or(Unfit)?);
                }
                self.end()
            }
            DataType::Boolean => {
                self.begin();
                let mut values = Vec::with_capacity(views.len());
                for view in views {
                    let buffer = view.data.buffers().first().ok_or(Unfit)?;
                    values.push((buffer.as_slice(), view.data.offset() + view.start));
                }
                let mut at = values.into_iter();
                self.bits(len, views, |_| at.next())?;
                self.end()
            }
            DataType::List(item) => {
                let ranges = self.offsets(views)?;
                let mut items = Vec::with_capacity(views.len());
                for (view, range) in views.iter().zip(ranges) {
                    let data = view.data.child_data().first().ok_or(Unfit)?;
                    items.push(child(data, range.start, range.len())?);
                }
                self.node(item.data_type(), &items)
            }
            DataType::Struct(fields) => {
                let mut children = Vec::with_capacity(views.len());
                for (i, field) in fields.iter().enumerate() {
                    children.clear();
                    for view in views {
                        // A struct's children are cut as it is: row k of
                        // a child is row k of the struct.
                        let data = view.data.child_data().get(i).ok_or(Unfit)?;
                        children.push(child(data, view.start, view.len)?);
                    }
                    self.node(field.data_type(), &children)?;
                }
                Ok(())
            }
            dt if supported_type(dt) => {
                let width = dt.primitive_width().ok_or(Unfit)?;
                self.begin();
                for view in views {
                    let values = view.data.buffers().first().ok_or(Unfit)?;
                    let from = (view.data.offset() + view.start) * width;
                    let range = from..from + view.len * width;
                    self.piece(values.as_slice().get(range).ok_or(Unfit)?);
                }
                self.end()
            }
            _ => Err(Unfit),
        }
    }

    /// The views' 32-bit offsets as one run from 0, and each view's range
    /// of what they point into (value bytes or child rows). A view whose
    /// offsets need no shift is written from its own memory.
    fn offsets(&mut self, views: &[View<'a>]) -> Result<Vec<Range<usize>>, Unfit> {
        const WIDTH: usize = 4;
        self.begin();
        let mut ranges = Vec::with_capacity(views.len());
        let mut base = 0i64;
        for (i, view) in views.iter().enumerate() {
            let buffer = view.data.buffers().first().ok_or(Unfit)?;
            let from = (view.data.offset() + view.start) * WIDTH;
            let bytes = buffer
                .as_slice()
                .get(from..from + (view.len + 1) * WIDTH)
                .ok_or(Unfit)?;
            let (Some(first), Some(last)) = (offset_at(bytes, 0), offset_at(bytes, view.len))
            else {
                return Err(Unfit);
            };
            let (Ok(start), Ok(end)) = (usize::try_from(first), usize::try_from(last)) else {
                return Err(Unfit);
            };
            if end < start {
                return Err(Unfit);
            }
            ranges.push(start..end);
            // A later view's first offset is the last one already written.
            let own = match i {
                0 => bytes,
                _ => bytes.get(WIDTH..).ok_or(Unfit)?,
            };
            let shift = base - i64::from(first);
            if shift == 0 {
                self.piece(own);
            } else {
                let at = self.made.len();
                for value in own.chunks_exact(WIDTH) {
                    let value = i64::from(i32::from_le_bytes(value.try_into().map_err(|_| Unfit)?));
                    let rebased = i32::try_from(value + shift).map_err(|_| Unfit)?;
                    self.made.extend_from_slice(&rebased.to_le_bytes());
                }
                self.made_run(at);
            }
            base += i64::from(last) - i64::from(first);
        }
        if views.is_empty() {
            let at = self.made.len();
            self.made.extend_from_slice(&0i32.to_le_bytes());
            self.made_run(at);
        }
        self.end()?;
        Ok(ranges)
    }

    /// `len` bits made of each view's run: from `source`'s bytes at its
    /// bit offset, all set where it gives none (a view without nulls).
    fn bits(
        &mut self,
        len: usize,
        views: &[View<'a>],
        mut source: impl FnMut(&View<'a>) -> Option<(&'a [u8], usize)>,
    ) -> Result<(), Unfit> {
        let at = self.made.len();
        self.made.resize(at + len.div_ceil(8), 0);
        let out = self.made.get_mut(at..).ok_or(Unfit)?;
        let mut written = 0;
        for view in views {
            match source(view) {
                Some((bytes, offset)) => {
                    if (offset + view.len).div_ceil(8) > bytes.len() {
                        return Err(Unfit);
                    }
                    set_bits(out, bytes, written, offset, view.len);
                }
                None => (written..written + view.len).for_each(|i| set_bit(out, i)),
            }
            written += view.len;
        }
        self.made_run(at);
        Ok(())
    }

    fn begin(&mut self) {
        self.buffer_start = self.len;
        self.buffer_len = 0;
    }

    fn piece(&mut self, bytes: &'a [u8]) {
        if !bytes.is_empty() {
            self.buffer_len += bytes.len();
            self.runs.push(Run::Piece(bytes));
        }
    }

    /// The bytes made since `at`.
    fn made_run(&mut self, at: usize) {
        let end = self.made.len();
        if end > at {
            self.buffer_len += end - at;
            self.runs.push(Run::Made(at..end));
        }
    }

    fn end(&mut self) -> Result<(), Unfit> {
        let pad = padding(self.buffer_len);
        let buffer = BodyBuffer::new(as_i64(self.buffer_start)?, as_i64(self.buffer_len)?);
        self.buffers.push(buffer);
        if pad > 0 {
            self.runs.push(Run::Pad(pad));
        }
        self.len += self.buffer_len + pad;
        Ok(())
    }
}

/// The rows `start..start + len` of `data`, when it has them.
fn child(data: &ArrayData, start: usize, len: usize) -> Result<View<'_>, Unfit> {
    match start.checked_add(len) {
        Some(end) if end <= data.len() => Ok(View { data, start, len }),
        _ => Err(Unfit),
    }
}

/// Null rows of a view.
fn null_count(view: &View<'_>) -> Result<usize, Unfit> {
    match view.data.nulls() {
        None => Ok(0),
        Some(n) if n.len() != view.data.len() => Err(Unfit),
        Some(n) if view.start == 0 && view.len == n.len() => Ok(n.null_count()),
        Some(n) => Ok(n.slice(view.start, view.len).null_count()),
    }
}

/// The `i`th 32-bit offset of `bytes`.
fn offset_at(bytes: &[u8], i: usize) -> Option<i32> {
    let value = bytes.get(i * 4..i * 4 + 4)?;
    Some(i32::from_le_bytes(value.try_into().ok()?))
}

fn as_i64(n: usize) -> Result<i64, Unfit> {
    i64::try_from(n).map_err(|_| Unfit)
}
