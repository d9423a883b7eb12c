//! Files opened and read ahead on helper threads, when many threads join
//! what one thread frames (`drive::feed_all`).
//!
//! One thread frames every input in turn. On many cores it is the one
//! that limits the run: it pays the kernel's copy of every byte read, and
//! for each file of a folder the system calls that open it, stat it, read
//! its first bytes and close it. Here helpers open the next inputs and
//! read them ahead, [`FIRST_BYTES_MAX`] bytes at once (all of a small file)
//! and the rest of a larger file in chunks of [`CHUNK_BYTES`], while the
//! framing thread frames what comes before; it then takes each input's
//! bytes from memory, a copy several times cheaper than the kernel's.
//!
//! What an input is and what goes wrong with it is unchanged: only
//! regular files are opened ahead (a FIFO opened ahead would block its
//! writer's open, or be read out of turn), through the same
//! `input::open_file`, so an input that cannot be opened fails with the
//! same message, where the framing thread comes to it. A file is read
//! until a read gives nothing, as the framing thread reads it. A read that
//! fails ahead hands over what was read before, then the failure, and the
//! framing thread meets it where it would have.
//!
//! Bounded: at most [`INPUTS_AHEAD`] inputs are open or held ahead of the
//! one being framed, each with at most [`FIRST_BYTES_MAX`] bytes and
//! [`CHUNKS_AHEAD`] chunks in memory, and buffers are reused. A run that
//! stops early stops the helpers when the [`ReadAhead`] is dropped; each
//! finishes at most the one read it is in.

use std::collections::{BTreeMap, VecDeque};
use std::fs::File;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

/// Bytes of an input read ahead at once: a file up to this size is read
/// whole, as are most files of a folder that a loop or `fb split` wrote.
pub const FIRST_BYTES_MAX: usize = 1 << 20;

/// Bytes of a larger file read ahead at a time after its first ones.
pub const CHUNK_BYTES: usize = 1 << 20;

/// Chunks of one file read ahead of the framing thread: its helper waits
/// while as many are unread.
pub const CHUNKS_AHEAD: usize = 2;

/// Inputs open or held ahead of the one being framed: enough to keep the
/// framing thread fed, few enough that memory stays small and few files
/// are open at once.
pub const INPUTS_AHEAD: usize = 8;

/// Spare buffers kept for reuse.
const SPARE_BUFFERS: usize = INPUTS_AHEAD + 2 * CHUNKS_AHEAD + 4;

/// An input as a helper left it.
#[derive(Debug)]
pub enum Ahead {
    /// Not opened ahead (not a path, or not a regular file): the framing
    /// thread opens it as before.
    Skipped,
    /// It could not be opened: `input::open_file`'s message.
    Failed(String),
    /// Opened, and read ahead.
    Opened(Opened),
}

/// Bytes read ahead: `bytes[..end]`. The rest of `bytes` is only what
/// the buffer had: kept initialized, so that a buffer reused is not
/// zeroed again.
#[derive(Debug, Default)]
struct Held {
    bytes: Vec<u8>,
    end: usize,
}

/// The chunks of a larger file, from its helper to the framing thread.
#[derive(Debug, Default)]
struct Chunks {
    /// Read and not yet taken; a read that failed comes last.
    queue: VecDeque<io::Result<Held>>,
    /// The helper read the end, or a failure: nothing more comes.
    done: bool,
}

/// An input opened ahead, read from its first byte: the bytes it holds,
/// then its further chunks (`chunks`) as its helper reads them. Its
/// buffers go back to the read-ahead as they are read through.
pub struct Opened {
    input: usize,
    held: Held,
    at: usize,
    /// Whether more than `held` comes.
    chunks: bool,
    /// Whether it had more than its first bytes: a helper reads on.
    more: bool,
    size: u64,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Opened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Opened")
            .field("input", &self.input)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Opened {
    /// Its size, asked of the open file.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Its next chunk, waiting for the helper; `None` at the end.
    fn next_chunk(&mut self) -> Option<io::Result<Held>> {
        let mut state = lock(&self.shared.state);
        loop {
            let chunks = state.chunks.get_mut(&self.input)?;
            if let Some(next) = chunks.queue.pop_front() {
                // Its helper may read another.
                self.shared.room.notify_all();
                return Some(next);
            }
            if chunks.done {
                return None;
            }
            if state.stop {
                // Only where an input outlives its read-ahead.
                return Some(Err(io::Error::other("reading ahead stopped")));
            }
            state = wait(&self.shared.ready, state);
        }
    }
}

impl Read for Opened {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let held = self
                .held
                .bytes
                .get(self.at..self.held.end)
                .unwrap_or_default();
            if !held.is_empty() {
                let n = held.len().min(buf.len());
                if let (Some(to), Some(from)) = (buf.get_mut(..n), held.get(..n)) {
                    to.copy_from_slice(from);
                }
                self.at += n;
                return Ok(n);
            }
            if !self.chunks {
                return Ok(0);
            }
            match self.next_chunk() {
                Some(Ok(held)) => {
                    let read = std::mem::replace(&mut self.held, held);
                    self.shared.spare.give(read.bytes);
                    self.at = 0;
                }
                Some(Err(e)) => {
                    self.chunks = false;
                    return Err(e);
                }
                None => self.chunks = false,
            }
        }
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        self.shared.spare.give(std::mem::take(&mut self.held.bytes));
        if self.more {
            // Its helper, if still reading, stops.
            let unread = lock(&self.shared.state).chunks.remove(&self.input);
            self.shared.room.notify_all();
            for held in unread.into_iter().flat_map(|c| c.queue).flatten() {
                self.shared.spare.give(held.bytes);
            }
        }
    }
}

/// Buffers read through, for the helpers to read the next into.
#[derive(Debug, Default)]
struct Spare(Mutex<Vec<Vec<u8>>>);

impl Spare {
    fn give(&self, buf: Vec<u8>) {
        if buf.is_empty() {
            return;
        }
        let mut spare = lock(&self.0);
        if spare.len() < SPARE_BUFFERS {
            spare.push(buf);
        }
    }

    fn take(&self) -> Vec<u8> {
        lock(&self.0).pop().unwrap_or_default()
    }
}

/// What the helpers and the framing thread share.
#[derive(Default)]
struct State {
    /// The next input a helper takes.
    next: usize,
    /// The input the framing thread takes next: helpers stay at most
    /// [`INPUTS_AHEAD`] ahead of it.
    taken: usize,
    /// Inputs done by a helper and not yet taken.
    ready: BTreeMap<usize, Ahead>,
    /// The chunks of the larger inputs opened and not yet dropped.
    chunks: BTreeMap<usize, Chunks>,
    /// Set when the read-ahead is dropped.
    stop: bool,
    /// Helpers still running.
    helpers: usize,
}

struct Shared {
    paths: Vec<Option<PathBuf>>,
    state: Mutex<State>,
    /// An input or a chunk is ready, or a helper left: the framing thread
    /// waits on it.
    ready: Condvar,
    /// An input or a chunk was taken or dropped, or the read-ahead stops:
    /// helpers wait on it.
    room: Condvar,
    spare: Spare,
}

/// Helpers reading a list of inputs ahead, in their order.
pub struct ReadAhead {
    shared: Arc<Shared>,
    helpers: Vec<JoinHandle<()>>,
}

impl ReadAhead {
    /// Starts `helpers` threads on `paths` (`None`: not a file, not read
    /// ahead). `None` if no thread could be started: then the inputs are
    /// opened where they are framed, as without read-ahead.
    pub fn start(paths: Vec<Option<PathBuf>>, helpers: usize) -> Option<Self> {
        let helpers = helpers.max(1);
        let shared = Arc::new(Shared {
            paths,
            state: Mutex::new(State {
                helpers,
                ..State::default()
            }),
            ready: Condvar::new(),
            room: Condvar::new(),
            spare: Spare::default(),
        });
        let started: Vec<JoinHandle<()>> = (0..helpers)
            .filter_map(|i| {
                let shared = Arc::clone(&shared);
                std::thread::Builder::new()
                    .name(format!("fb-read-ahead-{i}"))
                    .spawn(move || help(&shared))
                    .ok()
            })
            .collect();
        // Those that did not start are not waited for.
        lock(&shared.state).helpers -= helpers - started.len();
        shared.ready.notify_all();
        match started.is_empty() {
            true => None,
            false => Some(Self {
                shared,
                helpers: started,
            }),
        }
    }

    /// Input `index` as a helper left it, waiting for it if need be.
    /// Inputs are taken in increasing order; those passed over are
    /// dropped (their buffers reused, their files closed).
    pub fn take(&self, index: usize) -> Ahead {
        let mut state = lock(&self.shared.state);
        let mut passed = BTreeMap::new();
        if index > state.taken {
            state.taken = index;
            let mut later = state.ready.split_off(&index);
            std::mem::swap(&mut state.ready, &mut later);
            passed = later;
            self.shared.room.notify_all();
        }
        let ahead = loop {
            if let Some(ahead) = state.ready.remove(&index) {
                state.taken = state.taken.max(index + 1);
                // One more input may be read ahead.
                self.shared.room.notify_all();
                break ahead;
            }
            // Not in the list, or no helper left to read it.
            if index >= self.shared.paths.len() || state.helpers == 0 {
                break Ahead::Skipped;
            }
            state = wait(&self.shared.ready, state);
        };
        // Inputs passed over are dropped without the lock, which their
        // drop takes.
        drop(state);
        drop(passed);
        ahead
    }
}

impl Drop for ReadAhead {
    fn drop(&mut self) {
        let unread = {
            let mut state = lock(&self.shared.state);
            state.stop = true;
            std::mem::take(&mut state.ready)
        };
        self.shared.room.notify_all();
        drop(unread);
        for helper in self.helpers.drain(..) {
            // A helper that panicked left its input unread; the framing
            // thread opens it itself (`helpers` was counted down).
            let _ = helper.join();
        }
    }
}

/// A helper: takes the next input while it is few enough ahead, and reads
/// it ahead.
fn help(shared: &Arc<Shared>) {
    // Counted out however it ends, so that the framing thread never waits
    // for a helper that is gone.
    struct Leaving<'a>(&'a Shared);
    impl Drop for Leaving<'_> {
        fn drop(&mut self) {
            lock(&self.0.state).helpers -= 1;
            self.0.ready.notify_all();
        }
    }
    let _leaving = Leaving(shared);
    loop {
        let index = {
            let mut state = lock(&shared.state);
            loop {
                state.next = state.next.max(state.taken);
                if state.stop || state.next >= shared.paths.len() {
                    return;
                }
                if state.next < state.taken + INPUTS_AHEAD {
                    break;
                }
                state = wait(&shared.room, state);
            }
            state.next += 1;
            state.next - 1
        };
        let (ahead, file) = match shared.paths.get(index) {
            Some(Some(path)) => read_ahead(path, index, shared),
            _ => (Ahead::Skipped, None),
        };
        {
            let mut state = lock(&shared.state);
            if state.stop || index < state.taken {
                // Passed over: dropped (below, without the lock).
                drop(state);
                drop(ahead);
                continue;
            }
            if file.is_some() {
                state.chunks.insert(index, Chunks::default());
            }
            state.ready.insert(index, ahead);
            shared.ready.notify_all();
        }
        if let Some(file) = file {
            read_on(file, index, shared);
        }
    }
}

/// Opens `path` and reads its first bytes, if it is a regular file; the
/// file, when it has more (or a read failed), for [`read_on`].
fn read_ahead(path: &Path, input: usize, shared: &Arc<Shared>) -> (Ahead, Option<More>) {
    match std::fs::metadata(path) {
        Ok(meta) if meta.is_file() => {}
        // Not a regular file, or not there (said where it is opened).
        _ => return (Ahead::Skipped, None),
    }
    let (mut file, size) = match crate::input::open_file(path) {
        Ok(opened) => opened,
        Err(message) => return (Ahead::Failed(message), None),
    };
    // One more byte than the file has, to see its end (unless it grew).
    let want = usize::try_from(size)
        .unwrap_or(usize::MAX)
        .saturating_add(1)
        .min(FIRST_BYTES_MAX);
    let (held, ended) = read_chunk(&mut file, &shared.spare, want);
    let more = match ended {
        Ended::End => None,
        Ended::Full => Some(More { file, failed: None }),
        Ended::Failed(e) => Some(More {
            file,
            failed: Some(e),
        }),
    };
    let opened = Opened {
        input,
        held,
        at: 0,
        chunks: more.is_some(),
        more: more.is_some(),
        size,
        shared: Arc::clone(shared),
    };
    (Ahead::Opened(opened), more)
}

/// A file a helper reads on after its first bytes.
struct More {
    file: File,
    /// The read that failed after the first bytes.
    failed: Option<io::Error>,
}

/// Reads `more` through, a chunk at a time, into input `input`'s chunks,
/// waiting while [`CHUNKS_AHEAD`] are unread; stops when the input is
/// dropped or the read-ahead stops.
fn read_on(mut more: More, input: usize, shared: &Shared) {
    let mut failed = more.failed.take();
    loop {
        let (next, done) = match failed.take() {
            Some(e) => (Err(e), true),
            None => {
                let (held, ended) = read_chunk(&mut more.file, &shared.spare, CHUNK_BYTES);
                match ended {
                    Ended::Full => (Ok(held), false),
                    Ended::End => (Ok(held), true),
                    Ended::Failed(e) => {
                        // What was read comes first, then the failure.
                        failed = Some(e);
                        (Ok(held), false)
                    }
                }
            }
        };
        let mut state = lock(&shared.state);
        loop {
            let stop = state.stop;
            let Some(chunks) = state.chunks.get_mut(&input) else {
                return;
            };
            if stop {
                return;
            }
            if chunks.queue.len() < CHUNKS_AHEAD {
                match next {
                    Ok(held) if held.end == 0 => shared.spare.give(held.bytes),
                    next => chunks.queue.push_back(next),
                }
                chunks.done = done;
                shared.ready.notify_all();
                break;
            }
            state = wait(&shared.room, state);
        }
        if done {
            return;
        }
    }
}

/// How a chunk's read ended.
enum Ended {
    /// The chunk is full.
    Full,
    /// A read gave nothing: the end of the file.
    End,
    /// A read failed.
    Failed(io::Error),
}

/// Reads up to `want` bytes of `file` into a spare buffer.
fn read_chunk(file: &mut File, spare: &Spare, want: usize) -> (Held, Ended) {
    let mut bytes = spare.take();
    if bytes.len() < want {
        bytes.resize(want, 0);
    }
    let mut end = 0;
    let ended = loop {
        if end >= want {
            break Ended::Full;
        }
        match file.read(bytes.get_mut(end..want).unwrap_or_default()) {
            Ok(0) => break Ended::End,
            Ok(n) => end += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => break Ended::Failed(e),
        }
    };
    (Held { bytes, end }, ended)
}

/// The lock, also when a thread panicked holding it: the state is plain
/// counters and maps that each step leaves whole.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn wait<'a, T>(condvar: &Condvar, guard: MutexGuard<'a, T>) -> MutexGuard<'a, T> {
    condvar
        .wait(guard)
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::indexing_slicing, clippy::panic)]
mod tests {
    use super::*;

    /// Bytes that differ from one offset to the next, so that a chunk
    /// read twice or skipped shows.
    fn content(seed: usize, len: usize) -> Vec<u8> {
        (0..len)
            .map(|i| (i.wrapping_mul(31).wrapping_add(seed * 7) % 251) as u8)
            .collect()
    }

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("fb-ahead-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// What each kind of input gives, taken in order from two helpers:
    /// the bytes of a regular file of any size around the read-ahead's
    /// limit, exactly once and in order, and its size; everything that is
    /// not a regular file left to the framing thread.
    #[test]
    fn each_input_reads_as_the_file_it_names() {
        let dir = scratch("kinds");
        let sizes = [
            ("empty", 0),
            ("three bytes", 3),
            ("a head", 4),
            ("small", 1000),
            ("one less than the limit", FIRST_BYTES_MAX - 1),
            ("the limit", FIRST_BYTES_MAX),
            ("one more than the limit", FIRST_BYTES_MAX + 1),
            ("several times the limit", 3 * FIRST_BYTES_MAX + 7),
        ];
        let mut paths = Vec::new();
        let mut want = Vec::new();
        for (i, (name, len)) in sizes.iter().enumerate() {
            let path = dir.join(format!("{i}.fb"));
            std::fs::write(&path, content(i, *len)).unwrap();
            paths.push(Some(path));
            want.push((*name, Some(content(i, *len))));
        }
        for (name, path) in [
            ("not a path", None),
            ("missing", Some(dir.join("missing.fb"))),
            ("a directory", Some(dir.clone())),
            ("a device", Some(PathBuf::from("/dev/null"))),
        ] {
            paths.push(path);
            want.push((name, None));
        }
        // Twice over, to see buffers reused.
        let paths: Vec<_> = paths.iter().chain(&paths).cloned().collect();
        let want: Vec<_> = want.iter().chain(&want).cloned().collect();
        let ahead = ReadAhead::start(paths, 2).unwrap();
        for (i, (name, bytes)) in want.iter().enumerate() {
            match (ahead.take(i), bytes) {
                (Ahead::Opened(mut file), Some(bytes)) => {
                    assert_eq!(file.size(), bytes.len() as u64, "{name}");
                    let mut read = Vec::new();
                    file.read_to_end(&mut read).unwrap();
                    assert!(&read == bytes, "{name}: other bytes");
                }
                (Ahead::Skipped, None) => {}
                (other, _) => panic!("{name}: {other:?}"),
            }
        }
        drop(ahead);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Helpers stay at most [`INPUTS_AHEAD`] inputs ahead of the one taken
    /// last; inputs passed over are dropped; a read-ahead dropped early
    /// stops its helpers (the drop joins them).
    #[test]
    fn helpers_stay_within_bounds_and_stop_when_dropped() {
        let dir = scratch("bounds");
        let paths: Vec<Option<PathBuf>> = (0..100)
            .map(|i| {
                let path = dir.join(format!("{i:03}.fb"));
                std::fs::write(&path, content(i, 100 + i)).unwrap();
                Some(path)
            })
            .collect();
        let ahead = ReadAhead::start(paths, 3).unwrap();
        let mut first = Vec::new();
        match ahead.take(0) {
            Ahead::Opened(mut file) => file.read_to_end(&mut first).unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(first, content(0, 100));
        // Give the helpers time to run as far ahead as they may.
        for _ in 0..100 {
            let state = lock(&ahead.shared.state);
            if state.ready.len() >= INPUTS_AHEAD {
                break;
            }
            drop(state);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        {
            let state = lock(&ahead.shared.state);
            assert!(state.next <= 1 + INPUTS_AHEAD, "next {}", state.next);
            assert!(state.ready.len() <= INPUTS_AHEAD);
        }
        // Passing over inputs 1 to 49.
        match ahead.take(50) {
            Ahead::Opened(mut file) => {
                let mut read = Vec::new();
                file.read_to_end(&mut read).unwrap();
                assert_eq!(read, content(50, 150));
            }
            other => panic!("{other:?}"),
        }
        assert!(lock(&ahead.shared.state).ready.keys().all(|&i| i > 50));
        drop(ahead);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Larger files read on by their helper: one dropped part read lets
    /// its helper go on to the next, which reads whole and right; a
    /// read-ahead dropped while a helper waits to hand over a chunk of an
    /// input never taken ends (the drop joins the helpers).
    #[test]
    fn helpers_reading_on_stop_when_their_input_goes() {
        let dir = scratch("more");
        let len = 5 * CHUNK_BYTES + 3;
        let paths: Vec<Option<PathBuf>> = (0..3)
            .map(|i| {
                let path = dir.join(format!("{i}.fb"));
                std::fs::write(&path, content(i, len)).unwrap();
                Some(path)
            })
            .collect();
        let ahead = ReadAhead::start(paths, 1).unwrap();
        match ahead.take(0) {
            Ahead::Opened(mut file) => {
                let mut some = [0; 100];
                file.read_exact(&mut some).unwrap();
                assert_eq!(&some[..], &content(0, 100)[..]);
            }
            other => panic!("{other:?}"),
        }
        match ahead.take(1) {
            Ahead::Opened(mut file) => {
                let mut read = Vec::new();
                file.read_to_end(&mut read).unwrap();
                assert!(read == content(1, len), "input 1: other bytes");
            }
            other => panic!("{other:?}"),
        }
        // Input 2's helper fills its chunks and waits.
        for _ in 0..200 {
            let state = lock(&ahead.shared.state);
            if state
                .chunks
                .get(&2)
                .is_some_and(|c| c.queue.len() == CHUNKS_AHEAD)
            {
                break;
            }
            drop(state);
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(
            lock(&ahead.shared.state)
                .chunks
                .get(&2)
                .map(|c| c.queue.len()),
            Some(CHUNKS_AHEAD)
        );
        drop(ahead);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
