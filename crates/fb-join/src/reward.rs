//! Reward functions over a decision's outcomes, in 32-bit floats and file
//! order like the reference.

use crate::Compat;
use crate::RewardFunction;

/// One reward signal: its value and when it happened.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Signal {
    /// The numeric value (0.0 for literal or absent values).
    pub value: f32,
    /// Time key for `Earliest`: (seconds since epoch-ish, subsecond).
    pub time: (i64, u32),
    /// Activations are not rewards: every function ignores them.
    pub activation: bool,
}

/// Computes `function` over `signals`, or `default` when none is a reward.
pub fn compute(function: RewardFunction, signals: &[Signal], default: f32, compat: Compat) -> f32 {
    let values = signals.iter().filter(|s| !s.activation);
    let Some(first) = values.clone().next() else {
        return default;
    };
    match function {
        RewardFunction::Earliest => {
            let key = |s: &Signal| match compat {
                // [quirk] the reference compares whole seconds only.
                Compat::Reference => (s.time.0, 0),
                Compat::Sane => s.time,
            };
            let mut best = first;
            for s in values {
                if key(s) < key(best) {
                    best = s;
                }
            }
            best.value
        }
        RewardFunction::Average => {
            let (sum, n) = values.fold((0f32, 0u32), |(sum, n), s| (sum + s.value, n + 1));
            sum / n as f32
        }
        RewardFunction::Median => {
            // Decisions have a few outcomes: those sort on the stack, so
            // that a median costs no allocation.
            let mut small = [0f32; 16];
            let mut large = Vec::new();
            let count = values.clone().count();
            let sorted: &mut [f32] = match small.get_mut(..count) {
                Some(room) => {
                    for (slot, s) in room.iter_mut().zip(values) {
                        *slot = s.value;
                    }
                    room
                }
                None => {
                    large.extend(values.map(|s| s.value));
                    &mut large
                }
            };
            sorted.sort_by(f32::total_cmp);
            let mid = sorted.len() / 2;
            match (
                sorted.len() % 2,
                sorted.get(mid),
                mid.checked_sub(1).and_then(|i| sorted.get(i)),
            ) {
                (1, Some(m), _) => *m,
                (_, Some(hi), Some(lo)) => (lo + hi) / 2.0,
                _ => default,
            }
        }
        RewardFunction::Sum => values.fold(0f32, |sum, s| sum + s.value),
        RewardFunction::Min => {
            values.fold(f32::INFINITY, |m, s| if s.value < m { s.value } else { m })
        }
        RewardFunction::Max => match compat {
            // [quirk] the reference starts from the smallest positive normal
            // float, so values at or below it never win and an all-negative
            // list yields the default reward.
            Compat::Reference => {
                let mut best = f32::MIN_POSITIVE;
                let mut found = false;
                for s in values {
                    if s.value > best {
                        best = s.value;
                        found = true;
                    }
                }
                if found {
                    best
                } else {
                    default
                }
            }
            Compat::Sane => values.fold(
                f32::NEG_INFINITY,
                |m, s| if s.value > m { s.value } else { m },
            ),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sig(value: f32, second: i64) -> Signal {
        Signal {
            value,
            time: (second, 0),
            activation: false,
        }
    }

    fn act(second: i64) -> Signal {
        Signal {
            value: 9.0,
            time: (second, 0),
            activation: true,
        }
    }

    #[test]
    fn table() {
        use RewardFunction::*;
        let cases: &[(&str, RewardFunction, Vec<Signal>, Compat, f32)] = &[
            ("empty gives default", Sum, vec![], Compat::Sane, -7.0),
            (
                "only activations give default",
                Average,
                vec![act(1), act(2)],
                Compat::Sane,
                -7.0,
            ),
            (
                "earliest picks smallest time",
                Earliest,
                vec![sig(1.0, 5), sig(2.0, 3), sig(3.0, 4)],
                Compat::Sane,
                2.0,
            ),
            (
                "earliest tie keeps first",
                Earliest,
                vec![sig(1.0, 5), sig(2.0, 5)],
                Compat::Sane,
                1.0,
            ),
            (
                "earliest ignores activation",
                Earliest,
                vec![act(0), sig(4.0, 2)],
                Compat::Sane,
                4.0,
            ),
            (
                "average",
                Average,
                vec![sig(1.0, 0), sig(2.0, 0), sig(4.0, 0)],
                Compat::Sane,
                7.0 / 3.0,
            ),
            (
                "median odd",
                Median,
                vec![sig(3.0, 0), sig(1.0, 0), sig(2.0, 0)],
                Compat::Sane,
                2.0,
            ),
            (
                "median even",
                Median,
                vec![sig(4.0, 0), sig(1.0, 0), sig(3.0, 0), sig(2.0, 0)],
                Compat::Sane,
                2.5,
            ),
            (
                "sum",
                Sum,
                vec![sig(1.5, 0), sig(2.5, 0)],
                Compat::Sane,
                4.0,
            ),
            (
                "min",
                Min,
                vec![sig(1.5, 0), sig(-2.5, 0)],
                Compat::Sane,
                -2.5,
            ),
            (
                "max",
                Max,
                vec![sig(1.5, 0), sig(2.5, 0)],
                Compat::Sane,
                2.5,
            ),
            (
                "max of negatives (sane)",
                Max,
                vec![sig(-1.5, 0), sig(-2.5, 0)],
                Compat::Sane,
                -1.5,
            ),
            (
                "max of negatives (reference)",
                Max,
                vec![sig(-1.5, 0), sig(-2.5, 0)],
                Compat::Reference,
                -7.0,
            ),
            (
                "max with zero (reference)",
                Max,
                vec![sig(0.0, 0)],
                Compat::Reference,
                -7.0,
            ),
            (
                "max mixed (reference)",
                Max,
                vec![sig(-1.0, 0), sig(0.5, 0)],
                Compat::Reference,
                0.5,
            ),
        ];
        for (name, f, signals, compat, expected) in cases {
            let got = compute(*f, signals, -7.0, *compat);
            assert_eq!(
                got.to_bits(),
                expected.to_bits(),
                "{name}: got {got}, expected {expected}"
            );
        }
    }

    #[test]
    fn earliest_subseconds_differ_between_modes() {
        let a = Signal {
            value: 1.0,
            time: (10, 900),
            activation: false,
        };
        let b = Signal {
            value: 2.0,
            time: (10, 100),
            activation: false,
        };
        assert_eq!(
            compute(RewardFunction::Earliest, &[a, b], 0.0, Compat::Sane),
            2.0
        );
        assert_eq!(
            compute(RewardFunction::Earliest, &[a, b], 0.0, Compat::Reference),
            1.0
        );
    }

    #[test]
    fn arithmetic_is_f32_in_file_order() {
        // 1e8 + 1 + ... in f32 loses the ones; f64 would not.
        let mut signals = vec![sig(1e8, 0)];
        signals.extend((0..10).map(|_| sig(1.0, 0)));
        assert_eq!(
            compute(RewardFunction::Sum, &signals, 0.0, Compat::Sane),
            1e8
        );
    }

    #[test]
    fn medians_of_few_and_many_outcomes() {
        // Up to 16 rewards sort on the stack, more on the heap; activations
        // never count.
        for count in [1usize, 2, 15, 16, 17, 40] {
            let mut signals: Vec<Signal> = (0..count)
                .map(|i| sig(((i * 7919) % 101) as f32, 0))
                .collect();
            signals.insert(count / 2, act(0));
            let mut values: Vec<f32> = signals
                .iter()
                .filter(|s| !s.activation)
                .map(|s| s.value)
                .collect();
            values.sort_by(f32::total_cmp);
            let mid = values.len() / 2;
            let expected = if values.len() % 2 == 1 {
                values[mid]
            } else {
                (values[mid - 1] + values[mid]) / 2.0
            };
            assert_eq!(
                compute(RewardFunction::Median, &signals, -9.0, Compat::Sane),
                expected,
                "{count} rewards"
            );
        }
    }
}
