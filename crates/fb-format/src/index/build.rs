//! Indexing a part of a log in one pass: its blocks, their counts,
//! filters and message tables, and its checkpoints.

use std::sync::Arc;

use fb_schema::{PayloadType, TimeStamp};

use super::bloom::{filter_hashed, key_hashes};
use super::micros::Micros;
use super::records::{put_varint, Block, Checkpoint};
use super::source::{LogSource, ReadFrom};
use crate::decode::{EventView, Payload, PayloadDecoder};
use crate::error::Result;
use crate::framer::{Framer, Message, Position};
use crate::kind::MessageKind;
use crate::reader::{Messages, SliceReader, StreamReader};

/// A block ends after each message that reaches a multiple of this many
/// bytes of the log, and before each checkpoint.
pub const BLOCK_BYTES: u64 = 256 << 10;

/// Whether an event of this payload type is a decision (an interaction or
/// a multistep step): what the index counts, and what a sample draws.
pub fn is_decision(kind: PayloadType) -> bool {
    !matches!(
        kind,
        PayloadType::Outcome | PayloadType::Episode | PayloadType::DedupInfo
    )
}

/// Whether a block ends after the message at `offset..end`: it reaches a
/// multiple of [`BLOCK_BYTES`]. Decided by the message alone, so a part of
/// the log indexed on its own ends its blocks where the whole log does.
pub(super) fn ends_block(offset: u64, end: u64) -> bool {
    end / BLOCK_BYTES > offset / BLOCK_BYTES
}

/// The blocks and checkpoints of a part of a log.
pub(super) struct Part {
    pub(super) blocks: Vec<Block>,
    pub(super) checkpoints: Vec<Checkpoint>,
    /// Where it stopped, when at its stop: the offset, and the messages
    /// read from its start.
    pub(super) stopped: Option<Position>,
}

/// Bytes of a part indexed between two calls of its `done`.
const DONE_EVERY: u64 = 8 << 20;

/// What a build tells as it goes: bytes `from..to` of the log are indexed
/// and referenced no more.
pub(super) type Done<'d> = &'d (dyn Fn(u64, u64) + Sync);

/// Indexes `log` from the message at `start`, to the end or to the first
/// block end at or after `stop`: framed where it lies when it is in
/// memory, else read in order through a buffer of about the largest
/// message (the same part either way).
pub(super) fn build_part(
    log: &dyn LogSource,
    start: Position,
    stop: Option<u64>,
    done: Done<'_>,
) -> Result<Part> {
    let framer = Framer::new().starting_at(start);
    match log.in_memory() {
        Some(bytes) => {
            let from = usize::try_from(start.offset).unwrap_or(usize::MAX);
            let data = bytes.get(from..).unwrap_or_default();
            walk(
                SliceReader::with_framer(data, framer),
                log.len(),
                start,
                stop,
                done,
            )
        }
        None => walk(
            StreamReader::with_framer(ReadFrom::new(log, start.offset), framer),
            log.len(),
            start,
            stop,
            done,
        ),
    }
}

/// [`build_part`] over the messages of `reader`, of a log of `len` bytes.
fn walk(
    mut reader: impl Messages,
    len: u64,
    start: Position,
    stop: Option<u64>,
    done: Done<'_>,
) -> Result<Part> {
    let mut part = Part {
        blocks: Vec::new(),
        checkpoints: Vec::new(),
        stopped: None,
    };
    let mut decoder = PayloadDecoder::default();
    let mut block = Block::new(start.offset);
    let mut ids = Ids::default();
    // Bytes before this are told done. A closed block keeps nothing of
    // the log (its ids are hashed as they come).
    let mut told = start.offset;
    while let Some(msg) = reader.next_message()? {
        let end = msg.offset + msg.len as u64;
        let offset = msg.offset;
        if msg.kind == MessageKind::Checkpoint {
            // A checkpoint starts a block: the configuration it sets
            // holds for the whole block.
            close(&mut part.blocks, &mut block, &mut ids, msg.offset);
            let info = msg.checkpoint().ok();
            part.checkpoints.push(Checkpoint {
                offset: msg.offset,
                len: u32::try_from(msg.len).unwrap_or(u32::MAX),
                applies: info.is_some(),
                sets_reward_function: info.is_some_and(|i| {
                    crate::RewardFunction::from_wire(i.reward_function_type()).is_some()
                }),
            });
        }
        block.messages += 1;
        block.end = end;
        let before = block.decisions;
        if msg.kind == MessageKind::Regular {
            regular(&msg, &mut block, &mut ids, &mut decoder)?;
        }
        put_varint(&mut ids.table, msg.len as u64);
        put_varint(&mut ids.table, u64::from(block.decisions - before));
        if ends_block(offset, end) {
            close(&mut part.blocks, &mut block, &mut ids, end);
            if end - told >= DONE_EVERY {
                done(told, end);
                told = end;
            }
            if stop.is_some_and(|stop| end >= stop) {
                done(told, end);
                part.stopped = Some(Position::new(end, reader.index() - start.index));
                return Ok(part);
            }
        }
    }
    // Not stopped: the last part (the part after would start at the stop,
    // found by the same rule), which ends with the log, trailing bytes that
    // frame no message included, as a single pass ends it.
    close(&mut part.blocks, &mut block, &mut ids, len);
    done(told, len);
    Ok(part)
}

/// Adds the events of a REGULAR message to `block` and its keys.
fn regular(
    msg: &Message<'_>,
    block: &mut Block,
    ids: &mut Ids,
    decoder: &mut PayloadDecoder,
) -> Result<()> {
    let kept = (block.clone_counts(), ids.decisions.len(), ids.dedup.len());
    if let Ok(true) = skimmed(msg, block, ids, decoder) {
        return Ok(());
    }
    // A message the skim does not take, or one of whose DedupInfos fails:
    // what it added is dropped, and the verifiers read the message, in
    // order, and say what is wrong first.
    block.set_counts(kept.0);
    ids.decisions.truncate(kept.1);
    ids.dedup.truncate(kept.2);
    verified(msg, block, ids, decoder)
}

/// [`regular`] through the verifiers. Out of line: the event iterator is
/// inlined where it is called, and here it would weigh on the skim's loop.
#[cold]
#[inline(never)]
fn verified(
    msg: &Message<'_>,
    block: &mut Block,
    ids: &mut Ids,
    decoder: &mut PayloadDecoder,
) -> Result<()> {
    for view in msg.events()? {
        let view = view?;
        add_event(
            block,
            ids,
            decoder,
            view.payload_type(),
            view.id.as_bytes(),
            [Some(view.enqueued), view.client_time()],
            || Ok(view),
        )?;
    }
    Ok(())
}

/// [`regular`] reading of each event only what the index keeps
/// ([`crate::skim::SkimmedEvents`]): false where that walk does not take
/// the message.
fn skimmed(
    msg: &Message<'_>,
    block: &mut Block,
    ids: &mut Ids,
    decoder: &mut PayloadDecoder,
) -> Result<bool> {
    for (position, event) in crate::skim::SkimmedEvents::new(msg.payload).enumerate() {
        let Some(e) = event else {
            return Ok(false);
        };
        let client = e.client_time.filter(|t| !t.is_zero());
        add_event(
            block,
            ids,
            decoder,
            e.payload_type,
            e.id,
            [Some(e.enqueued), client],
            || EventView::from_parts(e.event, e.enqueued, msg.offset, msg.index, position),
        )?;
    }
    Ok(true)
}

/// Adds one event to `block` and its keys: its kind, id, and times
/// (enqueued, and client time when present); `view` gives the whole event
/// when its payload must be read (dedup entries).
fn add_event<'a>(
    block: &mut Block,
    ids: &mut Ids,
    decoder: &mut PayloadDecoder,
    kind: PayloadType,
    id: &[u8],
    times: [Option<TimeStamp>; 2],
    view: impl FnOnce() -> Result<EventView<'a>>,
) -> Result<()> {
    block.events += 1;
    // An event's time is its enqueued time, or its client time when the
    // loop says so: the range covers both. Each kind of time has its own
    // memo: a client's clock may be minutes off the joiner's.
    for (t, memo) in times.iter().zip(ids.micros.iter_mut()) {
        let Some(t) = t else { continue };
        let t = memo.of(t);
        block.earliest = block.earliest.min(t);
        block.latest = block.latest.max(t);
    }
    match kind {
        PayloadType::DedupInfo => {
            if let Payload::Dedup(info) = decoder.payload(&view()?)? {
                for id in info.ids().into_iter().flatten() {
                    ids.dedup.push(id.to_le_bytes());
                    block.dedup += 1;
                }
            }
        }
        kind if is_decision(kind) => {
            block.decisions += 1;
            ids.decisions.push(key_hashes(id));
        }
        _ => {}
    }
    Ok(())
}

/// The keys of the block being built.
#[derive(Default)]
struct Ids {
    /// Enqueued and client times of the events, converted.
    micros: [Micros; 2],
    /// The decisions' ids, hashed for the block's filter.
    decisions: Vec<(u64, u64)>,
    dedup: Vec<[u8; 8]>,
    /// The block's message table.
    table: Vec<u8>,
}

/// Ends `block` at `end` (if it holds anything) and starts the next there.
fn close(blocks: &mut Vec<Block>, block: &mut Block, ids: &mut Ids, end: u64) {
    if block.messages > 0 {
        let mut data = filter_hashed(ids.decisions.iter().copied());
        let blooms = data.len();
        data.extend(filter_hashed(ids.dedup.iter().map(|id| key_hashes(id))));
        let both = data.len();
        data.extend_from_slice(&ids.table);
        block.parts = [(0, blooms), (blooms, both), (both, data.len())];
        block.data = Arc::new(data);
        blocks.push(std::mem::replace(block, Block::new(end)));
    } else {
        *block = Block::new(end);
    }
    ids.decisions.clear();
    ids.dedup.clear();
    ids.table.clear();
}
