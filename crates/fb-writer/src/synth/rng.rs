//! A small deterministic PRNG (splitmix64) and time helpers.

use fb_schema::calendar::{civil_from_days, days_from_civil};
use fb_schema::TimeStamp;

/// splitmix64: 64 bits of state, fast, and the same sequence everywhere.
///
/// Not for cryptography; here only so that a seed always gives the same
/// log.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator started from `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// A number in `0..n` (0 when `n` is 0). Multiply-shift, bias below
    /// 2^-32 for the small `n` used here.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// An index in `0..n` (0 when `n` is 0).
    pub fn index(&mut self, n: usize) -> usize {
        // below(n) < n, which fits usize.
        self.below(n as u64) as usize
    }

    /// A float in `[0, 1)` with 53 random bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A float in `[0, 1)` with 24 random bits.
    pub fn unit_f32(&mut self) -> f32 {
        (self.next_u64() >> 40) as f32 * (1.0 / (1u32 << 24) as f32)
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.unit() < p
    }
}

/// The splitmix64 finalizer: a stable 64-bit hash of `x`.
pub fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// 100-nanosecond ticks per second (the unit of `TimeStamp.subsecond`).
pub const TICKS_PER_SECOND: u64 = 10_000_000;

/// The UTC `TimeStamp` of a time given in 100 ns ticks since 1970-01-01.
pub fn timestamp_from_ticks(ticks: u64) -> TimeStamp {
    let secs = ticks / TICKS_PER_SECOND;
    let subsecond = (ticks % TICKS_PER_SECOND) as u32;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(i64::try_from(days).unwrap_or(i64::MAX / 2));
    TimeStamp::new(
        u16::try_from(year).unwrap_or(u16::MAX),
        month as u8,
        day as u8,
        (rem / 3600) as u8,
        (rem % 3600 / 60) as u8,
        (rem % 60) as u8,
        subsecond,
    )
}

/// Ticks since 1970-01-01 of a UTC date and time (from 1970 on: earlier
/// dates give 0).
pub fn ticks_from_civil(year: u16, month: u8, day: u8, hour: u8, minute: u8, second: u8) -> u64 {
    let days = days_from_civil(i64::from(year), u32::from(month), u32::from(day));
    let days = u64::try_from(days).unwrap_or(0);
    let secs = days * 86_400 + u64::from(hour) * 3600 + u64::from(minute) * 60 + u64::from(second);
    secs * TICKS_PER_SECOND
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // First outputs for seed 1234567 of the reference C implementation.
        let mut rng = Rng::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn civil_round_trip() {
        for (y, mo, d, h, mi, s) in [
            (1970, 1, 1, 0, 0, 0),
            (2000, 2, 29, 23, 59, 59),
            (2024, 1, 1, 0, 0, 0),
            (2024, 12, 31, 12, 30, 1),
            (2100, 3, 1, 1, 2, 3),
        ] {
            let ticks = ticks_from_civil(y, mo, d, h, mi, s) + 1234;
            let ts = timestamp_from_ticks(ticks);
            assert_eq!(
                (
                    ts.year(),
                    ts.month(),
                    ts.day(),
                    ts.hour(),
                    ts.minute(),
                    ts.second(),
                    ts.subsecond()
                ),
                (y, mo, d, h, mi, s, 1234)
            );
        }
        assert_eq!(
            ticks_from_civil(2024, 1, 1, 0, 0, 0),
            1_704_067_200 * TICKS_PER_SECOND
        );
    }

    #[test]
    fn below_and_units_stay_in_range() {
        let mut rng = Rng::new(7);
        for n in [1u64, 2, 3, 10, 1000] {
            for _ in 0..1000 {
                assert!(rng.below(n) < n);
            }
        }
        assert_eq!(rng.below(0), 0);
        for _ in 0..1000 {
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
            let f = rng.unit_f32();
            assert!((0.0..1.0).contains(&f));
        }
    }
}
