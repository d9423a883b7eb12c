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

use fb_format::index::LogSource;
use fb_join::split::{plan_from, Piece, Plan, Rule, DAY, HOUR};
use fb_writer::{DedupSpec, JoinedEventSpec, LogWriter, MetaSpec, PayloadSpec};

use crate::error::Error;
use crate::input::OpenLog;
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
/// `observer` the bytes done. The folder holds the same files, byte for
/// byte, for any number of threads; one thread writes them in order (the
/// plain path). After a failure no piece is started, and the failure
/// said is the first in log order, as on one thread.
pub fn write(
    log: &OpenLog,
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
    let plan = plan_from(log.messages(), rule);
    let width = plan.pieces.len().saturating_sub(1).to_string().len().max(5);
    let named: Vec<(&Piece, String)> = (plan.pieces.iter().enumerate())
        .map(|(n, piece)| (piece, piece_name(n, width, piece, cut.period)))
        .collect();
    // Each piece is a file of its own, planned before any is written: the
    // pieces are written in any order, and told and counted in log order.
    let write = |(piece, name): &(&Piece, String)| {
        let bytes = piece.end.saturating_sub(piece.start);
        write_piece(log, &plan, piece, &dir.path().join(name))
            .map(|written| (bytes, written))
            .map_err(|e| Error::Msg(format!("{}: {e}", dir.target().join(name).display())))
    };
    let mut written = 0u64;
    let threads = crate::in_order::Threads {
        count: threads,
        name: "fb-split",
        doing: "writing the pieces",
    };
    observer.start(Some(LogSource::len(log)));
    let wrote = crate::in_order::in_order(&named, threads, write, |done| {
        let (bytes, piece) = done?;
        observer.progress(bytes, 0);
        written += piece;
        Ok(())
    });
    observer.finish();
    wrote?;
    Ok(Pieces {
        pieces: plan.pieces.len(),
        written,
        carried: (plan.pieces.iter())
            .map(|piece| piece.dedup.as_ref().map_or(0, |d| d.entries.len()))
            .sum(),
        damage: plan.damage.map(|d| d.to_string()),
    })
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
fn write_piece(log: &OpenLog, plan: &Plan, piece: &Piece, path: &Path) -> Result<u64, String> {
    let file = File::create(path).map_err(|e| format!("cannot create: {e}"))?;
    let mut out = BufWriter::with_capacity(crate::output::BUFFER, file);
    let failed = |e: fb_writer::Error| e.to_string();
    let mut writer = LogWriter::new(&mut out);
    // The log's bytes `start..end`, as they are.
    let copy = |writer: &mut LogWriter<_>, (start, end): (u64, u64)| {
        log.copy(start, end, &mut |bytes| {
            writer
                .raw_bytes(bytes)
                .map(drop)
                .map_err(std::io::Error::other)
        })
        .map_err(|e| format!("copying bytes {start}..{end} of the log: {e}"))
    };
    copy(&mut writer, plan.magic)?;
    for part in piece.header.iter().chain(&piece.checkpoints) {
        copy(&mut writer, *part)?;
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
    copy(&mut writer, (piece.start, piece.end))?;
    if !piece.has_eof {
        writer.eof().map_err(failed)?;
    }
    let written = writer.offset();
    writer.flush().map_err(failed)?;
    drop(writer);
    out.into_inner().map_err(|e| e.error().to_string())?;
    Ok(written)
}
