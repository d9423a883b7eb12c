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

use crate::{BatchWriter, Error, ParquetFile, Pieces};

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
    /// The code that writes each file (see `ParquetPath`).
    parquet_path: crate::ParquetPath,
    open: BTreeMap<i64, Open>,
    /// Files made per partition so far (the next part's number).
    parts: BTreeMap<i64, u32>,
    clock: u64,
}

struct Open {
    writer: ParquetFile<BufWriter<File>>,
    path: PathBuf,
    used: u64,
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
            parquet_path: crate::ParquetPath::Fast,
            open: BTreeMap::new(),
            parts: BTreeMap::new(),
            clock: 0,
        }
    }

    /// Encodes each file's columns on `threads` threads; the files are
    /// the same bytes for any number.
    pub fn encoding_threads(mut self, threads: usize) -> Self {
        self.encoding_threads = threads;
        self
    }

    /// Writes each file on `path`; the files are the same bytes either
    /// way.
    pub fn parquet_path(mut self, path: crate::ParquetPath) -> Self {
        self.parquet_path = path;
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
                if let Some(key) = oldest.and_then(|k| self.open.remove(&k)) {
                    close(key)?;
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
            )?
            .encoding_threads(self.encoding_threads)?;
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

/// Writes a file's footer and flushes it.
fn close(file: Open) -> Result<(), Error> {
    let mut out = file.writer.finish()?;
    std::io::Write::flush(&mut out).map_err(|source| Error::Io {
        path: file.path,
        source,
    })
}

impl BatchWriter for Partitioned {
    type Output = usize;

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
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

    /// Pieces whose rows all fall in one partition (logs come in time
    /// order: most batches) go to its file as they are, where lanes join
    /// their own columns; the others are joined here and split.
    fn write_pieces(&mut self, pieces: Pieces) -> Result<(), Error> {
        let mut only = None;
        for piece in pieces.batches() {
            for &t in self.times(piece)?.values().iter() {
                let bucket = self.bucket(t);
                match only {
                    None => only = Some(bucket),
                    Some(b) if b == bucket => {}
                    Some(_) => return self.write(&pieces.join()?),
                }
            }
        }
        match (only, pieces.batches().first()) {
            (Some(bucket), Some(first)) => {
                let schema = first.schema();
                self.file(bucket, schema)?.write_pieces(pieces)
            }
            _ => self.write(&pieces.join()?),
        }
    }

    /// Closes every file; the number of files written.
    fn finish(self) -> Result<usize, Error> {
        let n = self.files();
        for (_, file) in self.open {
            close(file)?;
        }
        Ok(n)
    }
}
