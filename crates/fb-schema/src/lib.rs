//! FlatBuffers schema v2 of Vowpal Wabbit's joined binary logs.
//!
//! The `.fbs` files in `schema/` are written from the format description;
//! the Rust types are generated from them by `cargo xtask codegen` with a
//! pinned flatc and checked in. `OutcomeEvent` is hand-written (flatc has no
//! Rust output for unions of strings).
//!
//! The input is untrusted: reach the tables only through [`verified`] (or
//! [`verified_with`]), which run the flatbuffers verifier over the whole
//! buffer first. Nested `[ubyte]` buffers (an `Event` inside a
//! `JoinedEvent`, a payload inside an `Event`) are buffers of their own and
//! must go through [`verified`] again.
//!
//! ```
//! use fb_schema::{verified, CheckpointInfo, CheckpointInfoArgs, ProblemType};
//!
//! let mut fbb = flatbuffers::FlatBufferBuilder::new();
//! let args = CheckpointInfoArgs { problem_type_config: ProblemType::CCB, ..Default::default() };
//! let root = CheckpointInfo::create(&mut fbb, &args);
//! fbb.finish_minimal(root);
//!
//! let info = verified::<CheckpointInfo>(fbb.finished_data()).unwrap();
//! assert_eq!(info.problem_type_config(), ProblemType::CCB);
//! assert!(verified::<CheckpointInfo>(&[1, 2, 3]).is_err());
//! ```

pub mod calendar;

// flatc's accessors unwrap `Some(default)` lookups, which cannot fail.
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]
mod generated;
mod outcome;
mod quick;

pub use flatbuffers::InvalidFlatbuffer;
pub use generated::*;
pub use outcome::{
    IndexValue, OutcomeEvent, OutcomeEventArgs, OutcomeValue, UnionArg, UNION_LITERAL, UNION_NONE,
    UNION_NUMERIC,
};

pub use quick::{
    cb_parts, event_parts, fields, multi_slot_parts, outcome_parts, walk, CbParts, EventParts,
    MultiSlotParts, OutcomeParts, QuickVerify, SlotParts,
};

use flatbuffers::{Follow, Verifiable, VerifierOptions};

/// Verifier limits used by [`verified`].
///
/// Depth and table counts well above anything the schema nests, and an
/// apparent size bound that stops shared-offset "zip bombs" from making
/// verification quadratic.
pub fn verifier_options() -> VerifierOptions {
    VerifierOptions {
        max_depth: 64,
        max_tables: 10_000_000,
        max_apparent_size: 1 << 31,
        ignore_missing_null_terminator: false,
    }
}

/// Verifies `buf` as a flatbuffer whose root is a `T` and returns the root.
pub fn verified<'a, T>(buf: &'a [u8]) -> Result<T::Inner, InvalidFlatbuffer>
where
    T: Follow<'a> + Verifiable + 'a,
{
    verified_with::<T>(buf, &verifier_options())
}

/// [`verified`] with caller-chosen verifier limits.
pub fn verified_with<'a, T>(
    buf: &'a [u8],
    opts: &VerifierOptions,
) -> Result<T::Inner, InvalidFlatbuffer>
where
    T: Follow<'a> + Verifiable + 'a,
{
    flatbuffers::root_with_opts::<T>(opts, buf)
}

/// [`verified`] for the tables every event goes through, several times
/// faster on valid input.
///
/// A buffer [`QuickVerify`] accepts is read without a second pass; any
/// other goes through [`verified`], so errors (and what is accepted) are
/// exactly the same.
pub fn verified_quick<'a, T>(buf: &'a [u8]) -> Result<T::Inner, InvalidFlatbuffer>
where
    T: Follow<'a> + Verifiable + QuickVerify + 'a,
{
    if T::quick(buf) {
        // SAFETY: `root_unchecked` asks for a buffer the flatbuffers
        // verifier accepts with a `T` root. `QuickVerify` is sealed and
        // says yes only where that verifier would (its contract): its
        // checks read every field of their tables as `quick/fields.rs`
        // lists them (`each_check_reads_every_field_of_its_tables` and
        // `quick_mirror_matches_the_schema` in `quick/tests.rs`), and the
        // differential tests (`crates/fb-schema/tests/quick.rs`, the
        // `decode` fuzz target) hold its answers to the verifier's.
        Ok(unsafe { flatbuffers::root_unchecked::<T>(buf) })
    } else {
        verified::<T>(buf)
    }
}

impl TimeStamp {
    /// True when every field is zero, which means "absent".
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|b| *b == 0)
    }
}

#[cfg(test)]
mod tests;
