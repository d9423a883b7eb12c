//! Why a command failed: the one error type every command returns.

use std::fmt;
use std::io;

/// A failure that ends a command with exit status 2.
#[derive(Debug)]
pub enum Error {
    /// Usage, an input that cannot be opened, anything said in one line.
    Msg(String),
    /// An input is damaged or not a joined log, and the command could
    /// not work around it: exit status 1, as for the damage other
    /// commands report and read past.
    Damaged(String),
    /// Writing an output failed.
    Write {
        /// The output, as the user named it (`standard output` or a path).
        target: String,
        /// What the system said.
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
    /// to report, the program just stops.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Write { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Msg(m) | Self::Damaged(m) => f.write_str(m),
            Self::Write { target, source } => write!(f, "writing {target} failed: {source}"),
        }
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
