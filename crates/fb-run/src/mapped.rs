//! Memory-mapped inputs, for logs the user says no other process
//! changes while they are read (`--mmap`, [`crate::input::Maps`]).
//!
//! Mapping a log lets the workers borrow payloads where they lie and keeps
//! the memory of whole-log commands flat in the log's size. But a shared
//! map of a file that another process truncates raises SIGBUS on the next
//! access past the new end, and one that another process rewrites changes
//! bytes after the verifier passed them, which the unchecked accessors then
//! follow. Reading through `read` gives each run its own copy of every
//! byte it verifies, which no other process can change: that is why reading
//! is the default, and maps an opt-in.
//!
//! Where the user opts in, a file is mapped only under a read lease
//! (`F_SETLEASE`): taking it fails while anyone has the file open for
//! writing (a live log being appended to is then read, and gives the
//! prefix written so far), and while we hold it, an `open` for writing or a
//! `truncate` by another process is held back by the kernel until we let
//! go, and we are told at once by SIGIO. The readers then stop using the
//! map at the next message boundary and read the rest of the file through
//! `read` from there (see [`broken`]): the output is the same, and the
//! other process proceeds.
//!
//! The kernel holds a lease breaker back only so long
//! (`/proc/sys/fs/lease-break-time`, 45 s by default): a run stalled longer
//! than that (a reader of our output that stops reading, a stopped
//! process) can find the file changed under its map. That is the timing
//! the opt-in accepts, and why it is not the default. A truncation is then
//! caught: the next access past the new end raises SIGBUS, and a SIGBUS
//! handler puts a private page of `0xEE` bytes over the faulting page of a
//! registered map instead and records it ([`tripped`]). The access is
//! retried and reads those bytes: to the framer, a message of an unknown
//! type whose size is above any payload limit, so reading stops at the
//! next message header at the latest. Every consumer drops the events made
//! after [`tripped`] turns true and reports the input as damaged. A fault
//! outside every registered map gets the default action. A rewrite in
//! place after the lease-break time is not caught.
//!
//! # Safety contract
//!
//! - A file is mapped only when the caller asked for maps
//!   ([`crate::input::Maps::WhereSafe`]: the user's `--mmap`, which
//!   asserts that no process writes the file while it is read), and only
//!   under a read lease. Without the opt-in nothing is mapped: the default
//!   path, and the Python package, read. The tests: `fb-cli/tests/live.rs`
//!   converts logs that another process appends to, truncates and
//!   rewrites in place, read and mapped.
//! - The signal handlers only load and store atomics and call `mmap`,
//!   `mprotect` and `sigaction`, and write the page they just mapped: all
//!   async-signal-safe.
//! - A map's range is registered before anything reads it and unregistered
//!   before it is unmapped ([`Mapped`] does both), so the SIGBUS handler
//!   never replaces a page that is not part of a live map of ours; the
//!   replacement is private and anonymous and goes with the map.
//! - The map is read-only; page advice is given only for ranges nothing
//!   borrows any more.

use std::fs::File;
use std::ops::Deref;
use std::os::fd::AsRawFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Once;

static BROKEN: AtomicBool = AtomicBool::new(false);
static HANDLER: Once = Once::new();
static HANDLED: AtomicBool = AtomicBool::new(false);

/// Maps registered at once (the CLI maps one input at a time).
const SLOTS: usize = 8;
/// Byte of a replacement page: headers frame as an unknown type with a
/// size above every payload limit.
const FILL: u8 = 0xEE;
static STARTS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static ENDS: [AtomicUsize; SLOTS] = [const { AtomicUsize::new(0) }; SLOTS];
static TRIPPED: AtomicBool = AtomicBool::new(false);
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// True once a mapped file was found shorter than its map (truncated
/// after a lease break we could not answer in time): the events made since
/// may come from replacement bytes and must be dropped.
pub fn tripped() -> bool {
    TRIPPED.load(Ordering::Acquire)
}

extern "C" fn on_sigbus(_: libc::c_int, info: *mut libc::siginfo_t, _: *mut libc::c_void) {
    // SAFETY: the kernel hands a valid siginfo_t to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    let page = PAGE.load(Ordering::Relaxed);
    for (start, end) in STARTS.iter().zip(&ENDS) {
        let (start, end) = (start.load(Ordering::Acquire), end.load(Ordering::Acquire));
        if start == 0 || addr < start || addr >= end {
            continue;
        }
        let at = addr & !(page - 1);
        // SAFETY: `at..at + page` lies in a live map of ours (the module
        // contract); MAP_FIXED replaces that page of it, and only it.
        let mapped = unsafe {
            libc::mmap(
                at as *mut libc::c_void,
                page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if mapped == libc::MAP_FAILED {
            break;
        }
        // SAFETY: the page was just mapped, writable, `page` bytes long.
        unsafe {
            std::ptr::write_bytes(at as *mut u8, FILL, page);
            libc::mprotect(at as *mut libc::c_void, page, libc::PROT_READ);
        }
        TRIPPED.store(true, Ordering::Release);
        return;
    }
    // Not ours, or the page could not be replaced: the default action,
    // taken when the access is retried.
    // SAFETY: a zeroed sigaction with SIG_DFL is a valid disposition.
    unsafe {
        let mut default: libc::sigaction = std::mem::zeroed();
        default.sa_sigaction = libc::SIG_DFL;
        libc::sigaction(libc::SIGBUS, &default, std::ptr::null_mut());
    }
}

/// True once another process asked to write or truncate the mapped file:
/// stop using the map at the next message boundary.
pub fn broken() -> bool {
    BROKEN.load(Ordering::Acquire)
}

extern "C" fn on_lease_break(_: libc::c_int) {
    BROKEN.store(true, Ordering::Release);
}

/// Installs the SIGIO handler (without one, SIGIO would end the process)
/// and the SIGBUS handler, once.
fn handler() -> bool {
    HANDLER.call_once(|| {
        // SAFETY: sysconf has no preconditions. The handlers have the
        // signatures their flags announce and keep to the module contract;
        // each sigaction struct is zeroed, then filled.
        let installed = unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE);
            if page > 0 && (page as usize).is_power_of_two() {
                PAGE.store(page as usize, Ordering::Relaxed);
            }
            let mut io: libc::sigaction = std::mem::zeroed();
            io.sa_sigaction = on_lease_break as extern "C" fn(libc::c_int) as usize;
            io.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut io.sa_mask);
            let mut bus: libc::sigaction = std::mem::zeroed();
            bus.sa_sigaction = on_sigbus
                as extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void)
                as usize;
            bus.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut bus.sa_mask);
            libc::sigaction(libc::SIGIO, &io, std::ptr::null_mut()) == 0
                && libc::sigaction(libc::SIGBUS, &bus, std::ptr::null_mut()) == 0
        };
        HANDLED.store(installed, Ordering::Release);
    });
    HANDLED.load(Ordering::Acquire)
}

/// A file mapped under a read lease. The map is dropped before the file,
/// whose closing releases the lease.
pub struct Mapped {
    map: memmap2::Mmap,
    file: File,
    slot: usize,
}

impl Mapped {
    /// Maps `path` when it is a regular, non-empty file that no one has
    /// open for writing and whose lease we can take; `None` otherwise (the
    /// caller reads it instead). Only for callers given
    /// `Maps::WhereSafe` (see the safety contract).
    pub(crate) fn open(path: &Path) -> Option<Self> {
        let file = File::open(path).ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() == 0 || !handler() {
            return None;
        }
        BROKEN.store(false, Ordering::Release);
        TRIPPED.store(false, Ordering::Release);
        // SAFETY: fcntl on a descriptor we own, with integer arguments.
        let leased = unsafe { libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_RDLCK) == 0 };
        if !leased {
            return None;
        }
        // SAFETY: a read-only map of a file that the caller was told
        // (`Maps::WhereSafe`, the user's --mmap) no process writes while it
        // is read; the lease holds back a writer that comes anyway until we
        // let go or the lease-break time runs out, and a truncation after
        // that is caught by the SIGBUS handler (the module doc says what
        // is not caught; `fb-cli/tests/live.rs` tests both).
        let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
        let _ = map.advise(memmap2::Advice::Sequential);
        let start = map.as_ptr() as usize;
        let slot = STARTS.iter().position(|s| {
            s.compare_exchange(0, start, Ordering::AcqRel, Ordering::Relaxed)
                .is_ok()
        })?;
        ENDS.get(slot)?.store(start + map.len(), Ordering::Release);
        Some(Self { map, file, slot })
    }

    /// The map, for page advice.
    pub fn map(&self) -> &memmap2::Mmap {
        &self.map
    }

    /// Lets go of the map and of the lease (the process that broke it then
    /// proceeds), and gives the file back positioned at `offset`, to read
    /// on from there.
    pub fn into_rest(self, offset: u64) -> std::io::Result<File> {
        use std::io::{Seek, SeekFrom};
        // The same open file, and so the same lease, under a second
        // descriptor that outlives the map.
        let mut file = self.file.try_clone()?;
        // Unregisters and unmaps first: nothing reads the map once the
        // lease is gone.
        drop(self);
        // SAFETY: fcntl on a descriptor we own, with integer arguments.
        unsafe {
            libc::fcntl(file.as_raw_fd(), libc::F_SETLEASE, libc::F_UNLCK);
        }
        file.seek(SeekFrom::Start(offset))?;
        Ok(file)
    }
}

fn unregister(slot: usize) {
    if let (Some(end), Some(start)) = (ENDS.get(slot), STARTS.get(slot)) {
        end.store(0, Ordering::Release);
        start.store(0, Ordering::Release);
    }
}

impl Drop for Mapped {
    fn drop(&mut self) {
        // Before the map goes: the SIGBUS handler must not touch its range
        // once it is unmapped.
        unregister(self.slot);
    }
}

impl AsRef<[u8]> for Mapped {
    fn as_ref(&self) -> &[u8] {
        &self.map
    }
}

impl Deref for Mapped {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        &self.map
    }
}

impl Mapped {
    /// Gives back the pages wholly inside bytes `from..to`, processed and
    /// borrowed no more (for work that does not go front to back in one
    /// stream, as [`Releaser`] does: parts of a log on several threads).
    pub fn release(&self, from: u64, to: u64) {
        let len = self.map.len();
        let page = |at: u64| usize::try_from(at).unwrap_or(usize::MAX).min(len);
        let start = page(from).div_ceil(4096) * 4096;
        let end = page(to) / 4096 * 4096;
        if end <= start {
            return;
        }
        // SAFETY: as in `Releaser::done`: a read-only file mapping, whose
        // pages touched again are read back from the file, not zeroed.
        let _ = unsafe {
            self.map
                .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, start, end - start)
        };
    }
}

/// Bytes of a mapped input processed between two releases of its pages.
const RELEASE_EVERY: usize = 8 << 20;

/// Gives back the pages of a mapped input as processing leaves them
/// behind, so that memory stays flat in the file size.
#[derive(Debug, Default)]
pub struct Releaser {
    released: usize,
}

impl Releaser {
    /// Every byte of `map` before `done` is processed and borrowed no more.
    pub fn done(&mut self, map: &Mapped, done: u64) {
        let map = map.map();
        let done = usize::try_from(done).unwrap_or(usize::MAX).min(map.len()) / 4096 * 4096;
        if done.saturating_sub(self.released) < RELEASE_EVERY {
            return;
        }
        // SAFETY: nothing borrows the released range any more. The map is
        // a read-only file mapping: a page touched again after this is read
        // back from the file, not zeroed.
        let _ = unsafe {
            map.unchecked_advise_range(
                memmap2::UncheckedAdvice::DontNeed,
                self.released,
                done - self.released,
            )
        };
        self.released = done;
    }
}
