//! Hive-style partitioned Parquet output: `OUT/date=2026-11-23/part-00000.parquet`
//! (or `date=…/hour=13/`), one file per partition, which Spark, DuckDB,
//! Polars and Trino read as one table with the partition columns.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::BufWriter;
use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{BooleanArray, RecordBatch};

use crate::closer::{Closer, Open};
use crate::{BatchWriter, Error, ParquetFile, Pieces};

/// Changes of partition within one batch's rows past which they are
/// filtered into each partition's rows rather than cut into slices: rows
/// far out of time order would make slices of a row or two, each handed
/// to a file's lanes on its own.
const MAX_RUNS: usize = 64;

/// How rows are split into directories, by their `timestamp` (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partitioning {
    /// `date=YYYY-MM-DD`.
    Date,
    /// `date=YYYY-MM-DD/hour=HH`.
    Hour,
}

/// A directory of Parquet files, one or more per partition, written in
/// place under `root` (the caller makes it a temporary directory and
/// renames it when complete).
///
/// At most [`Partitioned::OPEN`] files are open at once, each with a
/// share of [`ROW_GROUP_BYTES`](crate::ROW_GROUP_BYTES), so memory stays
/// bounded however many partitions a log spans. Logs come in time order,
/// so a partition is rarely needed again once left; when it is, after its
/// file was closed, its rows go to the next part (`part-00001.parquet`).
pub struct Partitioned {
    root: PathBuf,
    by: Partitioning,
    row_group: usize,
    /// Threads encoding each file's columns (see `ParquetFile::encoding_threads`).
    encoding_threads: usize,
    /// The machine's cores, which decide whether a file's text pages are
    /// compressed on threads of their own.
    cores: usize,
    /// The code that writes each file (see `ParquetPath`).
    parquet_path: crate::ParquetPath,
    open: BTreeMap<i64, Open>,
    /// Files made per partition so far (the next part's number).
    parts: BTreeMap<i64, u32>,
    clock: u64,
    /// Finishes the files left, on a thread of its own where the file is
    /// encoded on lanes (see `closer.rs`).
    closer: Closer,
    /// Whether the last file left had more than one row group: the next
    /// files then compress their text pages on packers from their start,
    /// else only from their second row group (see
    /// [`ParquetFile::encoding_threads_packed_later`]).
    big_files: bool,
}

impl Partitioned {
    /// Files open at once: the partition being written and the one
    /// before it, for the rows that come late across an hour's or a day's
    /// end. Each open file holds its row group's column writers (parquet-rs
    /// reserves a megabyte for each of 26 of them) and a share of the
    /// row group bytes: with four, `--partition-by hour` on 16 threads
    /// peaked near the 256 MiB bound (bench/NOTES.md).
    pub const OPEN: usize = 2;

    /// Partitions under `root`, which must exist.
    pub fn new(root: &Path, by: Partitioning, row_group: usize) -> Self {
        Self {
            root: root.to_path_buf(),
            by,
            row_group,
            encoding_threads: 1,
            cores: std::thread::available_parallelism().map_or(1, |n| n.get()),
            parquet_path: crate::ParquetPath::Fast,
            open: BTreeMap::new(),
            parts: BTreeMap::new(),
            clock: 0,
            closer: Closer::new(root.to_path_buf(), 0),
            big_files: false,
        }
    }

    /// Encodes each file's columns on `threads` threads; the files are
    /// the same bytes for any number.
    pub fn encoding_threads(mut self, threads: usize) -> Self {
        self.encoding_threads = threads;
        self.with_closer()
    }

    /// As [`Partitioned::encoding_threads`] on a machine of `cores` cores
    /// (see [`ParquetFile::encoding_threads_on`]).
    pub fn encoding_threads_on(mut self, threads: usize, cores: usize) -> Self {
        self.cores = cores;
        self.encoding_threads(threads)
    }

    /// Writes each file on `path`; the files are the same bytes either
    /// way. On [`crate::ParquetPath::Plain`] a batch's rows of several
    /// partitions are filtered into each, and a file left is finished
    /// before the next is written: the plain twin of the slices and of
    /// the closer thread.
    pub fn parquet_path(mut self, path: crate::ParquetPath) -> Self {
        self.parquet_path = path;
        self.with_closer()
    }

    /// The closer for the current settings: files finished on a thread of
    /// their own only where lanes encode them (on one thread the export
    /// stays on one), with up to a file's share of the row-group bytes
    /// waiting.
    fn with_closer(mut self) -> Self {
        let budget = match (self.parquet_path, self.encoding_threads) {
            (crate::ParquetPath::Fast, threads) if threads >= 2 => {
                crate::ROW_GROUP_BYTES / Self::OPEN
            }
            _ => 0,
        };
        self.closer = Closer::new(self.root.clone(), budget);
        self
    }

    /// The timestamps of `batch`'s rows.
    fn times<'b>(
        &self,
        batch: &'b RecordBatch,
    ) -> Result<&'b arrow_array::TimestampMicrosecondArray, Error> {
        batch
            .column_by_name("timestamp")
            .and_then(|c| c.as_primitive_opt::<TimestampMicrosecondType>())
            .ok_or_else(|| Error::Io {
                path: self.root.clone(),
                source: std::io::Error::other("a batch without its timestamp column"),
            })
    }

    /// The partition of a timestamp (µs since 1970, UTC): days or hours
    /// since 1970.
    fn bucket(&self, micros: i64) -> i64 {
        let secs = micros.div_euclid(1_000_000);
        match self.by {
            Partitioning::Date => secs.div_euclid(86_400),
            Partitioning::Hour => secs.div_euclid(3_600),
        }
    }

    /// The directory of a partition.
    fn dir(&self, bucket: i64) -> String {
        let (days, hour) = match self.by {
            Partitioning::Date => (bucket, 0),
            Partitioning::Hour => (bucket.div_euclid(24), bucket.rem_euclid(24)),
        };
        let (y, m, d) = fb_schema::calendar::civil_from_days(days);
        match self.by {
            Partitioning::Date => format!("date={y:04}-{m:02}-{d:02}"),
            Partitioning::Hour => format!("date={y:04}-{m:02}-{d:02}/hour={hour:02}"),
        }
    }

    fn file(
        &mut self,
        bucket: i64,
        schema: arrow_schema::SchemaRef,
    ) -> Result<&mut ParquetFile<BufWriter<File>>, Error> {
        self.clock += 1;
        if !self.open.contains_key(&bucket) {
            if self.open.len() >= Self::OPEN {
                let oldest = self
                    .open
                    .iter()
                    .min_by_key(|(_, f)| f.used)
                    .map(|(k, _)| *k);
                if let Some(file) = oldest.and_then(|k| self.open.remove(&k)) {
                    self.big_files = file.writer.row_groups_written() > 0;
                    self.closer.close(file)?;
                }
            }
            let dir = self.root.join(self.dir(bucket));
            let io = |path: &Path| {
                let path = path.to_path_buf();
                move |source| Error::Io { path, source }
            };
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let part = self.parts.entry(bucket).or_insert(0);
            let path = dir.join(format!("part-{part:05}.parquet"));
            *part += 1;
            let file = File::create(&path).map_err(io(&path))?;
            let writer = ParquetFile::on_path(
                BufWriter::new(file),
                self.row_group,
                crate::ROW_GROUP_BYTES / Self::OPEN,
                schema,
                self.parquet_path,
            )?;
            let writer = match self.big_files {
                true => writer.encoding_threads_on(self.encoding_threads, self.cores)?,
                false => writer.encoding_threads_packed_later(self.encoding_threads, self.cores)?,
            };
            self.open.insert(
                bucket,
                Open {
                    writer,
                    path,
                    used: 0,
                },
            );
        }
        let clock = self.clock;
        let open = self.open.get_mut(&bucket).ok_or_else(|| Error::Io {
            path: self.root.clone(),
            source: std::io::Error::other("partition writer missing"),
        })?;
        open.used = clock;
        Ok(&mut open.writer)
    }

    /// Files written so far, closed or open.
    pub fn files(&self) -> usize {
        self.parts.values().map(|n| *n as usize).sum()
    }
}

/// Rows `at..at + len` of a batch's piece `piece`, all in partition
/// `bucket`.
struct Run {
    bucket: i64,
    piece: usize,
    at: usize,
    len: usize,
}

impl Partitioned {
    /// The runs of rows of one partition in a batch's `pieces`, in row
    /// order; `None` past [`MAX_RUNS`] of them. Only the times are read:
    /// most batches are one run, and go to their file as they are.
    fn runs(&self, pieces: &[RecordBatch]) -> Result<Option<Vec<Run>>, Error> {
        let mut runs = Vec::new();
        for (piece, batch) in pieces.iter().enumerate() {
            let mut at = 0;
            let times = self.times(batch)?.values();
            for run in times.chunk_by(|a, b| self.bucket(*a) == self.bucket(*b)) {
                let Some(&first) = run.first() else {
                    continue;
                };
                if runs.len() == MAX_RUNS {
                    return Ok(None);
                }
                runs.push(Run {
                    bucket: self.bucket(first),
                    piece,
                    at,
                    len: run.len(),
                });
                at += run.len();
            }
        }
        Ok(Some(runs))
    }

    /// Writes each partition's rows of `batch`, filtered out of it.
    fn filtered(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        let ts = self.times(batch)?;
        let buckets: Vec<i64> = ts.values().iter().map(|&t| self.bucket(t)).collect();
        let mut distinct = buckets.clone();
        distinct.sort_unstable();
        distinct.dedup();
        if let [only] = distinct[..] {
            return self.file(only, batch.schema())?.write(batch);
        }
        // Rows keep their order inside each partition.
        for bucket in distinct {
            let mask: BooleanArray = buckets.iter().map(|&b| Some(b == bucket)).collect();
            let part = arrow_select::filter::filter_record_batch(batch, &mask)?;
            self.file(bucket, batch.schema())?.write(&part)?;
        }
        Ok(())
    }
}

impl BatchWriter for Partitioned {
    type Output = usize;

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        self.write_pieces(Pieces::one(batch.clone()))
    }

    /// Pieces whose rows all fall in one partition (logs come in time
    /// order: most batches) go to its file as they are, where lanes join
    /// their own columns. Otherwise each partition's rows go to its file
    /// as slices of the pieces, which the lanes join likewise (the same
    /// rows as a filter gives, so the same bytes), or, on the plain path
    /// and for rows far out of time order, are joined here and filtered.
    fn write_pieces(&mut self, pieces: Pieces) -> Result<(), Error> {
        let Some(schema) = pieces.batches().first().map(RecordBatch::schema) else {
            return Ok(());
        };
        let Some(runs) = self.runs(pieces.batches())? else {
            return self.filtered(&pieces.join()?);
        };
        let Some(first) = runs.first().map(|r| r.bucket) else {
            return Ok(());
        };
        if runs.iter().all(|r| r.bucket == first) {
            return self.file(first, schema)?.write_pieces(pieces);
        }
        if self.parquet_path == crate::ParquetPath::Plain {
            return self.filtered(&pieces.join()?);
        }
        let mut by: BTreeMap<i64, Vec<RecordBatch>> = BTreeMap::new();
        for run in &runs {
            if let Some(piece) = pieces.batches().get(run.piece) {
                by.entry(run.bucket)
                    .or_default()
                    .push(piece.slice(run.at, run.len));
            }
        }
        for (bucket, rows) in by {
            let part = Pieces::slices(rows);
            self.file(bucket, schema.clone())?.write_pieces(part)?;
        }
        Ok(())
    }

    /// Closes every file; the number of files written.
    fn finish(mut self) -> Result<usize, Error> {
        let n = self.files();
        for (_, file) in std::mem::take(&mut self.open) {
            self.closer.close(file)?;
        }
        self.closer.finish()?;
        Ok(n)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::writers::tests::timed_rows;

    /// A file compresses its text pages on packers from its start only
    /// when the file left before it had more than one row group (days of
    /// a long log); after a file of one (an hour of it), from its second.
    #[test]
    fn packers_from_the_start_only_after_a_file_of_several_row_groups() {
        let dir = std::env::temp_dir().join(format!("fb-arrow-partition-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let mut writer = Partitioned::new(&dir, Partitioning::Hour, 50).encoding_threads_on(8, 16);
        let packers =
            |w: &Partitioned, hour: i64| w.open.get(&hour).map(|f| f.writer.packer_threads());
        // (hour, rows, packers of its file once written): hour 0 has
        // three row groups, its packers started after the first; hour 1
        // is new while no file was left yet; hour 2 comes after hour 0 was
        // left (several row groups), hour 3 after hour 1 (one).
        let steps = [(0, 120, 3), (1, 30, 0), (2, 30, 3), (3, 30, 0)];
        let mut from = 0;
        for (hour, rows, want) in steps {
            writer.write(&timed_rows(hour, from, rows)).unwrap();
            from += rows;
            assert_eq!(packers(&writer, hour), Some(want), "hour {hour}");
        }
        assert_eq!(writer.finish().unwrap(), 4);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
