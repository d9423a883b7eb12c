//! A log cut into self-contained valid logs (`fb split`), each converting
//! on its own to its share of the whole log's lines.
//!
//! The cutting points and what each piece carries (header, checkpoint in
//! force, the dedup entries it needs) are planned by
//! [`fb_join::split::plan`]; here the pieces are written, each as the log's
//! own bytes after that prefix, into a folder that is put in place only
//! once every piece is complete.

use std::fs::File;
use std::io::BufWriter;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;

use fb_join::split::{plan, Piece, Plan, Rule, DAY, HOUR};
use fb_writer::{DedupSpec, JoinedEventSpec, LogWriter, MetaSpec, PayloadSpec};

use crate::error::Error;
use crate::output::DirOutput;
use crate::report::Observer;

/// What to cut a log by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Cut {
    /// The largest piece, in bytes (a single larger message makes a piece
    /// of its own).
    pub max_size: Option<u64>,
    /// A piece per period of the messages' first events.
    pub period: Option<Period>,
}

/// A period of time, in UTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Period {
    /// An hour.
    Hour,
    /// A day.
    Day,
}

impl Period {
    /// The names `FromStr` takes.
    pub const NAMES: &'static [&'static str] = &["hour", "day"];
}

impl std::str::FromStr for Period {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "hour" => Ok(Self::Hour),
            "day" => Ok(Self::Day),
            _ => Err(format!("`{s}` is not a period: give hour or day")),
        }
    }
}

/// What a split wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pieces {
    /// Pieces written.
    pub pieces: usize,
    /// Bytes written.
    pub written: u64,
    /// Dedup entries carried into pieces that need them.
    pub carried: usize,
    /// The damage the log's pieces stop before, if any (the pieces then
    /// hold the messages before it).
    pub damage: Option<String>,
}

/// Writes the pieces of `log` cut as `cut` says into `dir` (not yet put
/// in place: the caller finishes it) on `threads` threads, telling
/// `observer` the bytes done. Each piece is a file of its own, planned
/// before any is written, so the folder holds the same files, byte for
/// byte, for any number of threads; one thread writes them in order
/// (the plain path).
pub fn write(
    log: &[u8],
    cut: Cut,
    threads: usize,
    dir: &DirOutput,
    observer: &mut dyn Observer,
) -> Result<Pieces, Error> {
    let rule = Rule {
        max_size: cut.max_size,
        period: cut.period.map(|p| match p {
            Period::Hour => HOUR,
            Period::Day => DAY,
        }),
    };
    let plan = plan(log, rule);
    let width = plan.pieces.len().saturating_sub(1).to_string().len().max(5);
    let names: Vec<String> = (plan.pieces.iter().enumerate())
        .map(|(n, piece)| piece_name(n, width, piece, cut.period))
        .collect();
    let job = Job {
        log,
        plan: &plan,
        names: &names,
        dir,
    };
    observer.start(Some(log.len() as u64));
    let written = match threads.min(plan.pieces.len()) {
        0 | 1 => job.in_order(observer),
        threads => job.on_threads(threads, observer),
    };
    observer.finish();
    Ok(Pieces {
        pieces: plan.pieces.len(),
        written: written?,
        carried: (plan.pieces.iter())
            .map(|piece| piece.dedup.as_ref().map_or(0, |d| d.entries.len()))
            .sum(),
        damage: plan.damage.map(|d| d.to_string()),
    })
}

/// The pieces of one split, and where they go.
struct Job<'a> {
    log: &'a [u8],
    plan: &'a Plan,
    names: &'a [String],
    dir: &'a DirOutput,
}

impl Job<'_> {
    /// Writes piece `n`; the bytes written.
    fn piece(&self, n: usize, piece: &Piece) -> Result<u64, Error> {
        let name = self.names.get(n).map_or("", String::as_str);
        write_piece(self.log, self.plan, piece, &self.dir.path().join(name))
            .map_err(|e| Error::Msg(format!("{}: {e}", self.dir.target().join(name).display())))
    }

    /// Writes the pieces one after the other; the bytes written.
    fn in_order(&self, observer: &mut dyn Observer) -> Result<u64, Error> {
        let mut written = 0u64;
        for (n, piece) in self.plan.pieces.iter().enumerate() {
            observer.progress(piece.end.saturating_sub(piece.start), 0);
            written += self.piece(n, piece)?;
        }
        Ok(written)
    }

    /// Writes the pieces on `threads` threads, each taking the next piece
    /// not yet taken; the bytes written. After a failure no piece is
    /// started, and the failure of the first piece in log order among
    /// those that failed is the one returned, as one thread would have
    /// stopped at it (a full disk fails several at once).
    fn on_threads(&self, threads: usize, observer: &mut dyn Observer) -> Result<u64, Error> {
        let next = AtomicUsize::new(0);
        let stop = AtomicBool::new(false);
        let (done, results) = mpsc::channel::<(usize, Result<u64, Error>)>();
        std::thread::scope(|scope| {
            for _ in 0..threads {
                let done = done.clone();
                let (next, stop) = (&next, &stop);
                scope.spawn(move || {
                    while !stop.load(Ordering::Relaxed) {
                        let n = next.fetch_add(1, Ordering::Relaxed);
                        let Some(piece) = self.plan.pieces.get(n) else {
                            break;
                        };
                        let result = self.piece(n, piece);
                        if result.is_err() {
                            stop.store(true, Ordering::Relaxed);
                        }
                        if done.send((n, result)).is_err() {
                            break;
                        }
                    }
                });
            }
            drop(done);
            // Told on this thread as the pieces are done, in any order.
            let mut written = 0u64;
            let mut failed: Option<(usize, Error)> = None;
            for (n, result) in results {
                match result {
                    Ok(bytes) => {
                        written += bytes;
                        if let Some(piece) = self.plan.pieces.get(n) {
                            observer.progress(piece.end.saturating_sub(piece.start), 0);
                        }
                    }
                    Err(e) if failed.as_ref().is_none_or(|(first, _)| n < *first) => {
                        failed = Some((n, e));
                    }
                    Err(_) => {}
                }
            }
            match failed {
                Some((_, e)) => Err(e),
                None => Ok(written),
            }
        })
    }
}

/// `part-00007.fb`, or with a period `part-00007-2026-11-23T14.fb`: names
/// that sort in log order.
pub fn piece_name(n: usize, width: usize, piece: &Piece, by: Option<Period>) -> String {
    let when = match (piece.period, by) {
        (Some(start), Some(by)) => {
            let secs = start.div_euclid(1_000_000);
            let (y, m, d) = fb_schema::calendar::civil_from_days(secs.div_euclid(86_400));
            match by {
                Period::Hour => format!(
                    "-{y:04}-{m:02}-{d:02}T{:02}",
                    secs.rem_euclid(86_400) / 3600
                ),
                Period::Day => format!("-{y:04}-{m:02}-{d:02}"),
            }
        }
        _ => String::new(),
    };
    format!("part-{n:0width$}{when}.fb")
}

/// Writes one piece; the bytes written.
fn write_piece(log: &[u8], plan: &Plan, piece: &Piece, path: &Path) -> Result<u64, String> {
    let span = |(start, end): (u64, u64)| {
        fb_format::index::span(log, start, end)
            .ok_or_else(|| format!("the plan points past the log ({start}..{end})"))
    };
    let file = File::create(path).map_err(|e| format!("cannot create: {e}"))?;
    let mut out = BufWriter::with_capacity(crate::output::BUFFER, file);
    let failed = |e: fb_writer::Error| e.to_string();
    let mut writer = LogWriter::new(&mut out);
    writer.raw_bytes(span(plan.magic)?).map_err(failed)?;
    for part in piece.header.iter().chain(&piece.checkpoints) {
        writer.raw_bytes(span(*part)?).map_err(failed)?;
    }
    if let Some(dedup) = &piece.dedup {
        let ids: Vec<u64> = dedup.entries.iter().map(|(id, _)| *id).collect();
        let values: Vec<&str> = dedup.entries.iter().map(|(_, v)| v.as_str()).collect();
        writer
            .push_event(&JoinedEventSpec {
                meta: MetaSpec::new(&dedup.event_id),
                enqueued: dedup.timestamp,
                payload: PayloadSpec::Dedup(DedupSpec {
                    ids: &ids,
                    values: &values,
                }),
            })
            .map_err(failed)?;
        writer.end_regular().map_err(failed)?;
    }
    writer
        .raw_bytes(span((piece.start, piece.end))?)
        .map_err(failed)?;
    if !piece.has_eof {
        writer.eof().map_err(failed)?;
    }
    let written = writer.offset();
    writer.flush().map_err(failed)?;
    drop(writer);
    out.into_inner().map_err(|e| e.error().to_string())?;
    Ok(written)
}
