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

/// How a test feeds its inputs to a pipeline.
#[allow(dead_code)] // not every test file feeds inputs in turn
#[derive(Debug, Clone, Copy)]
pub enum Way {
    /// Each input a slice, with its own `Pipeline::feed`.
    SliceFeeds,
    /// Each input a reader, with its own `Pipeline::feed`.
    StreamFeeds,
    /// One session, each input a reader.
    SessionStream,
    /// One session, each input a slice.
    SessionSlice,
}

/// Feeds `inputs` to `pipeline` as `way` says, each from its start, and
/// checks that none ends in a framing error.
#[allow(dead_code)]
pub fn feed_all<S, K>(pipeline: &mut fb_join::Pipeline<S, K>, inputs: &[Vec<u8>], way: Way)
where
    S: fb_join::Sink + Send,
    K: Fn(&fb_join::JoinedEvent<'_>) -> bool + Sync,
{
    use fb_join::Source;
    let start = fb_format::Position::START;
    fn source(input: &[u8], way: Way) -> Source<'_> {
        match way {
            Way::SliceFeeds | Way::SessionSlice => Source::Slice(input),
            Way::StreamFeeds | Way::SessionStream => {
                Source::Stream(Box::new(std::io::Cursor::new(input.to_vec())))
            }
        }
    }
    match way {
        Way::SliceFeeds | Way::StreamFeeds => {
            for input in inputs {
                let fed = pipeline.feed(source(input, way), start, &|| false, &mut |_| {});
                assert!(fed.unwrap().framing_error.is_none());
            }
        }
        Way::SessionStream | Way::SessionSlice => {
            pipeline
                .session(|session| {
                    for input in inputs {
                        session.begin_input().unwrap();
                        let fed = session.feed(source(input, way), start, &|| false, &mut |_| {});
                        assert!(fed.unwrap().framing_error.is_none());
                    }
                })
                .unwrap();
        }
    }
}
