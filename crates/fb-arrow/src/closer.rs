//! Partition files finished on a thread of their own.
//!
//! A partitioned export leaves a file when its rows move on to another
//! partition, and finishing it (its last row group's chunks, closed on its
//! lanes, then the footer) made the thread that takes batches in order
//! wait for that file's lanes. With partitions of less than a batch (an
//! hour of a busy log) that wait came at nearly every batch, and the
//! export ran no faster on 16 threads than on 2 (bench/NOTES.md). Here a
//! file left is handed to a closer thread and the writer goes on with the
//! next partition's file, whose lanes encode while the last one's finish.
//!
//! Memory: a file waiting to be finished holds its row group in progress
//! (the rows its lanes have not encoded, the pages they have). At most
//! [`MAX_WAITING`] files wait, and only while the bytes of the row groups
//! they hold (as [`crate::ParquetFile::pending_bytes`] counts them) stay
//! within a budget; past either the writer waits for the oldest, as it
//! did for every file before. The files are the same bytes either way: a file's content
//! does not depend on when it is finished.

use std::collections::VecDeque;
use std::fs::File;
use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread::JoinHandle;

use crate::{BatchWriter, Error, ParquetFile};

/// A partition file that is open for rows.
pub(crate) struct Open {
    pub(crate) writer: ParquetFile<BufWriter<File>>,
    pub(crate) path: PathBuf,
    pub(crate) used: u64,
}

/// Writes a file's footer and flushes it.
pub(crate) fn close(file: Open) -> Result<(), Error> {
    let mut out = file.writer.finish()?;
    std::io::Write::flush(&mut out).map_err(|source| Error::Io {
        path: file.path,
        source,
    })
}

/// Files handed to the closer thread and not yet finished, at most. One
/// is enough: on 16 cores the file being written and the one finishing
/// kept the export as fast as two to eight waiting did, and each more
/// waiting file held its row group and its lanes' memory
/// (bench/NOTES.md).
const MAX_WAITING: usize = 1;

/// Finishes partition files on a thread of its own, in the order they
/// are handed over.
pub(crate) struct Closer {
    /// The directory the files are in (what an error of the thread names).
    root: PathBuf,
    /// Row-group bytes the waiting files may hold together.
    budget: usize,
    /// Started at the first file handed over; `None` before, and when it
    /// could not start (files are then finished on the caller's thread).
    thread: Option<Thread>,
    /// The pending bytes of each file handed over and not yet reported
    /// finished, oldest first.
    waiting: VecDeque<usize>,
    /// The first error a finished file reported, given back once.
    failed: Option<Error>,
}

struct Thread {
    files: Option<Sender<Open>>,
    finished: Receiver<Result<(), Error>>,
    handle: Option<JoinHandle<()>>,
}

impl Closer {
    /// A closer whose waiting files hold at most `budget` bytes of row
    /// groups; a budget of 0 finishes every file on the caller's thread.
    pub(crate) fn new(root: PathBuf, budget: usize) -> Self {
        Self {
            root,
            budget,
            thread: None,
            waiting: VecDeque::new(),
            failed: None,
        }
    }

    /// Finishes `file`, on the closer thread where the budget allows,
    /// else here once the files before it are done. An error of an
    /// earlier file handed over comes back from here or from
    /// [`Closer::finish`].
    pub(crate) fn close(&mut self, file: Open) -> Result<(), Error> {
        self.reap(false);
        let bytes = file.writer.pending_bytes();
        if self.budget == 0 || bytes > self.budget {
            self.wait_all();
            self.take_error()?;
            return close(file);
        }
        while !self.waiting.is_empty()
            && (self.waiting.len() >= MAX_WAITING
                || self.waiting.iter().sum::<usize>() + bytes > self.budget)
        {
            self.reap(true);
        }
        self.take_error()?;
        let Some(file) = self.hand_over(file) else {
            self.waiting.push_back(bytes);
            return Ok(());
        };
        self.wait_all();
        self.take_error()?;
        close(file)
    }

    /// Waits for every file handed over; the first error any of them
    /// reported.
    pub(crate) fn finish(mut self) -> Result<(), Error> {
        self.wait_all();
        self.take_error()
    }

    fn take_error(&mut self) -> Result<(), Error> {
        self.failed.take().map_or(Ok(()), Err)
    }

    /// Hands `file` to the thread, started if need be; gives it back
    /// when there is no thread to take it.
    fn hand_over(&mut self, file: Open) -> Option<Open> {
        if self.thread.is_none() {
            self.thread = Thread::spawn();
        }
        let Some(files) = self.thread.as_ref().and_then(|t| t.files.as_ref()) else {
            return Some(file);
        };
        files.send(file).err().map(|e| e.0)
    }

    /// Takes the reports of files finished: all that have come when
    /// `block` is false, else at least one (the oldest) if any is
    /// waiting.
    fn reap(&mut self, block: bool) {
        let Some(thread) = &self.thread else {
            return;
        };
        let mut block = block;
        while !self.waiting.is_empty() {
            let report = match block {
                true => thread.finished.recv().ok(),
                false => thread.finished.try_recv().ok(),
            };
            let Some(report) = report else {
                if block {
                    // The thread is gone with files it never finished.
                    self.waiting.clear();
                    let why = std::io::Error::other("the thread finishing partition files ended");
                    self.failed.get_or_insert(Error::Io {
                        path: self.root.clone(),
                        source: why,
                    });
                }
                return;
            };
            self.waiting.pop_front();
            if let Err(e) = report {
                self.failed.get_or_insert(e);
            }
            block = false;
        }
    }

    fn wait_all(&mut self) {
        while !self.waiting.is_empty() {
            self.reap(true);
        }
    }
}

impl Drop for Closer {
    /// Files still waiting are finished before the writer goes: none is
    /// left being written after the export returns, whatever ended it.
    fn drop(&mut self) {
        if let Some(mut thread) = self.thread.take() {
            thread.files = None;
            if let Some(handle) = thread.handle.take() {
                let _ = handle.join();
            }
        }
    }
}

impl Thread {
    fn spawn() -> Option<Self> {
        let (files, queue) = channel::<Open>();
        let (report, finished) = channel();
        let handle = std::thread::Builder::new()
            .name("fb-parquet-close".into())
            .spawn(move || {
                for file in queue {
                    if report.send(close(file)).is_err() {
                        return;
                    }
                }
            })
            .ok()?;
        Some(Self {
            files: Some(files),
            finished,
            handle: Some(handle),
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
mod tests {
    use super::*;
    use crate::even::numbered_rows;

    /// A file at `path` (opened for writing, not created) with 100 rows in
    /// its row group in progress, encoded on lanes.
    fn open(path: &std::path::Path) -> Open {
        let out = File::options()
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)
            .unwrap();
        let schema = numbered_rows(0, 1).schema();
        let mut writer =
            ParquetFile::with_schema(BufWriter::new(out), 1000, crate::ROW_GROUP_BYTES, schema)
                .unwrap()
                .encoding_threads(2)
                .unwrap();
        writer.write(&numbered_rows(0, 100)).unwrap();
        Open {
            writer,
            path: path.to_path_buf(),
            used: 0,
        }
    }

    fn rows_in(path: &std::path::Path) -> i64 {
        use parquet::file::reader::FileReader;
        let bytes = bytes::Bytes::from(std::fs::read(path).unwrap());
        let reader = parquet::file::serialized_reader::SerializedFileReader::new(bytes).unwrap();
        reader.metadata().file_metadata().num_rows()
    }

    /// Files finished on the thread, or here, are whole files; a file
    /// that cannot be written (a full disk) fails the next close or the
    /// finish, with its path, on either.
    #[test]
    fn files_are_finished_and_their_errors_come_back() {
        let dir = std::env::temp_dir().join(format!("fb-arrow-closer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let full = std::path::Path::new("/dev/full");
        for (name, budget) in [("on the caller's thread", 0), ("on the thread", 1 << 30)] {
            let (a, b) = (
                dir.join(format!("{budget}-a")),
                dir.join(format!("{budget}-b")),
            );
            let mut closer = Closer::new(dir.clone(), budget);
            closer.close(open(&a)).unwrap();
            closer.close(open(&b)).unwrap();
            closer.finish().unwrap();
            assert_eq!((rows_in(&a), rows_in(&b)), (100, 100), "{name}");

            // The error of a full disk: at its own close here, at the next
            // close (which waits for it) on the thread.
            let mut closer = Closer::new(dir.clone(), budget);
            let failed = match (budget, closer.close(open(full))) {
                (0, Err(e)) => e,
                (0, Ok(())) => panic!("{name}: a full disk closed without an error"),
                (_, Ok(())) => closer.close(open(&a)).expect_err(name),
                (_, Err(e)) => panic!("{name}: not handed over: {e}"),
            };
            let Error::Io { path, source } = failed else {
                panic!("{name}: {failed}");
            };
            assert_eq!(
                (path.as_path(), source.kind()),
                (full, std::io::ErrorKind::StorageFull),
                "{name}"
            );
            // Handed over last and failing: the finish says so.
            let mut closer = Closer::new(dir.clone(), budget);
            if budget > 0 {
                closer.close(open(full)).unwrap();
                assert!(closer.finish().is_err(), "{name}");
            }
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
