//! `convert_parallel` against the serial joiner: the same bytes, and the
//! same metrics and diagnostics, also when one joiner reads several inputs.

use fb_join::{convert_into, convert_parallel, Joiner, Options, Summary};
use fb_writer::synth::{generate, GenConfig, Limit, ProblemKind};

fn serial(inputs: &[&[u8]], opts: &Options) -> (Vec<u8>, Joiner) {
    let mut joiner = Joiner::new(opts.clone());
    let mut out = Vec::new();
    for input in inputs {
        convert_into(&mut joiner, *input, &mut out).unwrap();
    }
    (out, joiner)
}

fn parallel(inputs: &[&[u8]], opts: &Options, threads: usize) -> (Vec<u8>, Joiner) {
    let mut joiner = Joiner::new(opts.clone());
    let mut out = Vec::new();
    for input in inputs {
        let _: Summary =
            convert_parallel(&mut joiner, *input, &mut out, threads, |_| true, |_, _| {}).unwrap();
    }
    (out, joiner)
}

fn assert_same(name: &str, inputs: &[&[u8]], opts: &Options) {
    let (bytes, one) = serial(inputs, opts);
    for threads in [2, 3] {
        let (pbytes, many) = parallel(inputs, opts, threads);
        assert!(pbytes == bytes, "{name}, {threads} threads: output differs");
        assert_eq!(
            many.metrics(),
            one.metrics(),
            "{name}, {threads} threads: metrics"
        );
        assert_eq!(
            many.diagnostics().counts(),
            one.diagnostics().counts(),
            "{name}, {threads} threads: diagnostic counts"
        );
        assert_eq!(
            many.diagnostics().kept(),
            one.diagnostics().kept(),
            "{name}, {threads} threads: diagnostics kept"
        );
    }
}

fn corpus() -> Vec<(String, Vec<u8>)> {
    let mut logs: Vec<String> = fb_tests::valid_logs();
    let dir = fb_tests::data_dir().join("invalid_joined_logs");
    let mut invalid: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| {
            format!(
                "invalid_joined_logs/{}",
                e.unwrap().file_name().to_string_lossy()
            )
        })
        .collect();
    invalid.sort();
    logs.extend(invalid);
    logs.into_iter()
        .map(|rel| {
            let bytes = fb_tests::read(&rel);
            (rel, bytes)
        })
        .collect()
}

#[test]
fn every_corpus_log_gives_the_serial_metrics_and_diagnostics() {
    let logs = corpus();
    assert!(logs.len() > 40, "{} logs", logs.len());
    for (name, bytes) in &logs {
        assert_same(name, &[bytes], &Options::default());
    }
    // One joiner over many inputs: metrics and diagnostics carry over.
    let all: Vec<&[u8]> = logs.iter().map(|(_, b)| b.as_slice()).collect();
    assert_same("the whole corpus as one stream", &all, &Options::default());
}

#[test]
fn many_batches_give_the_serial_metrics_and_diagnostics() {
    // Megabytes: several batches, with checkpoints, zstd and dedup.
    let config = GenConfig {
        problem: ProblemKind::Ccb,
        limit: Limit::Events(6_000),
        zstd: true,
        dedup: true,
        deferred: 0.3,
        activated: 0.5,
        checkpoint_every: 7,
        seed: 11,
        ..GenConfig::default()
    };
    let mut bytes = Vec::new();
    generate(&config, &mut bytes).unwrap();
    assert!(bytes.len() > 2 << 20, "only {} bytes", bytes.len());
    let opts = Options {
        inline_dedup: true,
        ..Options::default()
    };
    assert_same("generated CCB", &[&bytes, &bytes], &opts);
}
