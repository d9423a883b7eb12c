//! Where output goes: stdout or a file, compressed by its extension.
//!
//! A file output never destroys data: it is refused when it is one of the
//! inputs (the same path, a hard link or a symlink to it); it is written to
//! a temporary file beside it and renamed over the target only once it is
//! complete, compressor trailer included, so an interrupted or failed run
//! leaves the old file (or nothing) in place, never a truncated one.

use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, Stdout, Write};
use std::path::{Path, PathBuf};

use crate::compress::{Codec, Pieces};
use crate::error::Error;
use crate::input::Input;

/// Buffer size of the output: writes this large go straight through.
/// Converters hand it chunks of lines larger than this (a megabyte from
/// one thread, a batch's lines from workers), which so are never copied
/// into the buffer; it only gathers the small writes of other commands.
pub const BUFFER: usize = 256 << 10;

/// Whether a file output is compressed when its name ends in `.gz` or
/// `.zst` (DSJSON), or written as it is (binary logs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compress {
    /// `.gz` and `.zst` names are compressed (see [`crate::compress`]), at
    /// `level` (the codec's default for `None`) on `threads` threads.
    ByExtension {
        /// The compression level, checked against the codec.
        level: Option<i32>,
        /// Threads that compress (1: the writing thread).
        threads: usize,
    },
    /// Bytes go to the file unchanged.
    Never,
}

enum Sink {
    // Not the lock: an output must be Send (the Parquet writer asks it),
    // and chunks are large enough that locking per write costs nothing.
    Stdout(BufWriter<Stdout>),
    Plain(BufWriter<File>),
    Packed(Box<Pieces<BufWriter<File>>>),
}

/// An open output: write to it, then [`Output::finish`] it. Dropped
/// unfinished (an error, a panic), it removes its temporary file.
pub struct Output {
    sink: Option<Sink>,
    target: String,
    /// The temporary file and the path it becomes when finished.
    rename: Option<(PathBuf, PathBuf)>,
}

impl Output {
    /// Standard output.
    pub fn stdout() -> Self {
        Self {
            sink: Some(Sink::Stdout(BufWriter::with_capacity(BUFFER, io::stdout()))),
            target: "standard output".into(),
            rename: None,
        }
    }

    /// Standard output for `None` or `-`, else the file `path`, refused when
    /// it is one of `inputs`.
    pub fn create(
        path: Option<&Path>,
        inputs: &[Input],
        compress: Compress,
    ) -> Result<Self, Error> {
        let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
            return Ok(Self::stdout());
        };
        refuse_input(path, inputs)?;
        let target = path.display().to_string();
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let packing = match (compress, ext) {
            (Compress::ByExtension { level, threads }, "gz" | "zst") => {
                let codec = match ext {
                    "gz" => Codec::Gzip(1),
                    _ => Codec::Zstd(1),
                };
                let codec = match level {
                    Some(level) => codec
                        .with_level(level)
                        .map_err(|e| Error::Msg(format!("--level: {e} (for {target})")))?,
                    None => codec,
                };
                Some((codec, threads))
            }
            _ => None,
        };
        let cannot = |e: io::Error| Error::Msg(format!("cannot create {target}: {e}"));
        // Devices, pipes and the like are written in place: renaming a
        // file over /dev/null would replace the device.
        let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file());
        let (file, rename) = if special {
            if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
                return Err(Error::Msg(format!(
                    "{target} is a directory: name a file to write"
                )));
            }
            (
                OpenOptions::new().write(true).open(path).map_err(cannot)?,
                None,
            )
        } else {
            let (file, temp) = temporary(path).map_err(cannot)?;
            (file, Some((temp, path.to_path_buf())))
        };
        let file = BufWriter::with_capacity(BUFFER, file);
        let sink = match packing {
            Some((codec, threads)) => Sink::Packed(Box::new(
                Pieces::new(file, codec, threads)
                    .map_err(|e| Error::Msg(format!("{target}: cannot start compressing: {e}")))?,
            )),
            None => Sink::Plain(file),
        };
        Ok(Self {
            sink: Some(sink),
            target,
            rename,
        })
    }

    /// How errors name this output.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The error for a failed write to this output.
    pub fn error(&self, source: io::Error) -> Error {
        Error::write(&self.target, source)
    }

    /// Writes `bytes`, naming this output on failure.
    pub fn put(&mut self, bytes: &[u8]) -> Result<(), Error> {
        self.write_all(bytes).map_err(|e| self.error(e))
    }

    /// Completes the output: the compressor's trailer, the last buffered
    /// bytes, and the rename of a file into place. Any failure is an error
    /// that names the output, and the target is then left untouched.
    pub fn finish(mut self) -> Result<(), Error> {
        let file = match self.sink.take() {
            None => return Ok(()),
            Some(Sink::Stdout(mut w)) => return w.flush().map_err(|e| self.error(e)),
            Some(Sink::Plain(w)) => w,
            Some(Sink::Packed(w)) => (*w).finish().map_err(|e| self.error(e))?,
        };
        let file = file.into_inner().map_err(|e| self.error(e.into_error()))?;
        drop(file);
        if let Some((temp, path)) = self.rename.take() {
            if let Err(e) = std::fs::rename(&temp, &path) {
                let _ = std::fs::remove_file(&temp);
                return Err(Error::Msg(format!(
                    "cannot put the finished output in place at {}: {e}",
                    path.display()
                )));
            }
        }
        Ok(())
    }
}

impl Output {
    /// The writer under way, or an error once finished.
    fn writer(&mut self) -> io::Result<&mut dyn Write> {
        Ok(match &mut self.sink {
            Some(Sink::Stdout(w)) => w,
            Some(Sink::Plain(w)) => w,
            Some(Sink::Packed(w)) => &mut **w,
            None => return Err(io::Error::other("the output is already finished")),
        })
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.writer()?.write(buf)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        self.writer()?.write_all(buf)
    }

    /// Flushes what is buffered here; a compressor's trailer waits for
    /// [`Output::finish`].
    fn flush(&mut self) -> io::Result<()> {
        match self.writer() {
            Ok(w) => w.flush(),
            Err(_) => Ok(()),
        }
    }
}

impl Drop for Output {
    fn drop(&mut self) {
        if let Some((temp, _)) = self.rename.take() {
            // Unfinished: the partial bytes are of no use, and the target
            // keeps what it held.
            self.sink = None;
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// A new file beside `path` that no other run uses.
fn temporary(path: &Path) -> io::Result<(File, PathBuf)> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut attempt = 0u32;
    loop {
        let temp = dir.join(format!(".{name}.fb-{}-{attempt}.tmp", std::process::id()));
        match OpenOptions::new().write(true).create_new(true).open(&temp) {
            Ok(file) => return Ok((file, temp)),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists && attempt < 100 => attempt += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Refuses an output that is one of the inputs: the same file under any
/// name (a hard link, a symlink), so that it is never replaced by what is
/// read from it.
pub fn refuse_input(output: &Path, inputs: &[Input]) -> Result<(), Error> {
    for input in inputs {
        let Input::File(path) = input else { continue };
        if same_file(output, path) {
            return Err(Error::Msg(format!(
                "{} is also an input ({}): refusing to overwrite it; write the output elsewhere",
                output.display(),
                path.display()
            )));
        }
    }
    Ok(())
}

/// True when both paths name one existing file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match (std::fs::metadata(a), std::fs::metadata(b)) {
            (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
            _ => false,
        }
    }
    #[cfg(not(unix))]
    {
        match (a.canonicalize(), b.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        }
    }
}

/// A directory of outputs (a partitioned export, the pieces of a split):
/// filled under a temporary name beside its target and renamed into place
/// when complete, so that a failed or interrupted run leaves the old
/// directory (or nothing), never a partial one. Dropped unfinished, it
/// removes what it wrote.
pub struct DirOutput {
    temp: PathBuf,
    target: PathBuf,
    done: bool,
}

impl DirOutput {
    /// A new temporary directory for `target`, refused when `target` holds
    /// one of `inputs` (replacing it would delete them).
    pub fn create(target: &Path, inputs: &[Input]) -> Result<Self, Error> {
        if let Ok(dir) = target.canonicalize() {
            for input in inputs {
                let Input::File(path) = input else { continue };
                if path.canonicalize().is_ok_and(|p| p.starts_with(&dir)) {
                    return Err(Error::Msg(format!(
                        "{} is inside {}: refusing to replace it; write the output elsewhere",
                        path.display(),
                        target.display()
                    )));
                }
            }
        }
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let temp = parent.join(format!(".{name}.fb-{}.tmp", std::process::id()));
        std::fs::create_dir(&temp)
            .map_err(|e| Error::Msg(format!("cannot create {}: {e}", temp.display())))?;
        Ok(Self {
            temp,
            target: target.to_path_buf(),
            done: false,
        })
    }

    /// Where to write the files (the temporary directory).
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Puts the directory in place, replacing what `target` was.
    pub fn finish(mut self) -> Result<(), Error> {
        let target = self.target.display().to_string();
        let old = self.temp.with_extension("old");
        let replacing = self.target.exists();
        if replacing {
            std::fs::rename(&self.target, &old)
                .map_err(|e| Error::Msg(format!("cannot move the old {target} aside: {e}")))?;
        }
        std::fs::rename(&self.temp, &self.target)
            .map_err(|e| Error::Msg(format!("cannot put {target} in place: {e}")))?;
        self.done = true;
        if replacing {
            let _ = std::fs::remove_dir_all(&old).or_else(|_| std::fs::remove_file(&old));
        }
        Ok(())
    }
}

impl Drop for DirOutput {
    fn drop(&mut self) {
        if !self.done {
            let _ = std::fs::remove_dir_all(&self.temp);
        }
    }
}
