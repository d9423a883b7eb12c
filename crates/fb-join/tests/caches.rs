//! The speed caches on and off (`Options::caches`): generated logs of
//! every problem type and the corpus's logs give the same DSJSON, metrics
//! and diagnostics either way, on one thread and on several; and each
//! cache served with them on, while none did with them off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_join::{
    convert_parallel, dsjson, CacheCounts, Caches, Compat, Joiner, Options, Problem, Source,
};
use fb_writer::synth::{generate, GenConfig, Limit};

/// One generated log: its name, how it is made and how it is joined.
struct Case {
    name: &'static str,
    config: GenConfig,
    inline_dedup: bool,
}

fn cases() -> Vec<Case> {
    let config = |problem, zstd, dedup| GenConfig {
        problem,
        limit: Limit::Events(1500),
        zstd,
        dedup,
        events_per_message: if problem == Problem::Multistep { 1 } else { 3 },
        checkpoint_every: 5,
        deferred: 0.3,
        activated: 0.5,
        seed: 7,
        ..GenConfig::default()
    };
    vec![
        Case {
            name: "cb",
            config: config(Problem::Cb, false, false),
            inline_dedup: false,
        },
        Case {
            name: "cb, zstd and dedup, inlined",
            config: config(Problem::Cb, true, true),
            inline_dedup: true,
        },
        Case {
            name: "ccb, dedup",
            config: config(Problem::Ccb, false, true),
            inline_dedup: false,
        },
        Case {
            name: "ccb, zstd",
            config: config(Problem::Ccb, true, false),
            inline_dedup: false,
        },
        Case {
            name: "slates, zstd and dedup",
            config: config(Problem::Slates, true, true),
            inline_dedup: true,
        },
        Case {
            name: "ca",
            config: config(Problem::Ca, false, false),
            inline_dedup: false,
        },
        Case {
            name: "multistep",
            config: config(Problem::Multistep, false, false),
            inline_dedup: false,
        },
    ]
}

/// The DSJSON of `log` joined with `opts`, event by event through one
/// joiner and one writer, and how much their caches served.
fn joined(log: &[u8], opts: &Options) -> (Vec<u8>, CacheCounts) {
    joined_by(&mut Joiner::new(opts.clone()), log, opts)
}

/// [`joined`] through `joiner`, which may have read other logs.
fn joined_by(joiner: &mut Joiner, log: &[u8], opts: &Options) -> (Vec<u8>, CacheCounts) {
    let mut writer = dsjson::Writer::with_caches(opts.compat, opts.caches);
    let mut out = Vec::new();
    for msg in fb_format::SliceReader::new(log) {
        match msg {
            Ok(msg) => joiner.push_each(&msg, |ev| writer.write_line(ev, &mut out)),
            Err(e) => joiner.record_framing_error(&e),
        }
    }
    (out, joiner.cache_counts().plus(writer.cache_counts()))
}

/// The pipeline's DSJSON of `log` with `opts` on `threads` threads, with
/// the joiner's metrics and diagnostics as text.
fn piped(log: &[u8], opts: &Options, threads: usize) -> (Vec<u8>, String) {
    let mut joiner = Joiner::new(opts.clone());
    let mut out = Vec::new();
    let source = Source::Slice(log);
    convert_parallel(&mut joiner, source, &mut out, threads, |_| true, |_| {}).unwrap();
    let report = format!("{:?} {:?}", joiner.metrics(), joiner.diagnostics().kept());
    (out, report)
}

/// Joins `log` with `opts` with caches on and off, one thread and
/// three: the same bytes, metrics and diagnostics each way, nothing served
/// with caches off, and the quick verifier left out. What the caches
/// served with them on.
fn compare(name: &str, log: &[u8], opts: &Options) -> CacheCounts {
    let off = opts.clone().caches(Caches::Off);
    let (bytes, served) = joined(log, opts);
    let (plain, none) = joined(log, &off);
    assert!(bytes == plain, "{name}: caches off changed the output");
    for (cache, count) in none.served() {
        assert_eq!(count, 0, "{name}: {cache} served with caches off");
    }
    assert!(
        served.verified_in_full <= none.verified_in_full,
        "{name}: more read in full with caches on ({served:?}, {none:?})"
    );
    let (serial, report) = piped(log, opts, 1);
    assert!(serial == bytes, "{name}: the pipeline's output differs");
    for threads in [1, 3] {
        let (out, report_off) = piped(log, &off, threads);
        assert!(out == bytes, "{name}, {threads} threads: caches off");
        assert_eq!(report_off, report, "{name}, {threads} threads");
    }
    served
}

#[test]
fn generated_logs_of_every_problem_type_give_the_same_bytes_with_caches_off() {
    let mut served = CacheCounts::default();
    let mut read_in_full = 0;
    for case in cases() {
        let mut log = Vec::new();
        generate(&case.config, &mut log).unwrap();
        for compat in [Compat::Sane, Compat::Reference] {
            let opts = Options::default()
                .compat(compat)
                .inline_dedup(case.inline_dedup)
                .multistep(case.config.problem == Problem::Multistep);
            let name = format!("{}, {compat:?}", case.name);
            let (bytes, _) = joined(&log, &opts);
            assert!(!bytes.is_empty(), "{name}: no DSJSON");
            served = served.plus(compare(&name, &log, &opts));
            let (_, none) = joined(&log, &opts.clone().caches(Caches::Off));
            read_in_full += none.verified_in_full;
        }
    }
    // Generated contexts name each its own user: a repeated one is met in
    // the corpus-built log of one context for every decision.
    let name = "valid_joined_logs/average_reward_100_interactions.fb";
    served = served.plus(compare(name, &fb_tests::read(name), &Options::default()));
    // Each cache served on some of these logs: that none did with caches
    // off would otherwise prove nothing of it.
    for (cache, count) in served.served() {
        assert!(count > 0, "{cache} never served with caches on: {served:?}");
    }
    assert!(
        served.verified_in_full < read_in_full,
        "the quick verifier did not run with caches on"
    );
}

/// Every corpus log, both compat modes, multistep or not: the same bytes,
/// metrics and diagnostics with caches off.
#[test]
fn corpus_logs_give_the_same_bytes_with_caches_off() {
    let mut logs = fb_tests::valid_logs();
    let dir = fb_tests::data_dir().join("invalid_joined_logs");
    for e in std::fs::read_dir(&dir).unwrap() {
        let name = e.unwrap().file_name();
        logs.push(format!("invalid_joined_logs/{}", name.to_string_lossy()));
    }
    assert!(logs.len() > 40, "{} logs", logs.len());
    for name in &logs {
        let log = fb_tests::read(name);
        for compat in [Compat::Sane, Compat::Reference] {
            for multistep in [false, true] {
                let opts = Options::default().compat(compat).multistep(multistep);
                compare(
                    &format!("{name}, {compat:?}, multistep {multistep}"),
                    &log,
                    &opts,
                );
            }
        }
    }
}

/// `Joiner::for_next_log`: every log of the cases, joined by a joiner
/// that read all the logs before it, gives the DSJSON, metrics and
/// diagnostics a new joiner gives it; the caches' counts go on from the
/// joiner before, and caches off stay off.
#[test]
fn a_joiner_for_the_next_log_keeps_only_its_caches() {
    let mut logs: Vec<(String, Vec<u8>)> = cases()
        .into_iter()
        .filter(|c| !c.inline_dedup && c.config.problem != Problem::Multistep)
        .map(|case| {
            let mut log = Vec::new();
            generate(&case.config, &mut log).unwrap();
            (case.name.to_string(), log)
        })
        .collect();
    let name = "valid_joined_logs/average_reward_100_interactions.fb";
    logs.push((name.to_string(), fb_tests::read(name)));
    assert!(logs.len() >= 4, "{} logs", logs.len());
    for caches in [Caches::On, Caches::Off] {
        let opts = Options::default().caches(caches);
        let mut carried: Option<Joiner> = None;
        // The counts of the caches a joiner for the next log keeps.
        let kept = |c: CacheCounts| {
            [
                c.zstd_frames,
                c.outcome_parts,
                c.json_elements,
                c.repeated_contexts,
                c.context_shapes,
            ]
        };
        let mut served_before = [0; 5];
        for (name, log) in &logs {
            let mut joiner = match carried.take() {
                Some(before) => before.for_next_log(),
                None => Joiner::new(opts.clone()),
            };
            assert_eq!(
                format!("{:?}", joiner.options()),
                format!("{opts:?}"),
                "{name}"
            );
            let (out, _) = joined_by(&mut joiner, log, &opts);
            let mut alone = Joiner::new(opts.clone());
            let (fresh, _) = joined_by(&mut alone, log, &opts);
            assert!(out == fresh, "{name}, {caches:?}: the DSJSON");
            let report = |j: &Joiner| format!("{:?} {:?}", j.metrics(), j.diagnostics().kept());
            assert_eq!(report(&joiner), report(&alone), "{name}, {caches:?}");
            let served = kept(joiner.cache_counts());
            for (now, before) in served.iter().zip(served_before) {
                assert!(*now >= before, "{name}: {served:?} after {served_before:?}");
            }
            if caches == Caches::Off {
                assert_eq!(served, [0; 5], "{name}");
            }
            served_before = served;
            carried = Some(joiner);
        }
        if caches == Caches::On {
            assert!(served_before.iter().sum::<u64>() > 0, "{served_before:?}");
        }
    }
}
