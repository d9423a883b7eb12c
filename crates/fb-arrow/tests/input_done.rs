//! `ArrowSink` tells its writer where each input ends
//! (`BatchWriter::input_done`), after the input's last batch, on one
//! thread and in a session on several, when batches are as handed over
//! (`Batching::AsHanded`).

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::panic
)]

use std::path::Path;

use arrow_array::RecordBatch;
use fb_arrow::{ArrowSink, BatchWriter, Batching};
use fb_join::{Options, Pipeline, Source};

/// Records the rows written, and how many there were at each input's end.
#[derive(Default)]
struct Recording {
    rows: usize,
    ends: Vec<usize>,
}

impl BatchWriter for Recording {
    type Output = Self;

    fn write(&mut self, batch: &RecordBatch) -> Result<(), fb_arrow::Error> {
        self.rows += batch.num_rows();
        Ok(())
    }

    fn input_done(&mut self) -> Result<(), fb_arrow::Error> {
        self.ends.push(self.rows);
        Ok(())
    }

    fn finish(self) -> Result<Self, fb_arrow::Error> {
        Ok(self)
    }
}

fn read(name: &str) -> Vec<u8> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data");
    std::fs::read(root.join(name)).unwrap()
}

#[test]
fn the_writer_is_told_each_inputs_end_after_its_rows() {
    let inputs = [
        "valid_joined_logs/ccb_sum_reward_100_interactions.fb",
        "valid_joined_logs/cb_simple.log",
        "valid_joined_logs/average_reward_100_interactions.fb",
        "valid_joined_logs/slates_average_reward_100_interactions.fb",
    ]
    .map(read);
    let start = fb_format::Position::START;
    // Each input's rows, each read alone.
    let rows: Vec<usize> = inputs
        .iter()
        .map(|input| {
            let sink = ArrowSink::new(Recording::default(), 7).with_batching(Batching::AsHanded);
            let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, 1);
            pipeline
                .feed(Source::Slice(input), start, &|| false, &mut |_| {})
                .unwrap();
            pipeline.finish().1.finish().unwrap().rows
        })
        .collect();
    assert!(rows.iter().all(|n| *n > 0), "{rows:?}");
    let want: Vec<usize> = rows
        .iter()
        .scan(0, |sum, n| {
            *sum += n;
            Some(*sum)
        })
        .collect();
    for threads in [1, 2, 3] {
        let sink = ArrowSink::new(Recording::default(), 7).with_batching(Batching::AsHanded);
        let mut pipeline = Pipeline::new(Options::default(), |_: &_| true, sink, threads);
        pipeline
            .session(|session| {
                for input in &inputs {
                    session.begin_input().unwrap();
                    let source = Source::Stream(Box::new(std::io::Cursor::new(input.clone())));
                    session.feed(source, start, &|| false, &mut |_| {}).unwrap();
                }
            })
            .unwrap();
        let written = pipeline.finish().1.finish().unwrap();
        assert_eq!(written.ends, want, "{threads} threads");
    }
}
