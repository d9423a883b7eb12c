//! SplitMix64, the seeded generator of every tool that draws at random
//! (the synthetic log generator, `fb sample`): a seed gives the same
//! numbers on every machine, so the same arguments give the same output.
//!
//! Not for cryptography, nor for anything an adversary may predict.
//!
//! ```
//! use fb_format::splitmix::SplitMix64;
//!
//! let mut rng = SplitMix64::new(7);
//! let roll = rng.below(6);
//! assert!(roll < 6);
//! assert_eq!(SplitMix64::new(7).below(6), roll);
//! ```

/// SplitMix64: 64 bits of state, advanced by a constant and mixed on the
/// way out.
#[derive(Debug, Clone)]
pub struct SplitMix64(u64);

impl SplitMix64 {
    /// A generator started from `seed` (any value, zero included).
    pub const fn new(seed: u64) -> Self {
        Self(seed)
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.0)
    }

    /// A number in `0..n`, every one equally likely (0 when `n` is 0):
    /// Lemire's multiply and reject, which draws again in fewer than one
    /// call in 2^32 for any `n` below 2^32.
    pub fn below(&mut self, n: u64) -> u64 {
        // Draws whose low half is under 2^64 mod n would make the low
        // results more likely: they are drawn again.
        let Some(threshold) = n.wrapping_neg().checked_rem(n) else {
            return 0;
        };
        loop {
            let m = u128::from(self.next_u64()) * u128::from(n);
            if (m as u64) >= threshold {
                return (m >> 64) as u64;
            }
        }
    }

    /// A number in `0..n` from exactly one draw (0 when `n` is 0):
    /// multiply and shift, with a bias below `n / 2^64`. For callers whose
    /// sequence of draws must not depend on the values drawn, such as the
    /// synthetic generator, whose logs must stay the same bytes for a seed.
    pub fn below_one_draw(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
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

/// SplitMix64's output function: a stable 64-bit hash of `x`, every input
/// bit reaching every output bit.
pub fn mix64(x: u64) -> u64 {
    let mut z = x;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sequence_is_the_reference_one() {
        // First outputs for seed 1234567 of the reference C implementation.
        let mut rng = SplitMix64::new(1_234_567);
        assert_eq!(rng.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(rng.next_u64(), 3_203_168_211_198_807_973);
    }

    #[test]
    fn draws_stay_in_range() {
        let mut rng = SplitMix64::new(7);
        for n in [1u64, 2, 3, 10, 1000, u64::MAX / 3 * 2, u64::MAX] {
            for _ in 0..1000 {
                assert!(rng.below(n) < n, "below({n})");
                assert!(rng.below_one_draw(n) < n, "below_one_draw({n})");
            }
        }
        assert_eq!(rng.below(0), 0);
        assert_eq!(rng.below_one_draw(0), 0);
        for _ in 0..1000 {
            let u = rng.unit();
            assert!((0.0..1.0).contains(&u));
            let f = rng.unit_f32();
            assert!((0.0..1.0).contains(&f));
        }
    }

    /// `below_one_draw` takes one number per call whatever it gives, so a
    /// generator's later draws do not depend on earlier values; `below`
    /// draws again where a draw would bias it, and so may take more.
    #[test]
    fn below_one_draw_takes_one_number_and_below_rejects_biased_draws() {
        let mut one = SplitMix64::new(11);
        let mut plain = SplitMix64::new(11);
        for n in [0u64, 1, 5, u64::MAX / 3 * 2] {
            one.below_one_draw(n);
            plain.next_u64();
        }
        assert_eq!(one.next_u64(), plain.next_u64());

        // For n = 2^63 + 1, 2^64 mod n is 2^63 - 1: about half of all draws
        // are rejected, so 1000 calls take well over 1000 draws.
        let n = (1u64 << 63) + 1;
        let mut rng = SplitMix64::new(11);
        let mut count = SplitMix64::new(11);
        let mut draws = 0u64;
        for _ in 0..1000 {
            let got = rng.below(n);
            // The same value from counting draws by hand.
            loop {
                draws += 1;
                let m = u128::from(count.next_u64()) * u128::from(n);
                if (m as u64) >= n.wrapping_neg() % n {
                    assert_eq!((m >> 64) as u64, got);
                    break;
                }
            }
        }
        assert!((1500..2500).contains(&draws), "{draws} draws");
    }

    /// Each of a few outcomes comes about as often as the others.
    #[test]
    fn below_is_uniform_over_small_ranges() {
        let mut rng = SplitMix64::new(3);
        for n in [2u64, 3, 6, 10] {
            let mut counts = vec![0u32; n as usize];
            for _ in 0..60_000 {
                counts[rng.below(n) as usize] += 1;
            }
            let expected = 60_000 / n as u32;
            for (value, &count) in counts.iter().enumerate() {
                assert!(
                    count.abs_diff(expected) < expected / 10,
                    "n {n}: {value} came {count} times, expected about {expected}"
                );
            }
        }
    }
}
