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

/// Running sums for the three estimates.
#[derive(Debug, Clone, Default)]
pub struct Estimator {
    samples: Vec<Sample>,
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

impl Estimator {
    /// Adds a decision (ignored when its probability is not positive).
    pub fn add(&mut self, s: Sample) {
        if s.probability > 0.0 && s.weight.is_finite() && s.weight > 0.0 {
            self.samples.push(s);
        }
    }

    /// Computes the estimates.
    pub fn finish(&self) -> Estimates {
        let n = self.samples.len();
        let su: f64 = self.samples.iter().map(|s| s.weight).sum();
        if n == 0 || su <= 0.0 {
            return Estimates {
                count: n,
                logged: None,
                ips: None,
                snips: None,
            };
        }
        let iw = |s: &Sample| if s.baseline { 1.0 / s.probability } else { 0.0 };
        let logged = self
            .samples
            .iter()
            .map(|s| s.weight * s.reward)
            .sum::<f64>()
            / su;
        let logged_se = self
            .samples
            .iter()
            .map(|s| (s.weight * (s.reward - logged)).powi(2))
            .sum::<f64>()
            .sqrt()
            / su;
        let ips = self
            .samples
            .iter()
            .map(|s| s.weight * iw(s) * s.reward)
            .sum::<f64>()
            / su;
        let ips_se = self
            .samples
            .iter()
            .map(|s| (s.weight * (iw(s) * s.reward - ips)).powi(2))
            .sum::<f64>()
            .sqrt()
            / su;
        let suw: f64 = self.samples.iter().map(|s| s.weight * iw(s)).sum();
        let snips = (suw > 0.0).then(|| {
            let m = self
                .samples
                .iter()
                .map(|s| s.weight * iw(s) * s.reward)
                .sum::<f64>()
                / suw;
            let se = self
                .samples
                .iter()
                .map(|s| (s.weight * iw(s) * (s.reward - m)).powi(2))
                .sum::<f64>()
                .sqrt()
                / suw;
            Estimate::new(m, se)
        });
        Estimates {
            count: n,
            logged: Some(Estimate::new(logged, logged_se)),
            ips: Some(Estimate::new(ips, ips_se)),
            snips,
        }
    }
}
