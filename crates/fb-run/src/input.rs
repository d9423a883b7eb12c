//! Resolving and opening inputs: files, directories, `-` for stdin.

use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

use fb_format::{MessageKind, READ_ALIGN};

/// One input to read, in the order given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Input {
    /// Standard input.
    Stdin,
    /// A file.
    File(PathBuf),
    /// A source its owner opened and reads (bytes or a file object handed
    /// to the Python package), by the name messages give it.
    Other(String),
}

impl Input {
    /// How messages name it.
    pub fn name(&self) -> String {
        match self {
            Self::Stdin => "<stdin>".into(),
            Self::File(p) => p.display().to_string(),
            Self::Other(name) => name.clone(),
        }
    }

    /// Its size in bytes, when known.
    // A size that may be unknown (a pipe): no `is_empty` to go with it.
    #[allow(clippy::len_without_is_empty)]
    pub fn len(&self) -> Option<u64> {
        match self {
            Self::Stdin | Self::Other(_) => None,
            Self::File(p) => std::fs::metadata(p).ok().map(|m| m.len()),
        }
    }
}

/// The inputs the command-line paths name, and what their folders held
/// besides logs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// What to read, in order.
    pub inputs: Vec<Input>,
    /// Files found in the folders given that are not joined logs by their
    /// first bytes (an index, a README, DSJSON): left out.
    pub not_logs: Vec<PathBuf>,
}

impl Resolved {
    /// The one note to give about the files left out, if any.
    pub fn note(&self) -> Option<String> {
        let first = self.not_logs.first()?;
        const NAMED: usize = 3;
        let names: Vec<String> = self
            .not_logs
            .iter()
            .take(NAMED)
            .map(|p| {
                p.file_name().map_or_else(
                    || p.display().to_string(),
                    |n| n.to_string_lossy().into_owned(),
                )
            })
            .collect();
        let more = match self.not_logs.len().saturating_sub(NAMED) {
            0 => String::new(),
            n => format!(" and {n} more"),
        };
        let folder = first
            .parent()
            .map_or_else(String::new, |d| format!(" in {}", d.display()));
        let what = match self.not_logs.len() {
            1 => "is not a joined log by its first bytes",
            _ => "are not joined logs by their first bytes",
        };
        Some(format!(
            "skipped {}{folder} that {what}: {}{more}",
            crate::plural(self.not_logs.len() as u64, "file"),
            names.join(", ")
        ))
    }
}

/// Expands the command-line paths: a directory gives its files (not
/// hidden, sorted by name, not recursive) that are logs by their first
/// bytes (see [`Head`]; empty files included, to be warned about), `-`
/// gives stdin. A file named itself is always an input, whatever it
/// holds: reading it says what is wrong.
pub fn resolve_all(paths: &[PathBuf]) -> Result<Resolved, String> {
    let mut out = Resolved::default();
    for path in paths {
        if path.as_os_str() == "-" {
            out.inputs.push(Input::Stdin);
            continue;
        }
        let meta = std::fs::metadata(path).map_err(|e| match e.kind() {
            io::ErrorKind::NotFound => format!("{}: no such file or directory", path.display()),
            _ => format!("{}: {e}", path.display()),
        })?;
        if meta.is_dir() {
            let mut files: Vec<PathBuf> = std::fs::read_dir(path)
                .map_err(|e| format!("{}: {e}", path.display()))?
                .filter_map(|entry| entry.ok())
                // The listing's own file type, without a `stat` a file
                // (one call each, for thousands of files); a link is
                // followed to see what it names.
                .filter(|e| match e.file_type() {
                    Ok(t) if t.is_symlink() => e.path().is_file(),
                    Ok(t) => t.is_file(),
                    Err(_) => e.path().is_file(),
                })
                .map(|e| e.path())
                .filter(|p| {
                    !p.file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with('.'))
                })
                .collect();
            files.sort();
            if files.is_empty() {
                return Err(format!("{}: the directory holds no files", path.display()));
            }
            let before = out.inputs.len();
            let heads = first_bytes_of(&files);
            for (file, head) in files.into_iter().zip(heads) {
                match head {
                    Ok(head) if matches!(Head::of(&head), Head::NotALog(_)) => {
                        out.not_logs.push(file)
                    }
                    // Unreadable files stay inputs: opening them says why.
                    _ => out.inputs.push(Input::File(file)),
                }
            }
            if out.inputs.len() == before {
                return Err(format!(
                    "{}: the directory holds no joined logs ({} by their first bytes)",
                    path.display(),
                    match out.not_logs.len() {
                        1 => "its one file is not a log".to_string(),
                        n => format!("none of its {n} files is a log"),
                    }
                ));
            }
        } else {
            out.inputs.push(Input::File(path.clone()));
        }
    }
    Ok(out)
}

/// [`resolve_all`]'s inputs alone.
pub fn resolve(paths: &[PathBuf]) -> Result<Vec<Input>, String> {
    resolve_all(paths).map(|r| r.inputs)
}

/// Files of a folder that one thread checks: fewer are checked on the
/// caller's thread.
const HEADS_PER_THREAD: usize = 128;

/// The first bytes of each of `files`, in order. Each costs an open, a
/// read and a close, made before the run starts and so not overlapped
/// with anything: on a folder of a thousand small files they are read on
/// a few threads.
fn first_bytes_of(files: &[PathBuf]) -> Vec<io::Result<Vec<u8>>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = cores.min(files.len().div_ceil(HEADS_PER_THREAD)).min(16);
    if threads < 2 {
        return files.iter().map(|f| first_bytes(f)).collect();
    }
    let part = files.len().div_ceil(threads);
    std::thread::scope(|scope| {
        let started: Vec<_> = files
            .chunks(part)
            .map(|files| {
                let check = move || files.iter().map(|f| first_bytes(f)).collect::<Vec<_>>();
                (
                    files,
                    std::thread::Builder::new().spawn_scoped(scope, check),
                )
            })
            .collect();
        let mut heads = Vec::with_capacity(files.len());
        for (files, thread) in started {
            match thread {
                Ok(thread) => match thread.join() {
                    Ok(part) => heads.extend(part),
                    Err(panic) => std::panic::resume_unwind(panic),
                },
                // No thread: checked here.
                Err(_) => heads.extend(files.iter().map(|f| first_bytes(f))),
            }
        }
        heads
    })
}

/// The first (up to 4) bytes of a file.
fn first_bytes(path: &Path) -> io::Result<Vec<u8>> {
    let mut head = Vec::with_capacity(4);
    File::open(path)?.take(4).read_to_end(&mut head)?;
    Ok(head)
}

/// The input one path names: `-` is standard input.
pub fn one(path: &Path) -> Input {
    if path.as_os_str() == "-" {
        Input::Stdin
    } else {
        Input::File(path.to_path_buf())
    }
}

/// Refuses an input whose first bytes say it is not a joined log, or that
/// is empty, before a command that needs a log does anything with it.
pub fn is_log(input: &Input, bytes: &[u8]) -> Result<(), crate::error::Error> {
    match Head::of(bytes.get(..4).unwrap_or(bytes)) {
        Head::NotALog(why) => Err(crate::error::Error::Damaged(format!(
            "{}: {why}",
            input.name()
        ))),
        Head::Empty => Err(crate::error::Error::Damaged(format!(
            "{}: empty file: not a joined log (no FILEMAGIC), nothing to read",
            input.name()
        ))),
        Head::Magic | Head::NoMagic => Ok(()),
    }
}

/// Whether files are read through memory maps.
///
/// A map lets the readers borrow payloads where they lie, which is faster
/// than `read` and keeps the memory of whole-log commands flat in the
/// log's size. But the flatbuffers accessors read verified bytes without
/// checking them again, and only a read lease keeps other processes from
/// changing a mapped file: the kernel breaks a lease after
/// `/proc/sys/fs/lease-break-time` (45 s by default) if its holder has not
/// let go, and a writer then changes bytes already verified (see
/// [`crate::mapped`]). So maps are for logs no other process writes while
/// they are read (closed, rotated logs), by the user's choice: `read` is
/// the default.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Maps {
    /// Always read: sound whatever other processes do.
    #[default]
    Never,
    /// Mapped under a read lease where one can be had, read otherwise:
    /// the user asserts that no process writes the files while they are
    /// read.
    WhereSafe,
}

/// Maps `input` when `maps` allows, and it is a regular, non-empty file
/// whose read lease can be had (see [`crate::mapped`]).
pub fn map(input: &Input, maps: Maps) -> Option<crate::mapped::Mapped> {
    match (input, maps) {
        (Input::File(path), Maps::WhereSafe) => crate::mapped::Mapped::open(path),
        _ => None,
    }
}

/// A whole input in memory: mapped when it may be (see [`map`]), else
/// read.
pub enum Whole {
    /// A mapped file.
    Mapped(crate::mapped::Mapped),
    /// The bytes read: `bytes[from..]` (see [`whole`]).
    Read {
        /// What was read into, from index `from` on.
        bytes: Vec<u8>,
        /// Where the input's first byte is.
        from: usize,
    },
}

impl std::ops::Deref for Whole {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        match self {
            Whole::Mapped(m) => m,
            Whole::Read { bytes, from } => bytes.get(*from..).unwrap_or_default(),
        }
    }
}

/// All of `input`: mapped when `maps` allows and it is safe, else read to
/// its end (into memory as large as the input).
pub fn whole(input: &Input, maps: Maps) -> Result<Whole, String> {
    if let Some(m) = map(input, maps) {
        return Ok(Whole::Mapped(m));
    }
    let mut opened = open(input)?;
    let (bytes, from) =
        read_placed(&mut opened.reader, opened.size).map_err(|e| match e.kind() {
            io::ErrorKind::OutOfMemory => format!("{}: {e}; try --mmap", input.name()),
            _ => format!("{}: {e}", input.name()),
        })?;
    Ok(Whole::Read { bytes, from })
}

/// A log opened to be read at will, as an index build or `fb split`
/// reads it: a file mapped where `maps` allows (see [`map`]), else read
/// in windows through `pread`, which keeps memory flat in the log's size;
/// standard input (and other sources) read whole into memory.
pub enum OpenLog {
    /// The log in memory: mapped, or read whole.
    InMemory(Whole),
    /// The file, and its size when opened: what is read of it.
    File(File, u64),
}

/// Bytes of a log copied at a time by [`OpenLog::copy`].
const COPY_BYTES: usize = 1 << 20;

impl OpenLog {
    /// Opens `input` (a directory, or a file that cannot be opened, is an
    /// error naming it).
    pub fn open(input: &Input, maps: Maps) -> Result<Self, String> {
        let Input::File(path) = input else {
            return Ok(Self::InMemory(whole(input, maps)?));
        };
        let (mut file, size) = open_file(path)?;
        // A pipe or a device (`<(zcat log.gz)`) has no offsets to read at
        // and no size: read whole, as standard input is.
        if !file.metadata().is_ok_and(|m| m.is_file()) {
            let (bytes, from) = read_placed(&mut file, None)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            return Ok(Self::InMemory(Whole::Read { bytes, from }));
        }
        Ok(match map(input, maps) {
            Some(mapped) => Self::InMemory(Whole::Mapped(mapped)),
            None => Self::File(file, size),
        })
    }

    /// Its first (up to 4) bytes, for [`Head::of`].
    pub fn head(&self) -> io::Result<Vec<u8>> {
        let mut head = vec![0; 4];
        let got = fb_format::index::read_full(self, 0, &mut head)?;
        head.truncate(got);
        Ok(head)
    }

    /// Hands the bytes `start..end` of the log to `put`, in pieces of at
    /// most a MiB (one, where the log is in memory). Bytes past the log's
    /// end (a file cut short meanwhile) are an error.
    pub fn copy(
        &self,
        start: u64,
        end: u64,
        put: &mut dyn FnMut(&[u8]) -> io::Result<()>,
    ) -> io::Result<()> {
        if let Self::InMemory(w) = self {
            let span = fb_format::index::span(w, start, end).ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    format!("the log ends before byte {end}"),
                )
            })?;
            return put(span);
        }
        let mut buf = vec![0; COPY_BYTES.min(usize::try_from(end - start).unwrap_or(COPY_BYTES))];
        let mut at = start;
        while at < end {
            let n = buf
                .len()
                .min(usize::try_from(end - at).unwrap_or(usize::MAX));
            let chunk = buf.get_mut(..n).unwrap_or_default();
            fb_format::index::read_exact_at(self, at, chunk)?;
            put(chunk)?;
            at += n as u64;
        }
        Ok(())
    }

    /// Its messages in order: framed in place in memory, or read from the
    /// file as they come.
    pub fn messages(&self) -> Box<dyn fb_format::Messages + '_> {
        match self {
            Self::InMemory(w) => Box::new(fb_format::SliceReader::new(w)),
            Self::File(..) => Box::new(fb_format::StreamReader::new(
                fb_format::index::ReadFrom::new(self, 0),
            )),
        }
    }

    /// Gives back the pages of `from..to` of a mapped log (nothing to do
    /// otherwise).
    pub fn release(&self, from: u64, to: u64) {
        if let Self::InMemory(Whole::Mapped(m)) = self {
            m.release(from, to);
        }
    }
}

impl fb_format::index::LogSource for OpenLog {
    fn len(&self) -> u64 {
        match self {
            Self::InMemory(w) => w.len() as u64,
            Self::File(_, size) => *size,
        }
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Self::InMemory(w) => (&w[..]).read_at(offset, buf),
            Self::File(file, size) => {
                fb_format::index::FileLog::new(file, *size).read_at(offset, buf)
            }
        }
    }

    fn in_memory(&self) -> Option<&[u8]> {
        match self {
            Self::InMemory(w) => Some(w),
            Self::File(..) => None,
        }
    }
}

/// Reads `reader` to its end: the buffer, and the index in it of the
/// input's first byte. With the input's `size` known, the buffer is
/// reserved at once (a boxed reader hides the size from `read_to_end`,
/// which would grow it by doubling, copying the log each time; a size
/// beyond memory fails here, as the read would; an input that grows
/// after its open is still read to its end), and the first byte sits at
/// a multiple of [`READ_ALIGN`], so that every read's destination agrees
/// with its position: the kernel copies into a buffer that starts 16
/// bytes past a page, as the allocator's do, several times slower
/// (bench/NOTES.md).
pub fn read_placed(reader: &mut dyn Read, size: Option<u64>) -> io::Result<(Vec<u8>, usize)> {
    let mut buf = Vec::new();
    let mut from = 0;
    if let Some(size) = size {
        let room = usize::try_from(size)
            .unwrap_or(usize::MAX)
            .saturating_add(READ_ALIGN + 1);
        buf.try_reserve_exact(room).map_err(|e| {
            io::Error::new(
                io::ErrorKind::OutOfMemory,
                format!("cannot hold its {size} bytes in memory ({e})"),
            )
        })?;
        from = fb_format::read_skew(buf.as_ptr() as usize, 0);
        buf.resize(from, 0);
    }
    reader.read_to_end(&mut buf)?;
    Ok((buf, from))
}

/// What the first bytes of an input say about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    /// It starts with FILEMAGIC, as every log a writer makes.
    Magic,
    /// It starts with another known message type: readable (only REGULAR
    /// messages are required), but no writer makes such a file.
    NoMagic,
    /// It holds no byte at all.
    Empty,
    /// Not a joined log: why.
    NotALog(String),
}

impl Head {
    /// Looks at the first (up to 4) bytes of an input.
    pub fn of(head: &[u8]) -> Self {
        if head.is_empty() {
            return Self::Empty;
        }
        let kind = <[u8; 4]>::try_from(head)
            .ok()
            .map(|b| MessageKind::from_type(u32::from_le_bytes(b)));
        match kind {
            Some(MessageKind::FileMagic) => return Self::Magic,
            Some(MessageKind::Unknown(_)) | None => {}
            Some(_) => return Self::NoMagic,
        }
        let hex: Vec<String> = head.iter().map(|b| format!("{b:02x}")).collect();
        let text: String = head
            .iter()
            .map(|&b| if b.is_ascii_graphic() { b as char } else { '.' })
            .collect();
        Self::NotALog(format!(
            "not a joined binary log: first bytes are {} (\"{text}\"), a log starts with VWFB \
             (FILEMAGIC) or a known message type; if it is a damaged log, try `fb convert \
             --recover` or `fb repair`",
            hex.join(" ")
        ))
    }

    /// What to say of an input that is readable but odd, if anything.
    pub fn warning(&self) -> Option<&'static str> {
        match self {
            Self::Empty => {
                Some("empty file: not a joined log (no FILEMAGIC); nothing read from it")
            }
            Self::NoMagic => Some(
                "does not start with FILEMAGIC (VWFB): read on, as the reference does, \
                 from its first message",
            ),
            Self::Magic | Self::NotALog(_) => None,
        }
    }
}

/// An opened input whose first bytes were checked.
pub struct Opened {
    /// The reader, positioned at byte 0.
    pub reader: Box<dyn Read + Send>,
    /// What its first bytes say. The reader still yields every byte.
    pub head: Head,
    /// Its size when opened, for a file (of the open file: one `fstat`,
    /// not a look-up of its path).
    pub size: Option<u64>,
}

/// Opens `input` and looks at its first 4 bytes.
pub fn open(input: &Input) -> Result<Opened, String> {
    let (mut reader, size) = open_unread(input)?;
    let mut head = Vec::with_capacity(4);
    (&mut reader)
        .take(4)
        .read_to_end(&mut head)
        .map_err(|e| format!("{}: {e}", input.name()))?;
    let kind = Head::of(&head);
    Ok(Opened {
        reader: Box::new(io::Cursor::new(head).chain(reader)),
        head: kind,
        size,
    })
}

/// Opens `input`, nothing read: the reader and, for a file, its size
/// (for a caller that looks at the first bytes itself).
pub fn open_unread(input: &Input) -> Result<(Box<dyn Read + Send>, Option<u64>), String> {
    match input {
        Input::Stdin => Ok((Box::new(io::stdin()), None)),
        Input::File(path) => {
            let (file, size) = open_file(path)?;
            Ok((Box::new(file), Some(size)))
        }
        Input::Other(name) => Err(format!("{name}: read by its owner, not opened here")),
    }
}

/// The file at `path` and its size, asked of the open file: a folder of
/// many small files costs two system calls a file here, not a `stat` of
/// its path for each question.
pub(crate) fn open_file(path: &Path) -> Result<(File, u64), String> {
    let is_dir = || {
        format!(
            "{} is a directory: give the log files in it",
            path.display()
        )
    };
    let file = match File::open(path) {
        Ok(file) => file,
        // Where a directory cannot be opened as a file.
        Err(_) if path.is_dir() => return Err(is_dir()),
        Err(e) => return Err(format!("cannot open {}: {e}", path.display())),
    };
    let meta = file
        .metadata()
        .map_err(|e| format!("cannot open {}: {e}", path.display()))?;
    if meta.is_dir() {
        return Err(is_dir());
    }
    Ok((file, meta.len()))
}

#[cfg(test)]
mod tests {
    use super::Head;

    #[test]
    fn heads_are_told_apart() {
        for (name, bytes, want) in [
            ("filemagic", &b"VWFB"[..], Head::Magic),
            (
                "regular first",
                &[0xff, 0xff, 0xff, 0xff][..],
                Head::NoMagic,
            ),
            ("empty", &b""[..], Head::Empty),
        ] {
            assert_eq!(Head::of(bytes), want, "{name}");
        }
        for (name, bytes) in [
            ("text", &b"{\"a\""[..]),
            ("short", &b"VW"[..]),
            ("bad magic", &b"VWFC"[..]),
        ] {
            let Head::NotALog(why) = Head::of(bytes) else {
                panic!("{name} taken for a log");
            };
            assert!(why.contains("fb repair"), "{name}: {why}");
        }
    }

    /// A file opened says its size (asked of the open file); a folder
    /// named as a file is refused with what to do; a missing file says
    /// it cannot be opened.
    #[test]
    fn opening_gives_the_size_or_says_why_not() {
        let dir = std::env::temp_dir().join(format!("fb-input-open-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("log.fb");
        std::fs::write(&file, b"VWFB and more").unwrap();
        let opened = super::open(&super::Input::File(file.clone())).unwrap();
        assert_eq!(opened.size, Some(13));
        assert_eq!(opened.head, Head::Magic);
        let cases = [
            (dir.clone(), "is a directory: give the log files in it"),
            (dir.join("missing.fb"), "cannot open"),
        ];
        for (path, want) in cases {
            let err = super::open(&super::Input::File(path.clone()))
                .err()
                .unwrap();
            assert!(err.contains(want), "{}: {err}", path.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A folder of more files than one thread checks: its logs in name
    /// order, the files that are not logs set aside in name order, each
    /// file's first bytes those a plain read gives.
    #[test]
    fn a_large_folder_is_sorted_as_one_thread_sorts_it() {
        let dir = std::env::temp_dir().join(format!("fb-input-heads-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let (mut logs, mut others) = (Vec::new(), Vec::new());
        for i in 0..(3 * super::HEADS_PER_THREAD + 5) {
            let path = dir.join(format!("f{i:04}"));
            match i % 7 {
                3 => {
                    std::fs::write(&path, b"{\"not\": \"a log\"}").unwrap();
                    others.push(path);
                }
                5 => {
                    std::fs::write(&path, b"").unwrap();
                    logs.push(path);
                }
                _ => {
                    std::fs::write(&path, format!("VWFB{i}")).unwrap();
                    logs.push(path);
                }
            }
        }
        let resolved = super::resolve_all(std::slice::from_ref(&dir)).unwrap();
        let inputs: Vec<_> = resolved.inputs.iter().map(|i| i.name()).collect();
        let want: Vec<_> = logs.iter().map(|p| p.display().to_string()).collect();
        assert_eq!(inputs, want);
        assert_eq!(resolved.not_logs, others);
        let mut files: Vec<_> = logs.iter().chain(&others).cloned().collect();
        files.sort();
        let heads: Vec<_> = super::first_bytes_of(&files)
            .into_iter()
            .map(|h| h.unwrap())
            .collect();
        let plain: Vec<_> = files
            .iter()
            .map(|f| super::first_bytes(f).unwrap())
            .collect();
        assert_eq!(heads, plain);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// A file read whole gives its bytes, from byte 0 on, at an address
    /// that agrees with their positions modulo READ_ALIGN (the kernel's
    /// fast copy), whatever its size.
    #[test]
    fn a_file_read_whole_is_its_bytes_placed() {
        let dir = std::env::temp_dir().join(format!("fb-input-whole-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, size) in [
            ("empty", 0usize),
            ("one byte", 1),
            ("head only", 4),
            ("63", 63),
            ("65", 65),
            ("a few reads", 300_001),
        ] {
            let bytes: Vec<u8> = (0..size).map(|i| (i * 7 + i / 251) as u8).collect();
            let file = dir.join("log.fb");
            std::fs::write(&file, &bytes).unwrap();
            let whole = super::whole(&super::Input::File(file), super::Maps::Never).unwrap();
            assert!(matches!(whole, super::Whole::Read { .. }), "{name}");
            assert!(*whole == bytes[..], "{name}: other bytes");
            if size > 0 {
                let address = whole.as_ptr() as usize;
                assert_eq!(address % fb_format::READ_ALIGN, 0, "{name}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
