//! The report's aggregates are one thread's, to the last bit, whatever
//! the number of threads and however the log is cut into inputs.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use super::*;
use fb_format::Position;
use fb_join::{Pipeline, Problem};
use fb_writer::synth::{self, GenConfig, Limit, RewardDist};

/// A log whose sums depend on the order of their terms (uniform rewards,
/// pass probabilities below 1) and whose decisions, about a second
/// apart, span more minutes than a timeline keeps windows: its windows
/// widen while events come.
fn log(problem: Problem, events: u64) -> Vec<u8> {
    let config = GenConfig {
        problem,
        limit: Limit::Events(events),
        reward: RewardDist::Uniform {
            low: -0.7,
            high: 3.1,
        },
        pass_probability: 0.7,
        events_per_message: 4,
        checkpoint_every: 50,
        slots: 2,
        outcomes: 2,
        seed: 5,
        ..GenConfig::default()
    };
    let mut out = Vec::new();
    synth::generate(&config, &mut out).unwrap();
    out
}

/// Every figure of the aggregates, floats by their bits (`{:?}` of an
/// `f64` tells every value apart but NaNs).
fn figures(h: Health) -> String {
    let mut out = format!(
        "{:?}\n{}\n{:?}\n{:?}\n{:?}\n",
        h.tally.kept,
        h.tally.estimators.json(),
        h.propensities,
        h.actions,
        h.delays
    );
    let (width, windows) = h.timeline.shown();
    out.push_str(&format!("width {width}\n"));
    for (start, w) in windows {
        out.push_str(&format!(
            "{start} {} {} {} {} {:?} {}\n",
            w.decisions,
            w.learnable,
            w.with_outcomes,
            w.outcomes,
            w.reward_sum,
            w.estimators.json()
        ));
    }
    out
}

/// The aggregates of `inputs`, fed one after the other to a pipeline on
/// `threads` threads into the report's sink (without policies); and the width of its windows before the page
/// picks the one to show.
fn piped(inputs: &[&[u8]], threads: usize) -> (String, i64) {
    let mut pipeline = Pipeline::new(
        fb_join::Options::default(),
        |_: &JoinedEvent<'_>| true,
        policies::PageSink::new(Some(60_000_000), &[]).unwrap(),
        threads,
    );
    let mut at = Position::START;
    for data in inputs {
        let fed = pipeline
            .feed(fb_join::Source::Slice(data), at, &|| false, &mut |_| {})
            .unwrap();
        at = Position {
            offset: at.offset + data.len() as u64,
            index: at.index + fed.messages,
        };
    }
    let health = pipeline.finish().1.finish().unwrap().health;
    let width = health.timeline.width();
    (figures(health), width)
}

#[test]
fn threads_and_inputs_give_one_threads_figures_to_the_bit() {
    // CCB spans more minutes than a timeline keeps windows; the others,
    // smaller, cover their own samples.
    for (name, problem, events, widens) in [
        ("ccb", Problem::Ccb, 26_000, true),
        ("cb", Problem::Cb, 3_000, false),
        ("slates", Problem::Slates, 3_000, false),
    ] {
        let data = log(problem, events);
        let (want, width) = piped(&[&data], 1);
        assert_eq!(width > 60, widens, "{name}: windows {width} s wide");
        assert!(want.lines().count() > 20, "{name}: few windows\n{want}");
        for threads in [2, 4] {
            let (got, _) = piped(&[&data], threads);
            assert_eq!(got, want, "{name}: {threads} threads");
        }
        // The same log fed as two inputs: its events, in the same order.
        let half = data.len() / 2;
        let cut = fb_format::SliceReader::new(&data)
            .map_while(|m| m.ok())
            .map(|m| (m.offset + m.len as u64) as usize)
            .find(|&end| end >= half)
            .unwrap();
        for threads in [1, 2] {
            let (got, _) = piped(&[&data[..cut], &data[cut..]], threads);
            assert_eq!(got, want, "{name}: two inputs on {threads} threads");
        }
    }
}
