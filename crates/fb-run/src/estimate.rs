//! Estimates of the baseline policy for `fb stats`: the logged policy's
//! value and the baseline's IPS and SNIPS, each with a 95% interval,
//! computed by the tallies of off-policy evaluation
//! ([`crate::evaluate::estimators::Headline`], the sums of `Bandit` that
//! these figures need), so that `fb stats` and `fb
//! evaluate --policy baseline` give the same numbers.
//!
//! Each learnable decision contributes its reward `r`, the logged
//! probability `p` of the action taken, whether that action is the
//! baseline's, and its drop probability `1 − pass_probability`. With
//! `w = [taken == baseline] / p`:
//!
//! - logged policy value: `Σ r / n`, with the Gaussian interval;
//! - IPS: `Σ w r / n`, with the Gaussian interval (vw-estimators'
//!   `gaussian.Interval`: decisions counted `1/pass_probability` times);
//! - SNIPS: `Σ w r / Σ w`, with a delta-method normal interval.

use crate::evaluate::estimators::{BanditFigures, Headline};

/// One logged decision.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// Reward observed.
    pub reward: f64,
    /// Probability the logging policy gave the taken action.
    pub probability: f64,
    /// The taken action is the baseline policy's action.
    pub baseline: bool,
    /// Probability that the event was dropped before the log
    /// (`1 − pass_probability`), below 1.
    pub p_drop: f64,
}

/// An estimate with its 95% confidence interval (`low` and `high` are NaN
/// where the interval is undefined: a single decision).
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
    fn new(value: Option<f64>, ci: Option<[f64; 2]>) -> Option<Self> {
        let [low, high] = ci.unwrap_or([f64::NAN; 2]);
        value.map(|value| Self { value, low, high })
    }
}

/// The logged policy's and the baseline's tallies: constant memory.
#[derive(Debug, Clone, Default)]
pub struct Estimator {
    logged: Headline,
    baseline: Headline,
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
    /// Adds a decision (ignored when its probability is not positive or
    /// its drop probability not below 1).
    pub fn add(&mut self, s: Sample) {
        if !(s.probability > 0.0 && s.p_drop < 1.0) {
            return;
        }
        let (p, r) = (s.probability, s.reward);
        self.logged.add(p, r, p, s.p_drop);
        let q = if s.baseline { 1.0 } else { 0.0 };
        self.baseline.add(p, r, q, s.p_drop);
    }

    /// Adds the decisions of another estimator, as if added here.
    pub fn merge(&mut self, o: &Self) {
        self.logged.merge(&o.logged);
        self.baseline.merge(&o.baseline);
    }

    /// Decisions added so far.
    pub fn count(&self) -> usize {
        usize::try_from(self.logged.decisions()).unwrap_or(usize::MAX)
    }

    /// Computes the estimates.
    pub fn finish(&self) -> Estimates {
        let (l, b): (BanditFigures, BanditFigures) =
            (self.logged.figures(), self.baseline.figures());
        Estimates {
            count: self.count(),
            logged: Estimate::new(l.ips, l.gaussian_ci),
            ips: Estimate::new(b.ips, b.gaussian_ci),
            snips: Estimate::new(b.snips, b.snips_ci),
        }
    }
}
