//! The one error type of this crate: why a run could not go on.

use std::io;

/// Why a run stopped. The command line exits 1 for [`Error::Damaged`] and
/// 2 for the others; a closed pipe ([`Error::is_broken_pipe`]) ends it
/// quietly.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// What was asked cannot be done as asked (options that exclude each
    /// other, an output that exists): said in one line.
    #[error("{0}")]
    Usage(String),
    /// Anything else that stops the run, said in one line: an input that
    /// cannot be opened, a file that cannot be made.
    #[error("{0}")]
    Msg(String),
    /// An input is damaged or not a joined log, and the run could not
    /// work around it.
    #[error("{0}")]
    Damaged(String),
    /// Writing an output failed.
    #[error("writing {target} failed: {source}")]
    Write {
        /// The output, as the user named it (`standard output` or a path).
        target: String,
        /// What the system said.
        #[source]
        source: io::Error,
    },
}

impl Error {
    /// A failed write to `target`.
    pub fn write(target: &str, source: io::Error) -> Self {
        Self::Write {
            target: target.to_string(),
            source,
        }
    }

    /// An error of the pipeline writing to `target`: a failed write is
    /// one (a closed pipe then ends the run quietly), anything else is said
    /// as it is.
    pub fn joining(target: &str, e: fb_join::Error) -> Self {
        match e {
            fb_join::Error::Write { source, .. } => Self::write(target, source),
            other => Self::Msg(other.to_string()),
        }
    }

    /// An error of a log writer writing to `target`, as [`Error::joining`].
    pub fn writing(target: &str, e: fb_writer::Error) -> Self {
        match e {
            fb_writer::Error::Io { source, .. } => Self::write(target, source),
            other => Self::Msg(format!("writing {target}: {other}")),
        }
    }

    /// The reader of our output went away (`fb ... | head`): not an error
    /// to report, the run just stops.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Write { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl From<String> for Error {
    fn from(m: String) -> Self {
        Self::Msg(m)
    }
}

impl From<&str> for Error {
    fn from(m: &str) -> Self {
        Self::Msg(m.to_string())
    }
}
