//! Tallies and estimators of off-policy evaluation, with the definitions
//! of vw-estimators 0.2.2 (PyPI `vw-estimators`, package `estimators`):
//! the same formulas, so that the same decisions give the same numbers.
//!
//! Each decision gives the logged probability `p_log` of the action the
//! log took, its reward `r`, the target policy's probability `p_pred` of
//! that same action, and the probability `p_drop` that the event was
//! dropped before the log (`1 − pass_probability`). The importance weight
//! is `w = p_pred / p_log`. As in vw-estimators, point estimates count
//! each kept decision once; intervals count a decision as
//! `1 + p_drop / (1 − p_drop)` decisions with weight `w / (1 − p_drop)`.
//!
//! Every tally is a fixed set of sums: constant memory however many
//! decisions. The Cressie-Read sums are compensated (Neumaier), as
//! vw-estimators sums them exactly.

use super::special::{beta_quantile, f1_upper_quantile, Z_975};

/// The alpha of every interval: 95% intervals.
pub const ALPHA: f64 = 0.05;

/// A compensated sum (Kahan-Babuška-Neumaier): within an ulp or two of
/// the exact sum, where a plain sum of millions of terms is not.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Sum {
    s: f64,
    c: f64,
}

impl Sum {
    /// Adds `x`.
    pub fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }

    /// Adds another sum.
    pub fn merge(&mut self, o: &Self) {
        self.add(o.s);
        self.add(o.c);
    }

    /// The sum.
    pub fn get(&self) -> f64 {
        self.s + self.c
    }
}

/// `x²`.
fn sq(x: f64) -> f64 {
    x * x
}

/// vw-estimators' `gaussian.Interval`: the 95% normal interval around
/// `Σx / n` of `count` decisions (`n`, possibly fractional) whose values
/// `x` sum to `sum` and their squares to `sum_sq`; `None` for one
/// decision or none.
fn gaussian_ci(count: f64, sum: f64, sum_sq: f64) -> Option<[f64; 2]> {
    (count > 1.0).then(|| {
        let var = (sum_sq - sum * sum / count) / (count - 1.0);
        // vw-estimators takes the root of a negative rounding residue and
        // fails; a variance of 0 is what it means.
        let delta = Z_975 * (var.max(0.0) / count).sqrt();
        let mean = sum / count;
        [mean - delta, mean + delta]
    })
}

/// Why an interval is missing.
fn in_unit(r: f64) -> bool {
    (0.0..=1.0).contains(&r)
}

/// The sums of the Cressie-Read estimator (vw-estimators'
/// `cressieread.EstimatorImpl` with its defaults, wmin 0 and wmax ∞).
///
/// While every weight is exactly 1 (the logged policy's, always), Σw and
/// Σw² are the count and Σwr and Σw²r are Σr: the same additions of the
/// same values. They are then not kept; the first other weight copies
/// them out before it is added, so the sums are those of a tally that
/// kept all six from the start, to the bit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CressieRead {
    /// Decisions added (a compensated sum of ones is this count exactly).
    n: u64,
    sumw: Sum,
    sumwsq: Sum,
    sumwr: Sum,
    sumwsqr: Sum,
    sumr: Sum,
    /// A weight other than 1 came: the four sums above are kept.
    weighted: bool,
}

/// The compensated sum of `n` ones, as [`Sum::add`] makes it.
fn ones(n: u64) -> Sum {
    Sum {
        s: n as f64,
        c: 0.0,
    }
}

impl CressieRead {
    /// Adds a decision of weight `w` and reward `r`.
    #[inline]
    pub fn add(&mut self, w: f64, r: f64) {
        self.n += 1;
        if !self.weighted {
            if w == 1.0 {
                self.sumr.add(r);
                return;
            }
            self.weigh(self.n - 1);
        }
        self.sumw.add(w);
        self.sumwsq.add(w * w);
        self.sumwr.add(w * r);
        self.sumwsqr.add(w * w * r);
        self.sumr.add(r);
    }

    /// Keeps the four weighted sums from here on, as they stand after
    /// `n` decisions of weight 1.
    fn weigh(&mut self, n: u64) {
        if !self.weighted {
            (self.sumw, self.sumwsq) = (ones(n), ones(n));
            (self.sumwr, self.sumwsqr) = (self.sumr, self.sumr);
            self.weighted = true;
        }
    }

    /// The count, Σw, Σw², Σwr and Σw²r, whole.
    fn sums(&self) -> [Sum; 5] {
        let mut whole = *self;
        whole.weigh(self.n);
        [
            ones(self.n),
            whole.sumw,
            whole.sumwsq,
            whole.sumwr,
            whole.sumwsqr,
        ]
    }

    /// Adds another tally's decisions.
    pub fn merge(&mut self, o: &Self) {
        if self.weighted || o.weighted {
            let mut o = *o;
            o.weigh(o.n);
            self.weigh(self.n);
            self.sumw.merge(&o.sumw);
            self.sumwsq.merge(&o.sumwsq);
            self.sumwr.merge(&o.sumwr);
            self.sumwsqr.merge(&o.sumwsqr);
        }
        self.n += o.n;
        self.sumr.merge(&o.sumr);
    }

    /// Decisions added (as a float, as the estimator divides by it).
    pub fn count(&self) -> f64 {
        self.n as f64
    }

    /// The point estimate; `None` without decisions.
    pub fn get(&self) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let [n, sumw, sumwsq, sumwr, sumwsqr] = self.sums().map(|s| s.get());
        // The fake weight is wmax (∞) when the weights average under 1,
        // else wmin (0).
        let (gamma, beta) = if sumw < n {
            (-(1.0 + n) / n, 0.0)
        } else {
            let a = sumw / (1.0 + n);
            let b = sumwsq / (1.0 + n);
            ((b - a) / (a * a - b), (1.0 - a) / (a * a - b))
        };
        let mut v = (-gamma * sumwr - beta * sumwsqr) / (1.0 + n);
        let missing = (1.0 - (-gamma * sumw - beta * sumwsq) / (1.0 + n)).max(0.0);
        v += missing * (self.sumr.get() / n);
        Some(v)
    }
}

/// The sums of the Cressie-Read interval (vw-estimators'
/// `cressieread.IntervalImpl`, wmin 0, wmax ∞, rewards in [0, 1]).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CressieReadInterval {
    n: Sum,
    sumw: Sum,
    sumwsq: Sum,
    sumwr: Sum,
    sumwsqr: Sum,
    sumwsqrsq: Sum,
    /// Rewards outside [0, 1] seen: the interval is then undefined.
    outside: u64,
}

impl CressieReadInterval {
    /// Adds a decision of weight `w`, reward `r`, drop probability
    /// `p_drop`.
    pub fn add(&mut self, w: f64, r: f64, p_drop: f64) {
        let n_drop = p_drop / (1.0 - p_drop);
        let w = w / (1.0 - p_drop);
        self.n.add(1.0 + n_drop);
        self.sumw.add(w);
        self.sumwsq.add(w * w);
        self.sumwr.add(w * r);
        self.sumwsqr.add(w * w * r);
        self.sumwsqrsq.add(w * w * r * r);
        self.outside += u64::from(!in_unit(r));
    }

    /// Adds another tally's decisions.
    pub fn merge(&mut self, o: &Self) {
        self.n.merge(&o.n);
        self.sumw.merge(&o.sumw);
        self.sumwsq.merge(&o.sumwsq);
        self.sumwr.merge(&o.sumwr);
        self.sumwsqr.merge(&o.sumwsqr);
        self.sumwsqrsq.merge(&o.sumwsqrsq);
        self.outside += o.outside;
    }

    /// Decisions counted, drops included.
    pub fn count(&self) -> f64 {
        self.n.get()
    }

    /// The 95% interval; `None` without decisions or with a reward
    /// outside [0, 1].
    pub fn get(&self) -> Option<[f64; 2]> {
        const ATOL: f64 = 1e-9;
        let n = self.n.get();
        if n == 0.0 || self.outside > 0 {
            return None;
        }
        let sumw = self.sumw.get();
        let sumwsq = self.sumwsq.get();
        let sumwr = self.sumwr.get();
        let sumwsqr = self.sumwsqr.get();
        let sumwsqrsq = self.sumwsqrsq.get();
        let uncgstar = if sumw < n {
            1.0 + 1.0 / n
        } else {
            let a = sumw / (1.0 + n);
            let b = sumwsq / (1.0 + n);
            (1.0 + n) * sq(a - 1.0) / (b - a * a)
        };
        let delta = f1_upper_quantile(ALPHA, n);
        let phi = (-uncgstar - delta) / (2.0 * (1.0 + n));
        // A candidate from (x, y, z), as vw-estimators takes it.
        let candidate = |x: f64, y: f64, z: f64| -> Option<f64> {
            if (y * z).abs() <= ATOL * ATOL {
                Some(x - std::f64::consts::SQRT_2 * ATOL)
            } else if z <= 0.0 && y * z >= 0.0 {
                Some(x - (2.0 * y * z).sqrt())
            } else {
                None
            }
        };
        let (rmin, rmax) = (0.0, 1.0);
        let mut bounds = [0.0; 2];
        for (slot, (r, sign)) in bounds.iter_mut().zip([(rmin, 1.0), (rmax, -1.0)]) {
            let mut best: Option<f64> = None;
            let mut keep = |c: Option<f64>| {
                if let Some(c) = c {
                    best = Some(best.map_or(c, |b: f64| b.min(c)));
                }
            };
            // wfake = wmin = 0.
            let barw = sumw / (1.0 + n);
            let barwsq = sumwsq / (1.0 + n);
            let barwr = sign * sumwr / (1.0 + n);
            let barwsqr = sign * sumwsqr / (1.0 + n);
            let barwsqrsq = sumwsqrsq / (1.0 + n);
            if barwsq > barw * barw {
                let x = barwr + (1.0 - barw) * (barwsqr - barw * barwr) / (barwsq - barw * barw);
                let y = sq(barwsqr - barw * barwr) / (barwsq - barw * barw)
                    - (barwsqrsq - barwr * barwr);
                let z = phi + 0.5 * sq(1.0 - barw) / (barwsq - barw * barw);
                keep(candidate(x, y, z));
            }
            // wfake = wmax = ∞.
            let x = sign * (r + (sumwr - sumw * r) / n);
            let y = sq(r * sumw - sumwr) / (n * (1.0 + n))
                - (r * r * sumwsq - 2.0 * r * sumwsqr + sumwsqrsq) / (1.0 + n);
            let z = phi + 1.0 / (2.0 * n);
            keep(candidate(x, y, z));
            let best = best.unwrap_or(rmin);
            *slot = (sign * best).max(rmin).min(rmax);
        }
        Some(bounds)
    }
}

/// The Cressie-Read estimate and interval of one stream of decisions.
///
/// While every decision has `p_drop` 0, five of the interval's sums (its
/// count, Σw, Σw², Σwr, Σw²r) are the estimate's: the same additions of
/// the same values, as `1 + 0/(1 − 0)` is 1 and `w/(1 − 0)` is `w`. They
/// are then not kept twice: only Σw²r² and the rewards outside [0, 1] are
/// kept apart, and the first decision with a drop copies the shared sums
/// out before it is added, so the figures are those of two separate
/// tallies to the bit.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CressieReadPair {
    est: CressieRead,
    ci: CressieReadInterval,
    /// The interval's first five sums are stale: the estimate's stand for
    /// them.
    apart: bool,
}

impl CressieReadPair {
    /// Adds a decision of weight `w`, reward `r`, drop probability
    /// `p_drop`.
    #[inline]
    pub fn add(&mut self, w: f64, r: f64, p_drop: f64) {
        if p_drop == 0.0 && !self.apart {
            self.ci.sumwsqrsq.add(w * w * r * r);
            self.ci.outside += u64::from(!in_unit(r));
        } else {
            self.separate();
            self.ci.add(w, r, p_drop);
        }
        self.est.add(w, r);
    }

    /// Gives the interval sums of its own (from here on, or for good).
    fn separate(&mut self) {
        if !self.apart {
            self.ci = self.interval();
            self.apart = true;
        }
    }

    /// The interval's sums, whole.
    fn interval(&self) -> CressieReadInterval {
        if self.apart {
            return self.ci;
        }
        let [n, sumw, sumwsq, sumwr, sumwsqr] = self.est.sums();
        CressieReadInterval {
            n,
            sumw,
            sumwsq,
            sumwr,
            sumwsqr,
            ..self.ci
        }
    }

    /// Adds another tally's decisions.
    pub fn merge(&mut self, o: &Self) {
        if self.apart || o.apart {
            self.separate();
            self.ci.merge(&o.interval());
        } else {
            self.ci.sumwsqrsq.merge(&o.ci.sumwsqrsq);
            self.ci.outside += o.ci.outside;
        }
        self.est.merge(&o.est);
    }

    /// The point estimate's tally.
    pub fn estimate(&self) -> &CressieRead {
        &self.est
    }

    /// Decisions in the interval, drops counted.
    pub fn interval_count(&self) -> f64 {
        self.interval().count()
    }

    /// The 95% interval (see [`CressieReadInterval::get`]).
    pub fn ci(&self) -> Option<[f64; 2]> {
        self.interval().get()
    }

    /// Rewards outside [0, 1] seen.
    pub fn outside(&self) -> u64 {
        self.ci.outside
    }
}

/// The sums behind IPS, SNIPS and their normal intervals: the figures
/// `fb stats` and the report's windows show ([`Headline::figures`]).
/// [`Bandit`] keeps these same sums beside the Cressie-Read ones, adding
/// each decision with the same code, so the two give the same bits.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Headline {
    decisions: u64,
    /// IPS: Σ w r (over `decisions`).
    ips_wr: f64,
    /// SNIPS: Σ w (and IPS' Σ w r); for its interval Σ w², Σ w² r,
    /// Σ w² r².
    snips_w: f64,
    snips_w2: [f64; 3],
    /// Gaussian: Σ (1 + n_drop), Σ r w', Σ (r w')², with
    /// w' = w / (1 − p_drop).
    count: f64,
    wr: f64,
    wr_sq: f64,
}

impl Headline {
    /// Adds one decision; gives back `w'`, the weight the intervals count
    /// it with (see the module's doc).
    #[inline]
    pub fn add(&mut self, p_log: f64, r: f64, p_pred: f64, p_drop: f64) -> f64 {
        let w = p_pred / p_log;
        self.decisions += 1;
        self.ips_wr += r * w;
        self.snips_w += w;
        self.snips_w2[0] += w * w;
        self.snips_w2[1] += w * w * r;
        self.snips_w2[2] += w * w * r * r;
        let n_drop = p_drop / (1.0 - p_drop);
        let wd = p_pred / (p_log * (1.0 - p_drop));
        self.count += 1.0 + n_drop;
        self.wr += r * wd;
        self.wr_sq += sq(r * wd);
        wd
    }

    /// Adds another tally's decisions (sums in another order: equal to
    /// rounding).
    pub fn merge(&mut self, o: &Self) {
        self.decisions += o.decisions;
        self.ips_wr += o.ips_wr;
        self.snips_w += o.snips_w;
        for (a, b) in self.snips_w2.iter_mut().zip(o.snips_w2) {
            *a += b;
        }
        self.count += o.count;
        self.wr += o.wr;
        self.wr_sq += o.wr_sq;
    }

    /// Decisions added.
    pub fn decisions(&self) -> u64 {
        self.decisions
    }

    /// IPS.
    fn ips(&self) -> Option<f64> {
        (self.decisions > 0).then(|| self.ips_wr / self.decisions as f64)
    }

    /// The Gaussian 95% interval around IPS.
    fn gaussian_ci(&self) -> Option<[f64; 2]> {
        gaussian_ci(self.count, self.wr, self.wr_sq)
    }

    /// SNIPS.
    fn snips(&self) -> Option<f64> {
        (self.snips_w != 0.0).then(|| self.ips_wr / self.snips_w)
    }

    /// SNIPS' delta-method interval.
    fn snips_ci(&self) -> Option<[f64; 2]> {
        (self.snips_w > 0.0).then(|| {
            let m = self.ips_wr / self.snips_w;
            let [w2, w2r, w2r2] = self.snips_w2;
            // Σ w² (r − m)², expanded; clamped at 0 against rounding.
            let ss = (w2r2 - 2.0 * m * w2r + m * m * w2).max(0.0);
            let delta = Z_975 * ss.sqrt() / self.snips_w;
            [m - delta, m + delta]
        })
    }

    /// The figures `fb stats` shows: [`Bandit::finish`]'s without the
    /// Cressie-Read and Clopper-Pearson ones, which take sums of their own
    /// and quantiles that cost most of a finish.
    pub fn figures(&self) -> BanditFigures {
        BanditFigures {
            decisions: self.decisions,
            ips: self.ips(),
            snips: self.snips(),
            snips_ci: self.snips_ci(),
            gaussian_ci: self.gaussian_ci(),
            cressie_read: None,
            cressie_read_ci: None,
            clopper_pearson_ci: None,
            effective_sample_size: 0.0,
            rewards_outside_unit: 0,
            unsupported: 0.0,
        }
    }
}

/// Everything estimated of one target policy over CB-shaped decisions
/// (CB, multistep steps, a CCB's first slot).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Bandit {
    headline: Headline,
    /// Clopper-Pearson: max w'.
    max_w: f64,
    cressie_read: CressieReadPair,
    /// Target probability on actions the logger gave probability 0.
    unsupported: f64,
}

/// The figures of one target policy (`None` where undefined).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct BanditFigures {
    /// Decisions estimated from.
    pub decisions: u64,
    /// Inverse propensity score: `Σ w r / n`.
    pub ips: Option<f64>,
    /// Self-normalized IPS: `Σ w r / Σ w`.
    pub snips: Option<f64>,
    /// Its 95% normal interval by the delta method (fb's own: vw-estimators
    /// has none), `m ± z √(Σ w² (r − m)²) / Σ w`.
    pub snips_ci: Option<[f64; 2]>,
    /// Cressie-Read (power divergence −2) point estimate.
    pub cressie_read: Option<f64>,
    /// Its 95% interval (rewards in [0, 1] only).
    pub cressie_read_ci: Option<[f64; 2]>,
    /// Gaussian 95% interval around IPS.
    pub gaussian_ci: Option<[f64; 2]>,
    /// Clopper-Pearson 95% interval (rewards in [0, 1] only).
    pub clopper_pearson_ci: Option<[f64; 2]>,
    /// Kish's effective sample size `(Σ w)² / Σ w²`.
    pub effective_sample_size: f64,
    /// Decisions whose reward is outside [0, 1].
    pub rewards_outside_unit: u64,
    /// The target's probability, summed over decisions, on actions the
    /// logging policy never takes (probability 0).
    pub unsupported: f64,
}

impl Bandit {
    /// Adds one decision. `unsupported` is the target's probability on
    /// actions the logger gave probability 0 (0 where unknown).
    pub fn add(&mut self, p_log: f64, r: f64, p_pred: f64, p_drop: f64, unsupported: f64) {
        let wd = self.headline.add(p_log, r, p_pred, p_drop);
        self.max_w = self.max_w.max(wd);
        self.cressie_read.add(p_pred / p_log, r, p_drop);
        self.unsupported += unsupported;
    }

    /// Adds another tally's decisions (sums in another order: equal to
    /// rounding).
    pub fn merge(&mut self, o: &Self) {
        self.headline.merge(&o.headline);
        self.max_w = self.max_w.max(o.max_w);
        self.cressie_read.merge(&o.cressie_read);
        self.unsupported += o.unsupported;
    }

    /// Decisions added.
    pub fn decisions(&self) -> u64 {
        self.headline.decisions
    }

    /// The figures `fb stats` shows ([`Headline::figures`]).
    pub fn headline(&self) -> BanditFigures {
        self.headline.figures()
    }

    /// The figures.
    pub fn finish(&self) -> BanditFigures {
        let h = &self.headline;
        let outside = self.cressie_read.outside();
        let clopper_pearson_ci = (self.max_w > 0.0 && outside == 0).then(|| {
            let successes = h.wr / self.max_w;
            let n = h.count / self.max_w;
            clopper_pearson(successes, n)
        });
        let cr = self.cressie_read.estimate();
        let [_, sw, sw2, _, _] = cr.sums().map(|s| s.get());
        BanditFigures {
            decisions: h.decisions,
            ips: h.ips(),
            snips: h.snips(),
            snips_ci: h.snips_ci(),
            cressie_read: cr.get(),
            cressie_read_ci: self.cressie_read.ci(),
            gaussian_ci: h.gaussian_ci(),
            clopper_pearson_ci,
            effective_sample_size: if sw2 > 0.0 { sw * sw / sw2 } else { 0.0 },
            rewards_outside_unit: outside,
            unsupported: self.unsupported,
        }
    }
}

/// The Clopper-Pearson 95% interval of `successes` in `n` trials, both
/// possibly fractional (vw-estimators' `math.clopper_pearson`).
pub fn clopper_pearson(successes: f64, n: f64) -> [f64; 2] {
    let low = if successes > 0.0 {
        beta_quantile(ALPHA / 2.0, successes, n - successes + 1.0)
    } else {
        0.0
    };
    let high = if successes < n {
        beta_quantile(1.0 - ALPHA / 2.0, successes + 1.0, n - successes)
    } else {
        1.0
    };
    [low, high]
}

/// Per-slot decisions of CCB: the per-decision importance sampling
/// (PDIS) Cressie-Read estimate of each slot, weights multiplied along
/// the slots (vw-estimators' `ccb.pdis_cressieread`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Slots {
    slots: Vec<CressieReadPair>,
}

/// One slot's PDIS Cressie-Read figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SlotFigures {
    /// Decisions that reached this slot.
    pub decisions: f64,
    /// The point estimate, scaled by the share of decisions with the slot.
    pub value: Option<f64>,
    /// Its 95% interval, scaled alike.
    pub ci: Option<[f64; 2]>,
}

impl Slots {
    /// Adds one decision: per slot `(p_log, r, p_pred)`, at most
    /// `max_slots` of them.
    pub fn add(&mut self, slots: &[(f64, f64, f64)], p_drop: f64, max_slots: usize) {
        let mut w = 1.0;
        for (i, &(p_log, r, p_pred)) in slots.iter().enumerate().take(max_slots) {
            w *= p_pred / p_log;
            if self.slots.len() <= i {
                self.slots.push(Default::default());
            }
            if let Some(slot) = self.slots.get_mut(i) {
                slot.add(w, r, p_drop);
            }
        }
    }

    /// Adds another tally's decisions.
    pub fn merge(&mut self, o: &Self) {
        for (i, theirs) in o.slots.iter().enumerate() {
            if self.slots.len() <= i {
                self.slots.push(Default::default());
            }
            if let Some(mine) = self.slots.get_mut(i) {
                mine.merge(theirs);
            }
        }
    }

    /// Each slot's figures.
    pub fn finish(&self) -> Vec<SlotFigures> {
        let Some(first) = self.slots.first() else {
            return Vec::new();
        };
        let (n0, n0_ci) = (first.estimate().count(), first.interval_count());
        self.slots
            .iter()
            .map(|slot| {
                let (e, n_ci) = (slot.estimate(), slot.interval_count());
                SlotFigures {
                    decisions: e.count(),
                    value: (n0 > 0.0)
                        .then(|| e.get().map(|v| v * e.count() / n0))
                        .flatten(),
                    ci: (n0_ci > 0.0)
                        .then(|| slot.ci().map(|b| b.map(|v| v * n_ci / n0_ci)))
                        .flatten(),
                }
            })
            .collect()
    }
}

/// Slates: the pseudo-inverse estimator for a Cartesian product of slots
/// under a product logging policy (vw-estimators' `slates.pseudo_inverse`
/// and `slates.gaussian`): `w = 1 − K + Σ_k p_pred,k / p_log,k`.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PseudoInverse {
    count: f64,
    wr: f64,
    wr_sq: f64,
}

/// The pseudo-inverse figures.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PseudoInverseFigures {
    /// Decisions.
    pub decisions: f64,
    /// The estimate.
    pub value: Option<f64>,
    /// Its Gaussian 95% interval.
    pub gaussian_ci: Option<[f64; 2]>,
}

impl PseudoInverse {
    /// Adds one slate: per slot `(p_log, p_pred)`, and the slate's reward.
    pub fn add(&mut self, slots: &[(f64, f64)], r: f64) {
        let mut w = 1.0 - slots.len() as f64;
        for &(p_log, p_pred) in slots {
            w += p_pred / p_log;
        }
        self.count += 1.0;
        self.wr += r * w;
        self.wr_sq += sq(r * w);
    }

    /// Adds another tally's slates.
    pub fn merge(&mut self, o: &Self) {
        self.count += o.count;
        self.wr += o.wr;
        self.wr_sq += o.wr_sq;
    }

    /// The figures.
    pub fn finish(&self) -> PseudoInverseFigures {
        let c = self.count;
        PseudoInverseFigures {
            decisions: c,
            value: (c > 0.0).then(|| self.wr / c),
            gaussian_ci: gaussian_ci(c, self.wr, self.wr_sq),
        }
    }
}

#[cfg(test)]
#[path = "estimators_tests.rs"]
mod tests;
