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
    // Counted out however it ends (a panic too), so that the framing
    // thread never waits for a helper that is gone: the input it had
    // taken is left to the framing thread, and the chunks it was reading
    // end in an error.
    struct Leaving<'a> {
        shared: &'a Shared,
        taken: Option<usize>,
        reading_on: Option<usize>,
    }
    impl Drop for Leaving<'_> {
        fn drop(&mut self) {
            let mut state = lock(&self.shared.state);
            state.helpers -= 1;
            if let Some(index) = self.taken {
                if index >= state.taken {
                    state.ready.insert(index, Ahead::Skipped);
                }
            }
            if let Some(chunks) = self.reading_on.and_then(|i| state.chunks.get_mut(&i)) {
                if !chunks.done {
                    let stopped = io::Error::other("a thread reading ahead stopped");
                    chunks.queue.push_back(Err(stopped));
                    chunks.done = true;
                }
            }
            self.shared.ready.notify_all();
        }
    }
    let mut leaving = Leaving {
        shared,
        taken: None,
        reading_on: None,
    };
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
        leaving.taken = Some(index);
        panics_in_tests(shared, index, "taken");
        let (ahead, file) = match shared.paths.get(index) {
            Some(Some(path)) => read_ahead(path, index, shared),
            _ => (Ahead::Skipped, None),
        };
        {
            let mut state = lock(&shared.state);
            leaving.taken = None;
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
            leaving.reading_on = Some(index);
            panics_in_tests(shared, index, "reading-on");
            read_on(file, index, shared);
            leaving.reading_on = None;
        }
    }
}

/// In tests, a helper panics at `stage` for a file named
/// `panic-<stage>.fb`, to see the framing thread go on without it.
#[cfg(test)]
#[allow(clippy::panic)]
fn panics_in_tests(shared: &Shared, index: usize, stage: &str) {
    let name = format!("panic-{stage}.fb");
    if let Some(Some(path)) = shared.paths.get(index) {
        if path
            .file_name()
            .is_some_and(|n| n.to_string_lossy() == name)
        {
            panic!("a helper's panic, as the test asks");
        }
    }
}

#[cfg(not(test))]
fn panics_in_tests(_: &Shared, _: usize, _: &str) {}

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
#[path = "ahead_tests.rs"]
mod tests;
