//! Properties of the joiner over generated logs of every shape: the
//! parallel conversion writes the serial one's bytes for any thread count,
//! one log converted in pieces (several inputs, one joiner) equals the
//! whole, and each does with the speed caches off.

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use fb_join::{
    convert, convert_into, convert_parallel, Caches, Compat, Joiner, Options, Problem,
    RewardFunction,
};
use fb_writer::synth::{generate, GenConfig, Limit};
use proptest::prelude::*;

fn configs() -> impl Strategy<Value = (GenConfig, Options)> {
    (
        prop::sample::select(Problem::ALL.to_vec()),
        prop::sample::select(RewardFunction::ALL.to_vec()),
        (1u64..40, 1usize..5, 0u64..3, any::<u64>()),
        (any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
    )
        .prop_map(
            |(
                problem,
                f,
                (events, per_message, checkpoint_every, seed),
                (dedup, zstd, reference, inline),
            )| {
                let cfg = GenConfig {
                    problem,
                    limit: Limit::Events(events),
                    events_per_message: if problem == Problem::Multistep {
                        1
                    } else {
                        per_message
                    },
                    checkpoint_every,
                    reward_function: f.to_wire(),
                    dedup: dedup && problem != Problem::Multistep,
                    zstd: zstd && problem != Problem::Multistep,
                    deferred: 0.3,
                    activated: 0.5,
                    seed,
                    ..GenConfig::default()
                };
                let opts = Options::default()
                    .compat(if reference {
                        Compat::Reference
                    } else {
                        Compat::Sane
                    })
                    .multistep(problem == Problem::Multistep)
                    .inline_dedup(inline);
                (cfg, opts)
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn parallel_and_piecewise_conversions_equal_the_serial_one((cfg, opts) in configs(), threads in 2usize..5) {
        let mut log = Vec::new();
        generate(&cfg, &mut log).unwrap();
        let mut serial = Vec::new();
        let summary = convert(&log[..], &mut serial, opts.clone()).unwrap();
        prop_assert!(summary.framing_error.is_none());
        prop_assert!(summary.lines > 0);

        for caches in [Caches::On, Caches::Off] {
            let opts = opts.clone().caches(caches);
            let mut plain = Vec::new();
            let again = convert(&log[..], &mut plain, opts.clone()).unwrap();
            prop_assert_eq!(&plain, &serial, "serial, {:?}", caches);
            prop_assert_eq!(&again.metrics, &summary.metrics);
            let mut joiner = Joiner::new(opts);
            let mut parallel = Vec::new();
            convert_parallel(&mut joiner, fb_join::Source::Slice(&log), &mut parallel, threads, |_| true, |_| {}).unwrap();
            prop_assert_eq!(&parallel, &serial, "{} threads, {:?}", threads, caches);
            prop_assert_eq!(joiner.metrics(), &summary.metrics);
        }

        // The same log cut at a message boundary and read as two inputs.
        let cut = fb_format::SliceReader::new(&log)
            .flatten()
            .map(|m| m.offset as usize)
            .nth(3)
            .unwrap_or(log.len());
        for caches in [Caches::On, Caches::Off] {
            let mut joiner = Joiner::new(opts.clone().caches(caches));
            let mut pieces = Vec::new();
            convert_into(&mut joiner, &log[..cut], &mut pieces).unwrap();
            convert_into(&mut joiner, &log[cut..], &mut pieces).unwrap();
            prop_assert_eq!(&pieces, &serial, "in pieces, {:?}", caches);
        }
    }
}
