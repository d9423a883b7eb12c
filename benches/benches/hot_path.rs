//! Micro-benchmarks of the hot path: framing, typed decoding, reward
//! functions and DSJSON writing, on a generated CB log held in memory.

use criterion::{black_box, criterion_group, criterion_main, Criterion, Throughput};
use fb_format::{Framer, MessageKind, PayloadDecoder, SliceReader, Step};
use fb_join::{compute_reward, dsjson, Compat, JoinedEvents, Options, RewardFunction, Signal};
use fb_writer::synth::{generate, GenConfig, Limit};

fn log() -> Vec<u8> {
    let config = GenConfig { limit: Limit::Bytes(8 << 20), ..GenConfig::default() };
    let mut out = Vec::new();
    generate(&config, &mut out).expect("generating the benchmark log");
    out
}

fn framing(c: &mut Criterion) {
    let data = log();
    let mut g = c.benchmark_group("framing");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("framer over 8 MiB", |b| {
        b.iter(|| {
            let mut framer = Framer::new();
            let mut pos = 0;
            let mut n = 0;
            while let Ok(Step::Message(m)) = framer.next(&data[pos..], true) {
                pos += m.len;
                n += 1;
            }
            black_box(n)
        })
    });
    g.finish();
}

fn decoding(c: &mut Criterion) {
    let data = log();
    let mut g = c.benchmark_group("decode");
    g.throughput(Throughput::Bytes(data.len() as u64));
    g.bench_function("verify and decode every event", |b| {
        let mut decoder = PayloadDecoder::default();
        b.iter(|| {
            let mut n = 0;
            for msg in SliceReader::new(&data).flatten() {
                if msg.kind != MessageKind::Regular {
                    continue;
                }
                for view in msg.events().into_iter().flatten().flatten() {
                    if decoder.payload(&view).is_ok() {
                        n += 1;
                    }
                }
            }
            black_box(n)
        })
    });
    g.finish();
}

fn rewards(c: &mut Criterion) {
    let signals: Vec<Signal> = (0..8)
        .map(|i| Signal { value: i as f32 * 0.5, time: (i64::from(i % 3), 0), activation: i == 5 })
        .collect();
    let mut g = c.benchmark_group("reward");
    for f in [RewardFunction::Earliest, RewardFunction::Average, RewardFunction::Median, RewardFunction::Max] {
        g.bench_function(f.name(), |b| b.iter(|| compute_reward(f, black_box(&signals), 0.0, Compat::Sane)));
    }
    g.finish();
}

fn writing(c: &mut Criterion) {
    let data = log();
    let events: Vec<_> = JoinedEvents::new(&data[..], Options::default()).collect();
    let mut g = c.benchmark_group("dsjson");
    g.throughput(Throughput::Elements(events.len() as u64));
    g.bench_function("write every line", |b| {
        let mut writer = dsjson::Writer::new(Compat::Reference);
        let mut out = Vec::with_capacity(64 << 20);
        b.iter(|| {
            out.clear();
            for ev in &events {
                writer.write_line(ev, &mut out);
            }
            black_box(out.len())
        })
    });
    g.finish();
}

/// A context shaped like the synthetic logs' (shared user features, then
/// `_multi`), with `actions` actions: 4 make ~300 bytes, 70 ~4 KB.
fn context(actions: usize) -> Vec<u8> {
    let topics = ["science", "finance", "sports", "music", "travel"];
    let mut s = String::from(r#"{"GUser":{"id":"u87734","major":"med","hobby":"hiking","age":65},"_multi":["#);
    for i in 0..actions {
        if i > 0 {
            s.push(',');
        }
        let topic = topics[i % topics.len()];
        s += &format!(r#"{{"TAction":{{"a_id":"a{i}","topic":"{topic}","len":{}}}}}"#, 40 + (i * 37) % 60);
    }
    s.push_str("]}");
    s.into_bytes()
}

/// Context validation, run on every event in default mode. Filter with
/// `-- '^json/'`: a bare `json` also matches `dsjson`.
fn json(c: &mut Criterion) {
    let mut g = c.benchmark_group("json");
    for (name, text) in [("validate 300 B context", context(4)), ("validate 4 KB context", context(70))] {
        assert!(fb_join::json::validate(&text).is_ok());
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_function(format!("{name} ({} bytes)", text.len()), |b| {
            b.iter(|| fb_join::json::validate(black_box(&text)))
        });
        // The same context again and again: every action is remembered.
        let mut remembering = fb_join::json::Validator::new();
        g.bench_function(format!("{name}, actions remembered ({} bytes)", text.len()), |b| {
            b.iter(|| remembering.validate(black_box(&text)))
        });
    }
    g.finish();
}

criterion_group!(benches, framing, decoding, rewards, writing, json);
criterion_main!(benches);
