//! Where to cut a log into self-contained pieces, and what each piece
//! must carry to convert as it did inside the whole log.
//!
//! A piece is a run of whole messages. Read on its own it would lack the
//! state the messages before it left behind, so it is written after a
//! prefix that restores that state:
//!
//! - the file magic and the latest HEADER (which change no output but make
//!   the piece a log like the others);
//! - the CHECKPOINT in force, preceded, when that one's reward function is
//!   out of range (which leaves the reward function as it was), by the
//!   latest checkpoint whose reward function is in range;
//! - a synthetic `DedupInfo` holding exactly the cached actions that the
//!   piece's decisions refer to before a `DedupInfo` of its own replaces
//!   the cache (a non-empty `DedupInfo` leaves only its own entries).
//!
//! Nothing else carries over from one message to the next (grouping and
//! multistep episodes are per message), so converting the pieces one after
//! the other gives the whole log's lines. The cache is followed as the
//! log's own checkpoints make the joiner ready: a problem type forced on
//! the command line for messages before the first checkpoint is not known
//! here.
//!
//! ```
//! use fb_join::split::{plan, Rule};
//!
//! let log = std::fs::read(concat!(
//!     env!("CARGO_MANIFEST_DIR"),
//!     "/../../tests/data/valid_joined_logs/average_reward_100_interactions.fb"
//! ))
//! .unwrap();
//! let plan = plan(&log, Rule { max_size: Some(16 << 10), period: None });
//! assert!(plan.damage.is_none());
//! assert!(plan.pieces.len() > 1);
//! // The pieces cover the log's messages after the file magic, in order.
//! assert_eq!(plan.pieces.first().unwrap().start, plan.magic.1);
//! assert_eq!(plan.pieces.last().unwrap().end, log.len() as u64);
//! ```

use std::collections::HashSet;

use fb_format::{MessageKind, Messages, Payload, PayloadDecoder, RewardFunction, SliceReader};
use fb_schema::{PayloadType, TimeStamp};

use crate::dedup::{references, DedupCache};

/// Where pieces end.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rule {
    /// A piece grows no larger than this many bytes, prefix included,
    /// unless one message alone is larger.
    pub max_size: Option<u64>,
    /// A new piece starts when a REGULAR message's first event falls in
    /// another period (hour, day) than the piece's first one: the length
    /// of a period in microseconds.
    pub period: Option<i64>,
}

/// One hour and one day, in microseconds, for [`Rule::period`].
pub const HOUR: i64 = 3_600_000_000;
/// See [`HOUR`].
pub const DAY: i64 = 24 * HOUR;

/// The dedup entries a piece needs from before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Dedup {
    /// The id of the `DedupInfo` event that defined them.
    pub event_id: String,
    /// The time to give the synthetic event: its piece's first event's.
    pub timestamp: TimeStamp,
    /// Action ids and texts, in the order to write them.
    pub entries: Vec<(u64, String)>,
}

/// One piece: a byte range of the log and what to write before it.
#[derive(Debug, Clone, PartialEq)]
pub struct Piece {
    /// The first byte of the piece's first message.
    pub start: u64,
    /// The end of its last message.
    pub end: u64,
    /// Messages in it.
    pub messages: u64,
    /// The HEADER to write first (a byte range of the log), if any.
    pub header: Option<(u64, u64)>,
    /// The CHECKPOINTs to write next (byte ranges), in order.
    pub checkpoints: Vec<(u64, u64)>,
    /// The synthetic `DedupInfo` to write after them, if any is needed.
    pub dedup: Option<Dedup>,
    /// The start of the period (microseconds since 1970) its first
    /// REGULAR message's first event falls in, under [`Rule::period`].
    pub period: Option<i64>,
    /// Whether the piece ends with an EOF message of the log.
    pub has_eof: bool,
}

/// The pieces of a log.
#[derive(Debug)]
pub struct Plan {
    /// The byte range of the file magic message.
    pub magic: (u64, u64),
    /// The pieces, in log order.
    pub pieces: Vec<Piece>,
    /// The framing error that ended the reading, if the log is damaged:
    /// the pieces then cover the messages before it.
    pub damage: Option<fb_format::Error>,
}

/// Bytes a prefix adds besides the log's own messages: the framing and
/// tables of a synthetic `DedupInfo` (per entry: its id, the string's
/// length, terminator and padding) and an EOF.
const DEDUP_OVERHEAD: u64 = 256;
const ENTRY_OVERHEAD: u64 = 24;
const EOF_LEN: u64 = 8;

/// The state that carries over between messages, as far as a piece needs it.
struct Carried {
    header: Option<(u64, u64)>,
    checkpoint: Option<(u64, u64)>,
    /// The latest checkpoint with a reward function in range, when the
    /// one in force has none.
    reward_from: Option<(u64, u64)>,
    ready: bool,
    cache: DedupCache,
    /// The `DedupInfo` that filled the cache, and its time.
    cache_from: Option<(String, TimeStamp)>,
}

/// The piece being planned.
struct Open {
    piece: Piece,
    /// The cache as the piece starts (empty when it needs nothing).
    cache: DedupCache,
    cache_from: Option<(String, TimeStamp)>,
    /// Until one of its own `DedupInfo`s replaces the cache, the ids its
    /// decisions refer to.
    collecting: bool,
    needed: HashSet<u64>,
    needed_bytes: u64,
    first_time: Option<TimeStamp>,
    size: u64,
    /// Its REGULAR messages: a piece is cut only after one, so that none
    /// is made of a header and checkpoints alone.
    regulars: u64,
}

/// Plans the pieces of `log`. Reads it once, decoding only event types,
/// `DedupInfo`s, checkpoints, and the contexts of decisions that may refer
/// to dedup entries from before their piece.
pub fn plan(log: &[u8], rule: Rule) -> Plan {
    plan_from(SliceReader::new(log), rule)
}

/// [`plan`] of the log `reader` reads: the same plan whether it is in
/// memory or read as it goes (nothing of a message is kept past it but
/// its offsets and the dedup entries, copied).
pub fn plan_from(mut reader: impl Messages, rule: Rule) -> Plan {
    let mut decoder = PayloadDecoder::default();
    let mut magic = (0, 0);
    let mut carried = Carried {
        header: None,
        checkpoint: None,
        reward_from: None,
        ready: false,
        cache: DedupCache::default(),
        cache_from: None,
    };
    let mut pieces = Vec::new();
    let mut open: Option<Open> = None;
    let damage = loop {
        let msg = match reader.next_message() {
            Ok(Some(msg)) => msg,
            Ok(None) => break None,
            Err(e) => break Some(e),
        };
        let (start, end) = (msg.offset, msg.offset + msg.len as u64);
        if msg.kind == MessageKind::FileMagic && open.is_none() && pieces.is_empty() {
            magic = (start, end);
            continue;
        }
        // Where the message falls, for a time rule.
        let period = match (rule.period, msg.kind) {
            (Some(p), MessageKind::Regular) => msg
                .events()
                .ok()
                .and_then(|mut events| events.next())
                .and_then(Result::ok)
                .map(|view| fb_format::index::micros(&view.enqueued).div_euclid(p) * p),
            _ => None,
        };
        let len = end - start;
        let cut_here = matches!(msg.kind, MessageKind::Regular | MessageKind::Checkpoint)
            && open.as_ref().is_some_and(|o| {
                let dedup = match o.needed_bytes {
                    0 => 0,
                    entries => entries + DEDUP_OVERHEAD,
                };
                let too_big = rule
                    .max_size
                    .is_some_and(|max| o.size + dedup + len + EOF_LEN > max);
                let new_period =
                    period.is_some() && o.piece.period.is_some() && period != o.piece.period;
                o.regulars > 0 && (too_big || new_period)
            });
        if cut_here {
            pieces.extend(open.take().map(close));
        }
        let o = open.get_or_insert_with(|| begin(&carried, magic, start));
        o.piece.end = end;
        o.piece.messages += 1;
        o.regulars += u64::from(msg.kind == MessageKind::Regular);
        o.size += len;
        if o.piece.period.is_none() {
            o.piece.period = period;
        }
        match msg.kind {
            MessageKind::Header => carried.header = Some((start, end)),
            MessageKind::Checkpoint => {
                if let Ok(info) = msg.checkpoint() {
                    carried.ready = true;
                    if RewardFunction::from_wire(info.reward_function_type()).is_some() {
                        carried.reward_from = None;
                    } else if let Some(previous) = carried.checkpoint {
                        // The reward function still comes from before.
                        if carried.reward_from.is_none() {
                            carried.reward_from = Some(previous);
                        }
                    }
                    carried.checkpoint = Some((start, end));
                }
            }
            MessageKind::Eof => o.piece.has_eof = true,
            MessageKind::Regular if carried.ready => {
                regular(&msg, &mut decoder, &mut carried, o);
            }
            _ => {}
        }
    };
    match (open, pieces.last_mut()) {
        // What follows the last REGULAR message (checkpoints, the EOF)
        // ends the piece before it rather than making one of its own.
        (Some(o), Some(last)) if o.regulars == 0 => {
            last.end = o.piece.end;
            last.messages += o.piece.messages;
            last.has_eof |= o.piece.has_eof;
        }
        (o, _) => pieces.extend(o.map(close)),
    }
    Plan {
        magic,
        pieces,
        damage,
    }
}

/// A piece starting at `start`, with the prefix the carried state asks.
fn begin(carried: &Carried, magic: (u64, u64), start: u64) -> Open {
    let checkpoints: Vec<(u64, u64)> = carried
        .reward_from
        .into_iter()
        .chain(carried.checkpoint)
        .collect();
    let span = |(s, e): (u64, u64)| e - s;
    let size = span(magic)
        + carried.header.map_or(0, span)
        + checkpoints.iter().copied().map(span).sum::<u64>();
    Open {
        piece: Piece {
            start,
            end: start,
            messages: 0,
            header: carried.header,
            checkpoints,
            dedup: None,
            period: None,
            has_eof: false,
        },
        cache: carried.cache.clone(),
        cache_from: carried.cache_from.clone(),
        collecting: !carried.cache.is_empty(),
        needed: HashSet::new(),
        needed_bytes: 0,
        first_time: None,
        regulars: 0,
        size,
    }
}

/// The planned piece, with the entries it needs.
fn close(o: Open) -> Piece {
    let mut piece = o.piece;
    if !o.needed.is_empty() {
        let (event_id, defined) = o.cache_from.unwrap_or_default();
        let mut entries: Vec<(u64, String)> = o
            .cache
            .entries()
            .filter(|(id, _)| o.needed.contains(id))
            .map(|(id, text)| (id, text.to_string()))
            .collect();
        // Most recent last: applied in this order they rebuild the order
        // of the cache.
        entries.reverse();
        piece.dedup = Some(Dedup {
            event_id,
            timestamp: o.first_time.unwrap_or(defined),
            entries,
        });
    }
    piece
}

/// Follows a REGULAR message as the joiner would: its `DedupInfo`s applied
/// in order (until one is malformed, which drops the message), and, while
/// the open piece still uses the cache it started with, the references of
/// its decisions.
fn regular(
    msg: &fb_format::Message<'_>,
    decoder: &mut PayloadDecoder,
    c: &mut Carried,
    o: &mut Open,
) {
    let Ok(events) = msg.events() else { return };
    let mut replaced = false;
    let mut dropped = false;
    let mut decisions = Vec::new();
    for view in events {
        let Ok(view) = view else { break };
        if o.first_time.is_none() {
            o.first_time = Some(view.enqueued);
        }
        match view.payload_type() {
            PayloadType::DedupInfo => {
                let Ok(Payload::Dedup(info)) = decoder.payload(&view) else {
                    dropped = true;
                    break;
                };
                let (ids, values) = (info.ids(), info.values());
                if ids.map_or(0, |v| v.len()) != values.map_or(0, |v| v.len()) {
                    dropped = true;
                    break;
                }
                let ids = ids.into_iter().flat_map(|v| v.iter());
                let values = values.into_iter().flat_map(|v| v.iter());
                let mut entries = ids.zip(values).peekable();
                if entries.peek().is_some() {
                    c.cache.apply(entries);
                    c.cache_from = Some((view.id.to_string(), view.enqueued));
                    replaced = true;
                }
            }
            kind if o.collecting && fb_format::index::is_decision(kind) => decisions.push(view),
            _ => {}
        }
    }
    if !o.collecting || replaced || dropped {
        o.collecting &= !replaced;
        return;
    }
    for view in decisions {
        let context = match decoder.payload(&view) {
            Ok(Payload::Cb(e)) => e.context(),
            Ok(Payload::Ccb(e) | Payload::Slates(e)) => e.context(),
            Ok(Payload::Ca(e)) => e.context(),
            Ok(Payload::MultiStep(e)) => e.context(),
            _ => None,
        };
        let Some(context) = context else { continue };
        references(context.bytes(), |id| {
            // An id the cache does not hold fails the same way in the
            // whole log: nothing to carry.
            if let Some(text) = o.cache.get(id) {
                if o.needed.insert(id) {
                    o.needed_bytes += text.len() as u64 + ENTRY_OVERHEAD;
                }
            }
        });
    }
}
