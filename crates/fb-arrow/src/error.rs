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
        match self {
            Self::Arrow(arrow_schema::ArrowError::IoError(_, io)) => Some(io.kind()),
            Self::Io { source, .. } => Some(source.kind()),
            _ => None,
        }
    }
}
