//! Sidecar indexes beside logs (`LOG.fbidx`, format in
//! `fb_format::index`): where one lives, writing one, and finding and
//! trusting one: an index that does not match its log (see
//! `Index::check_log` and `Index::check_stamp`) is rebuilt, never
//! trusted.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use fb_format::index::{Index, LogSource, LogStamp};

use crate::error::Error;
use crate::input::{Input, Maps};
use crate::output::{Existing, How, Output};
use crate::report::{Note, Observer};

/// Where the index of `log` lives.
pub fn path_for(log: &Path) -> PathBuf {
    let mut name = log.as_os_str().to_owned();
    name.push(".fbidx");
    PathBuf::from(name)
}

/// What the file system says of a log now (see [`LogStamp`]).
pub fn stamp(meta: &std::fs::Metadata) -> LogStamp {
    use std::os::unix::fs::MetadataExt;
    let ns = |secs: i64, nanos: i64| secs.saturating_mul(1_000_000_000).saturating_add(nanos);
    LogStamp {
        inode: meta.ino(),
        modified_ns: ns(meta.mtime(), meta.mtime_nsec()),
        changed_ns: ns(meta.ctime(), meta.ctime_nsec()),
    }
}

/// [`stamp`] of the file at `log`.
fn stamp_of(log: &Path) -> Result<LogStamp, String> {
    std::fs::metadata(log)
        .map(|m| stamp(&m))
        .map_err(|e| format!("its log cannot be looked at: {e}"))
}

/// Builds the index of `log` (read from `data`: its bytes in memory, or
/// the file read in windows, [`fb_format::index::FileLog`]) and writes it
/// to `out`, atomically, on `threads` threads; the index. `done` is told
/// the bytes of `data` the build no longer needs.
pub fn write(
    log: &Path,
    data: &dyn LogSource,
    out: &Path,
    threads: usize,
    force: bool,
    done: &(dyn Fn(u64, u64) + Sync),
) -> Result<Index, Error> {
    // Taken before the bytes are read: a write meanwhile makes the index
    // stale, never trusted.
    let stamp = std::fs::metadata(log)
        .map(|m| stamp(&m))
        .map_err(|e| Error::Msg(format!("cannot look at {}: {e}", log.display())))?;
    let mut index = Index::build_from(data, threads, done).map_err(|e| {
        Error::Msg(format!(
            "{}: cannot be indexed: {e} (fb repair writes a log that can)",
            log.display()
        ))
    })?;
    index.stamp = stamp;
    let inputs = [Input::File(log.to_path_buf())];
    // An index is a cache of its log, rebuilt at will: replaced without
    // --force. Any other file is not.
    let existing = match force || is_index(out) {
        true => Existing::Replace,
        false => Existing::Refuse,
    };
    let mut file = Output::create(Some(out), &inputs, How::binary(existing))?;
    file.put(&index.to_bytes())?;
    file.flush().map_err(|e| file.error(e))?;
    file.finish()?;
    Ok(index)
}

/// Whether the file at `path` is an index, by its first bytes.
pub fn is_index(path: &Path) -> bool {
    use std::io::Read;
    let mut magic = [0u8; 8];
    File::open(path)
        .and_then(|mut f| f.read_exact(&mut magic))
        .is_ok_and(|()| magic == fb_format::index::MAGIC)
}

/// What lies beside a log.
enum Found {
    Nothing,
    Fresh(Index),
    /// An index that cannot be used, and why.
    Stale(String),
}

/// The summary of the index file at `at` (see `Index::from_summary`), or
/// its first bytes when they do not say how long that is (for the parser
/// to say what is wrong).
fn read_summary(at: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = File::open(at)?;
    let size = file.metadata()?.len();
    let mut bytes = Vec::new();
    (&mut file)
        .take(fb_format::index::SUMMARY_HEAD as u64)
        .read_to_end(&mut bytes)?;
    if fb_format::index::file_version(&bytes) != Some(fb_format::index::VERSION) {
        return Ok(bytes);
    }
    if let Ok(len) = Index::summary_len(&bytes) {
        let rest = len.min(size).saturating_sub(bytes.len() as u64);
        file.take(rest).read_to_end(&mut bytes)?;
    }
    Ok(bytes)
}

/// Reads a file whole, its two halves on two threads: most of the time
/// of reading a large index goes to faulting in the fresh buffer and
/// copying into it, which two cores share (bench/NOTES.md).
/// A file that changes length meanwhile reads short or long, and its
/// checksum then says so.
fn read_in_halves(path: &Path) -> std::io::Result<Vec<u8>> {
    let file = File::open(path)?;
    let len = usize::try_from(file.metadata()?.len())
        .map_err(|_| std::io::Error::other("too large for this machine"))?;
    if len < 8 << 20 {
        return std::fs::read(path);
    }
    let mut buf = vec![0u8; len];
    let (front, back) = buf.split_at_mut(len / 2);
    let at = front.len() as u64;
    std::thread::scope(|scope| {
        let back = scope.spawn(|| file.read_exact_at(back, at));
        let front = file.read_exact_at(front, 0);
        let back = back
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("a reading thread failed")));
        front.and(back)
    })?;
    Ok(buf)
}

/// How much of an index to read, and how.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// The summary alone.
    Summary,
    /// The whole file, into memory.
    Whole,
    /// The whole file, mapped when it can be (with [`Maps::WhereSafe`]):
    /// for a caller that maps nothing else (`mapped.rs` follows one input
    /// at a time) and checks [`crate::mapped::tripped`] when done.
    Mapped(Maps),
}

/// Reads the index beside `log` (as `how` says) and checks it with
/// `check`. A damaged one is an error naming it.
fn find(
    log: &Path,
    how: Read,
    check: impl FnOnce(&Index) -> Result<(), String>,
) -> Result<Found, Error> {
    let at = path_for(log);
    // A map is faulted in sixteen pages at a time, where reading the file
    // copies it into fresh memory page by page (bench/NOTES.md has the
    // figures); mapped only where the caller allows maps.
    let map = match how {
        Read::Mapped(Maps::WhereSafe) => crate::mapped::Mapped::open(&at),
        _ => None,
    };
    let bytes: fb_format::index::Shared = match map {
        Some(map) => std::sync::Arc::new(map),
        None => {
            let read = if how == Read::Summary {
                read_summary(&at)
            } else {
                read_in_halves(&at)
            };
            match read {
                Ok(bytes) => std::sync::Arc::new(bytes),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Found::Nothing),
                Err(e) => return Err(Error::Msg(format!("cannot read {}: {e}", at.display()))),
            }
        }
    };
    // An index of an earlier version is rebuilt; a later or unknown
    // version is an error (from_bytes), not something to overwrite.
    if let Some(v) = fb_format::index::file_version((*bytes).as_ref()) {
        if (1..fb_format::index::VERSION).contains(&v) {
            return Ok(Found::Stale(format!("format version {v}")));
        }
    }
    let parsed = if how == Read::Summary {
        Index::from_summary((*bytes).as_ref())
    } else {
        Index::from_shared(bytes)
    };
    let index = parsed.map_err(|e| {
        Error::Msg(format!(
            "{}: {e}; or remove it, or pass --no-index",
            at.display()
        ))
    })?;
    Ok(match check(&index) {
        Ok(()) => Found::Fresh(index),
        Err(why) => Found::Stale(why),
    })
}

/// The index of `log` if one is beside it. A stale one (the log changed
/// since) is rebuilt in place and said so to `observer`; a damaged one
/// is an error naming it.
pub fn load(log: &Path, data: &[u8], observer: &mut dyn Observer) -> Result<Option<Index>, Error> {
    load_beside(log, data, Read::Whole, observer)
}

/// [`load`] reading only the index's summary (blocks' ranges, counts and
/// times, checkpoints): enough for a time window, a few MB for a 10 GiB
/// log. A rebuilt index comes back whole.
pub fn load_summary(
    log: &Path,
    data: &[u8],
    observer: &mut dyn Observer,
) -> Result<Option<Index>, Error> {
    load_beside(log, data, Read::Summary, observer)
}

/// [`load`] of what `how` says of the index, the log in memory.
fn load_beside(
    log: &Path,
    data: &[u8],
    how: Read,
    observer: &mut dyn Observer,
) -> Result<Option<Index>, Error> {
    let check = |index: &Index| {
        index.check_log(data)?;
        index.check_stamp(&stamp_of(log)?)
    };
    match find(log, how, check)? {
        Found::Nothing => Ok(None),
        Found::Fresh(index) => Ok(Some(index)),
        Found::Stale(why) => rebuild(log, &data, &path_for(log), &why, observer),
    }
}

/// [`load`] for a log that is read in pieces, not mapped: checked against
/// its size and the two ends read from `file`; the log read in windows
/// (or mapped with [`Maps::WhereSafe`]) only if the index must be
/// rebuilt. The index itself is mapped when `maps` allows: the caller
/// maps nothing else, and checks [`crate::mapped::tripped`] before it
/// trusts what it made from the index.
pub fn load_unmapped(
    log: &Path,
    file: &File,
    maps: Maps,
    observer: &mut dyn Observer,
) -> Result<Option<Index>, Error> {
    load_from_file(log, file, Read::Mapped(maps), maps, observer)
}

/// [`load_summary`] for a log that is read in pieces, not mapped, as
/// [`load_unmapped`] checks it.
pub fn load_summary_unmapped(
    log: &Path,
    file: &File,
    maps: Maps,
    observer: &mut dyn Observer,
) -> Result<Option<Index>, Error> {
    load_from_file(log, file, Read::Summary, maps, observer)
}

fn load_from_file(
    log: &Path,
    file: &File,
    how: Read,
    maps: Maps,
    observer: &mut dyn Observer,
) -> Result<Option<Index>, Error> {
    let cannot = |e: std::io::Error| Error::Msg(format!("cannot read {}: {e}", log.display()));
    let meta = file.metadata().map_err(cannot)?;
    let size = meta.len();
    let found = find(log, how, |index| {
        index.check_stamp(&stamp(&meta))?;
        let n = (fb_format::index::HASHED as u64).min(size);
        let mut head = vec![0; n as usize];
        let mut tail = vec![0; n as usize];
        file.read_exact_at(&mut head, 0)
            .and_then(|()| file.read_exact_at(&mut tail, size - n))
            .map_err(|e| format!("its log cannot be read: {e}"))?;
        index.check_ends(size, &head, &tail)
    })?;
    match found {
        Found::Nothing => Ok(None),
        Found::Fresh(index) => Ok(Some(index)),
        Found::Stale(why) => {
            let data = crate::input::OpenLog::open(&Input::File(log.to_path_buf()), maps)?;
            rebuild(log, &data, &path_for(log), &why, observer)
        }
    }
}

/// Rebuilds the index at `at` that cannot be used (`why`), telling
/// `observer`; `None` when the log cannot be indexed.
fn rebuild(
    log: &Path,
    data: &dyn LogSource,
    at: &Path,
    why: &str,
    observer: &mut dyn Observer,
) -> Result<Option<Index>, Error> {
    observer.note(Note::IndexStale { index: at, why });
    // The caller reads `data` on: its pages stay.
    let threads = crate::options::default_threads();
    match write(log, data, at, threads, false, &|_, _| {}) {
        Ok(index) => Ok(Some(index)),
        // Never trusted: the log is read whole instead.
        Err(e) => {
            observer.note(Note::IndexUnusable {
                why: &e.to_string(),
            });
            Ok(None)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_read_in_halves_is_the_file() {
        let dir = std::env::temp_dir().join(format!("fb-halves-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (name, len) in [
            ("small", 1000usize),
            ("odd", (9 << 20) + 7),
            ("even", 10 << 20),
        ] {
            let path = dir.join(name);
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 + i / 4093) as u8).collect();
            std::fs::write(&path, &bytes).unwrap();
            assert!(read_in_halves(&path).unwrap() == bytes, "{name}");
        }
        let missing = read_in_halves(&dir.join("missing")).unwrap_err();
        assert_eq!(missing.kind(), std::io::ErrorKind::NotFound);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
