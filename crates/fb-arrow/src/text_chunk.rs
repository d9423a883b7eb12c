//! A Parquet column chunk of one required, top-level UTF-8 column (the
//! export's `context`), written byte for byte as parquet-rs 59 writes it,
//! with fewer copies.
//!
//! `context` holds about half of a row group's bytes, and parquet-rs
//! copies every value three times on its way to zstd: into its encoder's
//! buffer (a call per value), into a fresh page buffer (lengths and values
//! joined), and out of zstd into a fresh buffer reserved for zstd's bound.
//! Here each mini-batch's values are copied once, as one slice of the
//! Arrow column, into a page buffer kept from page to page, after a gap
//! the page's lengths are written into when the page ends; zstd reads the
//! page from there. Its output still goes to a fresh buffer of zstd's
//! bound, as parquet-rs' does: keeping that buffer (and the lengths')
//! from page to page measured the same (bench/NOTES.md, twelfth stop).
//!
//! The bytes must stay parquet-rs' (`fb export --no-caches` writes with
//! parquet-rs alone, and `tests/lanes.rs` compares the files), so this
//! follows `GenericColumnWriter` step by step for the one case it takes
//! ([`TextChunk::fits`]): mini-batches of `write_batch_size` values per
//! written array, cut smaller when their bytes would pass the page's
//! limit; a page ends after the mini-batch that reaches the page's byte
//! or row limit; v2 pages, values compressed unless that saves nothing;
//! no statistics, no dictionary, no bloom filter; the offset index with
//! each page's unencoded bytes.
//!
//! When parquet-rs is upgraded, `text_chunk_tests.rs` says whether these
//! are still its bytes; where they are not, this follows the new
//! `GenericColumnWriter`, or [`TextChunk::fits`] refuses what changed.
//! What it saves is memory touched anew rather than instructions
//! (bench/NOTES.md, eleventh stop).

use std::collections::{BTreeSet, VecDeque};
use std::sync::mpsc::TryRecvError;
use std::sync::Arc;

use arrow_array::{Array, ArrayRef, StringArray};
use arrow_schema::{DataType, Field};
use bytes::Bytes;
use parquet::basic::{Compression, Encoding, EncodingMask, LogicalType, PageType, Type};
use parquet::column::page::{CompressedPage, Page, PageWriteSpec, PageWriter};
use parquet::column::writer::ColumnCloseResult;
use parquet::errors::ParquetError;
use parquet::file::metadata::{ColumnChunkMetaData, OffsetIndexBuilder, PageEncodingStats};
use parquet::file::properties::{EnabledStatistics, WriterProperties, WriterVersion};
use parquet::file::writer::{SerializedPageWriter, TrackedWrite};
use parquet::schema::types::{ColumnDescPtr, ColumnDescriptor};

use crate::delta_lengths::DeltaLengths;
use crate::packers::{pack, packer_gone, Packers, Parcel};

/// Bytes of a value's length as parquet-rs counts them when it bounds a
/// mini-batch (a PLAIN page's length prefix, whatever the encoding).
const LENGTH_PREFIX: usize = 4;

/// What a page's header and the chunk's indexes say of it, besides its
/// stored bytes.
struct PageDone {
    rows: usize,
    /// Bytes of its values, not counting their lengths.
    values: usize,
    /// Bytes of its body before compression.
    uncompressed: usize,
}

/// The column chunk of one row group in progress.
pub(crate) struct TextChunk {
    descr: ColumnDescPtr,
    codec: Compression,
    compressor: Option<zstd::bulk::Compressor<'static>>,
    /// parquet-rs' limits: a page's bytes and rows, a mini-batch's values.
    page_bytes: usize,
    page_rows: usize,
    batch_values: usize,
    /// Compressed values kept only when smaller than this share.
    threshold: f64,
    lengths: DeltaLengths,
    /// Where each value of a write ends (kept for the next write).
    ends: Vec<usize>,
    /// The page in progress: `gap` bytes for its lengths, then its values.
    page: Vec<u8>,
    gap: usize,
    /// Values (and rows) in the page in progress.
    page_values: usize,
    /// Threads that compress the pages, when the file has them, and the
    /// pages handed to them and not written yet, oldest first.
    packers: Option<Arc<Packers>>,
    out: VecDeque<(Parcel, PageDone)>,
    /// The pages written so far, each header then body.
    sink: TrackedWrite<Vec<u8>>,
    offsets: Option<OffsetIndexBuilder>,
    encoding_stats: Vec<PageEncodingStats>,
    data_page_offset: Option<u64>,
    total_values: u64,
    total_rows: u64,
    total_compressed: u64,
    total_uncompressed: u64,
    total_written: u64,
}

impl TextChunk {
    /// Whether this writer writes the Arrow `field`, whose Parquet column
    /// is `descr`, as parquet-rs would under `props`. Anything else goes
    /// to parquet-rs. (parquet's `encryption` feature, whose pages this
    /// would not encrypt, is not built.)
    pub(crate) fn fits(field: &Field, descr: &ColumnDescriptor, props: &WriterProperties) -> bool {
        let path = descr.path();
        field.data_type() == &DataType::Utf8
            && !field.is_nullable()
            && descr.physical_type() == Type::BYTE_ARRAY
            && matches!(descr.logical_type_ref(), None | Some(LogicalType::String))
            && descr.max_def_level() == 0
            && descr.max_rep_level() == 0
            && props.writer_version() == WriterVersion::PARQUET_2_0
            && props.encoding(path) == Some(Encoding::DELTA_LENGTH_BYTE_ARRAY)
            && !props.dictionary_enabled(path)
            && props.statistics_enabled(path) == EnabledStatistics::None
            && props.bloom_filter_properties(path).is_none()
            && props.content_defined_chunking().is_none()
            && matches!(
                props.compression(path),
                Compression::UNCOMPRESSED | Compression::ZSTD(_)
            )
    }

    /// A chunk of the column `descr` (which [`TextChunk::fits`]), whose
    /// pages are kept in a buffer reserved to an eighth more than
    /// `last_bytes`, the size of the column's chunk before (row groups
    /// are alike): grown from empty, the buffer would be copied and
    /// faulted in anew at every doubling. With `packers`, its pages are
    /// compressed on them (the same bytes).
    pub(crate) fn new(
        descr: ColumnDescPtr,
        props: &WriterProperties,
        last_bytes: usize,
        packers: Option<Arc<Packers>>,
    ) -> Result<Self, ParquetError> {
        let path = descr.path();
        let codec = props.compression(path);
        let packers = packers.filter(|_| matches!(codec, Compression::ZSTD(_)));
        // A chunk whose pages go to the packers compresses none itself.
        let compressor = match codec {
            Compression::ZSTD(level) if packers.is_none() => Some(
                zstd::bulk::Compressor::new(level.compression_level())
                    .map_err(|e| ParquetError::External(Box::new(e)))?,
            ),
            _ => None,
        };
        Ok(Self {
            codec,
            compressor,
            page_bytes: props.column_data_page_size_limit(path),
            page_rows: props.data_page_row_count_limit(),
            batch_values: props.write_batch_size().max(1),
            threshold: props.column_data_page_v2_compression_ratio_threshold(path),
            lengths: DeltaLengths::new(),
            ends: Vec::new(),
            page: Vec::new(),
            gap: 0,
            page_values: 0,
            packers,
            out: VecDeque::new(),
            sink: TrackedWrite::new(Vec::with_capacity(last_bytes + last_bytes / 8)),
            offsets: (!props.offset_index_disabled()).then(OffsetIndexBuilder::new),
            encoding_stats: Vec::new(),
            data_page_offset: None,
            total_values: 0,
            total_rows: 0,
            total_compressed: 0,
            total_uncompressed: 0,
            total_written: 0,
            descr,
        })
    }

    /// Writes the values of `arrays`, UTF-8 columns without nulls, as
    /// one column: the pieces of a batch are not joined first, and the
    /// pages are those of the joined column.
    pub(crate) fn write(&mut self, arrays: &[ArrayRef]) -> Result<(), ParquetError> {
        let texts = arrays
            .iter()
            .map(|a| self.texts(a.as_ref()))
            .collect::<Result<Vec<_>, _>>()?;
        // Where each value ends among all the arrays' values.
        let mut ends = std::mem::take(&mut self.ends);
        ends.clear();
        ends.push(0);
        for t in &texts {
            let offsets = t.value_offsets();
            let base = offsets.first().copied().unwrap_or(0);
            let before = ends.last().copied().unwrap_or(0);
            let rest = offsets.get(1..).unwrap_or(&[]);
            ends.extend(rest.iter().map(|&o| before + (o - base) as usize));
        }
        let end_of = |i: usize| ends.get(i).copied().unwrap_or(0);
        let n = ends.len() - 1;
        let mut at = 0;
        while at < n {
            let end = n.min(at + self.batch_values);
            let chunk = end - at;
            // parquet-rs' byte budget (`ByteBudgetChunker`): the whole
            // mini-batch when its values and their length prefixes fit a
            // page, else runs of as many values as reach past it.
            let sub = if end_of(end) - end_of(at) + chunk * LENGTH_PREFIX <= self.page_bytes {
                chunk
            } else {
                let mut sum = 0usize;
                let mut fit = chunk;
                for i in at..end {
                    sum = sum.saturating_add(end_of(i + 1) - end_of(i) + LENGTH_PREFIX);
                    if sum > self.page_bytes {
                        fit = i - at + 1;
                        break;
                    }
                }
                fit.max(1)
            };
            let mut from = at;
            while from < end {
                let to = end.min(from + sub);
                self.mini_batch(&texts, ends.get(from..=to).unwrap_or(&[]))?;
                from = to;
            }
            at = end;
        }
        self.ends = ends;
        Ok(())
    }

    /// `array` as UTF-8 without nulls, or why not.
    fn texts<'a>(&self, array: &'a dyn Array) -> Result<&'a StringArray, ParquetError> {
        let Some(texts) = array.as_any().downcast_ref::<StringArray>() else {
            return Err(ParquetError::General(format!(
                "column {} is {}, not UTF-8",
                self.descr.path(),
                array.data_type()
            )));
        };
        if texts.null_count() > 0 {
            return Err(ParquetError::General(format!(
                "column {} is required but has {} nulls",
                self.descr.path(),
                texts.null_count()
            )));
        }
        Ok(texts)
    }

    /// One mini-batch: the values whose ends among all of `texts`' values
    /// are `ends` (the first is where the first value starts), then the
    /// page's end if it is full.
    fn mini_batch(&mut self, texts: &[&StringArray], ends: &[usize]) -> Result<(), ParquetError> {
        if self.page_values == 0 {
            self.start_page();
        }
        for pair in ends.windows(2) {
            if let [a, b] = pair {
                self.lengths.put((b - a) as i32);
            }
        }
        let (Some(&from), Some(&to)) = (ends.first(), ends.last()) else {
            return Ok(());
        };
        // The bytes from..to of the values one after another, piece by
        // piece.
        let mut start = 0;
        for t in texts {
            let offsets = t.value_offsets();
            let first = offsets.first().map_or(0, |&o| o as usize);
            let last = offsets.last().map_or(0, |&o| o as usize);
            let end = start + (last - first);
            if end > from && start < to {
                let lo = first + from.max(start) - start;
                let hi = first + to.min(end) - start;
                let values = t
                    .value_data()
                    .get(lo..hi)
                    .ok_or_else(|| ParquetError::General("offsets past the values".into()))?;
                self.page.extend_from_slice(values);
            }
            start = end;
        }
        self.page_values += ends.len().saturating_sub(1);
        let estimated = self.page.len() - self.gap + self.lengths.finished_bytes();
        if self.page_values >= self.page_rows || estimated >= self.page_bytes {
            self.end_page()?;
        }
        Ok(())
    }

    /// A new page: first the gap its lengths will fill (twice the widest
    /// lengths of a page so far, so that they rarely outgrow it).
    fn start_page(&mut self) {
        self.page.clear();
        self.page.resize(self.gap, 0);
    }

    /// Ends the page in progress: writes it, or hands it to the packers
    /// and writes those of the pages handed out that are back.
    fn end_page(&mut self) -> Result<(), ParquetError> {
        let mut lengths = Vec::new();
        self.lengths.finish(&mut lengths);
        let values = self.page.len() - self.gap;
        let done = PageDone {
            rows: self.page_values,
            values,
            uncompressed: lengths.len() + values,
        };
        let from = match lengths.len() <= self.gap {
            true => {
                let from = self.gap - lengths.len();
                if let Some(room) = self.page.get_mut(from..self.gap) {
                    room.copy_from_slice(&lengths);
                }
                from
            }
            false => {
                // The gap was short (the first page has none): move the
                // values up once; the next pages get a gap that fits.
                self.page.splice(..self.gap, lengths.iter().copied());
                0
            }
        };
        if lengths.len() > self.gap {
            // Room for pages whose lengths pack a little wider.
            self.gap = lengths.len() * 2 + 64;
        }
        self.page_values = 0;
        let level = match self.codec {
            Compression::ZSTD(level) => level.compression_level(),
            _ => 0,
        };
        if let Some(packers) = self.packers.clone() {
            let page = std::mem::replace(&mut self.page, packers.spare_page());
            let parcel = packers.pack(page, from, level, self.threshold)?;
            self.out.push_back((parcel, done));
            return self.write_back(packers.in_flight());
        }
        let body = self.page.get(from..).unwrap_or(&[]);
        let (buf, is_compressed) = match self.compressor.as_mut() {
            Some(zstd) => pack(zstd, body, self.threshold)?,
            None => (body.to_vec(), false),
        };
        self.write_page(buf, is_compressed, &done)
    }

    /// Writes the pages handed out that are back, in the order they went
    /// out, waiting for the oldest while more than `keep` are out.
    fn write_back(&mut self, keep: usize) -> Result<(), ParquetError> {
        while let Some((parcel, _)) = self.out.front() {
            let packed = match self.out.len() > keep {
                true => parcel.recv().map_err(|_| packer_gone())?,
                false => match parcel.try_recv() {
                    Ok(packed) => packed,
                    Err(TryRecvError::Empty) => return Ok(()),
                    Err(TryRecvError::Disconnected) => return Err(packer_gone()),
                },
            }?;
            let Some((_, done)) = self.out.pop_front() else {
                return Ok(());
            };
            self.write_page(packed.buf, packed.is_compressed, &done)?;
            if let Some(packers) = &self.packers {
                packers.give_back(packed.page);
            }
        }
        Ok(())
    }

    /// Writes one page, its body as it is stored.
    fn write_page(
        &mut self,
        buf: Vec<u8>,
        is_compressed: bool,
        done: &PageDone,
    ) -> Result<(), ParquetError> {
        let rows = done.rows;
        let page = Page::DataPageV2 {
            buf: Bytes::from(buf),
            num_values: rows as u32,
            encoding: Encoding::DELTA_LENGTH_BYTE_ARRAY,
            num_nulls: 0,
            num_rows: rows as u32,
            def_levels_byte_len: 0,
            rep_levels_byte_len: 0,
            is_compressed,
            statistics: None,
        };
        if let Some(index) = self.offsets.as_mut() {
            index.append_row_count(rows as i64);
            index.append_unencoded_byte_array_data_bytes(Some(done.values as i64));
        }
        match self.encoding_stats.last_mut() {
            Some(stats) => stats.count += 1,
            None => self.encoding_stats.push(PageEncodingStats {
                page_type: PageType::DATA_PAGE_V2,
                encoding: Encoding::DELTA_LENGTH_BYTE_ARRAY,
                count: 1,
            }),
        }
        let spec = SerializedPageWriter::new(&mut self.sink)
            .write_page(CompressedPage::new(page, done.uncompressed))?;
        self.written(&spec);
        self.total_rows += rows as u64;
        Ok(())
    }

    /// Counts a page written, as `GenericColumnWriter` does.
    fn written(&mut self, spec: &PageWriteSpec) {
        if let Some(index) = self.offsets.as_mut() {
            index.append_offset_and_size(spec.offset as i64, spec.compressed_size as i32);
        }
        self.total_uncompressed += spec.uncompressed_size as u64;
        self.total_compressed += spec.compressed_size as u64;
        self.total_written += spec.bytes_written;
        self.total_values += u64::from(spec.num_values);
        self.data_page_offset.get_or_insert(spec.offset);
    }

    /// Ends the chunk: its bytes, and what parquet-rs' row group writer
    /// needs to append them.
    pub(crate) fn close(mut self) -> Result<(Bytes, ColumnCloseResult), ParquetError> {
        if self.page_values > 0 {
            self.end_page()?;
        }
        self.write_back(0)?;
        if let Some(packers) = &self.packers {
            packers.give_back(std::mem::take(&mut self.page));
        }
        let mut encodings = BTreeSet::from([Encoding::RLE]);
        if !self.encoding_stats.is_empty() {
            encodings.insert(Encoding::DELTA_LENGTH_BYTE_ARRAY);
        }
        let metadata = ColumnChunkMetaData::builder(self.descr.clone())
            .set_compression(self.codec)
            .set_encodings_mask(EncodingMask::new_from_encodings(encodings.iter()))
            .set_page_encoding_stats(self.encoding_stats)
            .set_total_compressed_size(self.total_compressed as i64)
            .set_total_uncompressed_size(self.total_uncompressed as i64)
            .set_num_values(self.total_values as i64)
            .set_data_page_offset(self.data_page_offset.unwrap_or(0) as i64)
            .set_dictionary_page_offset(None)
            .build()?;
        let bytes = Bytes::from(self.sink.into_inner()?);
        Ok((
            bytes,
            ColumnCloseResult {
                bytes_written: self.total_written,
                rows_written: self.total_rows,
                metadata,
                bloom_filter: None,
                column_index: None,
                offset_index: self.offsets.map(OffsetIndexBuilder::build),
            },
        ))
    }
}

#[cfg(test)]
#[path = "text_chunk_tests.rs"]
mod tests;
