//! The one Arrow schema of joined events (see `docs/arrow-schema.md`).

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use arrow_schema::{DataType, Field, Fields, Schema, SchemaRef, TimeUnit};

/// Version of the schema, stored in the metadata of every file written
/// (`fb.schema_version`). It changes when a column changes meaning or
/// type; columns are only ever added at the end.
pub const SCHEMA_VERSION: &str = "1";

/// Key of the version in the schema's metadata.
pub const VERSION_KEY: &str = "fb.schema_version";

fn utc_micros() -> DataType {
    DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into()))
}

fn list_of(item: DataType) -> DataType {
    DataType::List(Arc::new(Field::new("item", item, true)))
}

/// The fields of one outcome.
pub(crate) fn outcome_fields() -> Fields {
    Fields::from(vec![
        Field::new("value", DataType::Float32, true),
        Field::new("literal", DataType::Utf8, true),
        Field::new("index", DataType::Int32, true),
        Field::new("index_id", DataType::Utf8, true),
        Field::new("event_id", DataType::Utf8, false),
        Field::new("action_taken", DataType::Boolean, false),
        Field::new("time", utc_micros(), false),
    ])
}

/// The fields of one CCB or Slates slot.
pub(crate) fn slot_fields() -> Fields {
    Fields::from(vec![
        Field::new("id", DataType::Utf8, true),
        Field::new("actions", list_of(DataType::Int64), false),
        Field::new("probabilities", list_of(DataType::Float32), false),
        Field::new("reward", DataType::Float32, false),
        Field::new("original_reward", DataType::Float32, false),
    ])
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
            Field::new("baseline_actions", list_of(DataType::Int32), true),
            Field::new("ca_action", DataType::Float32, true),
            Field::new("pdf_value", DataType::Float32, true),
            Field::new("episode_id", DataType::Utf8, true),
            Field::new("context", DataType::Utf8, false),
        ];
        let metadata = HashMap::from([(VERSION_KEY.to_string(), SCHEMA_VERSION.to_string())]);
        Arc::new(Schema::new_with_metadata(fields, metadata))
    }))
}
