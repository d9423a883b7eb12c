//! Arrow IPC files and streams. A batch made of pieces (several threads
//! joined its rows, `even.rs`) is written piece after piece
//! ([`IpcEncoding::Pieces`], `ipc_body.rs`): joining the pieces into new
//! buffers first, as arrow-ipc's writer needs, copied every byte once
//! more. The bytes are those of arrow-ipc's writer on the joined batch
//! ([`IpcEncoding::Joined`], the plain path), which the tests compare.

use std::io::Write;

use arrow_array::RecordBatch;
use arrow_ipc::writer::{
    write_message, DictionaryTracker, IpcDataGenerator, IpcWriteContext, IpcWriteOptions,
};
use arrow_ipc::{Block, MetadataVersion};
use arrow_schema::{ArrowError, Schema, SchemaRef};

use crate::error::Error;
use crate::even::Pieces;
use crate::ipc_body::{columns, padding, supported, write_zeros, Body, ALIGNMENT};
use crate::schema::schema;
use crate::writers::BatchWriter;

/// How an IPC writer writes a batch that comes in pieces. The bytes are
/// the same.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IpcEncoding {
    /// Each buffer written from the pieces' own memory, one after the
    /// other (offsets rebased, bits shifted). Schemas with types it does
    /// not plan (dictionaries, views, ...) are written as `Joined`.
    #[default]
    Pieces,
    /// The pieces joined into one batch, written by arrow-ipc's writer:
    /// the plain path.
    Joined,
}

/// What begins and ends the messages.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Framing {
    /// Magic, messages, footer with each batch's block, magic.
    File,
    /// Messages and the end-of-stream marker.
    Stream,
}

/// The metadata version arrow-ipc writes by default.
const VERSION: MetadataVersion = MetadataVersion::V5;

/// Starts every message (the length of its metadata follows).
const CONTINUATION: [u8; 4] = [0xff; 4];

const MAGIC: &[u8; 6] = b"ARROW1";

/// An IPC file or stream written piece after piece.
struct PieceWriter<W: Write> {
    out: W,
    framing: Framing,
    schema: SchemaRef,
    /// Bytes written so far: where the next block starts.
    written: usize,
    blocks: Vec<Block>,
    /// Reused from message to message (reset before each).
    fbb: flatbuffers::FlatBufferBuilder<'static>,
    /// Memory of the bytes a body makes, reused.
    made: Vec<u8>,
}

impl<W: Write> PieceWriter<W> {
    /// Writes what comes before the batches: for a file the magic, then
    /// the schema message, as arrow-ipc's writers do.
    fn new(mut out: W, schema: &Schema, framing: Framing) -> Result<Self, Error> {
        let options = IpcWriteOptions::default();
        let mut written = 0;
        if framing == Framing::File {
            out.write_all(MAGIC).map_err(ArrowError::from)?;
            write_zeros(&mut out, padding(MAGIC.len())).map_err(ArrowError::from)?;
            written = MAGIC.len() + padding(MAGIC.len());
        }
        let mut dictionaries = DictionaryTracker::new(framing == Framing::File);
        let message = IpcDataGenerator::default().schema_to_bytes_with_dictionary_tracker(
            schema,
            &mut dictionaries,
            &options,
        );
        let (meta, body) = write_message(&mut out, message, &options)?;
        Ok(Self {
            out,
            framing,
            schema: std::sync::Arc::new(schema.clone()),
            written: written + meta + body,
            blocks: Vec::new(),
            fbb: flatbuffers::FlatBufferBuilder::new(),
            made: Vec::new(),
        })
    }

    /// Writes the rows of `pieces`, in order, as one record batch.
    fn write(&mut self, pieces: &[RecordBatch]) -> Result<(), Error> {
        let Some(columns) = columns(&self.schema, pieces) else {
            return self.write_joined(pieces);
        };
        let made = std::mem::take(&mut self.made);
        let body = match Body::plan(&columns, made) {
            Ok(body) => body,
            Err(_) => return self.write_joined(pieces),
        };
        let written = self.message(&body);
        self.made = body.into_made();
        written
    }

    /// Writes the message of `body`: the continuation, the metadata padded
    /// so that the body starts aligned, then the body.
    fn message(&mut self, body: &Body<'_>) -> Result<(), Error> {
        use arrow_ipc::{MessageBuilder, MessageHeader, RecordBatchBuilder};
        let fbb = &mut self.fbb;
        fbb.reset();
        let buffers = fbb.create_vector(body.buffers());
        let nodes = fbb.create_vector(body.nodes());
        let header = {
            let mut batch = RecordBatchBuilder::new(fbb);
            batch.add_length(as_i64(body.rows())?);
            batch.add_nodes(nodes);
            batch.add_buffers(buffers);
            batch.finish().as_union_value()
        };
        let mut message = MessageBuilder::new(fbb);
        message.add_version(VERSION);
        message.add_header_type(MessageHeader::RecordBatch);
        message.add_bodyLength(as_i64(body.len())?);
        message.add_header(header);
        let root = message.finish();
        fbb.finish(root, None);
        let metadata = fbb.finished_data();
        let header_len = (metadata.len() + 8).next_multiple_of(ALIGNMENT);
        let metadata_len = i32::try_from(header_len - 8).map_err(|_| too_large())?;
        let mut write = || -> std::io::Result<()> {
            self.out.write_all(&CONTINUATION)?;
            self.out.write_all(&metadata_len.to_le_bytes())?;
            self.out.write_all(metadata)?;
            write_zeros(&mut self.out, header_len - 8 - metadata.len())?;
            body.write_to(&mut self.out)
        };
        write().map_err(ArrowError::from)?;
        let header_len = i32::try_from(header_len).map_err(|_| too_large())?;
        self.block(header_len, body.len())
    }

    /// Writes `pieces` joined, as arrow-ipc encodes a batch: for pieces
    /// the plan does not take.
    fn write_joined(&mut self, pieces: &[RecordBatch]) -> Result<(), Error> {
        let batch = Pieces::whole(pieces.to_vec()).join()?;
        let options = IpcWriteOptions::default();
        let mut dictionaries = DictionaryTracker::new(self.framing == Framing::File);
        let (dictionary_messages, message) = IpcDataGenerator::default().encode(
            &batch,
            &mut dictionaries,
            &options,
            &mut IpcWriteContext::default(),
        )?;
        if !dictionary_messages.is_empty() {
            let why = "dictionary columns are written with IpcEncoding::Joined";
            return Err(ArrowError::InvalidArgumentError(why.into()).into());
        }
        let (header_len, body_len) = write_message(&mut self.out, message, &options)?;
        let header_len = i32::try_from(header_len).map_err(|_| too_large())?;
        self.block(header_len, body_len)
    }

    /// Counts a record batch message of a file's footer.
    fn block(&mut self, header_len: i32, body_len: usize) -> Result<(), Error> {
        let at = as_i64(self.written)?;
        self.blocks
            .push(Block::new(at, header_len, as_i64(body_len)?));
        self.written += header_len as usize + body_len;
        Ok(())
    }

    /// Writes the end-of-stream marker and, for a file, the footer (the
    /// schema and each batch's block), its length and the magic.
    fn finish(mut self) -> Result<W, Error> {
        use arrow_ipc::convert::IpcSchemaEncoder;
        use arrow_ipc::FooterBuilder;
        let mut end = CONTINUATION.to_vec();
        end.extend_from_slice(&0i32.to_le_bytes());
        if self.framing == Framing::File {
            let mut fbb = flatbuffers::FlatBufferBuilder::new();
            let dictionaries = fbb.create_vector::<Block>(&[]);
            let batches = fbb.create_vector(&self.blocks);
            let mut tracker = DictionaryTracker::new(true);
            let schema = IpcSchemaEncoder::new()
                .with_dictionary_tracker(&mut tracker)
                .schema_to_fb_offset(&mut fbb, &self.schema);
            let mut footer = FooterBuilder::new(&mut fbb);
            footer.add_version(VERSION);
            footer.add_schema(schema);
            footer.add_dictionaries(dictionaries);
            footer.add_recordBatches(batches);
            let root = footer.finish();
            fbb.finish(root, None);
            let footer = fbb.finished_data();
            let footer_len = i32::try_from(footer.len()).map_err(|_| too_large())?;
            end.extend_from_slice(footer);
            end.extend_from_slice(&footer_len.to_le_bytes());
            end.extend_from_slice(MAGIC);
        }
        self.out.write_all(&end).map_err(ArrowError::from)?;
        self.out.flush().map_err(ArrowError::from)?;
        Ok(self.out)
    }
}

fn as_i64(n: usize) -> Result<i64, Error> {
    i64::try_from(n).map_err(|_| too_large())
}

fn too_large() -> Error {
    ArrowError::InvalidArgumentError("an IPC message larger than its lengths hold".into()).into()
}

/// An IPC writer: arrow-ipc's (`A`) or one that writes pieces.
enum Ipc<W: Write, A> {
    Joined(A),
    Pieces(PieceWriter<W>),
}

/// The Arrow IPC writers, file and stream, as [`BatchWriter`]s.
macro_rules! ipc {
    ($(#[$doc:meta])* $name:ident, $writer:ident, $framing:expr) => {
        $(#[$doc])*
        pub struct $name<W: Write>(Ipc<W, arrow_ipc::writer::$writer<W>>);

        impl<W: Write> $name<W> {
            /// Starts writing to `out`, every column.
            pub fn new(out: W) -> Result<Self, Error> {
                Self::with_schema(out, &schema())
            }

            /// Starts writing batches of `schema` (see [`Columns`](crate::Columns)) to `out`.
            pub fn with_schema(out: W, schema: &Schema) -> Result<Self, Error> {
                Self::with_encoding(out, schema, IpcEncoding::default())
            }

            /// As [`Self::with_schema`], writing batches that come in
            /// pieces as `encoding` says.
            pub fn with_encoding(
                out: W,
                schema: &Schema,
                encoding: IpcEncoding,
            ) -> Result<Self, Error> {
                Ok(Self(match encoding {
                    IpcEncoding::Pieces if supported(schema) => {
                        Ipc::Pieces(PieceWriter::new(out, schema, $framing)?)
                    }
                    _ => Ipc::Joined(arrow_ipc::writer::$writer::try_new(out, schema)?),
                }))
            }
        }

        impl<W: Write> BatchWriter for $name<W> {
            type Output = W;

            fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
                match &mut self.0 {
                    Ipc::Joined(w) => Ok(w.write(batch)?),
                    Ipc::Pieces(w) => w.write(std::slice::from_ref(batch)),
                }
            }

            fn write_pieces(&mut self, pieces: Pieces) -> Result<(), Error> {
                match &mut self.0 {
                    Ipc::Joined(w) => Ok(w.write(&pieces.join()?)?),
                    Ipc::Pieces(w) => w.write(pieces.batches()),
                }
            }

            fn finish(self) -> Result<W, Error> {
                match self.0 {
                    Ipc::Joined(mut w) => {
                        w.finish()?;
                        Ok(w.into_inner()?)
                    }
                    Ipc::Pieces(w) => w.finish(),
                }
            }
        }
    };
}

ipc!(
    /// An Arrow IPC file (random access; `.arrow`).
    IpcFile,
    FileWriter,
    Framing::File
);
ipc!(
    /// An Arrow IPC stream (for pipes).
    IpcStream,
    StreamWriter,
    Framing::Stream
);

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    use arrow_array::builder::BooleanBufferBuilder;
    use arrow_array::{
        ArrayRef, BinaryArray, BooleanArray, DictionaryArray, Float32Array, Int32Array, Int64Array,
        ListArray, StringArray, StructArray, TimestampMicrosecondArray,
    };
    use arrow_buffer::{NullBuffer, OffsetBuffer};
    use arrow_schema::{DataType, Field, Fields};

    fn nulls(rows: std::ops::Range<usize>, every: usize) -> Option<NullBuffer> {
        let mut bits = BooleanBufferBuilder::new(rows.len());
        rows.for_each(|i| bits.append(i % every != every - 1));
        Some(NullBuffer::new(bits.finish()))
    }

    /// Rows `from..from + n` of a batch with a column of every type the
    /// plan takes, nulls at every level, and empty and null lists: the
    /// same row has the same values whatever batch holds it.
    fn batch(from: usize, n: usize) -> RecordBatch {
        let rows = from..from + n;
        let id = Int64Array::from_iter_values(rows.clone().map(|i| i as i64 * 7));
        let text = StringArray::from_iter(
            rows.clone()
                .map(|i| (i % 3 != 2).then(|| "t".repeat(i % 5))),
        );
        let flag =
            BooleanArray::from_iter(rows.clone().map(|i| (i % 5 != 4).then_some(i % 2 == 0)));
        let time = TimestampMicrosecondArray::from_iter(
            rows.clone().map(|i| (i % 6 != 5).then_some(i as i64)),
        )
        .with_timezone("UTC");
        let bytes = BinaryArray::from_iter_values(rows.clone().map(|i| vec![i as u8; i % 4]));
        // A list per row: null every 4th, of i % 3 items.
        let lens: Vec<usize> = rows.clone().map(|i| i % 3).collect();
        let start: usize = (0..from).map(|i| i % 3).sum();
        let items = start..start + lens.iter().sum::<usize>();
        let item = Arc::new(Field::new("item", DataType::Int32, true));
        let values = Int32Array::from_iter(items.clone().map(|k| (k % 4 != 3).then_some(k as i32)));
        let list = ListArray::new(
            Arc::clone(&item),
            OffsetBuffer::from_lengths(lens.iter().copied()),
            Arc::new(values),
            nulls(rows.clone(), 4),
        );
        // A list of structs, each with a text, a number and a list of bools.
        let flags = Arc::new(Field::new("item", DataType::Boolean, true));
        let fields = Fields::from(vec![
            Field::new("a", DataType::Utf8, true),
            Field::new("b", DataType::Float32, false),
            Field::new("c", DataType::List(Arc::clone(&flags)), true),
        ]);
        let inner_lens: Vec<usize> = items.clone().map(|k| k % 2 + 1).collect();
        let inner_start: usize = (0..items.start).map(|k| k % 2 + 1).sum();
        let inner = inner_start..inner_start + inner_lens.iter().sum::<usize>();
        let c = ListArray::new(
            flags,
            OffsetBuffer::from_lengths(inner_lens),
            Arc::new(BooleanArray::from_iter(inner.map(|k| Some(k % 3 == 0)))),
            nulls(items.clone(), 5),
        );
        let a =
            StringArray::from_iter(items.clone().map(|k| (k % 2 == 0).then(|| format!("a{k}"))));
        let b = Float32Array::from_iter_values(items.clone().map(|k| k as f32));
        let structs = StructArray::new(
            fields.clone(),
            vec![Arc::new(a), Arc::new(b), Arc::new(c)],
            nulls(items, 6),
        );
        let slots = ListArray::new(
            Arc::new(Field::new("item", DataType::Struct(fields), true)),
            OffsetBuffer::from_lengths(lens),
            Arc::new(structs),
            None,
        );
        RecordBatch::try_from_iter([
            ("id", Arc::new(id) as ArrayRef),
            ("text", Arc::new(text)),
            ("flag", Arc::new(flag)),
            ("time", Arc::new(time)),
            ("bytes", Arc::new(bytes)),
            ("list", Arc::new(list)),
            ("slots", Arc::new(slots)),
        ])
        .unwrap()
    }

    /// The cuts of each case: (from, rows) of a batch of 40 rows; `true`
    /// where the pieces are slices of it.
    fn cases() -> Vec<(&'static str, Vec<RecordBatch>, bool)> {
        let big = batch(0, 40);
        vec![
            ("one whole batch", vec![batch(0, 21)], false),
            (
                "whole batches",
                vec![batch(0, 7), batch(7, 13), batch(20, 1)],
                false,
            ),
            (
                "slices at odd bits",
                vec![big.slice(3, 11), big.slice(14, 9), big.slice(23, 17)],
                true,
            ),
            (
                "slices at whole bytes",
                vec![big.slice(8, 8), big.slice(16, 5), big.slice(21, 3)],
                true,
            ),
            (
                "a piece of no rows",
                vec![big.slice(5, 0), big.slice(5, 6), big.slice(11, 0)],
                true,
            ),
            (
                "only rows without nulls",
                vec![big.slice(0, 2), big.slice(0, 1)],
                true,
            ),
            ("one slice", vec![big.slice(9, 17)], true),
        ]
    }

    fn pieces(batches: &[RecordBatch], sliced: bool) -> Pieces {
        let mut pieces = Pieces::whole(batches.to_vec());
        pieces.sliced = sliced;
        pieces
    }

    /// Two record batches of `batches`' rows each, written with `encoding`.
    fn written(
        batches: &[RecordBatch],
        sliced: bool,
        encoding: IpcEncoding,
        stream: bool,
    ) -> Vec<u8> {
        let schema = batches[0].schema();
        match stream {
            false => {
                let mut w = IpcFile::with_encoding(Vec::new(), &schema, encoding).unwrap();
                w.write_pieces(pieces(batches, sliced)).unwrap();
                w.write_pieces(pieces(batches, sliced)).unwrap();
                w.finish().unwrap()
            }
            true => {
                let mut w = IpcStream::with_encoding(Vec::new(), &schema, encoding).unwrap();
                w.write_pieces(pieces(batches, sliced)).unwrap();
                w.write_pieces(pieces(batches, sliced)).unwrap();
                w.finish().unwrap()
            }
        }
    }

    /// Pieces written one after the other give arrow-ipc's bytes for the
    /// joined batch, in a file and in a stream, and read back as it.
    #[test]
    fn pieces_are_written_as_the_joined_batch() {
        for (name, batches, sliced) in cases() {
            let columns = columns(&batches[0].schema(), &batches).unwrap();
            assert!(Body::plan(&columns, Vec::new()).is_ok(), "{name}: planned");
            for stream in [false, true] {
                let want = written(&batches, sliced, IpcEncoding::Joined, stream);
                let got = written(&batches, sliced, IpcEncoding::Pieces, stream);
                assert!(
                    got == want,
                    "{name}, stream {stream}: {} against {} bytes",
                    got.len(),
                    want.len()
                );
            }
            let file = written(&batches, sliced, IpcEncoding::Pieces, false);
            let read: Vec<RecordBatch> =
                arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(file), None)
                    .unwrap()
                    .map(|b| b.unwrap())
                    .collect();
            let joined = pieces(&batches, sliced).join().unwrap();
            assert_eq!(read, [joined.clone(), joined], "{name}");
        }
    }

    /// The way out for pieces the plan does not take writes what
    /// arrow-ipc writes.
    #[test]
    fn pieces_joined_here_are_arrow_ipcs_bytes() {
        for (name, batches, sliced) in cases() {
            let schema = batches[0].schema();
            let mut w = PieceWriter::new(Vec::new(), &schema, Framing::File).unwrap();
            w.write_joined(&batches).unwrap();
            w.write(&batches).unwrap();
            let got = w.finish().unwrap();
            let joined = pieces(&batches, sliced).join().unwrap();
            let mut want =
                IpcFile::with_encoding(Vec::new(), &schema, IpcEncoding::Joined).unwrap();
            want.write(&joined).unwrap();
            want.write(&joined).unwrap();
            assert!(got == want.finish().unwrap(), "{name}");
        }
    }

    /// A schema with a type the plan does not take is written by arrow-ipc.
    #[test]
    fn a_dictionary_column_is_written_by_arrow_ipc() {
        let keys = Int32Array::from(vec![0, 1, 0]);
        let values = StringArray::from(vec!["x", "y"]);
        let dict = DictionaryArray::new(keys, Arc::new(values));
        let batch = RecordBatch::try_from_iter([("d", Arc::new(dict) as ArrayRef)]).unwrap();
        let schema = batch.schema();
        let w = IpcFile::with_encoding(Vec::new(), &schema, IpcEncoding::Pieces).unwrap();
        assert!(matches!(w.0, Ipc::Joined(_)));
        let want = written(
            std::slice::from_ref(&batch),
            false,
            IpcEncoding::Joined,
            false,
        );
        assert!(written(&[batch], false, IpcEncoding::Pieces, false) == want);
    }
}
