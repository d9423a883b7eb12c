//! A fast verifier for the tables on the conversion hot path.
//!
//! The flatbuffers verifier builds an error trace entry (a `Cow` field
//! name) around every field it visits, even when nothing is wrong; on small
//! tables that bookkeeping costs more than the checks. This module checks
//! the same things for the tables every event goes through (the same
//! ranges, alignments, signed vtable offsets, UTF-8 and terminators, table
//! count and apparent size) with no bookkeeping, and answers only yes or
//! no. A "no" falls back to the flatbuffers verifier, which decides and
//! explains; a "yes" must never be given where flatbuffers would refuse.
//!
//! - `walk.rs`: the checked steps (offsets, tables, fields, vectors,
//!   strings, limits);
//! - `fields.rs`: the one list of the tables and fields the checks read,
//!   held to `schema/*.fbs` and to the checks by the tests in `tests.rs`;
//! - `tables.rs`: the yes-or-no checks of whole tables;
//! - `parts.rs`, `slots.rs`: the checks that return what they read
//!   ([`EventParts`], [`CbParts`], [`OutcomeParts`], [`MultiSlotParts`]).
//!
//! The differential tests against the flatbuffers verifier are
//! `crates/fb-schema/tests/quick.rs` (the corpus and seeded corruptions of
//! it) and the `decode` fuzz target (`fuzz/harness/format.rs`,
//! `quick_agrees`), whose seeds and saved inputs `cargo test` replays.

pub mod fields;
mod parts;
mod slots;
mod tables;
pub mod walk;

#[cfg(test)]
mod tests;

pub use parts::{cb_parts, event_parts, outcome_parts, CbParts, EventParts, OutcomeParts};
pub use slots::{multi_slot_parts, MultiSlotParts, SlotParts};

use crate::EpisodeEvent;

/// Tables of the hot path, with a yes-or-no verifier of their own.
///
/// Sealed: only this crate implements it, for the tables described in
/// [`fields`]. Each implementation accepts only buffers that
/// [`verified`](crate::verified) accepts, because a `true` lets
/// [`verified_quick`](crate::verified_quick) read the buffer unchecked
/// (an implementation outside this crate that broke that promise would
/// reach undefined behaviour from safe code, hence the seal). A `false`
/// only means "ask the flatbuffers verifier".
///
/// ```compile_fail
/// // Outside this crate the trait cannot be implemented.
/// struct Lenient;
/// impl fb_schema::QuickVerify for Lenient {
///     fn quick(_: &[u8]) -> bool {
///         true
///     }
/// }
/// ```
pub trait QuickVerify: sealed::Sealed {
    /// True when `buf` is certainly a valid flatbuffer with this root.
    fn quick(buf: &[u8]) -> bool;
}

mod sealed {
    /// Keeps [`super::QuickVerify`] to the tables this crate checks.
    pub trait Sealed {}
}

// Once per episode, and with nothing the output needs: always the
// flatbuffers path.
impl sealed::Sealed for EpisodeEvent<'_> {}

impl QuickVerify for EpisodeEvent<'_> {
    fn quick(_: &[u8]) -> bool {
        false
    }
}
