//! The columnar formats an output may be, and the names that stand for
//! them: `fb export` writes what `-o` names, and a text output (DSJSON, a
//! report's page) refuses such a name rather than put text under it.

use std::path::Path;

/// A columnar format of an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Columnar {
    /// `.parquet`, `.pq`.
    Parquet,
    /// `.arrow`, `.ipc`, `.feather` (Feather 2 is the IPC file format).
    ArrowFile,
    /// `.arrows`, the IPC stream's registered extension.
    ArrowStream,
}

impl Columnar {
    /// The format `path`'s extension names (any case), if a columnar one.
    pub fn named_by(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        match ext.as_str() {
            "parquet" | "pq" => Some(Self::Parquet),
            "arrow" | "ipc" | "feather" => Some(Self::ArrowFile),
            "arrows" => Some(Self::ArrowStream),
            _ => None,
        }
    }

    /// The format's name in messages.
    pub fn label(self) -> &'static str {
        match self {
            Self::Parquet => "Parquet",
            Self::ArrowFile => "an Arrow IPC file",
            Self::ArrowStream => "an Arrow IPC stream",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_what_they_stand_for() {
        let cases = [
            ("parquet", "a.parquet", Some(Columnar::Parquet)),
            ("pq", "dir/a.pq", Some(Columnar::Parquet)),
            ("upper case", "A.PARQUET", Some(Columnar::Parquet)),
            ("arrow", "a.arrow", Some(Columnar::ArrowFile)),
            ("ipc", "a.ipc", Some(Columnar::ArrowFile)),
            ("feather", "a.Feather", Some(Columnar::ArrowFile)),
            ("arrows", "a.arrows", Some(Columnar::ArrowStream)),
            ("json", "a.json", None),
            ("zst", "a.parquet.zst", None),
            ("no extension", "parquet", None),
            ("stdout", "-", None),
        ];
        for (name, path, want) in cases {
            assert_eq!(Columnar::named_by(Path::new(path)), want, "{name}");
        }
    }
}
