//! The checks of whole tables that answer only yes or no
//! (`JoinedPayload`, `CaEvent`, `MultiStepEvent`, `DedupInfo`), and the
//! budgets that let a walk skip counting.

use super::fields::{ca_event, dedup_info, joined_event, joined_payload, multi_step_event};
use super::walk::{Check, FIXED_LIMIT};
use super::{sealed, QuickVerify};
use crate::{CaEvent, DedupInfo, JoinedPayload, MultiStepEvent};

fn joined_payload_table<const COUNT: bool>(c: &mut Check<'_, COUNT>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_of(t, joined_payload::events, joined_event_table)
}

fn joined_event_table<const COUNT: bool>(c: &mut Check<'_, COUNT>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, joined_event::event)?;
    c.scalar_field(t, joined_event::timestamp)
}

/// How many elements the root table's vector field `f` lists (the events
/// of a `JoinedPayload`, the slots of a `MultiSlotEvent`), when the
/// buffer's shape goes that far.
pub(super) fn listed(buf: &[u8], f: super::fields::Field) -> Option<usize> {
    let mut c = Check::<false>::new(buf);
    let root = c.follow(0)?;
    let t = c.table(root)?;
    let pos = c.field(t, f)?;
    let at = c.follow(pos)?;
    c.u32_at(at)
}

/// Events times (buffer length + 65,600) up to which a `JoinedPayload`
/// needs no counting.
///
/// Each event visited adds to what flatbuffers counts at most its vtable
/// (64 KiB), a few dozen bytes of offsets and fields, and its `event`
/// vector (at most the buffer's length); so within this budget the apparent
/// size stays under 2^29 + a little, far below the limit, and the tables
/// (one per event, under 2^29 / 65,600) far below theirs.
pub(super) const VECTOR_BUDGET: usize = 1 << 29;

/// Reads one byte of every cache line of `buf`, front to back, and
/// returns them folded (for `black_box`).
///
/// The verifier then visits one `JoinedEvent` table per event, from the
/// end of the payload to its front (event 0 is built first, so it lies
/// last), each a few hundred bytes from the next: from memory, every visit
/// is a cache miss the prefetcher does not see coming. A forward pass
/// streams the payload into the cache first (measured in bench/NOTES.md);
/// on small batches it changes nothing.
#[inline(never)]
fn warm(buf: &[u8]) -> u8 {
    let mut x = 0u8;
    for line in buf.chunks(64) {
        x ^= line.first().copied().unwrap_or(0);
    }
    x
}

/// Payloads above this are left to the verifier as they are: they do
/// not fit the cache that warming fills.
const WARM_LIMIT: usize = 1 << 20;

/// Payloads below this are not warmed: their few lines are asked for
/// while the message before is worked on (fb-format's readers ask for
/// the 2 KiB after each message, 4 KiB from its start at most; a stream's
/// bytes were just copied), so walking them would cost instructions for
/// nothing.
const WARM_FROM: usize = 4 << 10;

impl sealed::Sealed for JoinedPayload<'_> {}

impl QuickVerify for JoinedPayload<'_> {
    fn quick(buf: &[u8]) -> bool {
        if (WARM_FROM..=WARM_LIMIT).contains(&buf.len()) {
            std::hint::black_box(warm(buf));
        }
        let events = listed(buf, joined_payload::events).unwrap_or(0);
        let within = buf.len() <= FIXED_LIMIT
            && events.saturating_mul(buf.len().saturating_add(65_600)) <= VECTOR_BUDGET;
        if within {
            Check::<false>::root(buf, joined_payload_table::<false>)
        } else {
            Check::<true>::root(buf, joined_payload_table::<true>)
        }
    }
}

fn ca_event_table(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.scalar_field(t, ca_event::deferred_action)?;
    c.scalar_field(t, ca_event::action)?;
    c.vector_field(t, ca_event::context)?;
    c.scalar_field(t, ca_event::pdf_value)?;
    c.string_field(t, ca_event::model_id)?;
    c.scalar_field(t, ca_event::learning_mode)
}

fn multi_step_event_table(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.string_field(t, multi_step_event::event_id)?;
    c.string_field(t, multi_step_event::previous_id)?;
    c.vector_field(t, multi_step_event::action_ids)?;
    c.vector_field(t, multi_step_event::context)?;
    c.vector_field(t, multi_step_event::probabilities)?;
    c.string_field(t, multi_step_event::model_id)?;
    c.scalar_field(t, multi_step_event::deferred_action)
}

fn dedup_info_table(c: &mut Check<'_>, pos: usize) -> Option<()> {
    let t = c.table(pos)?;
    c.vector_field(t, dedup_info::ids)?;
    c.vector_of(t, dedup_info::values, Check::string)
}

macro_rules! quick {
    ($($table:ident => $check:ident),* $(,)?) => {$(
        impl sealed::Sealed for $table<'_> {}
        impl QuickVerify for $table<'_> {
            fn quick(buf: &[u8]) -> bool {
                Check::root(buf, $check)
            }
        }
    )*};
}

quick! {
    CaEvent => ca_event_table,
    DedupInfo => dedup_info_table,
    MultiStepEvent => multi_step_event_table,
}
