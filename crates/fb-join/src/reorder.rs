//! Results that come back from worker threads in any order, handed on in
//! the order their work was given out: the ordered pool's
//! ([`crate::ordered`]) results half, through which the parallel
//! pipeline's batches, compressed output's pieces and `fb validate`'s
//! inputs pass.

use std::collections::BTreeMap;

/// Holds results by the sequence number of their work, and gives them
/// back from 0 on, each once its turn comes.
#[derive(Debug)]
pub struct Reorder<T> {
    next: u64,
    waiting: BTreeMap<u64, T>,
}

impl<T> Default for Reorder<T> {
    fn default() -> Self {
        Self {
            next: 0,
            waiting: BTreeMap::new(),
        }
    }
}

impl<T> Reorder<T> {
    /// Takes the result of work number `seq`.
    pub fn put(&mut self, seq: u64, result: T) {
        self.waiting.insert(seq, result);
    }

    /// The next result in order, once it is there.
    pub fn pop(&mut self) -> Option<T> {
        let result = self.waiting.remove(&self.next)?;
        self.next += 1;
        Some(result)
    }

    /// Whether no result is waiting for its turn.
    pub fn is_empty(&self) -> bool {
        self.waiting.is_empty()
    }

    /// The sequence number of the next result to hand on: every result
    /// before it was handed on.
    pub fn next(&self) -> u64 {
        self.next
    }
}

#[cfg(test)]
mod tests {
    use super::Reorder;

    #[test]
    fn results_come_out_in_the_order_of_their_work() {
        // (case, the order results come back in)
        for (case, order) in [
            ("in order", vec![0, 1, 2, 3]),
            ("reversed", vec![3, 2, 1, 0]),
            ("shuffled", vec![2, 0, 3, 1]),
        ] {
            let mut r = Reorder::default();
            let mut out = Vec::new();
            for seq in order {
                r.put(seq, seq * 10);
                while let Some(v) = r.pop() {
                    out.push(v);
                }
            }
            assert_eq!(out, [0, 10, 20, 30], "{case}");
            assert_eq!(r.next(), 4, "{case}");
        }
    }
}
