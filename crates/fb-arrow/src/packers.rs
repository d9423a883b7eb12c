//! Threads that compress the pages of a Parquet file's text chunks.
//!
//! A column is encoded on one lane (`lanes.rs`), so no file encodes
//! faster than its costliest column: `context`, about half of a row
//! group's bytes, most of whose encoding time is zstd packing its pages.
//! Each page is compressed on its own, so a [`TextChunk`] that has ended a
//! page hands it here and goes on with the next; the pages come back in
//! the order they were handed and are written in it. The bytes are those
//! of compressing each page in turn ([`pack`] does both), whichever
//! thread packs which page.
//!
//! Memory: a chunk has at most [`Packers::in_flight`] pages out, each a
//! page's bytes (about a megabyte) and its packed copy.
//!
//! [`TextChunk`]: crate::text_chunk::TextChunk

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use parquet::errors::ParquetError;

/// Packers of one file at most: with three, the context's pages pack
/// faster than its lane copies them in and than the other lanes encode
/// their columns (bench/NOTES.md).
pub(crate) const MAX_PACKERS: usize = 3;

/// A page to compress: `page[from..]` is its body.
pub(crate) struct PackJob {
    page: Vec<u8>,
    from: usize,
    level: i32,
    /// Kept compressed only when smaller than this share of the body.
    threshold: f64,
    reply: SyncSender<Result<Packed, ParquetError>>,
}

/// A page's body as it is written, and the page's buffer to use again.
pub(crate) struct Packed {
    pub(crate) buf: Vec<u8>,
    pub(crate) is_compressed: bool,
    pub(crate) page: Vec<u8>,
}

/// Where a page handed out comes back.
pub(crate) type Parcel = Receiver<Result<Packed, ParquetError>>;

/// `body` as a v2 data page stores it: packed by `zstd` unless that
/// saves less than `threshold` of its size, as parquet-rs decides.
pub(crate) fn pack(
    zstd: &mut zstd::bulk::Compressor<'static>,
    body: &[u8],
    threshold: f64,
) -> Result<(Vec<u8>, bool), ParquetError> {
    let mut packed = Vec::with_capacity(zstd::zstd_safe::compress_bound(body.len()));
    zstd.compress_to_buffer(body, &mut packed)
        .map_err(|e| ParquetError::External(Box::new(e)))?;
    if packed.len() as f64 >= body.len() as f64 * threshold {
        Ok((body.to_vec(), false))
    } else {
        Ok((packed, true))
    }
}

/// The packing threads of one file; dropped, they stop once the pages
/// handed to them are packed.
pub(crate) struct Packers {
    jobs: Option<SyncSender<PackJob>>,
    threads: Vec<JoinHandle<()>>,
    /// Page buffers that came back, for the next pages: a page (also the
    /// first of the next row group's chunk) then starts in memory already
    /// touched.
    spare: Mutex<Vec<Vec<u8>>>,
}

impl Packers {
    /// `n` packing threads; none when `n` is 0 or none could start.
    pub(crate) fn spawn(n: usize) -> Option<Arc<Self>> {
        if n == 0 {
            return None;
        }
        let (jobs, queue) = sync_channel::<PackJob>(n);
        let queue = Arc::new(Mutex::new(queue));
        let threads: Vec<JoinHandle<()>> = (0..n)
            .filter_map(|_| {
                let queue = Arc::clone(&queue);
                std::thread::Builder::new()
                    .name("fb-parquet-pack".into())
                    .spawn(move || run_packer(&queue))
                    .ok()
            })
            .collect();
        if threads.is_empty() {
            return None;
        }
        Some(Arc::new(Self {
            jobs: Some(jobs),
            threads,
            spare: Mutex::new(Vec::new()),
        }))
    }

    /// Threads packing.
    pub(crate) fn threads(&self) -> usize {
        self.threads.len()
    }

    /// Pages a chunk may have out before it waits for the oldest: one
    /// for each thread, and one more being queued.
    pub(crate) fn in_flight(&self) -> usize {
        self.threads.len() + 1
    }

    /// A page buffer given back, or a new one.
    pub(crate) fn spare_page(&self) -> Vec<u8> {
        self.spare
            .lock()
            .ok()
            .and_then(|mut spare| spare.pop())
            .unwrap_or_default()
    }

    /// Keeps `page` for a page to come, up to one more than are ever out.
    pub(crate) fn give_back(&self, page: Vec<u8>) {
        if let Ok(mut spare) = self.spare.lock() {
            if spare.len() <= self.in_flight() {
                spare.push(page);
            }
        }
    }

    /// Hands `page[from..]` out to be packed at zstd `level`.
    pub(crate) fn pack(
        &self,
        page: Vec<u8>,
        from: usize,
        level: i32,
        threshold: f64,
    ) -> Result<Parcel, ParquetError> {
        let (reply, parcel) = sync_channel(1);
        let job = PackJob {
            page,
            from,
            level,
            threshold,
            reply,
        };
        match self.jobs.as_ref().map(|jobs| jobs.send(job)) {
            Some(Ok(())) => Ok(parcel),
            _ => Err(packer_gone()),
        }
    }
}

#[cfg(test)]
impl Packers {
    /// Packers whose queue no thread reads: every page is refused.
    pub(crate) fn stopped() -> Arc<Self> {
        let (jobs, _) = sync_channel(1);
        Arc::new(Self {
            jobs: Some(jobs),
            threads: Vec::new(),
            spare: Mutex::new(Vec::new()),
        })
    }

    /// One packer that drops every page it takes, as a thread that died
    /// with it would.
    pub(crate) fn dropping() -> Arc<Self> {
        let (jobs, queue) = sync_channel::<PackJob>(1);
        let thread = std::thread::spawn(move || queue.into_iter().for_each(drop));
        Arc::new(Self {
            jobs: Some(jobs),
            threads: vec![thread],
            spare: Mutex::new(Vec::new()),
        })
    }
}

impl Drop for Packers {
    fn drop(&mut self) {
        self.jobs = None;
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

/// A page that will not come back: its thread stopped.
pub(crate) fn packer_gone() -> ParquetError {
    ParquetError::General("a Parquet compression thread stopped".into())
}

/// A packer's loop: pack what comes until the queue closes. Its
/// compressor is made at the first page's level, and again only when a
/// page asks for another.
fn run_packer(queue: &Mutex<Receiver<PackJob>>) {
    let mut zstd: Option<(i32, zstd::bulk::Compressor<'static>)> = None;
    loop {
        let job = match queue.lock() {
            Ok(queue) => queue.recv(),
            Err(_) => return,
        };
        let Ok(job) = job else {
            return;
        };
        if zstd.as_ref().is_none_or(|(level, _)| *level != job.level) {
            zstd = zstd::bulk::Compressor::new(job.level)
                .ok()
                .map(|c| (job.level, c));
        }
        let packed = match zstd.as_mut() {
            Some((_, c)) => {
                let body = job.page.get(job.from..).unwrap_or(&[]);
                pack(c, body, job.threshold).map(|(buf, is_compressed)| Packed {
                    buf,
                    is_compressed,
                    page: job.page,
                })
            }
            None => Err(ParquetError::General(format!(
                "zstd has no compressor at level {}",
                job.level
            ))),
        };
        // The chunk that handed the page out may be gone (an error ended
        // it): nothing waits for this one.
        let _ = job.reply.send(packed);
    }
}
