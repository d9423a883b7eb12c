//! Batches joined from their pieces on threads of their own, ahead of the
//! one that consumes them.
//!
//! On several threads a batch arrives in the pieces the workers cut it in
//! ([`Pieces`]); a consumer that needs whole batches (an Arrow C stream:
//! pyarrow, Polars, DuckDB) copies them into one. That copy is a good part
//! of the joining's own work, and done on the consumer's thread it made
//! that thread the slowest of a read on many cores (bench/NOTES.md). [`join_ahead`] moves it to
//! lanes of their own: the sender hands items to the lanes in turn, the
//! receiver takes them back in the same turn, so they come out in the
//! order they went in, whatever lane is faster. With no lanes the
//! receiver joins each batch itself, as a consumer did before.

use std::sync::mpsc::{sync_channel, Receiver, RecvTimeoutError, SendError, SyncSender};
use std::time::Duration;

use arrow_array::RecordBatch;

use crate::error::Error;
use crate::even::Pieces;

/// What goes through the lanes.
enum Item<T> {
    /// A batch still in pieces.
    Pieces(Pieces),
    /// A batch joined by a lane.
    Joined(Result<RecordBatch, Error>),
    /// Anything else the consumer is told, in its place among the batches.
    Other(T),
}

/// What the receiver hands out, in the order it was sent.
pub enum Handed<T> {
    /// A whole batch, or why its pieces could not be joined.
    Batch(Result<RecordBatch, Error>),
    /// An item sent with [`AheadSender::send_other`].
    Other(T),
}

/// The sending end: batches in pieces, and other items between them.
pub struct AheadSender<T> {
    lanes: Vec<SyncSender<Item<T>>>,
    next: usize,
    /// Lane threads (0: the one channel goes to the receiver).
    joining: usize,
}

/// The receiving end, on the consumer's thread.
pub struct AheadReceiver<T> {
    lanes: Vec<Receiver<Item<T>>>,
    next: usize,
}

/// Most lanes worth starting: two keep up with a pipeline's reading
/// thread, which bounds the rest of a read (bench/NOTES.md).
pub const MAX_JOIN_LANES: usize = 2;

/// Lanes for a pipeline of `threads` joining threads on a machine of
/// `cores` cores. On one thread a batch comes whole and its join costs
/// nothing. On fewer than four cores there is no core for a lane: the
/// copy would only move between threads that take turns on the same
/// cores.
pub fn join_lanes_for(threads: usize, cores: usize) -> usize {
    match (threads, cores) {
        (0 | 1, _) | (_, 0..=3) => 0,
        (n, _) => (n - 1).min(MAX_JOIN_LANES),
    }
}

/// Starts `lanes` threads that join batches' pieces, or none (each batch
/// is then joined by [`AheadReceiver::recv_timeout`] on the consumer's
/// thread, with up to `depth` items waiting). A lane holds the item it
/// joins and one joined: two lanes hold as many batches as a `depth` of
/// four. Where the system gives fewer threads than asked, fewer lanes
/// join; with none, the receiver does.
pub fn join_ahead<T: Send + 'static>(
    lanes: usize,
    depth: usize,
) -> (AheadSender<T>, AheadReceiver<T>) {
    let mut ins = Vec::new();
    let mut outs = Vec::new();
    for lane in 0..lanes {
        // Handed over, not queued: the sender waits for a lane that
        // is still joining its last batch.
        let (to_lane, lane_in) = sync_channel::<Item<T>>(0);
        let (lane_out, from_lane) = sync_channel::<Item<T>>(1);
        let spawned = std::thread::Builder::new()
            .name(format!("fb-arrow-join-{lane}"))
            .spawn(move || {
                // Ends when the sender is dropped, or the receiver is (a
                // consumer that stopped early): its send fails, and this
                // lane's end of the sender's channel goes with it.
                for item in lane_in {
                    let item = match item {
                        Item::Pieces(pieces) => Item::Joined(pieces.join()),
                        other => other,
                    };
                    if lane_out.send(item).is_err() {
                        break;
                    }
                }
            });
        if spawned.is_err() {
            break;
        }
        ins.push(to_lane);
        outs.push(from_lane);
    }
    let joining = ins.len();
    if ins.is_empty() {
        let (tx, rx) = sync_channel(depth);
        (ins, outs) = (vec![tx], vec![rx]);
    }
    (
        AheadSender {
            lanes: ins,
            next: 0,
            joining,
        },
        AheadReceiver {
            lanes: outs,
            next: 0,
        },
    )
}

/// The receiver is gone (or a lane ended): nothing sent arrives.
#[derive(Debug)]
pub struct Closed;

impl<T> AheadSender<T> {
    fn send(&mut self, item: Item<T>) -> Result<(), Closed> {
        let lane = self.lanes.get(self.next).ok_or(Closed)?;
        lane.send(item).map_err(|SendError(_)| Closed)?;
        self.next = (self.next + 1) % self.lanes.len();
        Ok(())
    }

    /// Sends a batch's pieces, to be joined on a lane (or by the
    /// receiver); waits while every place in its lane is taken.
    pub fn send_pieces(&mut self, pieces: Pieces) -> Result<(), Closed> {
        self.send(Item::Pieces(pieces))
    }

    /// Sends `other` after the batches sent before it.
    pub fn send_other(&mut self, other: T) -> Result<(), Closed> {
        self.send(Item::Other(other))
    }

    /// How many lanes join the pieces (none: the receiver does).
    pub fn lanes(&self) -> usize {
        self.joining
    }
}

impl<T> AheadReceiver<T> {
    /// The next item in the order sent, waiting at most `wait` for it.
    /// `Disconnected` when the sender is gone and everything it sent was
    /// taken (or a lane ended before its items were).
    pub fn recv_timeout(&mut self, wait: Duration) -> Result<Handed<T>, RecvTimeoutError> {
        let lane = self
            .lanes
            .get(self.next)
            .ok_or(RecvTimeoutError::Disconnected)?;
        let item = lane.recv_timeout(wait)?;
        self.next = (self.next + 1) % self.lanes.len();
        Ok(match item {
            Item::Pieces(pieces) => Handed::Batch(pieces.join()),
            Item::Joined(joined) => Handed::Batch(joined),
            Item::Other(other) => Handed::Other(other),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::even::numbered_rows as batch;

    const WAIT: Duration = Duration::from_secs(10);

    /// A batch of `sizes` rows in pieces, numbered from `from`.
    fn pieces(from: i64, sizes: &[i64]) -> Pieces {
        let mut at = from;
        Pieces::whole(
            sizes
                .iter()
                .map(|&n| {
                    at += n;
                    batch(at - n, n)
                })
                .collect(),
        )
    }

    enum Sent {
        Batch(&'static [i64]),
        Note(u32),
        Unjoinable,
    }

    /// Whatever the lanes, the receiver gets every item in the order sent,
    /// each batch joined as `Pieces::join` joins it, errors included.
    #[test]
    fn items_come_out_in_the_order_sent() {
        let sent: &[(&str, &[Sent])] = &[
            ("nothing", &[]),
            ("one batch", &[Sent::Batch(&[5])]),
            (
                "batches and notes",
                &[
                    Sent::Batch(&[3, 1, 4]),
                    Sent::Note(1),
                    Sent::Batch(&[1]),
                    Sent::Batch(&[5, 9, 2, 6]),
                    Sent::Batch(&[5, 3]),
                    Sent::Note(2),
                ],
            ),
            ("notes only", &[Sent::Note(7), Sent::Note(8), Sent::Note(9)]),
            (
                "a batch that cannot be joined",
                &[
                    Sent::Batch(&[2]),
                    Sent::Unjoinable,
                    Sent::Batch(&[1, 1]),
                    Sent::Note(3),
                ],
            ),
        ];
        for (name, items) in sent {
            for lanes in [0, 1, 2, 3] {
                let (mut tx, mut rx) = join_ahead::<u32>(lanes, 4);
                assert_eq!(tx.lanes(), lanes, "{name}, {lanes} lanes");
                let producer = std::thread::spawn({
                    let plan: Vec<(Option<Vec<i64>>, Option<u32>)> = items
                        .iter()
                        .map(|s| match s {
                            Sent::Batch(sizes) => (Some(sizes.to_vec()), None),
                            Sent::Note(n) => (None, Some(*n)),
                            Sent::Unjoinable => (Some(Vec::new()), None),
                        })
                        .collect();
                    move || {
                        let mut from = 0;
                        for (sizes, note) in plan {
                            match (sizes, note) {
                                (Some(sizes), _) => {
                                    tx.send_pieces(pieces(from, &sizes)).unwrap();
                                    from += sizes.iter().sum::<i64>();
                                }
                                (None, Some(n)) => tx.send_other(n).unwrap(),
                                (None, None) => unreachable!(),
                            }
                        }
                    }
                });
                let mut from = 0;
                for (i, item) in items.iter().enumerate() {
                    let got = rx.recv_timeout(WAIT);
                    let what = format!("{name}, {lanes} lanes, item {i}");
                    match (item, got) {
                        (Sent::Batch(sizes), Ok(Handed::Batch(Ok(b)))) => {
                            let n: i64 = sizes.iter().sum();
                            assert_eq!(b, batch(from, n), "{what}");
                            from += n;
                        }
                        (Sent::Note(n), Ok(Handed::Other(m))) => assert_eq!(*n, m, "{what}"),
                        (Sent::Unjoinable, Ok(Handed::Batch(Err(e)))) => {
                            assert!(e.to_string().contains("no rows"), "{what}: {e}")
                        }
                        _ => panic!("{what}: not what was sent"),
                    }
                }
                producer.join().unwrap();
                assert!(
                    matches!(rx.recv_timeout(WAIT), Err(RecvTimeoutError::Disconnected)),
                    "{name}, {lanes} lanes: the end"
                );
            }
        }
    }

    /// A consumer that stops early stops the sender: its sends fail once
    /// the lanes' places are full, rather than wait for ever.
    #[test]
    fn a_dropped_receiver_makes_sends_fail() {
        for lanes in [0, 1, 3] {
            let (mut tx, rx) = join_ahead::<u32>(lanes, 2);
            drop(rx);
            let sent = (0..20)
                .take_while(|i| tx.send_pieces(pieces(*i, &[1, 1])).is_ok())
                .count();
            assert!(
                sent < 20,
                "{lanes} lanes: {sent} sends after the receiver went"
            );
            assert!(
                tx.send_other(0).is_err(),
                "{lanes} lanes: once failed, stays failed"
            );
        }
    }
    /// Lanes are started where a batch comes in pieces and the machine
    /// has cores to spare, two at most.
    #[test]
    fn lanes_by_threads_and_cores() {
        let cases = [
            ("one thread, many cores", 1, 16, 0),
            ("two threads, two cores", 2, 2, 0),
            ("sixteen threads, three cores", 16, 3, 0),
            ("two threads, four cores", 2, 4, 1),
            ("three threads, sixteen cores", 3, 16, 2),
            ("sixteen threads, sixteen cores", 16, 16, 2),
            ("no threads", 0, 16, 0),
        ];
        for (name, threads, cores, want) in cases {
            assert_eq!(join_lanes_for(threads, cores), want, "{name}");
        }
    }
}
