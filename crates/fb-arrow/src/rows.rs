//! Joined events appended row by row into column builders, finished into
//! a `RecordBatch` of [`schema`](crate::schema()).

use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BooleanBuilder, Float32Builder, Int32Builder, Int64Builder, ListBuilder,
    PrimitiveBuilder, StringBuilder, TimestampMicrosecondBuilder,
};
use arrow_array::cast::AsArray;
use arrow_array::types::TimestampMicrosecondType;
use arrow_array::{ArrayRef, ListArray, RecordBatch, StringArray, StructArray};
use arrow_array::{ArrowPrimitiveType, PrimitiveArray};
use arrow_buffer::{NullBufferBuilder, OffsetBuffer};
use arrow_schema::ArrowError;
use fb_join::{Decision, JoinedEvent, LearningMode, Outcome, OutcomeIndex, OutcomeValue, Problem};

use crate::columns::Columns;
use crate::prepare::Prepare;
use crate::schema::{col, outcome_fields, outcome_item, slot_fields, slot_item, utc};
use crate::text::Text;

pub use fb_join::time::micros;
use fb_join::time::{Day, LastDay};

fn learning_mode(m: LearningMode) -> &'static str {
    match m {
        LearningMode::Online => "online",
        LearningMode::Apprentice => "apprentice",
        LearningMode::LoggingOnly => "loggingonly",
        LearningMode::Other(_) => "other",
    }
}

fn utc_builder() -> TimestampMicrosecondBuilder {
    TimestampMicrosecondBuilder::new().with_timezone(utc())
}

/// Outcomes of the rows so far: each column of the struct, and where each
/// row's list starts.
struct Outcomes {
    value: Float32Builder,
    literal: StringBuilder,
    index: Int32Builder,
    index_id: StringBuilder,
    event_id: StringBuilder,
    action_taken: BooleanBuilder,
    time: TimestampMicrosecondBuilder,
    offsets: Vec<i32>,
}

impl Outcomes {
    /// Appends one outcome to the current row's list; `day` is its
    /// decision's.
    fn push(&mut self, out: &Outcome, day: &Day) {
        match &out.value {
            OutcomeValue::Numeric(v) => {
                self.value.append_value(*v);
                self.literal.append_null();
            }
            OutcomeValue::Literal(s) => {
                self.value.append_null();
                self.literal.append_value(s);
            }
            OutcomeValue::None => {
                self.value.append_null();
                self.literal.append_null();
            }
        }
        match &out.index {
            OutcomeIndex::Numeric(i) => {
                self.index.append_value(*i);
                self.index_id.append_null();
            }
            OutcomeIndex::Literal(s) => {
                self.index.append_null();
                self.index_id.append_value(s);
            }
            OutcomeIndex::None => {
                self.index.append_null();
                self.index_id.append_null();
            }
        }
        self.event_id.append_value(&out.event_id);
        self.action_taken.append_value(out.action_taken);
        self.time.append_value(day.micros(&out.time));
    }
}

/// Slots of the rows so far, likewise; rows that are not CCB or Slates
/// have none (null).
struct Slots {
    id: StringBuilder,
    actions: ListBuilder<Int64Builder>,
    probabilities: ListBuilder<Float32Builder>,
    reward: Float32Builder,
    original_reward: Float32Builder,
    offsets: Vec<i32>,
    valid: NullBufferBuilder,
}

/// Nulls the rows owe to the decision columns of the kinds they are not
/// (a CB row leaves the slots, `baseline_actions`, `ca_action` and
/// `pdf_value` null), appended in one go when a row of that kind comes or
/// the batch ends. A log is mostly of one kind, so most rows owe the same
/// columns a null, and one append of many is less work than many of one.
#[derive(Default)]
struct OwedNulls {
    /// `actions`, `probabilities`, `chosen_action`.
    cb: usize,
    /// `slots` (their validity; offsets go per row) and `baseline_actions`.
    slots: usize,
    /// `ca_action`, `pdf_value`.
    ca: usize,
}

/// Rows of joined events being built.
pub struct Rows {
    event_id: StringBuilder,
    timestamp: TimestampMicrosecondBuilder,
    client_time: TimestampMicrosecondBuilder,
    // Plain text, not Arrow dictionaries: an IPC file takes one dictionary
    // per column for the whole file, and every worker's batch builds its
    // own. Parquet still encodes them with dictionary pages.
    problem_type: StringBuilder,
    learning_mode: StringBuilder,
    model_id: StringBuilder,
    deferred: BooleanBuilder,
    skip_learn: BooleanBuilder,
    pass_probability: Float32Builder,
    reward: Float32Builder,
    original_reward: Float32Builder,
    actions: ListBuilder<Int64Builder>,
    probabilities: ListBuilder<Float32Builder>,
    chosen_action: Int64Builder,
    outcomes: Outcomes,
    slots: Slots,
    baseline_actions: ListBuilder<Int64Builder>,
    ca_action: Float32Builder,
    pdf_value: Float32Builder,
    episode_id: StringBuilder,
    /// The largest column by far (a third to a half of a batch's bytes).
    context: Text,
    /// Makes the context buffer of the next batch ready, when asked for.
    prepare: Option<Prepare>,
    /// The context buffer of a batch the writer is done with
    /// ([`Rows::give_back`]): its pages are in memory already, so the
    /// batch after next starts there instead of in fresh memory.
    spare_context: Vec<u8>,
    /// The columns built; the others stay empty. Number columns are
    /// always filled (an append each) and dropped at `finish` if unwanted.
    columns: Columns,
    /// The day of the last event's time: most events fall on the day of
    /// the one before, and their outcomes on their own (see
    /// [`fb_join::time::Day`]).
    day: LastDay,
    /// Whether any column of the decision (actions to pdf_value) is built.
    decisions: bool,
    owed: OwedNulls,
    rows: usize,
}

impl Default for Rows {
    fn default() -> Self {
        Self {
            event_id: StringBuilder::new(),
            timestamp: utc_builder(),
            client_time: utc_builder(),
            problem_type: StringBuilder::new(),
            learning_mode: StringBuilder::new(),
            model_id: StringBuilder::new(),
            deferred: BooleanBuilder::new(),
            skip_learn: BooleanBuilder::new(),
            pass_probability: Float32Builder::new(),
            reward: Float32Builder::new(),
            original_reward: Float32Builder::new(),
            actions: ListBuilder::new(Int64Builder::new()),
            probabilities: ListBuilder::new(Float32Builder::new()),
            chosen_action: Int64Builder::new(),
            outcomes: Outcomes {
                value: Float32Builder::new(),
                literal: StringBuilder::new(),
                index: Int32Builder::new(),
                index_id: StringBuilder::new(),
                event_id: StringBuilder::new(),
                action_taken: BooleanBuilder::new(),
                time: utc_builder(),
                offsets: vec![0],
            },
            slots: Slots {
                id: StringBuilder::new(),
                actions: ListBuilder::new(Int64Builder::new()),
                probabilities: ListBuilder::new(Float32Builder::new()),
                reward: Float32Builder::new(),
                original_reward: Float32Builder::new(),
                offsets: vec![0],
                valid: NullBufferBuilder::new(0),
            },
            baseline_actions: ListBuilder::new(Int64Builder::new()),
            ca_action: Float32Builder::new(),
            pdf_value: Float32Builder::new(),
            episode_id: StringBuilder::new(),
            context: Text::new(Vec::new(), 0),
            prepare: None,
            spare_context: Vec::new(),
            columns: Columns::all(),
            day: LastDay::default(),
            decisions: true,
            owed: OwedNulls::default(),
            rows: 0,
        }
    }
}

/// The `reward` and `original_reward` of a row: what `fb stats` adds up
/// for the event (`Metrics::record`), so that a mean over rows is its mean
/// reward. A CCB decision has a reward per slot; its row holds their sum.
/// Every other kind's is the decision's.
fn row_rewards(ev: &JoinedEvent<'_>) -> (f32, f32) {
    match &ev.decision {
        Decision::MultiSlot { slots, .. } if ev.kind != Problem::Slates => {
            let (mut reward, mut original) = (0f64, 0f64);
            for slot in slots {
                reward += f64::from(slot.reward);
                original += f64::from(slot.original_reward);
            }
            (reward as f32, original as f32)
        }
        _ => (ev.reward, ev.original_reward),
    }
}

/// Finishes a text column and leaves the builder with the room it took,
/// so that the next batch does not grow it again from nothing (each
/// doubling copies, and a fresh large buffer is fresh pages to fault in).
fn finish_text(b: &mut StringBuilder) -> StringArray {
    let room = StringBuilder::with_capacity(b.len(), b.values_slice().len());
    std::mem::replace(b, room).finish()
}

/// Finishes a number column, leaving the builder the room it took.
fn finish_num<T: ArrowPrimitiveType>(b: &mut PrimitiveBuilder<T>) -> PrimitiveArray<T> {
    let room = PrimitiveBuilder::<T>::with_capacity(b.len());
    std::mem::replace(b, room).finish()
}

/// Finishes a timestamp column (UTC), likewise.
fn finish_time(b: &mut TimestampMicrosecondBuilder) -> PrimitiveArray<TimestampMicrosecondType> {
    let room = TimestampMicrosecondBuilder::with_capacity(b.len()).with_timezone(utc());
    std::mem::replace(b, room).finish()
}

/// Finishes a list of numbers, likewise for the lists and their values.
fn finish_list<T: ArrowPrimitiveType>(b: &mut ListBuilder<PrimitiveBuilder<T>>) -> ListArray {
    let values = PrimitiveBuilder::<T>::with_capacity(b.values_ref().len());
    let room = ListBuilder::with_capacity(values, b.len());
    std::mem::replace(b, room).finish()
}

/// An offset of a list column; lists longer than `i32` can count end the
/// batch early in [`Rows::full`], so this never saturates in practice.
fn offset(n: usize) -> i32 {
    i32::try_from(n).unwrap_or(i32::MAX)
}

impl Rows {
    /// Rows whose next batches start their largest column in memory made
    /// ready by a thread of their own (see `prepare.rs`): for readers that
    /// keep every batch and leave a core idle, such as `read_all` in
    /// Python. Without a thread to start, the same as `Rows::default()`.
    pub fn with_prepared_memory() -> Self {
        Self {
            prepare: Prepare::start(),
            ..Self::default()
        }
    }

    /// Rows that build only `columns` (batches in [`Columns::schema`]);
    /// with `prepared_memory` as in [`Rows::with_prepared_memory`], when
    /// the context is among them.
    pub fn with_columns(columns: Columns, prepared_memory: bool) -> Self {
        let decision = [
            col::ACTIONS,
            col::PROBABILITIES,
            col::CHOSEN_ACTION,
            col::SLOTS,
            col::BASELINE_ACTIONS,
            col::CA_ACTION,
            col::PDF_VALUE,
        ];
        let prepare = match prepared_memory && columns.has(col::CONTEXT) {
            true => Prepare::start(),
            false => None,
        };
        Self {
            decisions: decision.iter().any(|&c| columns.has(c)),
            columns,
            prepare,
            ..Self::default()
        }
    }

    /// Rows added since the last [`Rows::finish`].
    pub fn len(&self) -> usize {
        self.rows
    }

    /// Whether no row was added since the last [`Rows::finish`].
    pub fn is_empty(&self) -> bool {
        self.rows == 0
    }

    /// Appends one joined event as a row.
    pub fn add(&mut self, ev: &JoinedEvent<'_>) {
        self.rows += 1;
        let on = |c: usize| self.columns.has(c);
        let (event_id, problem_type, learning_mode_on, model_id) = (
            on(col::EVENT_ID),
            on(col::PROBLEM_TYPE),
            on(col::LEARNING_MODE),
            on(col::MODEL_ID),
        );
        let (outcomes, episode_id, context) =
            (on(col::OUTCOMES), on(col::EPISODE_ID), on(col::CONTEXT));
        if event_id {
            self.event_id.append_value(&ev.event_id);
        }
        let day = self.day.of(&ev.time);
        self.timestamp.append_value(day.micros(&ev.time));
        self.client_time
            .append_option(ev.client_time.as_ref().map(|t| day.micros(t)));
        if problem_type {
            self.problem_type.append_value(ev.kind.name());
        }
        if learning_mode_on {
            self.learning_mode
                .append_value(learning_mode(ev.learning_mode));
        }
        if model_id {
            self.model_id.append_value(&ev.model_id);
        }
        self.deferred.append_value(ev.deferred);
        self.skip_learn.append_value(ev.skip_learn);
        self.pass_probability.append_value(ev.pass_probability);
        let (reward, original_reward) = row_rewards(ev);
        self.reward.append_value(reward);
        self.original_reward.append_value(original_reward);
        if self.decisions {
            self.decision(ev);
        }
        if outcomes {
            self.outcomes(ev, &day);
        }
        if episode_id {
            self.episode_id.append_option(ev.episode_id.as_deref());
        }
        if context {
            // Contexts are UTF-8 JSON (checked by the joiner in the default
            // mode); the lossy path, much slower, only for those that are not.
            match std::str::from_utf8(&ev.context) {
                Ok(text) => self.context.push(text),
                Err(_) => self.context.push(&String::from_utf8_lossy(&ev.context)),
            }
        }
    }

    /// The outcomes of a row: those that count for the decision
    /// ([`JoinedEvent::counted_outcomes`]), as `fb stats` counts them.
    fn outcomes(&mut self, ev: &JoinedEvent<'_>, day: &Day) {
        for out in ev.counted_outcomes() {
            self.outcomes.push(out, day);
        }
        let o = &mut self.outcomes;
        o.offsets.push(offset(o.event_id.len()));
    }

    /// Appends the nulls owed to the CB columns.
    fn pay_cb(&mut self) {
        let n = std::mem::take(&mut self.owed.cb);
        if n > 0 {
            self.actions.append_nulls(n);
            self.probabilities.append_nulls(n);
            self.chosen_action.append_nulls(n);
        }
    }

    /// Appends the nulls owed to the slots and `baseline_actions`.
    fn pay_slots(&mut self) {
        let n = std::mem::take(&mut self.owed.slots);
        if n > 0 {
            self.slots.valid.append_n_nulls(n);
            self.baseline_actions.append_nulls(n);
        }
    }

    /// Appends the nulls owed to the continuous actions' columns.
    fn pay_ca(&mut self) {
        let n = std::mem::take(&mut self.owed.ca);
        if n > 0 {
            self.ca_action.append_nulls(n);
            self.pdf_value.append_nulls(n);
        }
    }

    /// Each arm first appends the nulls its own columns are owed (rows of
    /// other kinds before it), then its values.
    fn decision(&mut self, ev: &JoinedEvent<'_>) {
        match &ev.decision {
            Decision::Cb {
                actions,
                probabilities,
            } => {
                self.pay_cb();
                for a in actions {
                    self.actions.values().append_option(i64::try_from(*a).ok());
                }
                self.actions.append(true);
                self.probabilities.values().append_slice(probabilities);
                self.probabilities.append(true);
                self.chosen_action
                    .append_option(actions.first().and_then(|a| i64::try_from(*a).ok()));
                self.owed.slots += 1;
                self.owed.ca += 1;
            }
            Decision::MultiSlot { slots, baseline } => {
                self.pay_slots();
                self.owed.cb += 1;
                let s = &mut self.slots;
                for slot in slots {
                    s.id.append_option(slot.id.as_deref());
                    for a in &slot.actions {
                        s.actions.values().append_value(i64::from(*a));
                    }
                    s.actions.append(true);
                    s.probabilities.values().append_slice(&slot.probabilities);
                    s.probabilities.append(true);
                    // A Slates decision has one reward, its slots' (their
                    // own stay 0.0 in the joiner).
                    let (reward, original_reward) = match ev.kind {
                        Problem::Slates => (ev.reward, ev.original_reward),
                        _ => (slot.reward, slot.original_reward),
                    };
                    s.reward.append_value(reward);
                    s.original_reward.append_value(original_reward);
                }
                s.valid.append_non_null();
                // Null when the log has none, as the DSJSON line leaves
                // out `_ba`.
                for &b in baseline {
                    self.baseline_actions.values().append_value(i64::from(b));
                }
                self.baseline_actions.append(!baseline.is_empty());
                self.owed.ca += 1;
            }
            Decision::Ca { action, pdf_value } => {
                self.pay_ca();
                self.owed.cb += 1;
                self.owed.slots += 1;
                self.ca_action.append_value(*action);
                self.pdf_value.append_value(*pdf_value);
            }
        }
        let s = &mut self.slots;
        s.offsets.push(offset(s.id.len()));
    }

    /// Where the next batch's contexts go: the spare buffer when it has
    /// room for about this batch's, else one made ready or a new one. A
    /// new one has an eighth more than this batch took, so that a next
    /// batch a little longer does not grow it (a copy of the whole
    /// column, into fresh memory).
    fn context_room(&mut self) -> Vec<u8> {
        let bytes = self.context.bytes();
        if self.spare_context.capacity() >= bytes + bytes / 16 {
            return std::mem::take(&mut self.spare_context);
        }
        let room = bytes + bytes / 8;
        match &mut self.prepare {
            Some(p) => p.take(room),
            None => Vec::with_capacity(room),
        }
    }

    /// Takes back a batch of these rows that its reader is done with,
    /// to build a later batch's contexts in its context buffer when
    /// nothing else holds it (a writer that copied the batch out, as
    /// Parquet's and the IPC writers do). A batch still shared, or
    /// without the context column, is only dropped.
    pub fn give_back(&mut self, batch: RecordBatch) {
        let Some(at) = self.columns.order().iter().position(|&c| c == col::CONTEXT) else {
            return;
        };
        let values = batch
            .columns()
            .get(at)
            .and_then(|c| c.as_string_opt::<i32>())
            .map(|c| c.values().clone());
        // Unique once the batch is gone, if nothing else kept it.
        drop(batch);
        if let Some(Ok(mut buf)) = values.map(|b| b.into_vec::<u8>()) {
            if buf.capacity() > self.spare_context.capacity() {
                buf.clear();
                self.spare_context = buf;
            }
        }
    }

    /// Sets the spare context buffer (tests).
    #[cfg(test)]
    pub(crate) fn lend_context_room(&mut self, room: Vec<u8>) {
        self.spare_context = room;
    }

    /// The spare context buffer's room (tests).
    #[cfg(test)]
    pub(crate) fn context_room_capacity(&self) -> usize {
        self.spare_context.capacity()
    }

    /// Whether the rows make a batch of `limit` rows, or their lists
    /// approach what 32-bit offsets can address.
    pub fn full(&self, limit: usize) -> bool {
        self.rows >= limit
            || self.outcomes.event_id.len() >= (i32::MAX / 2) as usize
            || self.slots.id.len() >= (i32::MAX / 2) as usize
            || self.context.bytes() >= (i32::MAX / 2) as usize
    }

    /// The rows as a batch; the builders are empty again after.
    pub fn finish(&mut self) -> Result<RecordBatch, ArrowError> {
        self.pay_cb();
        self.pay_slots();
        self.pay_ca();
        let room = self.context_room();
        let o = &mut self.outcomes;
        let outcomes = StructArray::try_new(
            outcome_fields(),
            vec![
                Arc::new(finish_num(&mut o.value)) as ArrayRef,
                Arc::new(finish_text(&mut o.literal)),
                Arc::new(finish_num(&mut o.index)),
                Arc::new(finish_text(&mut o.index_id)),
                Arc::new(finish_text(&mut o.event_id)),
                Arc::new(o.action_taken.finish()),
                Arc::new(finish_time(&mut o.time)),
            ],
            None,
        )?;
        let outcomes = ListArray::try_new(
            outcome_item(),
            OffsetBuffer::new(std::mem::replace(&mut o.offsets, vec![0]).into()),
            Arc::new(outcomes),
            None,
        )?;
        let s = &mut self.slots;
        let slots = StructArray::try_new(
            slot_fields(),
            vec![
                Arc::new(finish_text(&mut s.id)) as ArrayRef,
                Arc::new(finish_list(&mut s.actions)),
                Arc::new(finish_list(&mut s.probabilities)),
                Arc::new(finish_num(&mut s.reward)),
                Arc::new(finish_num(&mut s.original_reward)),
            ],
            None,
        )?;
        let slots = ListArray::try_new(
            slot_item(),
            OffsetBuffer::new(std::mem::replace(&mut s.offsets, vec![0]).into()),
            Arc::new(slots),
            s.valid.finish(),
        )?;
        let all: [ArrayRef; 21] = [
            Arc::new(finish_text(&mut self.event_id)),
            Arc::new(finish_time(&mut self.timestamp)),
            Arc::new(finish_time(&mut self.client_time)),
            Arc::new(finish_text(&mut self.problem_type)),
            Arc::new(finish_text(&mut self.learning_mode)),
            Arc::new(finish_text(&mut self.model_id)),
            Arc::new(self.deferred.finish()),
            Arc::new(self.skip_learn.finish()),
            Arc::new(finish_num(&mut self.pass_probability)),
            Arc::new(finish_num(&mut self.reward)),
            Arc::new(finish_num(&mut self.original_reward)),
            Arc::new(finish_list(&mut self.actions)),
            Arc::new(finish_list(&mut self.probabilities)),
            Arc::new(finish_num(&mut self.chosen_action)),
            Arc::new(outcomes),
            Arc::new(slots),
            Arc::new(finish_list(&mut self.baseline_actions)),
            Arc::new(finish_num(&mut self.ca_action)),
            Arc::new(finish_num(&mut self.pdf_value)),
            Arc::new(finish_text(&mut self.episode_id)),
            Arc::new(self.context.finish(room)?),
        ];
        self.rows = 0;
        // Columns not chosen are empty (or, for numbers, dropped here).
        let columns = self
            .columns
            .order()
            .iter()
            .filter_map(|&i| all.get(i).map(Arc::clone))
            .collect();
        RecordBatch::try_new(self.columns.schema(), columns)
    }
}
