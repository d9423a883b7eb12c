//! What the pipeline tests share.

use fb_writer::synth::{generate, GenConfig, Limit, Problem};

/// Megabytes of CCB with checkpoints, zstd and dedup: many batches.
pub fn multi_batch_log() -> Vec<u8> {
    let config = GenConfig {
        problem: Problem::Ccb,
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
    generate(&config, &mut bytes).expect("a generated log");
    assert!(bytes.len() > 2 << 20, "only {} bytes", bytes.len());
    bytes
}
