//! Why an export failed.

/// Why an export failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Arrow refused a batch or the IPC writer failed.
    #[error("writing Arrow: {0}")]
    Arrow(#[from] arrow_schema::ArrowError),
    /// The Parquet writer failed.
    #[error("writing Parquet: {0}")]
    Parquet(#[from] parquet::errors::ParquetError),
    /// A choice of columns names no column, an unknown one or one twice.
    #[error("columns: {0}")]
    Columns(String),
    /// A partition's file or directory could not be made.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: std::path::PathBuf,
        /// What the system said.
        #[source]
        source: std::io::Error,
    },
}

impl Error {
    /// The kind of the system's error when writing the output failed (a
    /// closed pipe is `BrokenPipe`, for a caller that stops quietly then).
    pub fn io_kind(&self) -> Option<std::io::ErrorKind> {
        self.system_error().map(std::io::Error::kind)
    }

    /// The system's own error where arrow-ipc or parquet-rs wrapped one
    /// (writing the output failed), or that of a partition's file.
    fn system_error(&self) -> Option<&std::io::Error> {
        match self {
            Self::Arrow(arrow_schema::ArrowError::IoError(_, io)) => Some(io),
            Self::Parquet(parquet::errors::ParquetError::External(e)) => e.downcast_ref(),
            Self::Io { source, .. } => Some(source),
            _ => None,
        }
    }

    /// This error as the I/O error of the output that a caller reports:
    /// the system's own kind and words where a writer wrapped them ("No
    /// space left on device", not "writing Parquet: External: No space
    /// left on device"), else kind `Other` and this error's words. A
    /// partition's file keeps its path.
    pub fn into_output_error(self) -> std::io::Error {
        match (&self, self.system_error()) {
            (Self::Io { .. }, Some(io)) => std::io::Error::new(io.kind(), self.to_string()),
            (_, Some(io)) => std::io::Error::new(io.kind(), io.to_string()),
            (_, None) => std::io::Error::other(self),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::ErrorKind;

    fn full() -> std::io::Error {
        std::io::Error::from_raw_os_error(28)
    }

    /// Each way a writer wraps a system error, and errors that wrap none:
    /// the kind and the words the caller reports.
    #[test]
    fn output_errors_keep_the_systems_kind_and_words() {
        let parquet = parquet::errors::ParquetError::from(full());
        let cases: Vec<(&str, Error, Option<ErrorKind>, String)> = vec![
            (
                "arrow-ipc",
                Error::Arrow(arrow_schema::ArrowError::IoError("x".into(), full())),
                Some(ErrorKind::StorageFull),
                full().to_string(),
            ),
            (
                "parquet-rs",
                Error::Parquet(parquet),
                Some(ErrorKind::StorageFull),
                full().to_string(),
            ),
            (
                "a partition's file",
                Error::Io {
                    path: "out/date=2026-11-30/part-00000.parquet".into(),
                    source: full(),
                },
                Some(ErrorKind::StorageFull),
                format!("out/date=2026-11-30/part-00000.parquet: {}", full()),
            ),
            (
                "parquet-rs, no system error",
                Error::Parquet(parquet::errors::ParquetError::General("bad".into())),
                None,
                "writing Parquet: Parquet error: bad".into(),
            ),
            (
                "columns",
                Error::Columns("no column x".into()),
                None,
                "columns: no column x".into(),
            ),
        ];
        for (name, error, kind, words) in cases {
            assert_eq!(error.io_kind(), kind, "{name}");
            let io = error.into_output_error();
            assert_eq!(io.kind(), kind.unwrap_or(ErrorKind::Other), "{name}");
            assert_eq!(io.to_string(), words, "{name}");
        }
    }
}
