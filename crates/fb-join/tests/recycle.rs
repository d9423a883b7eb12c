//! Recycled events: the joiner refills the buffers of events handed back
//! with `Joiner::recycle` (or done with by a `Joiner::push_each` closure),
//! and the output must not change — nor, once warm, must it allocate per
//! event. And the context of an event handed to `push_each` is the log's
//! own bytes wherever they can be.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::borrow::Cow;
use std::cell::Cell;

use fb_format::SliceReader;
use fb_join::{dsjson, Compat, JoinedEvents, Joiner, Options};
use fb_schema::{
    LearningModeType, OutcomeEventArgs, ProblemType, RewardFunctionType, TimeStamp, UnionArg,
};
use fb_writer::synth::{generate, GenConfig, Limit, Problem};
use fb_writer::{
    CaSpec, CbSpec, CheckpointConfig, JoinedEventSpec, LogWriter, MultiSlotSpec, PayloadSpec,
    SlotSpec,
};

/// Counts allocations per thread (tests run in parallel), so that a test
/// can see whether the hot path allocates.
struct Counting;

thread_local! {
    // `const` and without destructor: using it never allocates.
    static ALLOCATIONS: Cell<u64> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: the allocator also runs while threads are torn down.
    let _ = ALLOCATIONS.try_with(|n| n.set(n.get() + 1));
}

fn allocations() -> u64 {
    ALLOCATIONS.with(Cell::get)
}

// SAFETY: forwards to the system allocator unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// DSJSON through `JoinedEvents`, which never recycles.
fn fresh_lines(bytes: &[u8], opts: &Options) -> Vec<u8> {
    let mut writer = dsjson::Writer::new(opts.compat);
    let mut out = Vec::new();
    for ev in JoinedEvents::new(bytes, opts.clone()) {
        writer.write_line(&ev, &mut out);
    }
    out
}

/// DSJSON through `convert`, which hands every event to a closure with
/// `push_each`.
fn recycled_lines(bytes: &[u8], opts: &Options) -> Vec<u8> {
    let mut out = Vec::new();
    fb_join::convert(bytes, &mut out, opts.clone()).unwrap();
    out
}

fn option_sets() -> Vec<(&'static str, Options)> {
    let mut sets = Vec::new();
    for (name, compat, inline_dedup) in [
        ("sane", Compat::Sane, false),
        ("reference", Compat::Reference, false),
        ("sane, inline dedup", Compat::Sane, true),
    ] {
        sets.push((
            name,
            Options::default().compat(compat).inline_dedup(inline_dedup),
        ));
    }
    sets
}

#[test]
fn recycling_changes_no_byte_on_the_corpus() {
    for log in fb_tests::valid_logs() {
        let bytes = fb_tests::read(&log);
        for (name, opts) in option_sets() {
            let fresh = fresh_lines(&bytes, &opts);
            assert_eq!(recycled_lines(&bytes, &opts), fresh, "{log}, {name}");
        }
    }
}

fn checkpoint(problem: ProblemType) -> CheckpointConfig {
    CheckpointConfig {
        reward_function: RewardFunctionType::Sum,
        default_reward: -1.0,
        learning_mode: LearningModeType::Online,
        problem_type: problem,
        use_client_time: false,
    }
}

fn outcome(value: UnionArg<'static, f32>, index: UnionArg<'static, i32>) -> PayloadSpec<'static> {
    PayloadSpec::Outcome(OutcomeEventArgs {
        value,
        index,
        action_taken: false,
    })
}

/// A context with three actions, for the logs built here.
const CTX: &[u8] = br#"{"U":{"x":1},"_multi":[{"a":1},{"a":2},{"a":3}]}"#;

/// Three slots with ids, over [`CTX`]'s actions.
const THREE_SLOTS: [SlotSpec<'static>; 3] = [
    SlotSpec {
        action_ids: &[2, 0, 1],
        probabilities: &[0.8, 0.1, 0.1],
        id: Some("first"),
    },
    SlotSpec {
        action_ids: &[0, 1],
        probabilities: &[0.5, 0.5],
        id: Some("second"),
    },
    SlotSpec {
        action_ids: &[1],
        probabilities: &[1.0],
        id: Some("third"),
    },
];

/// One log whose problem type changes between messages, so that recycled
/// events meet every other shape: CCB with slot ids and literal outcomes,
/// then CB, then CCB with fewer slots and no ids, slates, CA and CB again.
fn shape_changing_log() -> Vec<u8> {
    let three = THREE_SLOTS;
    let one = [SlotSpec {
        action_ids: &[0, 2],
        probabilities: &[0.7, 0.3],
        id: None,
    }];
    let ccb = |slots| {
        PayloadSpec::Ccb(MultiSlotSpec {
            slots: Some(slots),
            context: Some(CTX),
            model_id: Some("ccb-model"),
            ..MultiSlotSpec::default()
        })
    };
    let cb = |model| {
        PayloadSpec::Cb(CbSpec {
            action_ids: Some(&[3, 1, 2]),
            probabilities: Some(&[0.6, 0.2, 0.2]),
            context: Some(CTX),
            model_id: model,
            ..CbSpec::default()
        })
    };
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    let message = |w: &mut LogWriter<Vec<u8>>, events: &[(&str, PayloadSpec<'_>)]| {
        let specs: Vec<JoinedEventSpec<'_>> = events
            .iter()
            .enumerate()
            .map(|(k, (id, payload))| {
                JoinedEventSpec::new(id, TimeStamp::new(2024, 5, 6, 7, 8, k as u8, 0), *payload)
            })
            .collect();
        w.regular(&specs).unwrap();
    };
    w.checkpoint(&checkpoint(ProblemType::CCB)).unwrap();
    message(
        &mut w,
        &[
            ("c1", ccb(&three)),
            (
                "c1",
                outcome(UnionArg::Literal("clicked"), UnionArg::Literal("second")),
            ),
            ("c1", outcome(UnionArg::Numeric(2.0), UnionArg::Numeric(0))),
            (
                "c1",
                outcome(UnionArg::Numeric(1.0), UnionArg::Literal("third")),
            ),
        ],
    );
    w.checkpoint(&checkpoint(ProblemType::CB)).unwrap();
    message(
        &mut w,
        &[
            ("b1", cb(Some("m1"))),
            ("b1", outcome(UnionArg::Numeric(1.5), UnionArg::None)),
            ("b2", cb(None)),
        ],
    );
    w.checkpoint(&checkpoint(ProblemType::CCB)).unwrap();
    message(
        &mut w,
        &[
            ("c2", ccb(&one)),
            ("c2", outcome(UnionArg::Numeric(0.5), UnionArg::Numeric(0))),
        ],
    );
    w.checkpoint(&checkpoint(ProblemType::SLATES)).unwrap();
    message(
        &mut w,
        &[
            (
                "s1",
                PayloadSpec::Slates(MultiSlotSpec {
                    slots: Some(&three),
                    context: Some(CTX),
                    ..MultiSlotSpec::default()
                }),
            ),
            ("s1", outcome(UnionArg::Numeric(3.0), UnionArg::None)),
        ],
    );
    w.checkpoint(&checkpoint(ProblemType::CA)).unwrap();
    message(
        &mut w,
        &[
            (
                "a1",
                PayloadSpec::Ca(CaSpec {
                    action: 1.25,
                    pdf_value: 0.5,
                    context: Some(CTX),
                    ..CaSpec::default()
                }),
            ),
            ("a1", outcome(UnionArg::Numeric(-1.0), UnionArg::None)),
        ],
    );
    w.checkpoint(&checkpoint(ProblemType::CB)).unwrap();
    message(
        &mut w,
        &[
            ("b3", cb(Some("m3"))),
            ("b3", outcome(UnionArg::None, UnionArg::None)),
        ],
    );
    w.eof().unwrap();
    w.into_inner()
}

#[test]
fn recycling_changes_no_byte_when_shapes_change() {
    let bytes = shape_changing_log();
    for (name, opts) in option_sets() {
        let fresh = fresh_lines(&bytes, &opts);
        assert_eq!(
            String::from_utf8_lossy(&fresh).lines().count(),
            7,
            "{name}: every decision is joined"
        );
        assert_eq!(
            String::from_utf8_lossy(&recycled_lines(&bytes, &opts)),
            String::from_utf8_lossy(&fresh),
            "{name}"
        );
    }
}

/// How events leave the joiner.
#[derive(Debug, Clone, Copy)]
enum Api {
    /// `push`, `pop`, `recycle`: contexts copied.
    Queue,
    /// `push_each`: contexts borrowed.
    Each,
}

/// Joins and writes `bytes` message by message through `api`, and returns
/// the allocations made after the first `warm` messages, and the number of
/// events joined after them.
fn allocations_after_warm_up(bytes: &[u8], opts: Options, warm: usize, api: Api) -> (u64, u64) {
    let mut joiner = Joiner::new(opts.clone());
    let mut writer = dsjson::Writer::new(opts.compat);
    let mut line = Vec::with_capacity(1 << 16);
    let mut reader = SliceReader::new(bytes);
    let mut before = 0;
    let mut events = 0;
    let mut index = 0;
    while let Some(msg) = reader.next_message().unwrap() {
        if index == warm {
            before = allocations();
        }
        line.clear();
        match api {
            Api::Queue => {
                joiner.push(&msg);
                while let Some(ev) = joiner.pop() {
                    writer.write_line(&ev, &mut line);
                    joiner.recycle(ev);
                    events += u64::from(index >= warm);
                }
            }
            Api::Each => joiner.push_each(&msg, |ev| {
                writer.write_line(ev, &mut line);
                events += u64::from(index >= warm);
            }),
        }
        index += 1;
    }
    assert!(index > warm, "the log is longer than the warm-up");
    (allocations() - before, events)
}

#[test]
fn warm_joiner_allocates_nothing_per_event() {
    // The last field: the fraction of decisions with an activation, an
    // outcome more. Where it is neither 0 nor 1, an event's buffers are
    // refilled by events with more outcomes and with fewer; a text buffer
    // may then still be made after the warm-up, when texts first sit in
    // more outcome slots at once than before, but never one per event:
    // at most `VARYING` over the whole log.
    const VARYING: u64 = 8;
    let cases = [
        ("cb", Problem::Cb, 1, false, 0.0),
        ("cb, 8 decisions per message", Problem::Cb, 8, false, 0.0),
        ("ccb", Problem::Ccb, 1, false, 0.0),
        ("slates", Problem::Slates, 1, false, 0.0),
        ("ca", Problem::Ca, 1, false, 0.0),
        ("cb, zstd", Problem::Cb, 1, true, 0.0),
        ("cb, one or two outcomes", Problem::Cb, 1, false, 0.5),
        ("ccb, one or two outcomes", Problem::Ccb, 1, false, 0.5),
    ];
    for (name, problem, per_message, zstd, activated) in cases {
        let config = GenConfig {
            problem,
            limit: Limit::Events(1500),
            events_per_message: per_message,
            zstd,
            deferred: activated,
            activated,
            seed: 7,
            ..GenConfig::default()
        };
        let mut bytes = Vec::new();
        generate(&config, &mut bytes).unwrap();
        for (opts_name, opts) in option_sets().into_iter().take(2) {
            for api in [Api::Queue, Api::Each] {
                let (allocations, events) =
                    allocations_after_warm_up(&bytes, opts.clone(), 100, api);
                assert!(
                    events > 500,
                    "{name}, {opts_name}, {api:?}: {events} events"
                );
                let allowed = if activated > 0.0 { VARYING } else { 0 };
                assert!(
                    allocations <= allowed,
                    "{name}, {opts_name}, {api:?}: {allocations} allocations for {events} events"
                );
            }
        }
    }
}

/// A CCB log whose decisions have three slots and one in turn, each
/// slot keeping its id, with an outcome for the first slot.
fn slot_counts_changing_log(decisions: usize) -> Vec<u8> {
    let three = THREE_SLOTS;
    let one = [three[0]];
    let mut w = LogWriter::new(Vec::new());
    w.file_magic(1).unwrap();
    w.checkpoint(&checkpoint(ProblemType::CCB)).unwrap();
    let ids: Vec<String> = (0..decisions).map(|k| format!("d{k}")).collect();
    for (k, id) in ids.iter().enumerate() {
        let slots: &[SlotSpec<'_>] = if k % 2 == 0 { &three } else { &one };
        let decision = PayloadSpec::Ccb(MultiSlotSpec {
            slots: Some(slots),
            context: Some(CTX),
            model_id: Some("ccb-model"),
            ..MultiSlotSpec::default()
        });
        let time = |s: u8| TimeStamp::new(2024, 5, 6, 7, (k / 60) as u8, s, 0);
        let second = (k % 60) as u8;
        w.regular(&[
            JoinedEventSpec::new(id, time(second), decision),
            JoinedEventSpec::new(
                id,
                time(second),
                outcome(UnionArg::Numeric(1.0), UnionArg::Numeric(0)),
            ),
        ])
        .unwrap();
    }
    w.eof().unwrap();
    w.into_inner()
}

#[test]
fn warm_joiner_allocates_nothing_when_slot_counts_change() {
    let bytes = slot_counts_changing_log(600);
    for (opts_name, opts) in option_sets().into_iter().take(2) {
        for api in [Api::Queue, Api::Each] {
            let (allocations, events) = allocations_after_warm_up(&bytes, opts.clone(), 100, api);
            assert!(events > 400, "{opts_name}, {api:?}: {events} events");
            assert_eq!(
                allocations, 0,
                "{opts_name}, {api:?}: {allocations} allocations for {events} events"
            );
        }
    }
}

#[test]
fn no_reward_function_allocates_per_event() {
    for &function in RewardFunctionType::ENUM_VALUES {
        let config = GenConfig {
            limit: Limit::Events(1500),
            outcomes: 3,
            reward_function: function,
            seed: 11,
            ..GenConfig::default()
        };
        let mut bytes = Vec::new();
        generate(&config, &mut bytes).unwrap();
        let (allocations, events) =
            allocations_after_warm_up(&bytes, Options::default(), 100, Api::Queue);
        assert!(events > 500, "{function:?}: {events} events");
        assert_eq!(
            allocations, 0,
            "{function:?}: {allocations} allocations for {events} events"
        );
    }
}

/// Where the contexts handed to `push_each` live: `(borrowed from the log,
/// owned)` counts over a generated log.
fn context_homes(config: &GenConfig, opts: Options) -> (usize, usize) {
    let mut bytes = Vec::new();
    generate(config, &mut bytes).unwrap();
    let log = bytes.as_ptr_range();
    let mut joiner = Joiner::new(opts);
    let mut reader = SliceReader::new(&bytes);
    let (mut borrowed, mut owned) = (0, 0);
    while let Some(msg) = reader.next_message().unwrap() {
        joiner.push_each(&msg, |ev| match &ev.context {
            Cow::Borrowed(ctx) => {
                let at = ctx.as_ptr_range();
                assert!(
                    log.start <= at.start && at.end <= log.end,
                    "a borrowed context points into the log"
                );
                borrowed += 1;
            }
            Cow::Owned(_) => owned += 1,
        });
    }
    (borrowed, owned)
}

#[test]
fn push_each_borrows_contexts_stored_as_they_are_written() {
    let plain = |problem| GenConfig {
        problem,
        limit: Limit::Events(200),
        seed: 5,
        ..GenConfig::default()
    };
    let sane = Options::default();
    let inline = Options::default().inline_dedup(true);
    let zstd = GenConfig {
        zstd: true,
        ..plain(Problem::Cb)
    };
    let dedup = GenConfig {
        dedup: true,
        ..plain(Problem::Cb)
    };
    // (case, log, options, contexts borrowed)
    let cases = [
        ("cb", plain(Problem::Cb), sane.clone(), true),
        ("ccb", plain(Problem::Ccb), sane.clone(), true),
        ("slates", plain(Problem::Slates), sane.clone(), true),
        ("ca", plain(Problem::Ca), sane.clone(), true),
        ("dedup references kept", dedup.clone(), sane.clone(), true),
        // Decompressed into a buffer the next payload overwrites.
        ("zstd", zstd, sane, false),
        // Rewritten.
        ("dedup references inlined", dedup, inline, false),
    ];
    for (name, config, opts, borrowed) in cases {
        let (b, o) = context_homes(&config, opts);
        assert!(b + o > 100, "{name}: {b} + {o} events");
        if borrowed {
            assert_eq!(o, 0, "{name}: {o} contexts copied");
        } else {
            assert_eq!(b, 0, "{name}: {b} contexts borrowed");
        }
    }
}

#[test]
fn push_each_and_pop_give_the_same_events() {
    for log in fb_tests::valid_logs() {
        let bytes = fb_tests::read(&log);
        for (name, opts) in option_sets() {
            let popped: Vec<_> = JoinedEvents::new(&bytes[..], opts.clone()).collect();
            let mut each = Vec::new();
            let mut joiner = Joiner::new(opts);
            let mut reader = SliceReader::new(&bytes);
            while let Ok(Some(msg)) = reader.next_message() {
                joiner.push_each(&msg, |ev| each.push(ev.clone().into_owned()));
            }
            assert_eq!(each, popped, "{log}, {name}");
        }
    }
}
