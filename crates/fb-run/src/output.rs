//! Where output goes: stdout or a file, compressed by its extension.
//!
//! One rule for every command that writes a file (README, "Outputs"):
//!
//! - An output that exists is replaced only with `--force`
//!   ([`Existing::Replace`]); devices and pipes (`/dev/null`, a FIFO) are
//!   written to, never replaced, and need no `--force`.
//! - An output that is one of the inputs (the same path, a hard link or a
//!   symlink to it) is refused, `--force` or not.
//! - A file is written aside, as an unnamed file (`O_TMPFILE`) where the
//!   file system has them, and put in place only once complete,
//!   compressor trailer included ([`Output::finish`]): an interrupted run
//!   (Ctrl-C, `kill`, a crash) leaves the old file and no temporary file.
//! - A run that ends in error never replaces the output: the lines it
//!   wrote before the error go to `OUT.partial` ([`Output::finish_partial`]),
//!   a name that says what they are, and the old output (if any) stays.
//! - Binary outputs are refused on a terminal ([`Bytes::Binary`]).
//! - A text output named as Parquet or Arrow (`-o events.parquet`) is
//!   refused ([`Columnar`]): those come from `fb export`.

pub use crate::columnar::Columnar;
use std::fs::{File, OpenOptions};
use std::io::{self, BufWriter, IsTerminal, Stdout, Write};
use std::path::{Path, PathBuf};

use crate::compress::{Codec, Pieces};
use crate::error::Error;
use crate::input::Input;
use crate::interrupt::{self, Leftover, Registered};

/// Buffer size of the output: writes this large go straight through.
/// Converters hand it chunks of lines larger than this (a megabyte from
/// one thread, a batch's lines from workers), which so are never copied
/// into the buffer; it only gathers the small writes of other commands.
pub const BUFFER: usize = 256 << 10;

/// Writes this large go straight through after what is buffered, though
/// smaller than [`BUFFER`]: the last chunk of lines of each small file of
/// a folder is, and copying it into the buffer was a copy of almost the
/// whole output. A write this large costs less than its copy.
const STRAIGHT: usize = 64 << 10;

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

/// What to do with an output that already exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Existing {
    /// Refuse to run (the default): nothing is destroyed by mistake.
    Refuse,
    /// Replace it once the new one is complete (`--force`).
    Replace,
}

impl Existing {
    /// From a command's `--force` flag.
    pub fn forced(force: bool) -> Self {
        if force {
            Self::Replace
        } else {
            Self::Refuse
        }
    }
}

/// What an output holds, for standard output on a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bytes {
    /// Lines a person can read (DSJSON, listings).
    Text,
    /// A log, Parquet or Arrow: refused on a terminal.
    Binary,
}

/// How to open an output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct How {
    /// Compression by extension, or none.
    pub compress: Compress,
    /// Whether an existing output may be replaced.
    pub existing: Existing,
    /// Text or binary.
    pub bytes: Bytes,
}

impl How {
    /// A text output (DSJSON), compressed by extension.
    pub fn text(compress: Compress, existing: Existing) -> Self {
        Self {
            compress,
            existing,
            bytes: Bytes::Text,
        }
    }

    /// A binary output, never compressed.
    pub fn binary(existing: Existing) -> Self {
        Self {
            compress: Compress::Never,
            existing,
            bytes: Bytes::Binary,
        }
    }
}

enum Sink {
    // Not the lock: an output must be Send (the Parquet writer asks it),
    // and chunks are large enough that locking per write costs nothing.
    Stdout(BufWriter<Stdout>),
    Plain(BufWriter<File>),
    Packed(Box<Pieces<BufWriter<File>>>),
}

/// Where a file output is until it is complete.
enum Aside {
    /// Written in place (a device, a pipe).
    InPlace,
    /// An unnamed file in the target's folder (`O_TMPFILE`), linked into
    /// place when complete.
    Unnamed { folder: PathBuf },
    /// A hidden file beside the target, registered for removal on
    /// interrupt.
    Named {
        temp: PathBuf,
        _registered: Registered,
    },
}

/// An open output: write to it, then [`Output::finish`] it (or
/// [`Output::finish_partial`] when the run failed). Dropped unfinished (an
/// error, a panic), it leaves no file behind.
pub struct Output {
    sink: Option<Sink>,
    target: String,
    /// The path it becomes when complete, and where it is until then.
    file: Option<(PathBuf, Aside)>,
    /// Bytes written (before compression).
    written: u64,
}

impl Output {
    /// Standard output.
    pub fn stdout() -> Self {
        Self {
            sink: Some(Sink::Stdout(BufWriter::with_capacity(BUFFER, io::stdout()))),
            target: "standard output".into(),
            file: None,
            written: 0,
        }
    }

    /// Standard output for `None` or `-`, else the file `path`, refused when
    /// it is one of `inputs`, or exists and `how` does not replace it.
    pub fn create(path: Option<&Path>, inputs: &[Input], how: How) -> Result<Self, Error> {
        let Some(path) = path.filter(|p| p.as_os_str() != "-") else {
            if how.bytes == Bytes::Binary && io::stdout().is_terminal() {
                return Err(Error::Msg(
                    "refusing to write binary output to a terminal: pass -o FILE or \
                     redirect standard output"
                        .into(),
                ));
            }
            return Ok(Self::stdout());
        };
        refuse_input(path, inputs)?;
        let target = path.display().to_string();
        if let Some(named) = Columnar::named_by(path).filter(|_| how.bytes == Bytes::Text) {
            return Err(Error::Msg(format!(
                "{target}: this output is text, not {}: `fb export` (in Python, \
                 `vwlogs.read`) writes Parquet and Arrow; or give the output another name",
                named.label()
            )));
        }
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        let packing = match (how.compress, ext) {
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
        let cannot =
            |e: io::Error| Error::Msg(format!("cannot create {target}: {}", why(&e, path)));
        // Devices, pipes and the like are written in place: renaming a
        // file over /dev/null would replace the device.
        let (file, aside) = match std::fs::metadata(path) {
            Ok(m) if m.is_dir() => {
                return Err(Error::Msg(format!(
                    "{target} is a folder: name a file to write"
                )))
            }
            Ok(m) if !m.is_file() => (
                OpenOptions::new().write(true).open(path).map_err(cannot)?,
                Aside::InPlace,
            ),
            Ok(_) if how.existing == Existing::Refuse => {
                return Err(Error::Msg(format!(
                    "{target} exists: pass --force to replace it (it is replaced only once \
                     the new output is complete)"
                )))
            }
            _ => aside(path).map_err(cannot)?,
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
            file: Some((path.to_path_buf(), aside)),
            written: 0,
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
    /// bytes, and the file put in place. Any failure is an error that
    /// names the output, and the target is then left untouched.
    pub fn finish(mut self) -> Result<(), Error> {
        let Some(file) = self.complete()? else {
            return Ok(());
        };
        let Some((path, aside)) = self.file.take() else {
            return Ok(());
        };
        place(&file, &path, aside).map_err(|e| {
            Error::Msg(format!(
                "cannot put the finished output in place at {}: {e}",
                path.display()
            ))
        })
    }

    /// Completes the output of a run that failed: the target is left as
    /// it was, and what was written goes to `TARGET.partial` (replacing
    /// an older one), whose path comes back; nothing when nothing was
    /// written, or for standard output and devices (written in place).
    pub fn finish_partial(mut self) -> Result<Option<PathBuf>, Error> {
        let written = self.written;
        let in_place = !matches!(
            self.file,
            Some((_, Aside::Unnamed { .. } | Aside::Named { .. }))
        );
        if written == 0 || in_place {
            if in_place {
                self.complete()?;
            }
            return Ok(None);
        }
        let Some(file) = self.complete()? else {
            return Ok(None);
        };
        let Some((path, aside)) = self.file.take() else {
            return Ok(None);
        };
        let mut partial = path.clone().into_os_string();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        place(&file, &partial, aside).map_err(|e| {
            Error::Msg(format!(
                "cannot keep the partial output at {}: {e}",
                partial.display()
            ))
        })?;
        Ok(Some(partial))
    }

    /// Bytes written so far (before compression).
    pub fn written(&self) -> u64 {
        self.written
    }

    /// Flushes and finishes the sink; the file, when there is one.
    fn complete(&mut self) -> Result<Option<File>, Error> {
        let file = match self.sink.take() {
            None => return Ok(None),
            Some(Sink::Stdout(mut w)) => {
                w.flush().map_err(|e| self.error(e))?;
                return Ok(None);
            }
            Some(Sink::Plain(w)) => w,
            Some(Sink::Packed(w)) => (*w).finish().map_err(|e| self.error(e))?,
        };
        let file = file.into_inner().map_err(|e| self.error(e.into_error()))?;
        Ok(Some(file))
    }
}

/// Why a file could not be made, in words that name what the user gave.
fn why(e: &io::Error, path: &Path) -> String {
    match (e.kind(), path.parent()) {
        (io::ErrorKind::NotFound, Some(dir)) if !dir.as_os_str().is_empty() && !dir.exists() => {
            format!("the folder {} does not exist", dir.display())
        }
        _ => e.to_string(),
    }
}

/// Puts a complete file in place at `path`.
fn place(file: &File, path: &Path, aside: Aside) -> io::Result<()> {
    match aside {
        Aside::InPlace => Ok(()),
        Aside::Named { temp, _registered } => {
            let renamed = std::fs::rename(&temp, path);
            if renamed.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
            renamed
        }
        Aside::Unnamed { folder } => {
            // A name is needed to rename over the target (link cannot
            // replace a file): it exists from the link to the rename, and
            // is registered for that instant.
            let (temp, registered) = free_name(&folder, path)?;
            link_unnamed(file, &temp)?;
            let renamed = std::fs::rename(&temp, path);
            if renamed.is_err() {
                let _ = std::fs::remove_file(&temp);
            }
            drop(registered);
            renamed
        }
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
        let n = self.writer()?.write(buf)?;
        self.written += n as u64;
        Ok(n)
    }

    fn write_all(&mut self, buf: &[u8]) -> io::Result<()> {
        match &mut self.sink {
            // Not a compressor (`Packed`): flushing it would end a frame.
            Some(Sink::Plain(w)) if buf.len() >= STRAIGHT => straight(w, buf)?,
            Some(Sink::Stdout(w)) if buf.len() >= STRAIGHT => straight(w, buf)?,
            _ => self.writer()?.write_all(buf)?,
        }
        self.written += buf.len() as u64;
        Ok(())
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
        // Unfinished: the partial bytes are of no use, and the target
        // keeps what it held. An unnamed file goes with its descriptor.
        self.sink = None;
        if let Some((_, Aside::Named { temp, .. })) = self.file.take() {
            let _ = std::fs::remove_file(temp);
        }
    }
}

/// Writes `buf` after what `w` holds, without copying it into `w`'s
/// buffer. Flushing a file or standard output only writes what they hold.
fn straight<W: Write>(w: &mut BufWriter<W>, buf: &[u8]) -> io::Result<()> {
    if !w.buffer().is_empty() {
        w.flush()?;
    }
    w.get_mut().write_all(buf)
}

/// The folder a file at `path` lies in.
fn folder_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// A file to write `path`'s bytes to until they are complete: unnamed
/// where the file system allows, else a hidden name beside `path`.
///
/// `FB_NAMED_TEMP` in the environment selects the hidden name always: the
/// plain twin of the unnamed file, for tests of the cleanup on interrupt
/// and for file systems that misreport their support.
fn aside(path: &Path) -> io::Result<(File, Aside)> {
    let folder = folder_of(path);
    if std::env::var_os("FB_NAMED_TEMP").is_none() {
        if let Some(file) = unnamed(&folder)? {
            return Ok((file, Aside::Unnamed { folder }));
        }
    }
    let (temp, registered) = free_name(&folder, path)?;
    let file = OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&temp)?;
    Ok((
        file,
        Aside::Named {
            temp,
            _registered: registered,
        },
    ))
}

/// A hidden name beside `path` that no file has, registered for removal
/// on interrupt.
fn free_name(folder: &Path, path: &Path) -> io::Result<(PathBuf, Registered)> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for attempt in 0..100u32 {
        let temp = folder.join(format!(".{name}.fb-{}-{attempt}.tmp", std::process::id()));
        if std::fs::symlink_metadata(&temp).is_err() {
            let registered = interrupt::register(temp.clone(), Leftover::File);
            return Ok((temp, registered));
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free temporary name beside it",
    ))
}

/// An unnamed file in `folder`, or `None` where the file system (or the
/// system) has none, or `/proc` is missing to link it later.
#[cfg(target_os = "linux")]
fn unnamed(folder: &Path) -> io::Result<Option<File>> {
    use std::os::unix::fs::OpenOptionsExt;
    if !Path::new("/proc/self/fd").is_dir() {
        return Ok(None);
    }
    match OpenOptions::new()
        .write(true)
        .mode(0o666)
        .custom_flags(libc::O_TMPFILE)
        .open(folder)
    {
        Ok(file) => Ok(Some(file)),
        // Not supported here: a named file instead. Anything else (no
        // such folder, no permission) is the answer for a named file too.
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

#[cfg(not(target_os = "linux"))]
fn unnamed(_: &Path) -> io::Result<Option<File>> {
    Ok(None)
}

/// Gives the unnamed `file` the name `at`.
#[cfg(target_os = "linux")]
fn link_unnamed(file: &File, at: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let from =
        CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(io::Error::other)?;
    let to = CString::new(at.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: both are valid NUL-terminated paths that outlive the call.
    let done = unsafe {
        libc::linkat(
            libc::AT_FDCWD,
            from.as_ptr(),
            libc::AT_FDCWD,
            to.as_ptr(),
            libc::AT_SYMLINK_FOLLOW,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn link_unnamed(_: &File, _: &Path) -> io::Result<()> {
    Err(io::Error::other("unnamed files are not supported here"))
}

/// Refuses an output that is one of the inputs: the same file under any
/// name (a hard link, a symlink), so that it is never replaced by what is
/// read from it.
pub fn refuse_input(output: &Path, inputs: &[Input]) -> Result<(), Error> {
    // The output looked at once, not once per input: a folder of a
    // thousand pieces made this two thousand `stat`s. An output that does
    // not exist yet is none of the inputs.
    let Some(output_id) = file_id(output) else {
        return Ok(());
    };
    for input in inputs {
        let Input::File(path) = input else { continue };
        if file_id(path).is_some_and(|id| id == output_id) {
            return Err(Error::Msg(format!(
                "{} is also an input ({}): refusing to overwrite it; write the output elsewhere",
                output.display(),
                path.display()
            )));
        }
    }
    Ok(())
}

/// What tells an existing file apart from every other, whatever its name
/// (links followed): its device and inode where there are such, else its
/// canonical path. `None` when it does not exist or cannot be looked at.
#[derive(Debug, PartialEq, Eq)]
enum FileId {
    #[cfg(unix)]
    Inode { dev: u64, ino: u64 },
    #[cfg(not(unix))]
    Canonical(PathBuf),
}

fn file_id(path: &Path) -> Option<FileId> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(path).ok().map(|m| FileId::Inode {
            dev: m.dev(),
            ino: m.ino(),
        })
    }
    #[cfg(not(unix))]
    {
        path.canonicalize().ok().map(FileId::Canonical)
    }
}

/// A folder of outputs (a partitioned export, the pieces of a split):
/// filled under a hidden name beside its target (registered for removal
/// on interrupt) and put in place when complete, so that a failed or
/// interrupted run leaves the old folder (or nothing), never a partial
/// one. Dropped unfinished, it removes what it wrote.
pub struct DirOutput {
    temp: PathBuf,
    target: PathBuf,
    done: bool,
    _registered: Registered,
}

impl DirOutput {
    /// A new hidden folder for `target`, refused when `target` holds one
    /// of `inputs` (replacing it would delete them), or exists, is not an
    /// empty folder, and `existing` does not replace it.
    pub fn create(target: &Path, inputs: &[Input], existing: Existing) -> Result<Self, Error> {
        Self::check(target, inputs, existing)?;
        let shown = target.display();
        let name = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "out".into());
        let parent = folder_of(target);
        let temp = parent.join(format!(".{name}.fb-{}.tmp", std::process::id()));
        let registered = interrupt::register(temp.clone(), Leftover::Folder);
        std::fs::create_dir(&temp)
            .map_err(|e| Error::Msg(format!("cannot create {shown}: {}", why(&e, target))))?;
        Ok(Self {
            temp,
            target: target.to_path_buf(),
            done: false,
            _registered: registered,
        })
    }

    /// What [`DirOutput::create`] refuses, without creating anything.
    pub fn check(target: &Path, inputs: &[Input], existing: Existing) -> Result<(), Error> {
        // The folder itself given as an input: refused as a file output is.
        refuse_input(target, inputs)?;
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
        let shown = target.display();
        match std::fs::symlink_metadata(target) {
            // An empty folder holds nothing to lose.
            Ok(m) if m.is_dir() && is_empty_dir(target) => {}
            Ok(_) if existing == Existing::Refuse => {
                return Err(Error::Msg(format!(
                    "{shown} exists: pass --force to replace it (it is replaced only once the \
                     new output is complete)"
                )))
            }
            _ => {}
        }
        Ok(())
    }

    /// Where to write the files (the hidden folder).
    pub fn path(&self) -> &Path {
        &self.temp
    }

    /// Where the folder goes when complete.
    pub fn target(&self) -> &Path {
        &self.target
    }

    /// Keeps what a failed run wrote at `TARGET.partial` (replacing an
    /// older one), leaving the target as it was; the path comes back.
    pub fn finish_partial(mut self) -> Result<PathBuf, Error> {
        let mut partial = self.target.clone().into_os_string();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        if std::fs::symlink_metadata(&partial).is_ok() {
            let _ = std::fs::remove_dir_all(&partial).or_else(|_| std::fs::remove_file(&partial));
        }
        std::fs::rename(&self.temp, &partial).map_err(|e| {
            Error::Msg(format!(
                "cannot keep the partial output at {}: {e}",
                partial.display()
            ))
        })?;
        self.done = true;
        Ok(partial)
    }

    /// Puts the folder in place, replacing what `target` was: the two are
    /// exchanged in one step where the file system can, and the old one
    /// then removed from the hidden name.
    pub fn finish(mut self) -> Result<(), Error> {
        let target = self.target.display().to_string();
        let exists = std::fs::symlink_metadata(&self.target).is_ok();
        let exchanged = exists && exchange(&self.temp, &self.target).is_ok();
        if exchanged {
            self.done = true;
            // The hidden name now holds the old output (still registered).
            let _ =
                std::fs::remove_dir_all(&self.temp).or_else(|_| std::fs::remove_file(&self.temp));
            return Ok(());
        }
        if exists && !is_empty_dir(&self.target) {
            // No exchange here: the old output moves aside first, and comes
            // back if the new one cannot take its place.
            let old = self.temp.with_extension("old");
            let _old = interrupt::register(old.clone(), Leftover::Folder);
            std::fs::rename(&self.target, &old)
                .map_err(|e| Error::Msg(format!("cannot move the old {target} aside: {e}")))?;
            if let Err(e) = std::fs::rename(&self.temp, &self.target) {
                let _ = std::fs::rename(&old, &self.target);
                return Err(Error::Msg(format!("cannot put {target} in place: {e}")));
            }
            self.done = true;
            let _ = std::fs::remove_dir_all(&old).or_else(|_| std::fs::remove_file(&old));
            return Ok(());
        }
        std::fs::rename(&self.temp, &self.target)
            .map_err(|e| Error::Msg(format!("cannot put {target} in place: {e}")))?;
        self.done = true;
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

/// Whether `path` is a folder with nothing in it.
fn is_empty_dir(path: &Path) -> bool {
    std::fs::read_dir(path).is_ok_and(|mut d| d.next().is_none())
}

/// Exchanges two paths in one step (`renameat2` with `RENAME_EXCHANGE`).
#[cfg(target_os = "linux")]
fn exchange(a: &Path, b: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    let a = CString::new(a.as_os_str().as_bytes()).map_err(io::Error::other)?;
    let b = CString::new(b.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: both are valid NUL-terminated paths that outlive the call.
    let done = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(target_os = "linux"))]
fn exchange(_: &Path, _: &Path) -> io::Result<()> {
    Err(io::Error::other("no exchange here"))
}
