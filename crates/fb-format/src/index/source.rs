//! Where an index build reads its log: bytes in memory (or mapped),
//! framed where they lie, or a file read through `pread` a window at a
//! time, so that the build's memory stays flat in the log's size.

use std::io::Read;

/// A log an index is built from.
pub trait LogSource: Sync {
    /// The log's length in bytes: what the build reads, whatever the
    /// file does meanwhile.
    fn len(&self) -> u64;

    /// Whether the log holds no byte.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Reads bytes of the log from `offset` into `buf`: how many (0 at the
    /// end of the file, and past [`LogSource::len`]).
    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize>;

    /// The whole log, when it is in memory: then framed in place.
    fn in_memory(&self) -> Option<&[u8]> {
        None
    }
}

impl LogSource for &[u8] {
    fn len(&self) -> u64 {
        <[u8]>::len(self) as u64
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        let rest = usize::try_from(offset)
            .ok()
            .and_then(|at| self.get(at..))
            .unwrap_or_default();
        let n = rest.len().min(buf.len());
        if let (Some(to), Some(from)) = (buf.get_mut(..n), rest.get(..n)) {
            to.copy_from_slice(from);
        }
        Ok(n)
    }

    fn in_memory(&self) -> Option<&[u8]> {
        Some(self)
    }
}

/// A log file read through `pread`: its first `len` bytes (its size when
/// opened), however it grows meanwhile. A file cut shorter meanwhile
/// reads short, and the build says where the log ends early.
#[derive(Debug, Clone, Copy)]
pub struct FileLog<'f> {
    file: &'f std::fs::File,
    len: u64,
}

impl<'f> FileLog<'f> {
    /// The first `len` bytes of `file`.
    pub fn new(file: &'f std::fs::File, len: u64) -> Self {
        Self { file, len }
    }
}

impl LogSource for FileLog<'_> {
    fn len(&self) -> u64 {
        self.len
    }

    fn read_at(&self, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::os::unix::fs::FileExt;
        let room = usize::try_from(self.len.saturating_sub(offset)).unwrap_or(usize::MAX);
        let n = room.min(buf.len());
        match buf.get_mut(..n) {
            Some(buf) if n > 0 => self.file.read_at(buf, offset),
            _ => Ok(0),
        }
    }
}

/// A log read in order from an offset, as a [`crate::StreamReader`]
/// reads: each read a `pread` of its own, so that several readers of one
/// file do not share a position.
pub struct ReadFrom<'s> {
    src: &'s dyn LogSource,
    at: u64,
}

impl<'s> ReadFrom<'s> {
    /// Reads `src` from byte `at` to its end.
    pub fn new(src: &'s dyn LogSource, at: u64) -> Self {
        Self { src, at }
    }
}

impl Read for ReadFrom<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.src.read_at(self.at, buf)?;
        self.at += n as u64;
        Ok(n)
    }
}

/// Fills `buf` from `offset` as far as the log goes: the bytes read,
/// fewer than asked only where the log ends (interrupted reads retried).
pub fn read_full(src: &dyn LogSource, offset: u64, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while let Some(rest) = buf.get_mut(filled..).filter(|rest| !rest.is_empty()) {
        match src.read_at(offset + filled as u64, rest) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

/// Fills `buf` with the bytes from `offset`: an `UnexpectedEof` error
/// where the log ends first (a file cut short meanwhile, or an offset
/// past it).
pub fn read_exact_at(src: &dyn LogSource, offset: u64, buf: &mut [u8]) -> std::io::Result<()> {
    if read_full(src, offset, buf)? < buf.len() {
        let end = offset + buf.len() as u64;
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("the log ends before byte {end}: was it cut short meanwhile?"),
        ));
    }
    Ok(())
}
