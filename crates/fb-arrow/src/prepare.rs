//! Memory made ready off the building thread.
//!
//! A reader that keeps every batch (`pyarrow`'s `read_all`, a Polars or
//! pandas frame) never gives memory back, so each batch is built in fresh
//! pages, and the building thread takes a page fault for every 4 KiB it
//! writes: on a virtual machine about a fifth of the whole build. With
//! [`Prepare`], the buffer of the next batch's largest column is allocated
//! and written once by a thread of its own while the current batch is
//! built, so its pages are in place when the builder gets it. The buffer
//! requested at one batch's end is used at the next one's, so the thread
//! has a whole batch's time; when it is late, the builder allocates as
//! before rather than wait. At most one buffer is ready or in the making.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender, TryRecvError, TrySendError};

/// A thread that hands out written buffers of the sizes asked for.
pub(crate) struct Prepare {
    ask: SyncSender<usize>,
    ready: Receiver<Vec<u8>>,
    /// A request is out and its buffer not taken yet.
    pending: bool,
}

impl Prepare {
    /// Starts the thread; `None` when the system has no thread to give.
    pub(crate) fn start() -> Option<Self> {
        let (ask, asked) = sync_channel::<usize>(1);
        let (give, ready) = sync_channel::<Vec<u8>>(1);
        std::thread::Builder::new()
            .name("fb-arrow-prepare".into())
            .spawn(move || {
                for n in asked {
                    // Writing every byte is what faults the pages in (not
                    // `vec![0; n]`: calloc takes fresh pages as they are,
                    // zero and not yet faulted); the builder clears them.
                    #[allow(clippy::slow_vector_initialization)] // on purpose, as said
                    let mut buf = Vec::with_capacity(n);
                    buf.resize(n, 0u8);
                    buf.clear();
                    if give.send(buf).is_err() {
                        break;
                    }
                }
            })
            .ok()?;
        Some(Self {
            ask,
            ready,
            pending: false,
        })
    }

    /// A buffer for the next batch, with room for `n` bytes or close to it
    /// (it grows as a `Vec` does if not), and asks for one of `n` bytes for
    /// the batch after it.
    pub(crate) fn take(&mut self, n: usize) -> Vec<u8> {
        let buf = match self.pending.then(|| self.ready.try_recv()) {
            Some(Ok(buf)) => {
                self.pending = false;
                buf
            }
            // Still being written: don't wait, and don't ask again.
            Some(Err(TryRecvError::Empty)) => return Vec::with_capacity(n),
            Some(Err(TryRecvError::Disconnected)) | None => {
                self.pending = false;
                Vec::with_capacity(n)
            }
        };
        match self.ask.try_send(n) {
            Ok(()) => self.pending = true,
            Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {}
        }
        buf
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_come_empty_with_the_room_asked_a_batch_before() {
        let mut p = Prepare::start().unwrap();
        // Nothing was asked yet: a plain allocation, and a request for 1000.
        let first = p.take(1000);
        assert!(first.is_empty() && first.capacity() >= 1000);
        // Wait for the prepared one instead of racing the thread.
        let ready = p.ready.recv().unwrap();
        assert!(ready.is_empty() && ready.capacity() >= 1000);
        assert_eq!(p.ready.try_recv(), Err(TryRecvError::Empty));
    }

    /// The point of the thread: the pages of a prepared buffer are in
    /// memory before the builder writes to it (`vec![0; n]` would hand
    /// out untouched zero pages, and the builder would fault them in).
    #[test]
    fn prepared_buffers_are_resident() {
        let n = 16 << 20;
        let mut p = Prepare::start().unwrap();
        let _ = p.take(n);
        let ready = p.ready.recv().unwrap();
        let page = 4096;
        let start = ready.as_ptr() as usize;
        let from = start.div_ceil(page) * page;
        let pages = (start + n - from) / page;
        let mut resident = vec![0u8; pages];
        // SAFETY: `from..from + pages * page` lies inside the buffer's
        // allocation, which `ready` keeps alive; mincore only reads the
        // page tables and writes one byte per page into `resident`.
        let ok = unsafe {
            libc::mincore(
                from as *mut libc::c_void,
                pages * page,
                resident.as_mut_ptr(),
            )
        };
        assert_eq!(ok, 0);
        let present = resident.iter().filter(|&&r| r & 1 == 1).count();
        assert!(
            present * 10 >= pages * 9,
            "{present} of {pages} pages resident"
        );
    }

    #[test]
    fn a_late_buffer_is_not_waited_for_nor_asked_twice() {
        let mut p = Prepare::start().unwrap();
        // Ask for a big buffer, then take at once, most likely before the
        // thread is done; either way the caller gets room for what it
        // asked, empty, and at most one request is out.
        let _ = p.take(1 << 20);
        for _ in 0..3 {
            let b = p.take(1 << 20);
            assert!(b.is_empty() && b.capacity() >= 1 << 20);
        }
    }
}
