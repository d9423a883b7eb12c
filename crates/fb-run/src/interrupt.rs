//! Ctrl-C (SIGINT), SIGTERM and SIGHUP: the run stops at once and leaves
//! no temporary file or folder behind.
//!
//! Outputs are written aside and renamed into place when complete
//! (`output.rs`). A file output is an unnamed file (`O_TMPFILE`) until it
//! is complete, which nothing can leave behind; the names that exist for a
//! moment (the instant between linking a finished file and renaming it,
//! a folder of outputs being filled, a file system without `O_TMPFILE`)
//! are registered here while they exist.
//!
//! [`install`] blocks the three signals in the calling thread, which every
//! thread started after it inherits, and starts one thread that waits for
//! them (`sigwait`). That thread is an ordinary thread, not a signal
//! handler, so it may take locks and remove files: it removes every
//! registered path, then ends the process by the same signal (its
//! default action), so that a shell sees the run killed by it.

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// What a registered path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leftover {
    /// A file.
    File,
    /// A folder and everything in it.
    Folder,
}

/// The paths to remove when the run is interrupted, by registration.
static PATHS: Mutex<Vec<(u64, PathBuf, Leftover)>> = Mutex::new(Vec::new());
static NEXT: AtomicU64 = AtomicU64::new(1);

/// A registered path; dropping it takes the registration back (not the
/// path: its owner has put it in place or removed it).
#[derive(Debug)]
pub struct Registered(u64);

/// Registers `path` to be removed if the run is interrupted.
pub fn register(path: PathBuf, what: Leftover) -> Registered {
    let id = NEXT.fetch_add(1, Ordering::Relaxed);
    paths().push((id, path, what));
    Registered(id)
}

impl Drop for Registered {
    fn drop(&mut self) {
        paths().retain(|(id, _, _)| *id != self.0);
    }
}

fn paths() -> std::sync::MutexGuard<'static, Vec<(u64, PathBuf, Leftover)>> {
    // A panic while the lock was held leaves a list that is still whole.
    PATHS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Removes every registered path; called once the run is interrupted.
fn remove_all() {
    let paths = paths();
    for (_, path, what) in paths.iter() {
        match what {
            Leftover::File => {
                let _ = std::fs::remove_file(path);
            }
            // A writer may add a file while the folder is emptied, which
            // makes removing the folder fail: a few tries. Once the folder
            // is gone, nothing more can be made in it.
            Leftover::Folder => {
                for _ in 0..8 {
                    match std::fs::remove_dir_all(path) {
                        Err(e) if e.kind() != std::io::ErrorKind::NotFound => continue,
                        _ => break,
                    }
                }
            }
        }
    }
}

/// The signals that interrupt a run.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Takes SIGINT, SIGTERM and SIGHUP over for the whole process: call it
/// first thing in `main`, before any other thread starts. Without it (a
/// library user, the Python package) the signals keep their usual
/// action.
pub fn install() {
    // SAFETY: the set is initialized by sigemptyset before use; the mask
    // change affects only this thread and the threads it starts.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        if libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return;
        }
        set
    };
    let started = std::thread::Builder::new()
        .name("fb-signals".into())
        .spawn(move || wait(set));
    if started.is_err() {
        // No thread to wait: the signals get their usual action back.
        // SAFETY: as above, on this thread's mask.
        unsafe {
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &set, std::ptr::null_mut());
        }
    }
}

/// Waits for one of the signals, cleans up and ends the process by it.
fn wait(set: libc::sigset_t) {
    let mut sig: libc::c_int = 0;
    // SAFETY: `set` is a valid signal set and `sig` a valid place to write.
    loop {
        let got = unsafe { libc::sigwait(&set, &mut sig) };
        if got == 0 {
            break;
        }
    }
    remove_all();
    // SAFETY: restoring the default action and unblocking the signal in
    // this thread, then raising it here, ends the process as the signal
    // does by default.
    unsafe {
        libc::signal(sig, libc::SIG_DFL);
        let mut one: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut one);
        libc::sigaddset(&mut one, sig);
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
        libc::raise(sig);
    }
    // Not reached for these signals; should it be, end as shells expect.
    std::process::exit(128 + sig);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registered_paths_are_removed_and_registrations_taken_back() {
        let dir = std::env::temp_dir().join(format!("fb-interrupt-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("folder/inner")).unwrap();
        std::fs::write(dir.join("folder/inner/a"), b"a").unwrap();
        std::fs::write(dir.join("file"), b"f").unwrap();
        std::fs::write(dir.join("kept"), b"k").unwrap();
        let folder = register(dir.join("folder"), Leftover::Folder);
        let file = register(dir.join("file"), Leftover::File);
        let kept = register(dir.join("kept"), Leftover::File);
        drop(kept);
        remove_all();
        assert!(!dir.join("folder").exists());
        assert!(!dir.join("file").exists());
        assert!(dir.join("kept").exists(), "a registration taken back");
        drop((folder, file));
        assert!(!paths().iter().any(|(_, p, _)| p.starts_with(&dir)));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
