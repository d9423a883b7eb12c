//! The check of a `MultiSlotEvent` (CCB and Slates decisions), which hands
//! each slot's parts out as it verifies them.

use super::fields::{multi_slot_event, slot_event};
use super::tables::{listed, VECTOR_BUDGET};
use super::walk::{Check, FIXED_LIMIT, U32};
use super::{sealed, QuickVerify};
use crate::{LearningModeType, MultiSlotEvent};

/// What the joiner reads of a verified `MultiSlotEvent` besides its
/// slots, found while verifying.
#[derive(Debug, Clone, Copy)]
pub struct MultiSlotParts<'a> {
    /// `context`.
    pub context: Option<&'a [u8]>,
    /// Whether `slots` is present (its elements went to the closure).
    pub has_slots: bool,
    /// `model_id`.
    pub model_id: Option<&'a str>,
    /// `deferred_action` (false when absent).
    pub deferred_action: bool,
    /// `baseline_actions`: little-endian i32s.
    pub baseline_actions: Option<&'a [u8]>,
    /// `learning_mode` (`Online` when absent).
    pub learning_mode: LearningModeType,
}

/// What the joiner reads of one `SlotEvent`.
#[derive(Debug, Clone, Copy)]
pub struct SlotParts<'a> {
    /// `id`.
    pub id: Option<&'a str>,
    /// `action_ids`: little-endian u32s.
    pub action_ids: Option<&'a [u8]>,
    /// `probabilities`: little-endian f32s.
    pub probabilities: Option<&'a [u8]>,
}

/// Verifies `buf` as a `MultiSlotEvent` (what `MultiSlotEvent::quick`
/// answers) and returns its parts, handing each slot's to `slot` with its
/// index as it is verified; `None` wherever that answer is no, and then
/// `slot` may have been called for the slots before the one that failed.
///
/// The accessors would walk every vtable again, a large share of a CCB
/// decision's way through the joiner.
pub fn multi_slot_parts<'a>(
    buf: &'a [u8],
    slot: impl FnMut(usize, SlotParts<'a>),
) -> Option<MultiSlotParts<'a>> {
    // Each table visited (the root, and each slot) adds to what
    // flatbuffers counts at most its vtable (64 KiB), a few hundred bytes
    // of offsets, fields and lengths, and four vectors or strings of at
    // most the buffer's length (the root's `context`, `slots`, `model_id`
    // and `baseline_actions`; a slot's three). So (slots + 1) x (4 x
    // length + 65,800) within [`VECTOR_BUDGET`] keeps the apparent size
    // under 2^29 and the tables under 2^29 / 65,800, far below both
    // limits: such a buffer is walked without counting, sparing a chain
    // of additions per field.
    let slots = listed(buf, multi_slot_event::slots).unwrap_or(0);
    let within = buf.len() <= FIXED_LIMIT
        && slots
            .saturating_add(1)
            .saturating_mul(buf.len().saturating_mul(4).saturating_add(65_800))
            <= VECTOR_BUDGET;
    if within {
        multi_slot::<false>(buf, slot)
    } else {
        multi_slot::<true>(buf, slot)
    }
}

/// [`multi_slot_parts`], counting what flatbuffers counts if `COUNT`.
#[inline(always)]
fn multi_slot<'a, const COUNT: bool>(
    buf: &'a [u8],
    mut slot: impl FnMut(usize, SlotParts<'a>),
) -> Option<MultiSlotParts<'a>> {
    let mut c = Check::<COUNT>::new(buf);
    let root = c.follow(0)?;
    let t = c.table(root)?;
    let context = c.bytes_field(t, multi_slot_event::context)?;
    let mut has_slots = false;
    if let Some(pos) = c.field(t, multi_slot_event::slots) {
        has_slots = true;
        let at = c.follow(pos)?;
        let (start, len) = c.vector(at, U32)?;
        for i in 0..len {
            let element = c.follow(start.checked_add(i.checked_mul(4)?)?)?;
            let s = c.table(element)?;
            let action_ids = c.bytes_field(s, slot_event::action_ids)?;
            let probabilities = c.bytes_field(s, slot_event::probabilities)?;
            let id = c.text_field(s, slot_event::id)?;
            slot(
                i,
                SlotParts {
                    id,
                    action_ids,
                    probabilities,
                },
            );
        }
    }
    let model_id = c.text_field(t, multi_slot_event::model_id)?;
    let deferred = c.value_field::<1, 1>(t, multi_slot_event::deferred_action)?;
    let baseline_actions = c.bytes_field(t, multi_slot_event::baseline_actions)?;
    let mode = c.value_field::<1, 1>(t, multi_slot_event::learning_mode)?;
    c.within_limits().then_some(MultiSlotParts {
        context,
        has_slots,
        model_id,
        deferred_action: deferred.is_some_and(|[b]| b != 0),
        baseline_actions,
        learning_mode: mode.map_or(LearningModeType::Online, |[b]| LearningModeType(b)),
    })
}

impl sealed::Sealed for MultiSlotEvent<'_> {}

impl QuickVerify for MultiSlotEvent<'_> {
    fn quick(buf: &[u8]) -> bool {
        multi_slot_parts(buf, |_, _| {}).is_some()
    }
}
