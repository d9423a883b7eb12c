//! The special functions the intervals need: log-gamma, the regularized
//! incomplete beta function and its inverse, and from them the quantiles
//! of the Beta and F(1, n) distributions (what vw-estimators takes from
//! scipy: `beta.ppf` for Clopper-Pearson, `f.isf` for Cressie-Read).
//!
//! Accuracy: about 1e-14 relative on the quantiles the estimators ask
//! for with thousands of decisions; the error grows about as 1e-16 times
//! the number of decisions (the power factor `x^a (1 − x)^b` of a large
//! exponent, and a continued fraction that converges slowly there):
//! 1e-10 at a million decisions, 1e-8 at a billion. Log-gamma differences
//! use Stirling series so that they lose nothing to cancellation.

/// `0.5 ln(2π)`.
const HALF_LN_2PI: f64 = 0.918_938_533_204_672_8;

/// Stirling's correction `ln Γ(x) − ((x − ½) ln x − x + ½ ln 2π)`, for
/// x ≥ 10 (the first omitted term is below 1e-17 there).
fn stirling_tail(x: f64) -> f64 {
    let r = 1.0 / x;
    let r2 = r * r;
    r * (1.0 / 12.0
        + r2 * (-1.0 / 360.0
            + r2 * (1.0 / 1260.0
                + r2 * (-1.0 / 1680.0
                    + r2 * (1.0 / 1188.0 + r2 * (-691.0 / 360_360.0 + r2 * (1.0 / 156.0)))))))
}

/// `ln Γ(x)` for x > 0.
pub fn ln_gamma(x: f64) -> f64 {
    if x >= 10.0 {
        return (x - 0.5) * x.ln() - x + HALF_LN_2PI + stirling_tail(x);
    }
    // Γ(x) = Γ(x + k) / (x (x + 1) … (x + k − 1)), shifted up to ≥ 10.
    let mut prod = 1.0;
    let mut y = x;
    while y < 10.0 {
        prod *= y;
        y += 1.0;
    }
    ln_gamma(y) - prod.ln()
}

/// `ln Γ(a) − ln Γ(a + s)` for a ≥ 10, without the cancellation of the
/// two large logarithms.
fn ln_gamma_ratio(a: f64, s: f64) -> f64 {
    -(a - 0.5) * (s / a).ln_1p() - s * (a + s).ln() + s + stirling_tail(a) - stirling_tail(a + s)
}

/// `ln B(a, b)`.
pub fn ln_beta(a: f64, b: f64) -> f64 {
    let (small, big) = if a < b { (a, b) } else { (b, a) };
    if small >= 10.0 {
        let sum = a + b;
        return -(a - 0.5) * (b / a).ln_1p() - (b - 0.5) * (a / b).ln_1p() - 0.5 * sum.ln()
            + HALF_LN_2PI
            + stirling_tail(a)
            + stirling_tail(b)
            - stirling_tail(sum);
    }
    if big >= 10.0 {
        return ln_gamma(small) + ln_gamma_ratio(big, small);
    }
    ln_gamma(a) + ln_gamma(b) - ln_gamma(a + b)
}

/// `ln(x^a (1 − x)^b / B(a, b))`.
fn ln_front(a: f64, b: f64, x: f64) -> f64 {
    a * x.ln() + b * (-x).ln_1p() - ln_beta(a, b)
}

/// The continued fraction of the incomplete beta function (modified
/// Lentz), converging fast for x < (a + 1) / (a + b + 2).
fn beta_fraction(a: f64, b: f64, x: f64) -> f64 {
    const TINY: f64 = 1e-300;
    let (qab, qap, qam) = (a + b, a + 1.0, a - 1.0);
    let mut c = 1.0;
    let mut d = 1.0 - qab * x / qap;
    if d.abs() < TINY {
        d = TINY;
    }
    d = 1.0 / d;
    let mut h = d;
    // Converges in O(√max(a, b)) steps: a bound that holds past 1e12
    // decisions, and stops a NaN from looping.
    for m in 1..2_000_000 {
        let m = f64::from(m);
        let m2 = 2.0 * m;
        let aa = m * (b - m) * x / ((qam + m2) * (a + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        h *= d * c;
        let aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2));
        d = 1.0 + aa * d;
        if d.abs() < TINY {
            d = TINY;
        }
        c = 1.0 + aa / c;
        if c.abs() < TINY {
            c = TINY;
        }
        d = 1.0 / d;
        let del = d * c;
        h *= del;
        if (del - 1.0).abs() < 1e-16 {
            break;
        }
    }
    h
}

/// The regularized incomplete beta function `I_x(a, b)`, a, b > 0. The
/// factor `x^a (1 − x)^b / B(a, b)` is taken from x in both branches:
/// from `1 − x` it would lose the low digits of a small x, which a large
/// exponent magnifies.
pub fn beta_inc(a: f64, b: f64, x: f64) -> f64 {
    if x <= 0.0 {
        return 0.0;
    }
    if x >= 1.0 {
        return 1.0;
    }
    let front = ln_front(a, b, x).exp();
    if x < (a + 1.0) / (a + b + 2.0) {
        front * beta_fraction(a, b, x) / a
    } else {
        1.0 - front * beta_fraction(b, a, 1.0 - x) / b
    }
}

/// The density of Beta(a, b) at x.
fn beta_density(a: f64, b: f64, x: f64) -> f64 {
    ((a - 1.0) * x.ln() + (b - 1.0) * (-x).ln_1p() - ln_beta(a, b)).exp()
}

/// The p-quantile of Beta(a, b): the x with `I_x(a, b) = p` (scipy's
/// `beta.ppf`). Newton steps kept inside a bisection bracket, to full
/// precision.
pub fn beta_quantile(p: f64, a: f64, b: f64) -> f64 {
    if p <= 0.0 {
        return 0.0;
    }
    if p >= 1.0 {
        return 1.0;
    }
    let (mut lo, mut hi) = (0.0f64, 1.0f64);
    let mut x = a / (a + b);
    for _ in 0..400 {
        let f = beta_inc(a, b, x) - p;
        if f == 0.0 {
            return x;
        }
        if f < 0.0 {
            lo = x;
        } else {
            hi = x;
        }
        let step = f / beta_density(a, b, x);
        let mut next = x - step;
        if !(next > lo && next < hi && step.is_finite()) {
            next = 0.5 * (lo + hi);
        }
        if (next - x).abs() <= 4.0 * f64::EPSILON * x.abs() || hi - lo <= f64::EPSILON * hi {
            return next;
        }
        x = next;
    }
    x
}

/// The upper `alpha` quantile of F(1, n) (scipy's `f.isf(alpha, 1, n)`),
/// n > 0 not necessarily whole. With T Student's t on n degrees of
/// freedom, F = T², and `P(F > f) = I_{n/(n+f)}(n/2, 1/2)`; solved for
/// `q = f / (n + f)` through `I_q(1/2, n/2) = 1 − alpha`, which keeps
/// its precision for large n (where q is small).
pub fn f1_upper_quantile(alpha: f64, n: f64) -> f64 {
    let q = beta_quantile(1.0 - alpha, 0.5, 0.5 * n);
    n * q / (1.0 - q)
}

/// The 1 − alpha/2 quantile of the standard normal, for the 95% intervals
/// (scipy's `norm.ppf(0.975)`).
pub const Z_975: f64 = 1.959_963_984_540_054;

#[cfg(test)]
mod tests {
    use super::*;
    use std::f64::consts::PI;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn ln_gamma_matches_known_values() {
        for (x, want) in [
            (0.5, 0.5 * PI.ln()),
            (1.0, 0.0),
            (3.0, 2f64.ln()),
            (10.5, 13.940_625_219_403_763),
            (100.0, 359.134_205_369_575_4),
        ] {
            assert!(
                (ln_gamma(x) - want).abs() < 1e-13 * want.abs().max(1.0),
                "{x}"
            );
        }
    }

    #[test]
    fn beta_inc_closed_forms() {
        // I_x(1, b) = 1 − (1 − x)^b; I_x(a, 1) = x^a;
        // I_x(1/2, 1/2) = (2/π) asin √x.
        for &(a, b, x) in &[(1.0, 3.0, 0.2), (2.5, 1.0, 0.7), (0.5, 0.5, 0.3)] {
            let want = if a == 1.0 {
                1.0 - (1.0f64 - x).powf(b)
            } else if b == 1.0 {
                x.powf(a)
            } else {
                2.0 / PI * x.sqrt().asin()
            };
            assert!(close(beta_inc(a, b, x), want, 1e-13), "{a} {b} {x}");
        }
    }

    #[test]
    fn quantiles_match_scipy() {
        // scipy 1.17: beta.ppf(0.025, 3, 8), f.isf(0.05, 1, n) for n = 10
        // and 1.
        assert!(close(
            beta_quantile(0.025, 3.0, 8.0),
            0.066_739_511_177_734_47,
            1e-11
        ));
        assert!(close(
            f1_upper_quantile(0.05, 10.0),
            4.964_602_743_730_711,
            1e-11
        ));
        assert!(close(
            f1_upper_quantile(0.05, 1.0),
            161.447_638_797_588_2,
            1e-11
        ));
        // Larger counts, and fractional ones (decisions counted
        // 1/pass_probability times): to 1e-10 up to millions (the error
        // grows about as 1e-16 times the count).
        for (got, want) in [
            (f1_upper_quantile(0.05, 1e6), 3.841_468_119_843_163_3),
            (f1_upper_quantile(0.05, 12_345.5), 3.842_212_170_865_745),
            (
                beta_quantile(0.975, 2500.5, 7400.25),
                0.261_161_457_971_001_15,
            ),
            (beta_quantile(0.025, 4.0, 1e6), 1.089_863_144_930_277_5e-6),
        ] {
            assert!(close(got, want, 1e-10), "{got} != {want}");
        }
        // The inverse inverts.
        for &(p, a, b) in &[(0.975, 40.5, 60.25), (0.025, 1e5, 3e5), (0.5, 0.3, 7.0)] {
            let x = beta_quantile(p, a, b);
            assert!(close(beta_inc(a, b, x), p, 1e-12), "{p} {a} {b}");
        }
    }
}
