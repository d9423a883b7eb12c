//! The one Arrow schema of joined events (see `docs/arrow-schema.md`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use arrow_schema::{DataType, Field, FieldRef, Fields, Schema, SchemaRef, TimeUnit};

/// Version of the schema, stored in the metadata of every file written
/// (`fb.schema_version`). It changes when a column changes meaning or
/// type; columns are only ever added at the end.
pub const SCHEMA_VERSION: &str = "2";

/// Key of the version in the schema's metadata.
pub const VERSION_KEY: &str = "fb.schema_version";

fn utc_micros() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// Where each column is in [`schema`] (tested against the names). Some
/// go unused: number columns are built whether chosen or not.
#[allow(missing_docs, dead_code)]
pub(crate) mod col {
    pub const EVENT_ID: usize = 0;
    pub const TIMESTAMP: usize = 1;
    pub const CLIENT_TIME: usize = 2;
    pub const PROBLEM_TYPE: usize = 3;
    pub const LEARNING_MODE: usize = 4;
    pub const MODEL_ID: usize = 5;
    pub const DEFERRED: usize = 6;
    pub const SKIP_LEARN: usize = 7;
    pub const PASS_PROBABILITY: usize = 8;
    pub const REWARD: usize = 9;
    pub const ORIGINAL_REWARD: usize = 10;
    pub const ACTIONS: usize = 11;
    pub const PROBABILITIES: usize = 12;
    pub const CHOSEN_ACTION: usize = 13;
    pub const OUTCOMES: usize = 14;
    pub const SLOTS: usize = 15;
    pub const BASELINE_ACTIONS: usize = 16;
    pub const CA_ACTION: usize = 17;
    pub const PDF_VALUE: usize = 18;
    pub const EPISODE_ID: usize = 19;
    pub const CONTEXT: usize = 20;
}

/// The fields of one outcome (built once: a batch's rows are finished
/// per job, and a folder of small files makes a job per file).
pub(crate) fn outcome_fields() -> Fields {
    static FIELDS: OnceLock<Fields> = OnceLock::new();
    FIELDS
        .get_or_init(|| {
            Fields::from(vec![
                Field::new("value", DataType::Float32, true),
                Field::new("literal", DataType::Utf8, true),
                Field::new("index", DataType::Int32, true),
                Field::new("index_id", DataType::Utf8, true),
                Field::new("event_id", DataType::Utf8, false),
                Field::new("action_taken", DataType::Boolean, false),
                Field::new("time", utc_micros(), false),
            ])
        })
        .clone()
}

/// The fields of one CCB or Slates slot (built once, likewise).
pub(crate) fn slot_fields() -> Fields {
    static FIELDS: OnceLock<Fields> = OnceLock::new();
    FIELDS
        .get_or_init(|| {
            Fields::from(vec![
                Field::new("id", DataType::Utf8, true),
                Field::new("actions", list_of(DataType::Int64), false),
                Field::new("probabilities", list_of(DataType::Float32), false),
                Field::new("reward", DataType::Float32, false),
                Field::new("original_reward", DataType::Float32, false),
            ])
        })
        .clone()
}

/// The item field of the `outcomes` list (built once, likewise).
pub(crate) fn outcome_item() -> FieldRef {
    static ITEM: OnceLock<FieldRef> = OnceLock::new();
    Arc::clone(
        ITEM.get_or_init(|| Arc::new(Field::new("item", DataType::Struct(outcome_fields()), true))),
    )
}

/// The item field of the `slots` list (built once, likewise).
pub(crate) fn slot_item() -> FieldRef {
    static ITEM: OnceLock<FieldRef> = OnceLock::new();
    Arc::clone(
        ITEM.get_or_init(|| Arc::new(Field::new("item", DataType::Struct(slot_fields()), true))),
    )
}

/// "UTC", the time zone of every timestamp column, shared.
pub(crate) fn utc() -> Arc<str> {
    static UTC: OnceLock<Arc<str>> = OnceLock::new();
    Arc::clone(UTC.get_or_init(|| "UTC".into()))
}

/// The schema of every batch of joined events, whatever the problem type:
/// columns that do not apply to an event's problem type are null.
pub fn schema() -> SchemaRef {
    static SCHEMA: OnceLock<SchemaRef> = OnceLock::new();
    Arc::clone(SCHEMA.get_or_init(|| {
        let fields = vec![
            Field::new("event_id", DataType::Utf8, false),
            Field::new("timestamp", utc_micros(), false),
            Field::new("client_time", utc_micros(), true),
            Field::new("problem_type", DataType::Utf8, false),
            Field::new("learning_mode", DataType::Utf8, false),
            Field::new("model_id", DataType::Utf8, false),
            Field::new("deferred", DataType::Boolean, false),
            Field::new("skip_learn", DataType::Boolean, false),
            Field::new("pass_probability", DataType::Float32, false),
            Field::new("reward", DataType::Float32, false),
            Field::new("original_reward", DataType::Float32, false),
            Field::new("actions", list_of(DataType::Int64), true),
            Field::new("probabilities", list_of(DataType::Float32), true),
            Field::new("chosen_action", DataType::Int64, true),
            Field::new(
                "outcomes",
                list_of(DataType::Struct(outcome_fields())),
                false,
            ),
            Field::new("slots", list_of(DataType::Struct(slot_fields())), true),
            Field::new("baseline_actions", list_of(DataType::Int64), true),
            Field::new("ca_action", DataType::Float32, true),
            Field::new("pdf_value", DataType::Float32, true),
            Field::new("episode_id", DataType::Utf8, true),
            Field::new("context", DataType::Utf8, false),
        ];
        let metadata = HashMap::from([(VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())]);
        Arc::new(Schema::new_with_metadata(fields, metadata))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_indexes_name_their_columns() {
        let at = [
            (col::EVENT_ID, "event_id"),
            (col::TIMESTAMP, "timestamp"),
            (col::CLIENT_TIME, "client_time"),
            (col::PROBLEM_TYPE, "problem_type"),
            (col::LEARNING_MODE, "learning_mode"),
            (col::MODEL_ID, "model_id"),
            (col::DEFERRED, "deferred"),
            (col::SKIP_LEARN, "skip_learn"),
            (col::PASS_PROBABILITY, "pass_probability"),
            (col::REWARD, "reward"),
            (col::ORIGINAL_REWARD, "original_reward"),
            (col::ACTIONS, "actions"),
            (col::PROBABILITIES, "probabilities"),
            (col::CHOSEN_ACTION, "chosen_action"),
            (col::OUTCOMES, "outcomes"),
            (col::SLOTS, "slots"),
            (col::BASELINE_ACTIONS, "baseline_actions"),
            (col::CA_ACTION, "ca_action"),
            (col::PDF_VALUE, "pdf_value"),
            (col::EPISODE_ID, "episode_id"),
            (col::CONTEXT, "context"),
        ];
        assert_eq!(at.len(), schema().fields().len());
        for (i, name) in at {
            assert_eq!(schema().field(i).name(), name);
        }
    }
}
