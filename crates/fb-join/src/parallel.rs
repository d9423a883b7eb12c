//! Parallel conversion: framing in order, REGULAR messages joined and
//! serialized by workers, output written in the original order.
//!
//! The ordered state — the checkpoint configuration and the dedup cache —
//! is followed by the reading thread ([`Joiner::track`]), which hands each
//! batch of messages to a worker together with a snapshot of that state.
//! A worker's joiner starts every batch from its snapshot, so each message
//! is joined exactly as the serial joiner would join it, and the output is
//! byte-identical whatever the number of threads.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::{Arc, Mutex};

use fb_format::{Framer, Message, MessageKind, StreamReader};

use crate::config::LoopConfig;
use crate::dedup::DedupCache;
use crate::diag::Diagnostics;
use crate::dsjson::{self, Lines};
use crate::event::JoinedEvent;
use crate::joiner::Joiner;
use crate::metrics::Metrics;
use crate::{Error, Options, Summary};

/// Payload bytes gathered into one batch before it goes to a worker.
const BATCH_BYTES: usize = 1 << 20;

/// Where a REGULAR message is, and its payload's place in the batch's
/// bytes.
struct Slot {
    offset: u64,
    index: u64,
    size_field: u32,
    len: usize,
    payload: std::ops::Range<usize>,
}

/// Messages copied out of the reader's buffer: their payloads back to
/// back in `data`, one allocation per batch (and reused: see [`Pools`]).
#[derive(Default)]
struct Messages {
    data: Vec<u8>,
    slots: Vec<Slot>,
}

struct Batch {
    seq: u64,
    config: LoopConfig,
    dedup: DedupCache,
    messages: Messages,
}

/// Buffers that go round instead of being allocated per batch: the
/// batches' message bytes (reader → worker → back) and the output lines
/// (worker → writer → back). Fresh megabyte buffers cost page faults.
#[derive(Default)]
struct Pools {
    messages: Mutex<Vec<Messages>>,
    lines: Mutex<Vec<Lines>>,
}

impl Pools {
    fn take<T: Default>(pool: &Mutex<Vec<T>>) -> T {
        pool.lock()
            .ok()
            .and_then(|mut p| p.pop())
            .unwrap_or_default()
    }

    fn give<T>(pool: &Mutex<Vec<T>>, item: T) {
        if let Ok(mut p) = pool.lock() {
            // A few per thread is all that is ever in flight.
            if p.len() < 16 {
                p.push(item);
            }
        }
    }
}

struct Done {
    seq: u64,
    lines: Lines,
    events: u64,
    written: u64,
    diags: Diagnostics,
    metrics: Metrics,
}

/// Joins `input` with `threads` workers and writes the DSJSON of the events
/// `keep` accepts to `output`, byte-identical to the serial conversion.
/// `joiner` carries the state in and out, so several inputs make one
/// stream; `progress` is called with the bytes read and events joined so
/// far as the work goes on.
pub fn convert_parallel<R, W, K, P>(
    joiner: &mut Joiner,
    input: R,
    output: &mut W,
    threads: usize,
    keep: K,
    mut progress: P,
) -> Result<Summary, Error>
where
    R: Read + Send,
    W: Write,
    K: Fn(&JoinedEvent) -> bool + Sync,
    P: FnMut(u64, u64),
{
    let threads = threads.max(1);
    let opts: Options = joiner.options().clone();
    let limit = u32::try_from(opts.max_payload).unwrap_or(u32::MAX);
    let (batch_tx, batch_rx) = mpsc::sync_channel::<Batch>(threads * 2);
    let batch_rx = Arc::new(Mutex::new(batch_rx));
    let (done_tx, done_rx) = mpsc::channel::<Done>();
    let keep = &keep;
    let read_pos = AtomicU64::new(0);
    let read_pos = &read_pos;
    let pools = Pools::default();
    let pools = &pools;
    // What the workers report is merged here in order as batches are
    // written, so that memory does not grow with the number of batches.
    // Metrics continue from the joiner's own (several inputs make one
    // stream), adding up in the same order as a serial run.
    let mut merged = (
        Diagnostics::with_limit(opts.diagnostics_limit),
        joiner.metrics().clone(),
    );

    std::thread::scope(|scope| {
        for _ in 0..threads {
            let rx = Arc::clone(&batch_rx);
            let tx = done_tx.clone();
            let opts = opts.clone();
            scope.spawn(move || worker(&rx, &tx, opts, keep, pools));
        }
        drop(done_tx);
        let reader =
            scope.spawn(move || read_batches(joiner, input, limit, &batch_tx, read_pos, pools));
        let written = write_in_order(&done_rx, output, pools, &mut merged, &mut |events| {
            progress(read_pos.load(Ordering::Relaxed), events)
        });
        let (joiner, messages, framing_error, bytes_read) = match reader.join() {
            Ok(r) => r,
            Err(panic) => std::panic::resume_unwind(panic),
        };
        let (written, lines, events) = written?;
        let (diags, metrics) = merged;
        joiner.absorb_in_order(&diags, metrics);
        progress(bytes_read, events);
        Ok(Summary {
            metrics: joiner.metrics().clone(),
            diagnostics: joiner.diagnostics().clone(),
            messages,
            bytes_written: written,
            lines,
            framing_error,
        })
    })
}

type ReadResult<'j> = (&'j mut Joiner, u64, Option<String>, u64);

fn read_batches<'j, R: Read>(
    joiner: &'j mut Joiner,
    input: R,
    limit: u32,
    tx: &SyncSender<Batch>,
    read_pos: &AtomicU64,
    pools: &Pools,
) -> ReadResult<'j> {
    let mut reader = StreamReader::with_framer(input, Framer::with_max_payload(limit));
    let mut seq = 0;
    let mut messages = 0;
    let mut framing_error = None;
    let mut batch: Messages = Pools::take(&pools.messages);
    let (mut config, mut dedup) = joiner.state();
    let mut send = |batch: &mut Messages, config: LoopConfig, dedup: DedupCache| {
        if batch.slots.is_empty() {
            return true;
        }
        let b = Batch {
            seq,
            config,
            dedup,
            messages: std::mem::replace(batch, Pools::take(&pools.messages)),
        };
        seq += 1;
        tx.send(b).is_ok()
    };
    loop {
        let msg = match reader.next_message() {
            Ok(Some(msg)) => msg,
            Ok(None) => break,
            Err(err) => {
                joiner.record_framing_error(&err);
                framing_error = Some(err.to_string());
                break;
            }
        };
        messages += 1;
        read_pos.store(msg.offset + msg.len as u64, Ordering::Relaxed);
        if msg.kind != MessageKind::Regular {
            // Workers see only REGULAR messages: what comes between them
            // (a checkpoint above all) closes the batch, and the next batch
            // starts from the state after it.
            if !send(&mut batch, config, dedup.clone()) {
                break;
            }
            joiner.track(&msg);
            continue;
        }
        if batch.slots.is_empty() {
            // The state this batch starts from; the worker's joiner follows
            // the dedup events inside the batch itself.
            (config, dedup) = joiner.state();
        }
        let start = batch.data.len();
        batch.data.extend_from_slice(msg.payload);
        batch.slots.push(Slot {
            offset: msg.offset,
            index: msg.index,
            size_field: msg.size_field,
            len: msg.len,
            payload: start..batch.data.len(),
        });
        joiner.track(&msg);
        if batch.data.len() >= BATCH_BYTES && !send(&mut batch, config, dedup.clone()) {
            break;
        }
    }
    send(&mut batch, config, dedup);
    (joiner, messages, framing_error, reader.offset())
}

fn worker<K>(
    rx: &Mutex<Receiver<Batch>>,
    tx: &mpsc::Sender<Done>,
    opts: Options,
    keep: &K,
    pools: &Pools,
) where
    K: Fn(&JoinedEvent) -> bool + Sync,
{
    let compat = opts.compat;
    let mut joiner = Joiner::new(opts);
    let mut writer = dsjson::Writer::new(compat);
    loop {
        let batch = match rx.lock() {
            Ok(guard) => match guard.recv() {
                Ok(b) => b,
                Err(_) => return,
            },
            Err(_) => return,
        };
        joiner.set_state(batch.config, batch.dedup);
        let mut lines: Lines = Pools::take(&pools.lines);
        lines.clear();
        let (mut events, mut written) = (0, 0);
        let mut messages = batch.messages;
        for m in &messages.slots {
            let msg = Message {
                kind: MessageKind::Regular,
                offset: m.offset,
                index: m.index,
                size_field: m.size_field,
                payload: messages.data.get(m.payload.clone()).unwrap_or_default(),
                len: m.len,
            };
            joiner.push_each(&msg, |ev| {
                events += 1;
                if keep(ev) {
                    writer.write_into(ev, &mut lines);
                    written += 1;
                }
            });
        }
        messages.data.clear();
        messages.slots.clear();
        Pools::give(&pools.messages, messages);
        let (diags, metrics) = joiner.take_report();
        if tx
            .send(Done {
                seq: batch.seq,
                lines,
                events,
                written,
                diags,
                metrics,
            })
            .is_err()
        {
            return;
        }
    }
}

fn write_in_order<W: Write>(
    rx: &Receiver<Done>,
    output: &mut W,
    pools: &Pools,
    (diags, metrics): &mut (Diagnostics, Metrics),
    progress: &mut dyn FnMut(u64),
) -> Result<(u64, u64, u64), Error> {
    let mut next = 0;
    let mut waiting: BTreeMap<u64, Done> = BTreeMap::new();
    let (mut written, mut lines, mut events) = (0u64, 0u64, 0u64);
    let mut failure = None;
    for done in rx.iter() {
        waiting.insert(done.seq, done);
        while let Some(done) = waiting.remove(&next) {
            next += 1;
            if failure.is_none() {
                if let Err(source) = output.write_all(done.lines.as_bytes()) {
                    failure = Some(Error::Write { written, source });
                }
                written += done.lines.len() as u64;
            }
            events += done.events;
            lines += done.written;
            progress(events);
            diags.merge(&done.diags);
            metrics.merge(&done.metrics);
            Pools::give(&pools.lines, done.lines);
        }
    }
    if let Some(err) = failure {
        return Err(err);
    }
    output
        .flush()
        .map_err(|source| Error::Write { written, source })?;
    Ok((written, lines, events))
}
