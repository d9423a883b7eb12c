//! The table descriptions: every field the quick checks and the skimming
//! readers read, with its schema type and vtable offset, in one list.
//!
//! The checks name their fields only through these descriptions (the walk
//! in `walk.rs` takes a [`Field`], never a bare offset), and take the shape
//! they check (size, alignment, vector or string) from the field's type
//! here. Two tests hold the list to the schema and the checks to the list
//! (both in `quick/tests.rs`):
//!
//! - `quick_mirror_matches_the_schema` compares [`MIRROR`] with
//!   `schema/*.fbs`: names, types, field order, vtable offsets, and that a
//!   mirrored table has no other field;
//! - `each_check_reads_every_field_of_its_tables` runs each check on a
//!   buffer with every field set and compares the fields it read with the
//!   list; in debug builds the walk also asserts that each field is read
//!   as the kind its type says.
//!
//! So a schema change the checks do not follow, or a check that skips or
//! misreads a field, fails `cargo test`.

use super::walk::{TIMESTAMP, U32, U64, U8};

/// How a field is laid out, as the verifier checks it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A scalar or struct stored in the table: `(size, alignment)`.
    Scalar((usize, usize)),
    /// An offset to a vector of scalars of `(size, alignment)`.
    Vector((usize, usize)),
    /// An offset to a string.
    String,
    /// An offset to a table.
    Table,
    /// An offset to a vector of tables.
    Tables,
    /// An offset to a vector of strings.
    Strings,
    /// A union: a tag byte in the slot before, and an offset.
    Union,
}

/// A field's type: its text in the schema and its layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ty {
    /// The type as `schema/*.fbs` spells it.
    pub schema: &'static str,
    /// Its layout.
    pub kind: Kind,
}

impl Ty {
    const fn new(schema: &'static str, kind: Kind) -> Self {
        Self { schema, kind }
    }
}

/// One field of one table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The table's name in the schema.
    pub table: &'static str,
    /// The field's name in the schema.
    pub name: &'static str,
    /// Its type.
    pub ty: Ty,
    /// Its vtable offset, from the generated code.
    pub voffset: u16,
}

const BOOL: Ty = Ty::new("bool", Kind::Scalar(U8));
const INT: Ty = Ty::new("int", Kind::Scalar(U32));
const FLOAT: Ty = Ty::new("float", Kind::Scalar(U32));
const STRING: Ty = Ty::new("string", Kind::String);
const UBYTES: Ty = Ty::new("[ubyte]", Kind::Vector(U8));
const INTS: Ty = Ty::new("[int]", Kind::Vector(U32));
const UINTS: Ty = Ty::new("[uint]", Kind::Vector(U32));
const FLOATS: Ty = Ty::new("[float]", Kind::Vector(U32));
const ULONGS: Ty = Ty::new("[ulong]", Kind::Vector(U64));
const STRINGS: Ty = Ty::new("[string]", Kind::Strings);
const STAMP: Ty = Ty::new("TimeStamp", Kind::Scalar(TIMESTAMP));

/// A `ubyte` enum.
const fn byte_enum(schema: &'static str) -> Ty {
    Ty::new(schema, Kind::Scalar(U8))
}

macro_rules! tables {
    ($(
        $(#[$doc:meta])*
        $module:ident: $table:ident { $($field:ident @ $vt:ident: $ty:expr),* $(,)? }
    )*) => {
        $(
            $(#[$doc])*
            #[allow(non_upper_case_globals)]
            pub mod $module {
                use super::*;
                $(
                    #[doc = concat!("`", stringify!($table), ".", stringify!($field), "`.")]
                    pub const $field: Field = Field {
                        table: stringify!($table),
                        name: stringify!($field),
                        ty: $ty,
                        voffset: crate::$table::$vt,
                    };
                )*
                /// Every field of the table, in schema order.
                pub const ALL: &[Field] = &[$($field),*];
            }
        )*

        /// Every table described here, each with all its fields.
        #[cfg_attr(not(test), allow(dead_code))]
        pub(crate) const MIRROR: &[&[Field]] = &[$($module::ALL),*];
    };
}

tables! {
    /// The root of a REGULAR message's payload.
    joined_payload: JoinedPayload {
        events @ VT_EVENTS: Ty::new("[JoinedEvent]", Kind::Tables),
    }
    /// One event of a `JoinedPayload`.
    joined_event: JoinedEvent {
        event @ VT_EVENT: UBYTES,
        timestamp @ VT_TIMESTAMP: STAMP,
    }
    /// The nested buffer of a `JoinedEvent`.
    event: Event {
        meta @ VT_META: Ty::new("Metadata", Kind::Table),
        payload @ VT_PAYLOAD: UBYTES,
    }
    /// An `Event`'s metadata.
    metadata: Metadata {
        id @ VT_ID: STRING,
        client_time_utc @ VT_CLIENT_TIME_UTC: STAMP,
        app_id @ VT_APP_ID: STRING,
        payload_type @ VT_PAYLOAD_TYPE: byte_enum("PayloadType"),
        pass_probability @ VT_PASS_PROBABILITY: FLOAT,
        encoding @ VT_ENCODING: byte_enum("EventEncoding"),
    }
    /// A CB decision.
    cb_event: CbEvent {
        deferred_action @ VT_DEFERRED_ACTION: BOOL,
        action_ids @ VT_ACTION_IDS: ULONGS,
        context @ VT_CONTEXT: UBYTES,
        probabilities @ VT_PROBABILITIES: FLOATS,
        model_id @ VT_MODEL_ID: STRING,
        learning_mode @ VT_LEARNING_MODE: byte_enum("LearningModeType"),
    }
    /// One slot of a CCB or Slates decision.
    slot_event: SlotEvent {
        action_ids @ VT_ACTION_IDS: UINTS,
        probabilities @ VT_PROBABILITIES: FLOATS,
        id @ VT_ID: STRING,
    }
    /// A CCB or Slates decision.
    multi_slot_event: MultiSlotEvent {
        context @ VT_CONTEXT: UBYTES,
        slots @ VT_SLOTS: Ty::new("[SlotEvent]", Kind::Tables),
        model_id @ VT_MODEL_ID: STRING,
        deferred_action @ VT_DEFERRED_ACTION: BOOL,
        baseline_actions @ VT_BASELINE_ACTIONS: INTS,
        learning_mode @ VT_LEARNING_MODE: byte_enum("LearningModeType"),
    }
    /// A continuous-action decision.
    ca_event: CaEvent {
        deferred_action @ VT_DEFERRED_ACTION: BOOL,
        action @ VT_ACTION: FLOAT,
        context @ VT_CONTEXT: UBYTES,
        pdf_value @ VT_PDF_VALUE: FLOAT,
        model_id @ VT_MODEL_ID: STRING,
        learning_mode @ VT_LEARNING_MODE: byte_enum("LearningModeType"),
    }
    /// A multistep decision.
    multi_step_event: MultiStepEvent {
        event_id @ VT_EVENT_ID: STRING,
        previous_id @ VT_PREVIOUS_ID: STRING,
        action_ids @ VT_ACTION_IDS: ULONGS,
        context @ VT_CONTEXT: UBYTES,
        probabilities @ VT_PROBABILITIES: FLOATS,
        model_id @ VT_MODEL_ID: STRING,
        deferred_action @ VT_DEFERRED_ACTION: BOOL,
    }
    /// An outcome (hand-written in `outcome.rs`).
    outcome_event: OutcomeEvent {
        value @ VT_VALUE: Ty::new("OutcomeValue", Kind::Union),
        index @ VT_INDEX: Ty::new("IndexValue", Kind::Union),
        action_taken @ VT_ACTION_TAKEN: BOOL,
    }
    /// The numeric member of an outcome's value.
    numeric_outcome: NumericOutcome {
        value @ VT_VALUE: FLOAT,
    }
    /// The numeric member of an outcome's index.
    numeric_index: NumericIndex {
        index @ VT_INDEX: INT,
    }
    /// The texts a dedup-compressed log replaces with ids.
    dedup_info: DedupInfo {
        ids @ VT_IDS: ULONGS,
        values @ VT_VALUES: STRINGS,
    }
}

// A union's tag takes the vtable slot before its member's (how flatc lays
// out unions, and what the walk's `union` reads).
const _: () = assert!(crate::OutcomeEvent::VT_VALUE_TYPE + 2 == crate::OutcomeEvent::VT_VALUE);
const _: () = assert!(crate::OutcomeEvent::VT_INDEX_TYPE + 2 == crate::OutcomeEvent::VT_INDEX);
