//! A valid log made of every intact message of a damaged one (`fb
//! repair`).

use fb_format::recover::{Recovered, RecoveringReader};
use fb_format::salvage::SalvageReport;
use fb_format::{Message, MessageKind, PayloadDecoder, DEFAULT_MAX_PAYLOAD};
use fb_writer::LogWriter;

use crate::error::Error;
use crate::input::Input;
use crate::output::Output;
use crate::report::Observer;

/// One dropped byte range and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Dropped {
    /// Where the range starts.
    pub start: u64,
    /// Where it ends.
    pub end: u64,
    /// Why it was dropped.
    pub why: String,
}

/// What was kept, by message type.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Kept {
    /// HEADER messages.
    pub headers: u64,
    /// CHECKPOINT messages.
    pub checkpoints: u64,
    /// REGULAR messages (salvaged ones included).
    pub regulars: u64,
}

impl Kept {
    /// Messages kept.
    pub fn total(&self) -> u64 {
        self.headers + self.checkpoints + self.regulars
    }
}

/// What a repair kept and dropped.
#[derive(Debug, Clone)]
pub struct Repaired {
    /// Messages kept, by type.
    pub kept: Kept,
    /// Byte ranges dropped, with why.
    pub dropped: Vec<Dropped>,
    /// Damaged batches whose good events were kept.
    pub salvaged: Vec<SalvageReport>,
    /// Bytes read.
    pub read: u64,
    /// Bytes written.
    pub written: u64,
}

/// Writes the repaired log of `input` to `out` (finished here, unless
/// nothing of the input is a log: then it is dropped and the error says
/// so), telling `observer` its progress.
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
pub fn repair(
    input: &Input,
    mut out: Output,
    observer: &mut dyn Observer,
) -> Result<Repaired, Error> {
    let data = read_whole(input)?;
    let target = out.target().to_string();
    let write_err = |e: fb_writer::Error| Error::writing(&target, e);
    let mut writer = LogWriter::new(&mut out);
    writer.file_magic(1).map_err(write_err)?;

    let mut decoder = PayloadDecoder::new(DEFAULT_MAX_PAYLOAD as usize);
    let mut dropped: Vec<Dropped> = Vec::new();
    let mut kept = Kept::default();
    let mut salvaged: Vec<SalvageReport> = Vec::new();
    observer.start(Some(data.len() as u64));
    let mut at = 0u64;
    for item in RecoveringReader::new(&data) {
        let end = match &item {
            Recovered::Skipped(s) => s.end,
            Recovered::Salvaged(s) => s.message().offset + s.message().len as u64,
            Recovered::Message(m) => m.offset + m.len as u64,
        };
        observer.progress(end.saturating_sub(at), 0);
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
    observer.finish();
    writer.eof().map_err(write_err)?;
    writer.flush().map_err(write_err)?;
    let written = writer.offset();
    drop(writer);
    let not_a_log = matches!(
        crate::input::Head::of(data.get(..4).unwrap_or(&data)),
        crate::input::Head::NotALog(_)
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
    Ok(Repaired {
        kept,
        dropped,
        salvaged,
        read: data.len() as u64,
        written,
    })
}

/// All of `input` in memory (the recovering reader looks back and
/// ahead across the whole log).
fn read_whole(input: &Input) -> Result<crate::input::Whole, Error> {
    crate::input::whole(input, crate::input::Maps::Never).map_err(Error::Msg)
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
