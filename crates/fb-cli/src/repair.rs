//! `fb repair`: a valid log made of every intact message of a damaged one.

use std::path::PathBuf;
use std::process::ExitCode;

use fb_format::recover::{Recovered, RecoveringReader};
use fb_format::salvage::SalvageReport;
use fb_format::{Message, MessageKind, PayloadDecoder, DEFAULT_MAX_PAYLOAD};
use fb_writer::LogWriter;

use crate::Global;
use fb_run::input::Input;
use fb_run::output::{Existing, How, Output};
use fb_run::Error;

/// Arguments of `fb repair`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The damaged log (read whole into memory; `-`: standard input).
    pub input: PathBuf,

    /// Where to write the repaired log (not the input; standard output
    /// when absent, unless it is a terminal).
    #[arg(short, long, value_name = "OUT")]
    pub output: Option<PathBuf>,

    /// The output as a second argument, as earlier versions took it.
    #[arg(value_name = "OUT", hide = true, conflicts_with = "output")]
    pub output_positional: Option<PathBuf>,

    /// Replace OUT if it exists (once the repaired log is complete).
    #[arg(long)]
    pub force: bool,

    /// Dropped ranges listed on standard error (all are counted; `-v`
    /// lists every one).
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub max_listed: usize,
}

impl Args {
    /// Where the repaired log goes (`None`: standard output).
    fn output(&self) -> Option<&std::path::Path> {
        self.output.as_deref().or(self.output_positional.as_deref())
    }
}

/// One dropped byte range and why.
struct Dropped {
    start: u64,
    end: u64,
    why: String,
}

/// What was kept, by message type.
#[derive(Default)]
struct Kept {
    headers: u64,
    checkpoints: u64,
    regulars: u64,
}

/// Writes the repaired log; exit 0 when nothing was dropped, 1 when
/// something was, 2 (an `Err`) on usage or I/O errors.
///
/// The output starts with FILEMAGIC (version 1), holds every intact
/// HEADER, CHECKPOINT and REGULAR message of the input in order, re-framed
/// (`size % 8` zero padding), and ends with an EOF message. FILEMAGIC and
/// EOF messages of the input are not copied: the output has one of each,
/// at its ends. A message is intact when the recovering reader accepts it
/// (its framing is sound and its payload verifies) and, for a REGULAR
/// message, when every event in it and every event's typed payload verify
/// (and decompress) too. A damaged REGULAR message is not dropped whole:
/// its events that can be proven good ([`fb_format::salvage`]) are written
/// in a valid REGULAR message of their own, in its place, provided their
/// typed payloads decode too; the damaged bytes are still reported.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let input = fb_run::input::one(&args.input);
    let how = How::binary(Existing::forced(args.force));
    let mut out = Output::create(args.output(), std::slice::from_ref(&input), how)?;
    let data = read_whole(&input)?;
    let target = out.target().to_string();
    let write_err = |e: fb_writer::Error| match e {
        fb_writer::Error::Io { source, .. } => Error::write(&target, source),
        other => Error::Msg(format!("writing {target}: {other}")),
    };
    let mut writer = LogWriter::new(&mut out);
    writer.file_magic(1).map_err(write_err)?;

    let mut decoder = PayloadDecoder::new(DEFAULT_MAX_PAYLOAD as usize);
    let mut dropped: Vec<Dropped> = Vec::new();
    let mut kept = Kept::default();
    let mut salvaged: Vec<SalvageReport> = Vec::new();
    let mut progress = crate::progress::Progress::new(Some(data.len() as u64), global.quiet);
    let mut at = 0u64;
    for item in RecoveringReader::new(&data) {
        let end = match &item {
            Recovered::Skipped(s) => s.end,
            Recovered::Salvaged(s) => s.message().offset + s.message().len as u64,
            Recovered::Message(m) => m.offset + m.len as u64,
        };
        progress.add(end.saturating_sub(at), 0);
        at = at.max(end);
        let msg = match item {
            Recovered::Skipped(s) => {
                dropped.push(Dropped {
                    start: s.start,
                    end: s.end,
                    why: s.reason.to_string(),
                });
                continue;
            }
            Recovered::Salvaged(s) => {
                // The good events of a damaged REGULAR message, in a valid
                // one of their own (its bytes are reported dropped next).
                let msg = s.message();
                let mut report = s.report.clone();
                if report.kept > 0 {
                    match damaged_event(&msg, &mut decoder) {
                        Ok(()) => {
                            writer
                                .message(msg.kind.type_id(), msg.payload)
                                .map_err(write_err)?;
                            kept.regulars += 1;
                        }
                        Err(_) => report.kept = 0,
                    }
                }
                salvaged.push(report);
                continue;
            }
            Recovered::Message(msg) => msg,
        };
        match msg.kind {
            MessageKind::Header => kept.headers += 1,
            MessageKind::Checkpoint => kept.checkpoints += 1,
            MessageKind::Regular => {
                if let Err(why) = damaged_event(&msg, &mut decoder) {
                    dropped.push(Dropped {
                        start: msg.offset,
                        end: msg.offset + msg.len as u64,
                        why: format!("REGULAR message: {why}"),
                    });
                    continue;
                }
                kept.regulars += 1;
            }
            // Written once each, at the ends.
            MessageKind::FileMagic | MessageKind::Eof => continue,
            // The recovering reader never yields these.
            MessageKind::Unknown(_) => continue,
        }
        writer
            .message(msg.kind.type_id(), msg.payload)
            .map_err(write_err)?;
    }
    progress.finish();
    writer.eof().map_err(write_err)?;
    writer.flush().map_err(write_err)?;
    let written = writer.offset();
    drop(writer);
    let not_a_log = matches!(
        fb_run::input::Head::of(data.get(..4).unwrap_or(&data)),
        fb_run::input::Head::NotALog(_)
    );
    if not_a_log && kept.headers + kept.checkpoints + kept.regulars == 0 {
        // An empty log is no repair: nothing is put in place.
        drop(out);
        return Err(Error::Damaged(format!(
            "{}: nothing in its {} bytes could be read as a joined log (is it one?): \
             nothing written",
            input.name(),
            data.len()
        )));
    }
    out.finish()?;

    if !global.quiet {
        report(args, global, &kept, &dropped, data.len(), written);
        for s in &salvaged {
            eprintln!("fb: repair: {s}");
        }
    } else if !dropped.is_empty() {
        // Dropped data is an error: said with -q too, in one line.
        let bytes: u64 = dropped.iter().map(|d| d.end - d.start).sum();
        eprintln!(
            "fb: repair: {}: dropped {} ({bytes} bytes); without -q they are listed",
            input.name(),
            fb_run::plural(dropped.len() as u64, "byte range"),
        );
    }
    Ok(if dropped.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// All of `input` in memory (the recovering reader looks back and
/// ahead across the whole log).
fn read_whole(input: &Input) -> Result<Vec<u8>, Error> {
    match input {
        Input::File(path) => std::fs::read(path)
            .map_err(|e| Error::Msg(format!("cannot read {}: {e}", path.display()))),
        _ => {
            let mut data = Vec::new();
            std::io::Read::read_to_end(&mut std::io::stdin().lock(), &mut data)
                .map_err(|e| Error::Msg(format!("cannot read {}: {e}", input.name())))?;
            Ok(data)
        }
    }
}

/// The first event of a REGULAR message that does not decode, if any.
fn damaged_event(msg: &Message<'_>, decoder: &mut PayloadDecoder) -> Result<(), String> {
    let events = msg.events().map_err(|e| e.to_string())?;
    for (position, event) in events.enumerate() {
        let view = event.map_err(|e| format!("event {position}: {e}"))?;
        decoder
            .payload(&view)
            .map_err(|e| format!("event {position}: {e}"))?;
    }
    Ok(())
}

fn report(
    args: &Args,
    global: &Global,
    kept: &Kept,
    dropped: &[Dropped],
    read: usize,
    written: u64,
) {
    let bytes: u64 = dropped.iter().map(|d| d.end - d.start).sum();
    eprintln!(
        "fb: repair: {} ({read} bytes) -> {} ({written} bytes): kept {} messages \
         ({} HEADER, {} CHECKPOINT, {} REGULAR)",
        args.input.display(),
        args.output()
            .map_or("standard output".into(), |p| p.display().to_string()),
        kept.headers + kept.checkpoints + kept.regulars,
        kept.headers,
        kept.checkpoints,
        kept.regulars,
    );
    if dropped.is_empty() {
        eprintln!("fb: repair: nothing dropped");
        return;
    }
    let plural = if dropped.len() == 1 { "" } else { "s" };
    eprintln!(
        "fb: repair: dropped {} byte range{plural}, {bytes} bytes in all:",
        dropped.len()
    );
    let listed = if global.verbose > 0 {
        dropped.len()
    } else {
        args.max_listed.min(dropped.len())
    };
    for d in dropped.iter().take(listed) {
        eprintln!(
            "fb:   bytes {}..{} ({} bytes): {}",
            d.start,
            d.end,
            d.end - d.start,
            d.why
        );
    }
    if listed < dropped.len() {
        eprintln!(
            "fb:   ... and {} more ranges (-v lists them all)",
            dropped.len() - listed
        );
    }
}
