//! Off-policy estimates of a baseline policy from logged decisions.
//!
//! Each learnable decision contributes its reward `r`, the logged
//! probability `p` of the action that was taken, whether that action is
//! the baseline's, and a sampling weight `u = 1 / pass_probability` (an
//! event kept with probability q stands for 1/q events). With the
//! importance weight `w = [taken == baseline] / p`:
//!
//! - logged policy value: `Σ u r / Σ u`
//! - IPS: `Σ u w r / Σ u`
//! - SNIPS: `Σ u w r / Σ u w`
//!
//! with 95% normal confidence intervals from the standard errors
//! `sqrt(Σ u² (x − m)²) / Σ u` (for SNIPS, `sqrt(Σ u² w² (r − m)²) / Σ u w`).

/// One logged decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Reward observed.
    pub reward: f64,
    /// Probability the logging policy gave the taken action.
    pub probability: f64,
    /// The taken action is the baseline policy's action.
    pub baseline: bool,
    /// Sampling weight, 1 / pass probability.
    pub weight: f64,
}

/// An estimate with its 95% confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// The point estimate.
    pub value: f64,
    /// Lower end of the 95% interval.
    pub low: f64,
    /// Upper end of the 95% interval.
    pub high: f64,
}

impl Estimate {
    fn new(value: f64, se: f64) -> Self {
        Self {
            value,
            low: value - 1.96 * se,
            high: value + 1.96 * se,
        }
    }
}

/// Running sums for the three estimates: constant memory however many
/// decisions (the standard errors expand `Σ a²(x − m)²` into sums of
/// powers, accumulated in f64).
#[derive(Debug, Clone, Default)]
pub struct Estimator {
    n: usize,
    /// Σu, Σu·r, Σu², Σu²·r, Σu²·r²
    logged: [f64; 5],
    /// Σu·w·r, Σu²·(w·r), Σu²·(w·r)² (IPS terms x = w·r)
    ips: [f64; 3],
    /// Σu·w, Σ(u·w)², Σ(u·w)²·r, Σ(u·w)²·r²
    snips: [f64; 4],
}

/// The three estimates; `None` where undefined (no samples, or no sample
/// where the baseline was taken for SNIPS).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimates {
    /// Number of decisions.
    pub count: usize,
    /// Value of the logged policy.
    pub logged: Option<Estimate>,
    /// IPS estimate of the baseline policy.
    pub ips: Option<Estimate>,
    /// SNIPS estimate of the baseline policy.
    pub snips: Option<Estimate>,
}

/// `sqrt(Σa²x² − 2mΣa²x + m²Σa²) / norm`, clamped at 0 against rounding.
fn se(sum_a2: f64, sum_a2x: f64, sum_a2x2: f64, m: f64, norm: f64) -> f64 {
    (sum_a2x2 - 2.0 * m * sum_a2x + m * m * sum_a2)
        .max(0.0)
        .sqrt()
        / norm
}

impl Estimator {
    /// Adds a decision (ignored when its probability is not positive).
    pub fn add(&mut self, s: Sample) {
        if !(s.probability > 0.0 && s.weight.is_finite() && s.weight > 0.0) {
            return;
        }
        let (u, r) = (s.weight, s.reward);
        let w = if s.baseline { 1.0 / s.probability } else { 0.0 };
        self.n += 1;
        let l = &mut self.logged;
        l[0] += u;
        l[1] += u * r;
        l[2] += u * u;
        l[3] += u * u * r;
        l[4] += u * u * r * r;
        let x = w * r;
        self.ips[0] += u * x;
        self.ips[1] += u * u * x;
        self.ips[2] += u * u * x * x;
        let uw = u * w;
        self.snips[0] += uw;
        self.snips[1] += uw * uw;
        self.snips[2] += uw * uw * r;
        self.snips[3] += uw * uw * r * r;
    }

    /// Adds the decisions of another estimator, as if added here.
    pub fn merge(&mut self, o: &Self) {
        self.n += o.n;
        for (a, b) in self.logged.iter_mut().zip(o.logged) {
            *a += b;
        }
        for (a, b) in self.ips.iter_mut().zip(o.ips) {
            *a += b;
        }
        for (a, b) in self.snips.iter_mut().zip(o.snips) {
            *a += b;
        }
    }

    /// Decisions added so far.
    pub fn count(&self) -> usize {
        self.n
    }

    /// Computes the estimates.
    pub fn finish(&self) -> Estimates {
        let [su, sur, su2, su2r, su2r2] = self.logged;
        if self.n == 0 || su <= 0.0 {
            return Estimates {
                count: self.n,
                logged: None,
                ips: None,
                snips: None,
            };
        }
        let logged = sur / su;
        let ips = self.ips[0] / su;
        let [suw, suw2, suw2r, suw2r2] = self.snips;
        let snips = (suw > 0.0).then(|| {
            let m = self.ips[0] / suw;
            Estimate::new(m, se(suw2, suw2r, suw2r2, m, suw))
        });
        Estimates {
            count: self.n,
            logged: Some(Estimate::new(logged, se(su2, su2r, su2r2, logged, su))),
            ips: Some(Estimate::new(
                ips,
                se(su2, self.ips[1], self.ips[2], ips, su),
            )),
            snips,
        }
    }
}
