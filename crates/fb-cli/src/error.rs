//! Why a command failed: the one error type every command returns.

use std::fmt;
use std::io;

/// A failure that ends a command with exit status 2.
#[derive(Debug)]
pub enum Error {
    /// Usage, an input that cannot be opened, anything said in one line.
    Msg(String),
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

    /// The reader of our output went away (`fb ... | head`): not an error
    /// to report, the program just stops.
    pub fn is_broken_pipe(&self) -> bool {
        matches!(self, Self::Write { source, .. } if source.kind() == io::ErrorKind::BrokenPipe)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Msg(m) => f.write_str(m),
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
