//! `OutcomeEvent`, written by hand from `schema/outcome.fbs`.
//!
//! Its unions have a `string` member, which flatc cannot emit as Rust. The
//! wire layout is the plain flatbuffers one: each union takes two vtable
//! slots, a u8 type tag then an offset to the member (a table or a string).

use flatbuffers::{
    FlatBufferBuilder, Follow, ForwardsUOffset, InvalidFlatbuffer, Table, VOffsetT, Verifiable,
    Verifier, WIPOffset,
};

use crate::{NumericIndex, NumericOutcome};

/// Union tag: no value.
pub const UNION_NONE: u8 = 0;
/// Union tag: `NumericOutcome` / `NumericIndex`.
pub const UNION_NUMERIC: u8 = 1;
/// Union tag: a string.
pub const UNION_LITERAL: u8 = 2;

/// A reward signal or activation attached to an event id.
#[derive(Copy, Clone, PartialEq)]
pub struct OutcomeEvent<'a> {
    table: Table<'a>,
}

/// The value of an outcome.
#[derive(Debug, Copy, Clone, PartialEq)]
pub enum OutcomeValue<'a> {
    /// No value was written.
    None,
    /// A number.
    Numeric(f32),
    /// Text, kept as written.
    Literal(&'a str),
    /// A tag this schema does not know.
    Unknown(u8),
}

/// The index of an outcome (a slot index, slot id or step id).
#[derive(Debug, Copy, Clone, PartialEq)]
pub enum IndexValue<'a> {
    /// No index was written.
    None,
    /// A number.
    Numeric(i32),
    /// Text, kept as written.
    Literal(&'a str),
    /// A tag this schema does not know.
    Unknown(u8),
}

impl<'a> Follow<'a> for OutcomeEvent<'a> {
    type Inner = OutcomeEvent<'a>;
    #[inline]
    unsafe fn follow(buf: &'a [u8], loc: usize) -> Self::Inner {
        Self {
            // SAFETY: forwarded from the caller, as in generated code.
            table: unsafe { Table::new(buf, loc) },
        }
    }
}

impl<'a> OutcomeEvent<'a> {
    /// Vtable slot of the value's union tag.
    pub const VT_VALUE_TYPE: VOffsetT = 4;
    /// Vtable slot of the value.
    pub const VT_VALUE: VOffsetT = 6;
    /// Vtable slot of the index's union tag.
    pub const VT_INDEX_TYPE: VOffsetT = 8;
    /// Vtable slot of the index.
    pub const VT_INDEX: VOffsetT = 10;
    /// Vtable slot of `action_taken`.
    pub const VT_ACTION_TAKEN: VOffsetT = 12;

    fn tag(&self, slot: VOffsetT) -> u8 {
        // SAFETY: `Table::get` asks that the slot, if present, hold a `u8`
        // inside the buffer. An `OutcomeEvent` is reached only through a
        // verifier (`verify_member` below, or the quick check in
        // `quick/parts.rs`, held to it by `crates/fb-schema/tests/quick.rs`),
        // both of which check the tag slot as a `u8`.
        unsafe { self.table.get::<u8>(slot, Some(UNION_NONE)) }.unwrap_or(UNION_NONE)
    }

    fn member<T: Follow<'a> + 'a>(&self, slot: VOffsetT) -> Option<T::Inner> {
        // SAFETY: `Table::get` asks that the slot, if present, hold an offset
        // to a valid `T`. The verifiers checked the member as the type its
        // tag names (`outcome_verifier_checks_member_against_its_tag` in
        // `tests.rs`), and the callers match the tag before choosing `T`.
        unsafe { self.table.get::<ForwardsUOffset<T>>(slot, None) }
    }

    /// The outcome's value.
    pub fn value(&self) -> OutcomeValue<'a> {
        match self.tag(Self::VT_VALUE_TYPE) {
            UNION_NONE => OutcomeValue::None,
            UNION_NUMERIC => self
                .member::<NumericOutcome>(Self::VT_VALUE)
                .map_or(OutcomeValue::None, |n| OutcomeValue::Numeric(n.value())),
            UNION_LITERAL => self
                .member::<&str>(Self::VT_VALUE)
                .map_or(OutcomeValue::None, OutcomeValue::Literal),
            other => OutcomeValue::Unknown(other),
        }
    }

    /// The outcome's index.
    pub fn index(&self) -> IndexValue<'a> {
        match self.tag(Self::VT_INDEX_TYPE) {
            UNION_NONE => IndexValue::None,
            UNION_NUMERIC => self
                .member::<NumericIndex>(Self::VT_INDEX)
                .map_or(IndexValue::None, |n| IndexValue::Numeric(n.index())),
            UNION_LITERAL => self
                .member::<&str>(Self::VT_INDEX)
                .map_or(IndexValue::None, IndexValue::Literal),
            other => IndexValue::Unknown(other),
        }
    }

    /// True for an activation (the deferred action was taken), not a reward.
    pub fn action_taken(&self) -> bool {
        // SAFETY: `Table::get` asks that the slot, if present, hold a
        // `bool` inside the buffer, which the verifiers check (as for the
        // tag above).
        unsafe { self.table.get::<bool>(Self::VT_ACTION_TAKEN, Some(false)) }.unwrap_or(false)
    }
}

fn verify_member<T>(tag: u8, v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer>
where
    T: Verifiable,
{
    match tag {
        UNION_NUMERIC => ForwardsUOffset::<T>::run_verifier(v, pos),
        UNION_LITERAL => ForwardsUOffset::<&str>::run_verifier(v, pos),
        // An unknown tag is reported by the accessors; flatbuffers leaves
        // unknown union members unverified and unread.
        _ => Ok(()),
    }
}

impl Verifiable for OutcomeEvent<'_> {
    fn run_verifier(v: &mut Verifier, pos: usize) -> Result<(), InvalidFlatbuffer> {
        v.visit_table(pos)?
            .visit_union::<u8, _>(
                "value_type",
                Self::VT_VALUE_TYPE,
                "value",
                Self::VT_VALUE,
                false,
                verify_member::<NumericOutcome>,
            )?
            .visit_union::<u8, _>(
                "index_type",
                Self::VT_INDEX_TYPE,
                "index",
                Self::VT_INDEX,
                false,
                verify_member::<NumericIndex>,
            )?
            .visit_field::<bool>("action_taken", Self::VT_ACTION_TAKEN, false)?
            .finish();
        Ok(())
    }
}

impl std::fmt::Debug for OutcomeEvent<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OutcomeEvent")
            .field("value", &self.value())
            .field("index", &self.index())
            .field("action_taken", &self.action_taken())
            .finish()
    }
}

/// What to write for an outcome's value or index.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnionArg<'s, N> {
    /// Leave the union unset.
    None,
    /// A numeric member.
    Numeric(N),
    /// A string member.
    Literal(&'s str),
}

/// Fields of an `OutcomeEvent` to build.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OutcomeEventArgs<'s> {
    /// The value.
    pub value: UnionArg<'s, f32>,
    /// The index.
    pub index: UnionArg<'s, i32>,
    /// Marks an activation.
    pub action_taken: bool,
}

impl OutcomeEvent<'_> {
    /// Serializes an `OutcomeEvent` into `fbb` (not finished).
    pub fn create<'b>(
        fbb: &mut FlatBufferBuilder<'b>,
        args: &OutcomeEventArgs<'_>,
    ) -> WIPOffset<OutcomeEvent<'b>> {
        let value = match args.value {
            UnionArg::None => None,
            UnionArg::Numeric(value) => Some((
                UNION_NUMERIC,
                NumericOutcome::create(fbb, &crate::NumericOutcomeArgs { value }).as_union_value(),
            )),
            UnionArg::Literal(s) => Some((UNION_LITERAL, fbb.create_string(s).as_union_value())),
        };
        let index = match args.index {
            UnionArg::None => None,
            UnionArg::Numeric(index) => Some((
                UNION_NUMERIC,
                NumericIndex::create(fbb, &crate::NumericIndexArgs { index }).as_union_value(),
            )),
            UnionArg::Literal(s) => Some((UNION_LITERAL, fbb.create_string(s).as_union_value())),
        };
        let start = fbb.start_table();
        if let Some((_, off)) = value {
            fbb.push_slot_always(Self::VT_VALUE, off);
        }
        if let Some((_, off)) = index {
            fbb.push_slot_always(Self::VT_INDEX, off);
        }
        if let Some((tag, _)) = value {
            fbb.push_slot::<u8>(Self::VT_VALUE_TYPE, tag, UNION_NONE);
        }
        if let Some((tag, _)) = index {
            fbb.push_slot::<u8>(Self::VT_INDEX_TYPE, tag, UNION_NONE);
        }
        fbb.push_slot::<bool>(Self::VT_ACTION_TAKEN, args.action_taken, false);
        WIPOffset::new(fbb.end_table(start).value())
    }
}
