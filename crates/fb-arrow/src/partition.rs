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

use crate::{BatchWriter, Error, ParquetFile};

/// How rows are split into directories, by their `timestamp` (UTC).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Partitioning {
    /// `date=YYYY-MM-DD`.
    Date,
    /// `date=YYYY-MM-DD/hour=HH`.
    Hour,
}

/// A directory of Parquet files, one per partition, written in place
/// under `root` (the caller makes it a temporary directory and renames
/// it when complete).
pub struct Partitioned {
    root: PathBuf,
    by: Partitioning,
    row_group: usize,
    files: BTreeMap<String, ParquetFile<BufWriter<File>>>,
}

impl Partitioned {
    /// Partitions under `root`, which must exist.
    pub fn new(root: &Path, by: Partitioning, row_group: usize) -> Self {
        Self {
            root: root.to_path_buf(),
            by,
            row_group,
            files: BTreeMap::new(),
        }
    }

    /// The directory of a timestamp (µs since 1970, UTC).
    fn key(&self, micros: i64) -> String {
        let secs = micros.div_euclid(1_000_000);
        let days = secs.div_euclid(86_400);
        let hour = secs.rem_euclid(86_400) / 3600;
        let (y, m, d) = fb_schema::calendar::civil_from_days(days);
        match self.by {
            Partitioning::Date => format!("date={y:04}-{m:02}-{d:02}"),
            Partitioning::Hour => format!("date={y:04}-{m:02}-{d:02}/hour={hour:02}"),
        }
    }

    fn file(&mut self, key: &str) -> Result<&mut ParquetFile<BufWriter<File>>, Error> {
        if !self.files.contains_key(key) {
            let dir = self.root.join(key);
            let io = |path: &Path| {
                let path = path.to_path_buf();
                move |source| Error::Io { path, source }
            };
            std::fs::create_dir_all(&dir).map_err(io(&dir))?;
            let path = dir.join("part-00000.parquet");
            let file = File::create(&path).map_err(io(&path))?;
            let writer = ParquetFile::new(BufWriter::new(file), self.row_group)?;
            self.files.insert(key.to_string(), writer);
        }
        self.files.get_mut(key).ok_or_else(|| Error::Io {
            path: self.root.join(key),
            source: std::io::Error::other("partition writer missing"),
        })
    }
}

impl BatchWriter for Partitioned {
    type Output = usize;

    fn write(&mut self, batch: &RecordBatch) -> Result<(), Error> {
        let ts = batch
            .column_by_name("timestamp")
            .and_then(|c| c.as_primitive_opt::<TimestampMicrosecondType>())
            .ok_or_else(|| Error::Io {
                path: self.root.clone(),
                source: std::io::Error::other("a batch without its timestamp column"),
            })?;
        let keys: Vec<String> = ts.values().iter().map(|&t| self.key(t)).collect();
        let mut distinct: Vec<&String> = keys.iter().collect();
        distinct.sort();
        distinct.dedup();
        if distinct.len() == 1 {
            let key = distinct[0].clone();
            return self.file(&key)?.write(batch);
        }
        // Rows keep their order inside each partition.
        for key in distinct {
            let mask: BooleanArray = keys.iter().map(|k| Some(k == key)).collect();
            let part = arrow_select::filter::filter_record_batch(batch, &mask)?;
            let key = key.clone();
            self.file(&key)?.write(&part)?;
        }
        Ok(())
    }

    /// Closes every file; the number of partitions.
    fn finish(self) -> Result<usize, Error> {
        let n = self.files.len();
        for (key, file) in self.files {
            let mut out = file.finish()?;
            std::io::Write::flush(&mut out).map_err(|source| Error::Io {
                path: self.root.join(key),
                source,
            })?;
        }
        Ok(n)
    }
}
