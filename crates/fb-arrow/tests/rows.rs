//! Every corpus log exported to Arrow (IPC and Parquet) and read back:
//! the rows equal the joined events field by field, on one and two
//! threads, in both compatibility modes.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use arrow_array::cast::AsArray;
use arrow_array::types::{Float32Type, Int32Type, Int64Type, TimestampMicrosecondType};
use arrow_array::{Array, RecordBatch};
use fb_arrow::{micros, ArrowSink, IpcFile, ParquetFile};
use fb_join::{Compat, Decision, JoinedEvent, JoinedEvents, Metrics, Options, Outcome};
use fb_join::{OutcomeIndex, OutcomeValue, Pipeline, Problem, Source};

fn corpus() -> Vec<(String, Vec<u8>, bool)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    let mut out = Vec::new();
    for dir in [
        "valid_joined_logs",
        "invalid_joined_logs",
        "skip_learn/cb",
        "skip_learn/ccb",
        "skip_learn/ca",
        "skip_learn/slates",
        "literal_outcomes",
    ] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "json") {
                continue;
            }
            let name = format!("{dir}/{}", path.file_name().unwrap().to_string_lossy());
            let multistep = name.contains("multistep");
            out.push((name, std::fs::read(&path).unwrap(), multistep));
        }
    }
    out.sort();
    out
}

fn export_ipc(log: &[u8], opts: &Options, threads: usize) -> Vec<RecordBatch> {
    let sink = ArrowSink::new(IpcFile::new(Vec::new()).unwrap(), 7);
    let mut pipeline = Pipeline::new(opts.clone(), |_: &_| true, sink, threads);
    let _ = pipeline
        .feed(
            Source::Slice(log),
            fb_format::Position::START,
            &|| false,
            &mut |_| {},
        )
        .unwrap();
    let (_, sink) = pipeline.finish();
    let bytes = sink.finish().unwrap();
    let reader = arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(bytes), None).unwrap();
    assert_versioned(reader.schema().metadata());
    reader.map(|b| b.unwrap()).collect()
}

fn export_parquet(log: &[u8], opts: &Options) -> Vec<RecordBatch> {
    let sink = ArrowSink::new(ParquetFile::new(Vec::new(), 5).unwrap(), 3);
    let mut pipeline = Pipeline::new(opts.clone(), |_: &_| true, sink, 2);
    let _ = pipeline
        .feed(
            Source::Slice(log),
            fb_format::Position::START,
            &|| false,
            &mut |_| {},
        )
        .unwrap();
    let (_, sink) = pipeline.finish();
    let bytes = bytes::Bytes::from(sink.finish().unwrap());
    let builder =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(bytes).unwrap();
    assert_versioned(builder.schema().metadata());
    builder.build().unwrap().map(|b| b.unwrap()).collect()
}

/// The file says which version of the schema it holds.
fn assert_versioned(metadata: &std::collections::HashMap<String, String>) {
    assert_eq!(
        metadata.get(fb_arrow::VERSION_KEY).map(String::as_str),
        Some(fb_arrow::SCHEMA_VERSION)
    );
}

/// What `fb stats` adds up for `ev` alone (`Metrics::record`): its reward
/// and original reward, which its row must hold.
fn stats_rewards(ev: &JoinedEvent<'_>) -> (f32, f32) {
    let mut one = Metrics::default();
    one.record(ev);
    let (_, kind) = one.by_kind().next().expect("one kind");
    (kind.reward_sum as f32, kind.original_reward_sum as f32)
}

/// The outcomes a row must hold: those of the event's DSJSON line (a CCB
/// line lists its slots' outcomes, slot by slot).
fn line_outcomes<'e>(ev: &'e JoinedEvent<'_>) -> Vec<&'e Outcome> {
    match (&ev.kind, &ev.decision) {
        (Problem::Ccb, Decision::MultiSlot { slots, .. }) => slots
            .iter()
            .flat_map(|s| s.outcomes.iter().map(|&k| &ev.outcomes[k]))
            .collect(),
        _ => ev.outcomes.iter().collect(),
    }
}

fn check(name: &str, batches: &[RecordBatch], events: &[JoinedEvent<'_>]) {
    let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(rows, events.len(), "{name}: rows");
    let mut events = events.iter();
    for b in batches {
        let col = |n: &str| b.column_by_name(n).unwrap_or_else(|| panic!("{n}"));
        let ids = col("event_id").as_string::<i32>();
        let ts = col("timestamp").as_primitive::<TimestampMicrosecondType>();
        let client = col("client_time").as_primitive::<TimestampMicrosecondType>();
        let reward = col("reward").as_primitive::<Float32Type>();
        let original = col("original_reward").as_primitive::<Float32Type>();
        let pass = col("pass_probability").as_primitive::<Float32Type>();
        let skip = col("skip_learn").as_boolean();
        let actions = col("actions").as_list::<i32>();
        let probs = col("probabilities").as_list::<i32>();
        let chosen = col("chosen_action").as_primitive::<Int64Type>();
        let outcomes = col("outcomes").as_list::<i32>();
        let slots = col("slots").as_list::<i32>();
        let context = col("context").as_string::<i32>();
        let kind = col("problem_type").as_string::<i32>();
        for r in 0..b.num_rows() {
            let ev = events.next().unwrap();
            let at = format!("{name} row {r} ({})", ev.event_id);
            assert_eq!(ids.value(r), ev.event_id, "{at}");
            assert_eq!(ts.value(r), micros(&ev.time), "{at}");
            assert_eq!(client.is_null(r), ev.client_time.is_none(), "{at}");
            let (want_reward, want_original) = stats_rewards(ev);
            assert_eq!(reward.value(r), want_reward, "{at}: reward");
            assert_eq!(original.value(r), want_original, "{at}: original reward");
            assert_eq!(pass.value(r), ev.pass_probability, "{at}");
            assert_eq!(skip.value(r), ev.skip_learn, "{at}");
            assert_eq!(kind.value(r), ev.kind.name(), "{at}");
            assert_eq!(context.value(r).as_bytes(), &ev.context[..], "{at}");
            match &ev.decision {
                Decision::Cb {
                    actions: a,
                    probabilities: p,
                } => {
                    let got: Vec<i64> = actions
                        .value(r)
                        .as_primitive::<Int64Type>()
                        .values()
                        .to_vec();
                    assert_eq!(got, a.iter().map(|&x| x as i64).collect::<Vec<_>>(), "{at}");
                    let got: Vec<f32> = probs
                        .value(r)
                        .as_primitive::<Float32Type>()
                        .values()
                        .to_vec();
                    assert_eq!(&got, p, "{at}");
                    assert_eq!(chosen.value(r), a[0] as i64, "{at}");
                    assert!(slots.is_null(r), "{at}");
                }
                Decision::MultiSlot { slots: s, baseline } => {
                    assert!(actions.is_null(r) && chosen.is_null(r), "{at}");
                    let base = col("baseline_actions").as_list::<i32>();
                    assert_eq!(base.is_null(r), baseline.is_empty(), "{at}: baseline");
                    let got: Vec<i64> = base.value(r).as_primitive::<Int64Type>().values().to_vec();
                    let want: Vec<i64> = baseline.iter().map(|&b| i64::from(b)).collect();
                    assert_eq!(got, want, "{at}: baseline");
                    let got = slots.value(r);
                    let got = got.as_struct();
                    assert_eq!(got.len(), s.len(), "{at}");
                    let rewards = got
                        .column_by_name("reward")
                        .unwrap()
                        .as_primitive::<Float32Type>();
                    let originals = got
                        .column_by_name("original_reward")
                        .unwrap()
                        .as_primitive::<Float32Type>();
                    for (k, slot) in s.iter().enumerate() {
                        // A Slates slot's reward is the decision's.
                        let want = match ev.kind {
                            Problem::Slates => (ev.reward, ev.original_reward),
                            _ => (slot.reward, slot.original_reward),
                        };
                        assert_eq!(
                            (rewards.value(k).to_bits(), originals.value(k).to_bits()),
                            (want.0.to_bits(), want.1.to_bits()),
                            "{at} slot {k}"
                        );
                        let acts = got
                            .column_by_name("actions")
                            .unwrap()
                            .as_list::<i32>()
                            .value(k);
                        let acts: Vec<i64> = acts.as_primitive::<Int64Type>().values().to_vec();
                        assert_eq!(
                            acts,
                            slot.actions
                                .iter()
                                .map(|&x| i64::from(x))
                                .collect::<Vec<_>>(),
                            "{at} slot {k}"
                        );
                    }
                }
                Decision::Ca { action, pdf_value } => {
                    let a = col("ca_action").as_primitive::<Float32Type>();
                    let p = col("pdf_value").as_primitive::<Float32Type>();
                    assert_eq!((a.value(r), p.value(r)), (*action, *pdf_value), "{at}");
                }
            }
            let got = outcomes.value(r);
            let got = got.as_struct();
            let want = line_outcomes(ev);
            assert_eq!(got.len(), want.len(), "{at}: outcomes");
            let value = got
                .column_by_name("value")
                .unwrap()
                .as_primitive::<Float32Type>();
            let literal = got.column_by_name("literal").unwrap().as_string::<i32>();
            let index = got
                .column_by_name("index")
                .unwrap()
                .as_primitive::<Int32Type>();
            let index_id = got.column_by_name("index_id").unwrap().as_string::<i32>();
            let taken = got.column_by_name("action_taken").unwrap().as_boolean();
            let ids = got.column_by_name("event_id").unwrap().as_string::<i32>();
            for (k, o) in want.into_iter().enumerate() {
                assert_eq!(ids.value(k), o.event_id, "{at} outcome {k}");
                match &o.value {
                    OutcomeValue::Numeric(v) => assert_eq!(value.value(k), *v, "{at} outcome {k}"),
                    OutcomeValue::Literal(s) => assert_eq!(literal.value(k), s, "{at} outcome {k}"),
                    OutcomeValue::None => assert!(value.is_null(k) && literal.is_null(k), "{at}"),
                }
                match &o.index {
                    OutcomeIndex::Numeric(i) => assert_eq!(index.value(k), *i, "{at} outcome {k}"),
                    OutcomeIndex::Literal(s) => {
                        assert_eq!(index_id.value(k), s, "{at} outcome {k}")
                    }
                    OutcomeIndex::None => assert!(index.is_null(k) && index_id.is_null(k), "{at}"),
                }
                assert_eq!(taken.value(k), o.action_taken, "{at} outcome {k}");
            }
        }
    }
}

#[test]
fn every_corpus_log_exports_its_joined_events_field_by_field() {
    let mut checked = 0;
    for (name, log, multistep) in corpus() {
        for compat in [Compat::Sane, Compat::Reference] {
            let opts = Options::default().compat(compat).multistep(multistep);
            let events: Vec<JoinedEvent> = JoinedEvents::new(&log[..], opts.clone()).collect();
            for threads in [1, 2] {
                check(
                    &format!("{name} {compat:?} ipc t{threads}"),
                    &export_ipc(&log, &opts, threads),
                    &events,
                );
            }
            check(
                &format!("{name} {compat:?} parquet"),
                &export_parquet(&log, &opts),
                &events,
            );
            checked += events.len();
        }
    }
    assert!(checked > 800, "{checked} rows checked");
}

/// Feeds every log in turn.
fn feed_logs<S: fb_join::Sink, K: Fn(&JoinedEvent<'_>) -> bool + Sync>(
    p: &mut Pipeline<S, K>,
    logs: &[Vec<u8>],
) {
    for log in logs {
        let _ = p
            .feed(
                Source::Slice(log),
                fb_format::Position::START,
                &|| false,
                &mut |_| {},
            )
            .unwrap();
    }
}

/// Many logs through one pipeline into one IPC file and one Parquet file,
/// in small batches made on two threads: each reads back whole, with the
/// rows of the logs read as one stream.
#[test]
fn many_logs_make_one_file() {
    let logs: Vec<Vec<u8>> = corpus()
        .into_iter()
        .filter(|(_, _, multistep)| !multistep)
        .map(|(_, log, _)| log)
        .collect();
    let opts = Options::default();
    // The rows a one-stream conversion gives.
    let mut joiner = fb_join::Joiner::new(opts.clone());
    let mut lines = 0;
    for log in &logs {
        lines += fb_join::convert_into(&mut joiner, &log[..], &mut std::io::sink())
            .unwrap()
            .lines;
    }
    let sink = ArrowSink::new(IpcFile::new(Vec::new()).unwrap(), 5);
    let mut p = Pipeline::new(opts.clone(), |_: &_| true, sink, 2);
    feed_logs(&mut p, &logs);
    let ipc = p.finish().1.finish().unwrap();
    let ipc: Vec<RecordBatch> =
        arrow_ipc::reader::FileReader::try_new(std::io::Cursor::new(ipc), None)
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    let sink = ArrowSink::new(ParquetFile::new(Vec::new(), 64).unwrap(), 5);
    let mut p = Pipeline::new(opts.clone(), |_: &_| true, sink, 2);
    feed_logs(&mut p, &logs);
    let pq = bytes::Bytes::from(p.finish().1.finish().unwrap());
    let pq: Vec<RecordBatch> =
        parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder::try_new(pq)
            .unwrap()
            .build()
            .unwrap()
            .map(|b| b.unwrap())
            .collect();
    for (format, batches) in [("arrow", ipc), ("parquet", pq)] {
        let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
        assert!(
            batches.len() > 10 || format == "parquet",
            "{format}: {} batches",
            batches.len()
        );
        assert_eq!(rows as u64, lines, "{format}");
    }
}

/// The address of a batch's context bytes.
fn context_bytes_at(batch: &RecordBatch) -> *const u8 {
    let column = batch.column_by_name("context").unwrap();
    column.as_string::<i32>().values().as_ptr()
}

/// A batch given back when nothing else holds it lends its context buffer
/// to the batch after next (the next one is already being built in the
/// room `finish` left); one still held elsewhere is not reused, and the
/// rows read back the same either way.
#[test]
fn a_batch_given_back_lends_its_context_buffer() {
    let (_, log, _) = corpus()
        .into_iter()
        .max_by_key(|(_, log, _)| log.len())
        .unwrap();
    let events: Vec<JoinedEvent> = JoinedEvents::new(&log[..], Options::default()).collect();
    assert!(events.len() >= 6, "{} events", events.len());
    let third = events.len() / 3;
    for (case, keep_first) in [("given back", false), ("still held", true)] {
        let mut rows = fb_arrow::Rows::default();
        let mut batches = Vec::new();
        let mut kept = None;
        for part in events.chunks(third).take(3) {
            for ev in part {
                rows.add(ev);
            }
            let batch = rows.finish().unwrap();
            let at = context_bytes_at(&batch);
            let contexts: Vec<String> = batch
                .column_by_name("context")
                .unwrap()
                .as_string::<i32>()
                .iter()
                .map(|c| c.unwrap().to_string())
                .collect();
            batches.push((at, contexts));
            if keep_first && kept.is_none() {
                kept = Some(batch.clone());
            }
            rows.give_back(batch);
        }
        let reused = batches[2].0 == batches[0].0;
        assert_eq!(reused, !keep_first, "{case}");
        let expected: Vec<String> = events[..3 * third]
            .iter()
            .map(|ev| String::from_utf8(ev.context.to_vec()).unwrap())
            .collect();
        let got: Vec<String> = batches.into_iter().flat_map(|(_, c)| c).collect();
        assert_eq!(got, expected, "{case}");
        drop(kept);
    }
}

/// Which decision columns a row of each kind fills: the others are null.
/// Rows of every kind interleaved in one batch, so that the nulls a run of
/// one kind owes the other kinds' columns land on their own rows.
#[test]
fn rows_of_mixed_kinds_leave_the_other_kinds_columns_null() {
    let logs: Vec<(String, Vec<u8>)> = corpus()
        .into_iter()
        .filter(|(name, _, multistep)| !multistep && name.starts_with("valid_joined_logs"))
        .map(|(name, log, _)| (name, log))
        .collect();
    let per_log: Vec<Vec<JoinedEvent>> = logs
        .iter()
        .map(|(_, log)| JoinedEvents::new(&log[..], Options::default()).collect())
        .collect();
    // Runs of 1, 2, 3, ... rows of each log in turn, kinds interleaved.
    let mut events: Vec<&JoinedEvent> = Vec::new();
    let mut at = vec![0; per_log.len()];
    let mut run = 1;
    while at.iter().zip(&per_log).any(|(i, evs)| *i < evs.len()) {
        for (i, evs) in per_log.iter().enumerate() {
            let end = (at[i] + run).min(evs.len());
            events.extend(&evs[at[i]..end]);
            at[i] = end;
        }
        run = run % 5 + 1;
    }
    let kinds: std::collections::BTreeSet<&str> = events.iter().map(|e| e.kind.name()).collect();
    assert!(kinds.len() >= 4, "kinds: {kinds:?}");
    // Two batches, the first ending inside a run, and the runs owed across it.
    let cut = events.len() / 2 + 1;
    let mut rows = fb_arrow::Rows::default();
    let mut batches = Vec::new();
    for (n, ev) in events.iter().enumerate() {
        if n == cut {
            batches.push(rows.finish().unwrap());
        }
        rows.add(ev);
    }
    batches.push(rows.finish().unwrap());
    let mut events = events.iter();
    for b in &batches {
        let col = |n: &str| b.column_by_name(n).unwrap().clone();
        let null_cols = [
            "actions",
            "probabilities",
            "chosen_action",
            "slots",
            "baseline_actions",
            "ca_action",
            "pdf_value",
        ];
        let columns: Vec<_> = null_cols.iter().map(|n| col(n)).collect();
        for column in &columns {
            assert_eq!(column.len(), b.num_rows());
        }
        let base = col("baseline_actions");
        let base = base.as_list::<i32>();
        for r in 0..b.num_rows() {
            let ev = events.next().unwrap();
            let valid: Vec<bool> = columns.iter().map(|c| c.is_valid(r)).collect();
            let want = match &ev.decision {
                Decision::Cb { actions, .. } => {
                    [true, true, !actions.is_empty(), false, false, false, false]
                }
                Decision::MultiSlot { baseline, .. } => [
                    false,
                    false,
                    false,
                    true,
                    !baseline.is_empty(),
                    false,
                    false,
                ],
                Decision::Ca { .. } => [false, false, false, false, false, true, true],
            };
            assert_eq!(valid, want, "row {r} ({}, {})", ev.event_id, ev.kind.name());
            if let Decision::MultiSlot { baseline, .. } = &ev.decision {
                let got: Vec<i64> = base.value(r).as_primitive::<Int64Type>().values().to_vec();
                let want: Vec<i64> = baseline.iter().map(|&b| i64::from(b)).collect();
                assert_eq!(got, want, "row {r}: baseline");
            }
        }
    }
    assert!(events.next().is_none());
}
