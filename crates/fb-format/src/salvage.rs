//! Salvage: the events of a damaged REGULAR message that can still be
//! proven good, and an account of the others.
//!
//! A `JoinedPayload` is built back to front: its root table and the list
//! of event offsets sit at the front, event 0 at the very end and the last
//! event nearest the front. A message cut at a fraction of its length so
//! still holds its list and its last events; a few corrupt bytes inside one
//! event leave the others whole. [`salvage`] reads the list as far as it is
//! there and checks each event on its own (its `JoinedEvent` table, then its
//! nested `Event` as the verifier would), where the plain readers refuse the
//! whole message.
//!
//! **Nothing is invented.** The joiner groups the events of one message by
//! id, and an outcome only joins a decision that comes before it: a
//! decision's outcomes follow it in the list. A decision is therefore safe
//! only when no event after it was lost, since that event could have been
//! one of its outcomes (and changed its reward). So the events kept are
//! those after the last lost one; the good events before it are withheld
//! and counted, except the `DedupInfo` events among them, which are kept
//! in place: they are what the log says, and later contexts refer to them.
//! In a cut message every lost event comes before every kept one, so
//! nothing intact is withheld.
//!
//! The kept events are rebuilt into a valid `JoinedPayload`
//! ([`Salvaged::payload`]) holding the same bytes, so that every reader —
//! the joiner, `fb repair` writing it back — takes it as any message.
//!
//! Work and memory are bounded: only list slots inside the buffer are
//! read, the nested buffers verified add up to at most 16 times the payload
//! plus 16 MiB, and the events kept to at most the payload's length (a
//! list whose slots share bytes could otherwise be copied over and over);
//! events beyond are reported lost with the reason.

use std::ops::Range;

use fb_schema::{JoinedEvent, JoinedEventArgs, JoinedPayload, JoinedPayloadArgs, PayloadType};

use crate::decode::EventView;
use crate::framer::Message;
use crate::kind::MessageKind;

/// Events of one salvaged message that could not be read, with why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LostEvents {
    /// Their positions in the message's event list.
    pub positions: Range<u64>,
    /// Log offset of the first one's table, when its list slot was there.
    pub first_at: Option<u64>,
    /// Why they could not be read.
    pub why: String,
}

/// What salvaging one damaged REGULAR message found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SalvageReport {
    /// Log offset of the message.
    pub offset: u64,
    /// Its index (as the recovering reader counts).
    pub index: u64,
    /// Events its list declares.
    pub listed: u64,
    /// Events kept (in [`Salvaged::payload`]), `DedupInfo` included.
    pub kept: u64,
    /// Good events left out because an event after them was lost (one of
    /// their outcomes, maybe).
    pub withheld: u64,
    /// What could not be read, in runs of positions.
    pub lost: Vec<LostEvents>,
    /// The message was cut by the end of the input (else: corrupt).
    pub cut: bool,
}

impl SalvageReport {
    /// Events lost in all (not readable).
    pub fn lost_count(&self) -> u64 {
        self.lost
            .iter()
            .map(|l| l.positions.end - l.positions.start)
            .sum()
    }
}

impl std::fmt::Display for SalvageReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} REGULAR message {} at byte {}: {} of its {} events salvaged",
            if self.cut { "cut" } else { "damaged" },
            self.index,
            self.offset,
            self.kept,
            self.listed
        )?;
        if self.withheld > 0 {
            write!(
                f,
                ", {} good ones withheld (an event after them is lost and could be one of their outcomes)",
                self.withheld
            )?;
        }
        for lost in &self.lost {
            let (a, b) = (lost.positions.start, lost.positions.end);
            match b - a {
                1 => write!(f, "; event {a} lost")?,
                _ => write!(f, "; events {a}-{} lost", b - 1)?,
            }
            if let Some(at) = lost.first_at {
                write!(f, " (from byte {at})")?;
            }
            write!(f, ": {}", lost.why)?;
        }
        Ok(())
    }
}

/// The good events of a damaged REGULAR message as a valid message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Salvaged {
    /// A `JoinedPayload` of the kept events, in their order.
    pub payload: Vec<u8>,
    /// The message's size field as it was read.
    pub size_field: u32,
    /// Bytes of the damaged message present in the input.
    pub len: usize,
    /// What was kept, withheld and lost.
    pub report: SalvageReport,
}

impl Salvaged {
    /// The kept events as a REGULAR message at the damaged one's place.
    pub fn message(&self) -> Message<'_> {
        Message {
            kind: MessageKind::Regular,
            offset: self.report.offset,
            index: self.report.index,
            size_field: self.size_field,
            payload: &self.payload,
            len: self.len,
        }
    }
}

/// Nested-buffer bytes verified per payload byte, and on top.
const BUDGET_PER_BYTE: usize = 16;
const BUDGET_EXTRA: usize = 16 << 20;

/// One event read on its own: kept or withheld later.
struct Good<'a> {
    position: usize,
    bytes: &'a [u8],
    stamp: fb_schema::TimeStamp,
    dedup: bool,
}

/// Salvages the REGULAR message at log offset `offset` whose payload bytes
/// present are `payload` (`cut`: the input ends inside it). `None` when not
/// even its event list can be read.
pub fn salvage(
    payload: &[u8],
    offset: u64,
    index: u64,
    size_field: u32,
    len: usize,
    cut: bool,
) -> Option<Salvaged> {
    let (listed, start) = crate::skim::event_list(payload)?;
    // Only the slots inside the buffer can be read: a corrupt length must
    // not make this loop (or the account) as long as it says.
    let readable = listed.min(payload.len().saturating_sub(start) / 4);
    let base = offset + crate::framer::HEADER_LEN as u64;
    let mut budget = payload
        .len()
        .saturating_mul(BUDGET_PER_BYTE)
        .saturating_add(BUDGET_EXTRA);
    // Bytes of good events still to be copied before they exceed the
    // payload.
    let mut room = payload.len();
    let mut good: Vec<Good<'_>> = Vec::new();
    let mut lost: Vec<LostEvents> = Vec::new();
    let mut lose = |position: usize, at: Option<usize>, why: String| {
        let position = position as u64;
        match lost.last_mut() {
            Some(run) if run.positions.end == position && run.why == why => {
                run.positions.end = position + 1;
            }
            _ => lost.push(LostEvents {
                positions: position..position + 1,
                first_at: at.map(|p| base + p as u64),
                why,
            }),
        }
    };
    for position in 0..readable {
        let (at, bytes, stamp) = match crate::skim::listed_event(payload, start, position) {
            Ok(found) => found,
            Err(why) => {
                // Where its table would be, when its slot says.
                let slot = start + 4 * position;
                let at = payload
                    .get(slot..slot + 4)
                    .and_then(|b| <[u8; 4]>::try_from(b).ok())
                    .map(|b| slot.saturating_add(u32::from_le_bytes(b) as usize));
                lose(position, at, why.to_string());
                continue;
            }
        };
        if bytes.len() > budget {
            lose(
                position,
                Some(at),
                "the verification allowed for this message is used up".into(),
            );
            continue;
        }
        budget -= bytes.len();
        // A builder writes each event once, so the good ones add up to no
        // more than the payload: more means slots share bytes (a corrupt
        // or crafted list), and copying them would grow without bound.
        if bytes.len() > room {
            lose(
                position,
                Some(at),
                "its bytes overlap those of other events: the event list is corrupt".into(),
            );
            continue;
        }
        match EventView::from_parts(bytes, stamp, offset, index, position) {
            Ok(view) => {
                room -= bytes.len();
                good.push(Good {
                    position,
                    bytes,
                    stamp,
                    dedup: view.payload_type() == PayloadType::DedupInfo,
                })
            }
            Err(e) => lose(position, Some(at), e.to_string()),
        }
    }
    if readable < listed {
        lost.push(LostEvents {
            positions: readable as u64..listed as u64,
            first_at: None,
            why: "their places in the event list lie past the end of the bytes present".into(),
        });
    }
    let last_lost = lost.last().map(|l| l.positions.end - 1);
    let safe = |g: &Good<'_>| last_lost.is_none_or(|last| g.position as u64 > last || g.dedup);
    let kept: Vec<&Good<'_>> = good.iter().filter(|g| safe(g)).collect();
    let withheld = (good.len() - kept.len()) as u64;
    let mut fbb = flatbuffers::FlatBufferBuilder::with_capacity(
        kept.iter().map(|g| g.bytes.len() + 64).sum::<usize>() + 64,
    );
    let events: Vec<_> = kept
        .iter()
        .map(|g| {
            let event = fbb.create_vector(g.bytes);
            JoinedEvent::create(
                &mut fbb,
                &JoinedEventArgs {
                    event: Some(event),
                    timestamp: Some(&g.stamp),
                },
            )
        })
        .collect();
    let events = fbb.create_vector(&events);
    let root = JoinedPayload::create(
        &mut fbb,
        &JoinedPayloadArgs {
            events: Some(events),
        },
    );
    fbb.finish(root, None);
    Some(Salvaged {
        payload: fbb.finished_data().to_vec(),
        size_field,
        len,
        report: SalvageReport {
            offset,
            index,
            listed: listed as u64,
            kept: kept.len() as u64,
            withheld,
            lost,
            cut,
        },
    })
}
