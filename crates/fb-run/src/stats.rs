//! The statistics of a run (`fb stats`, `vwlogs.stats`): a sink that
//! adds up the metrics and the counterfactual estimators of the kept
//! events, and the JSON report made of them, which every face shows (the
//! command line's table is printed from it).

use fb_join::{Addition, Decision, JoinedEvent, Joiner, Metrics, Problem};
use serde_json::{json, Value};

use crate::estimate::{Estimate, Estimates, Estimator, Sample};
use crate::report::RunReport;

/// Decisions under which an interval is too rough to read much into.
const FEW: usize = 30;

/// Slots given an estimate of their own; later ones are left out (a
/// damaged or odd log could claim thousands).
const MAX_SLOTS: usize = 16;

/// What the baseline policy is, and how the estimates are made: said in
/// the output so that it reads without this code.
const BASELINE: &str = "CB and multistep steps: action 1 (the first action the context offers); \
    CCB and Slates: in each slot, the baseline action the log records for it (action 0 where none \
    is recorded)";
const METHOD: &str = "every learnable decision with a pass_probability above 0 counts (one \
    with pass_probability 0 would weigh infinitely: it is left out, and counted); rewards are \
    original rewards, the reward function over the decision's own outcomes before apprentice \
    mode and multistep transforms; the logged policy's value is their mean; IPS weights each \
    reward by [taken == baseline] / p(taken) and divides by the decisions, SNIPS by the sum of \
    those weights; these are fb evaluate's figures for the logged and baseline policies \
    (docs/evaluate.md): 95% Gaussian intervals as vw-estimators computes them (decisions counted \
    1/pass_probability times), and for SNIPS a delta-method normal interval";

/// The drop probability of a learnable decision with a pass_probability
/// above 0.
fn p_drop(ev: &JoinedEvent) -> Option<f64> {
    (!ev.skip_learn && ev.pass_probability > 0.0).then(|| f64::from(ev.pdrop()))
}

/// Which estimator of [`Estimators`] a decision's sample goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Target {
    Cb,
    Multistep,
    /// A CCB slot (below [`MAX_SLOTS`]).
    CcbSlot(u8),
    /// A slot of a slate (below [`MAX_SLOTS`]).
    SlatesSlot(u8),
    /// A whole slate.
    Slates,
}

/// Running estimates per problem type, and per slot for CCB and Slates.
#[derive(Default)]
pub struct Estimators {
    cb: Estimator,
    multistep: Estimator,
    ccb_slots: Vec<Estimator>,
    slates: Estimator,
    slates_slots: Vec<Estimator>,
    /// Learnable decisions left out for their pass_probability of 0 (or
    /// below).
    zero_pass: u64,
}

impl Estimators {
    /// Adds the decisions of another, as if added here.
    pub fn merge(&mut self, o: &Self) {
        self.cb.merge(&o.cb);
        self.multistep.merge(&o.multistep);
        self.slates.merge(&o.slates);
        self.zero_pass += o.zero_pass;
        for (mine, theirs) in [
            (&mut self.ccb_slots, &o.ccb_slots),
            (&mut self.slates_slots, &o.slates_slots),
        ] {
            if mine.len() < theirs.len() {
                mine.resize_with(theirs.len(), Estimator::default);
            }
            for (a, b) in mine.iter_mut().zip(theirs) {
                a.merge(b);
            }
        }
    }

    /// Adds one kept event.
    pub fn add(&mut self, ev: &JoinedEvent) {
        let left_out = Self::samples(ev, |target, sample| self.put(target, sample));
        self.zero_pass += u64::from(left_out);
    }

    /// The samples `ev` adds, in the order [`Estimators::add`] adds them,
    /// handed to `to` with the estimator each goes to; true when the
    /// event is learnable but left out for its pass_probability of 0.
    /// Estimators' sums are floats, whose sums depend on the order of
    /// their terms: a sink that takes events on several threads keeps
    /// their samples and puts them in log order.
    pub(crate) fn samples(ev: &JoinedEvent, mut to: impl FnMut(Target, Sample)) -> bool {
        let Some(p_drop) = p_drop(ev) else {
            let estimated = !matches!(ev.decision, Decision::Ca { .. });
            return !ev.skip_learn && estimated;
        };
        match &ev.decision {
            Decision::Cb {
                actions,
                probabilities,
            } => {
                let (Some(&a), Some(&p)) = (actions.first(), probabilities.first()) else {
                    return false;
                };
                let sample = Sample {
                    reward: f64::from(ev.original_reward),
                    probability: f64::from(p),
                    baseline: a == 1,
                    p_drop,
                };
                match ev.kind {
                    Problem::Multistep => to(Target::Multistep, sample),
                    _ => to(Target::Cb, sample),
                }
            }
            Decision::MultiSlot { slots, baseline } => {
                let ccb = ev.kind == Problem::Ccb;
                let (mut joint_p, mut joint_base) = (1.0f64, true);
                for (i, slot) in slots.iter().enumerate() {
                    let (Some(&a), Some(&p)) = (slot.actions.first(), slot.probabilities.first())
                    else {
                        return false;
                    };
                    let base = i64::from(a) == i64::from(baseline.get(i).copied().unwrap_or(0));
                    joint_p *= f64::from(p);
                    joint_base &= base;
                    let Some(i) = u8::try_from(i).ok().filter(|&i| usize::from(i) < MAX_SLOTS)
                    else {
                        continue;
                    };
                    let target = if ccb {
                        Target::CcbSlot(i)
                    } else {
                        Target::SlatesSlot(i)
                    };
                    to(
                        target,
                        Sample {
                            reward: f64::from(if ccb {
                                slot.original_reward
                            } else {
                                ev.original_reward
                            }),
                            probability: f64::from(p),
                            baseline: base,
                            p_drop,
                        },
                    );
                }
                if !ccb && !slots.is_empty() {
                    to(
                        Target::Slates,
                        Sample {
                            reward: f64::from(ev.original_reward),
                            probability: joint_p,
                            baseline: joint_base,
                            p_drop,
                        },
                    );
                }
            }
            Decision::Ca { .. } => {}
        }
        false
    }

    /// Adds one sample of [`Estimators::samples`] to its estimator (a
    /// slot's is made when first met, whether the sample counts or not).
    #[inline]
    pub(crate) fn put(&mut self, target: Target, sample: Sample) {
        let (per_slot, i) = match target {
            Target::Cb => return self.cb.add(sample),
            Target::Multistep => return self.multistep.add(sample),
            Target::Slates => return self.slates.add(sample),
            Target::CcbSlot(i) => (&mut self.ccb_slots, usize::from(i)),
            Target::SlatesSlot(i) => (&mut self.slates_slots, usize::from(i)),
        };
        if per_slot.len() <= i {
            per_slot.resize_with(i + 1, Estimator::default);
        }
        if let Some(estimator) = per_slot.get_mut(i) {
            estimator.add(sample);
        }
    }

    /// Adds one sample of [`Estimators::samples`] if the report's time
    /// windows chart its estimator: CB, multistep, a whole slate and
    /// CCB's first slot (the other slots' estimates are shown for the
    /// whole log only).
    #[inline]
    pub(crate) fn put_charted(&mut self, target: Target, sample: Sample) {
        if Self::charted(target) {
            self.put(target, sample);
        }
    }

    /// Whether the report's time windows chart `target`'s estimates.
    #[inline]
    pub(crate) fn charted(target: Target) -> bool {
        !matches!(target, Target::CcbSlot(1..) | Target::SlatesSlot(_))
    }

    /// The estimates, as the report's `counterfactual` shows them.
    pub fn json(&self) -> Value {
        let mut by = serde_json::Map::new();
        for (name, e) in [("cb", &self.cb), ("multistep", &self.multistep)] {
            if e.count() > 0 {
                by.insert(name.into(), estimate_json(&e.finish(), "decisions"));
            }
        }
        if !self.ccb_slots.is_empty() {
            let slots = per_slot(&self.ccb_slots);
            by.insert(
                "ccb".into(),
                json!({"covers": "each slot on its own: its reward, its logged probability, its baseline action", "slots": slots}),
            );
        }
        if self.slates.count() > 0 {
            let mut v = estimate_json(&self.slates.finish(), "decisions");
            if let Some(o) = v.as_object_mut() {
                o.insert(
                    "covers".into(),
                    json!(
                        "the whole slate: its reward, the product of the slots' probabilities, \
                         baseline when every slot takes its baseline action"
                    ),
                );
                o.insert("slots".into(), per_slot(&self.slates_slots));
            }
            by.insert("slates".into(), v);
        }
        json!({"baseline_policy": BASELINE, "method": METHOD,
               "left_out_pass_probability_0": self.zero_pass, "by_problem_type": by})
    }
}

/// One estimate per slot, each with its slot number.
fn per_slot(slots: &[Estimator]) -> Value {
    slots
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut v = estimate_json(&e.finish(), "decisions");
            if let Some(o) = v.as_object_mut() {
                o.insert("slot".into(), json!(i));
            }
            v
        })
        .collect()
}

fn estimate_json(e: &Estimates, count: &str) -> Value {
    let one = |x: Option<Estimate>| match x {
        Some(x) if x.low.is_finite() && x.high.is_finite() => {
            json!({"value": x.value, "ci95": [x.low, x.high]})
        }
        // One decision: no interval.
        Some(x) => json!({"value": x.value, "ci95": null}),
        None => Value::Null,
    };
    let mut v = json!({
        count: e.count,
        "logged_policy_reward": one(e.logged),
        "baseline_ips": one(e.ips),
        "baseline_snips": one(e.snips),
    });
    if let (true, Some(o)) = (e.count < FEW, v.as_object_mut()) {
        o.insert(
            "warning".into(),
            json!(format!(
                "only {}: the intervals are too rough to read much into",
                crate::plural(e.count as u64, "decision")
            )),
        );
    }
    v
}

fn time(t: &Option<(String, fb_schema::TimeStamp)>) -> Value {
    match t {
        Some((id, ts)) => {
            let mut text = Vec::new();
            fb_join::time::push_timestamp(&mut text, ts, fb_join::Compat::Sane);
            let text = String::from_utf8_lossy(&text).trim_matches('"').to_string();
            json!({"event_id": id, "time": text})
        }
        None => Value::Null,
    }
}

/// Builds the JSON report (the table is printed from it too). `kept` are
/// the metrics of the events the filters kept; `read` the joiner's own.
pub fn report_json(
    inputs: usize,
    run: &RunReport,
    joiner: &Joiner,
    kept: &Metrics,
    filtered: u64,
    estimates: &Estimators,
) -> Value {
    let read = joiner.metrics();
    let diags = joiner.diagnostics();
    let skipped: serde_json::Map<String, Value> = diags
        .counts()
        .iter()
        .map(|(k, v)| (k.name().to_string(), json!(v)))
        .collect();
    let by_kind: serde_json::Map<String, Value> = kept
        .by_kind()
        .map(|(k, v)| {
            let mean = if v.events > 0 {
                v.reward_sum / v.events as f64
            } else {
                0.0
            };
            (
                k.to_string(),
                json!({"events": v.events, "learnable": v.learnable, "reward_sum": v.reward_sum,
                       "reward_mean": mean, "cost_sum": -v.reward_sum,
                       "original_reward_sum": v.original_reward_sum}),
            )
        })
        .collect();
    json!({
        "inputs": inputs,
        "logs": run.logs,
        "bytes": run.bytes,
        "messages": run.kinds.by_name().collect::<std::collections::BTreeMap<_, _>>(),
        "events_read": read.events_read,
        "joined": read.joined,
        "filtered_out": filtered,
        "not_selected": read.not_selected,
        "kept": kept.joined,
        "learnable": kept.joined - kept.skipped_learn,
        "not_learnable": kept.skipped_learn,
        "outcomes": kept.outcomes,
        "activations": kept.activations,
        "first": time(&kept.first),
        "last": time(&kept.last),
        "cost_sum": kept.cost_sum,
        "original_cost_sum": kept.original_cost_sum,
        "by_problem_type": by_kind,
        "skipped_by_reason": skipped,
        "damaged_inputs": run.damage.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "salvaged": {
            "messages": run.salvaged.len(),
            "events_kept": run.salvaged.iter().map(|(_, s)| s.kept).sum::<u64>(),
            "events_withheld": run.salvaged.iter().map(|(_, s)| s.withheld).sum::<u64>(),
            "events_lost": run.salvaged.iter().map(|(_, s)| s.lost_count()).sum::<u64>(),
        },
        "reference_metrics": {
            "not_learnable": kept.skipped_learn,
            "original_cost_sum": kept.original_cost_sum,
            "zero_action_events": kept.zero_actions,
            "cb_baseline_events": kept.cb_baseline_count,
            "cb_baseline_original_cost_sum": kept.cb_baseline_original_cost_sum,
            "first_slot_original_cost_sum": kept.first_slot_original_cost_sum,
            "first_slot_equal_baseline": kept.first_slot_equal_baseline,
            "first_slot_not_equal_baseline": kept.first_slot_not_equal_baseline,
            "first_slot_equal_baseline_cost_sum": kept.first_slot_equal_baseline_cost_sum,
        },
        "counterfactual": estimates.json(),
    })
}

/// What stats keep of the kept events: their metrics and the estimators.
///
/// Float sums depend on the order of their terms, and every face shows
/// the same figures whatever the number of threads, so every sum is one
/// thread's per-event sum in log order. A batch made on a worker thread
/// counts its events (counts merge exactly) and keeps their float
/// additions ([`Metrics::record_with`], the estimators' samples) for the
/// sink to add in log order. One thread's loop needs none of that: the
/// sink lends it its total ([`fb_join::Sink::first_batch`]), and each
/// event is added straight to it.
#[derive(Default)]
pub struct Tally {
    /// Metrics of the kept events.
    pub kept: Metrics,
    /// Counterfactual estimators over them.
    pub estimators: Estimators,
    /// The sink's total, lent to one thread's loop: events are added to
    /// its sums directly.
    lent: bool,
    /// A batch's metrics' float additions, in log order.
    additions: Vec<Addition>,
    /// A batch's estimators' samples, in log order.
    samples: Vec<(Target, Sample)>,
}

impl Tally {
    /// Whether this is a sink's total lent to one thread's loop
    /// ([`fb_join::Sink::first_batch`]): events are added to its sums
    /// directly.
    pub(crate) fn is_lent(&self) -> bool {
        self.lent
    }
}

/// Additions in a batch before one thread hands it over (several threads
/// hand over a batch per chunk of messages).
pub(crate) const BATCH: usize = 8192;

/// Fills [`Tally`] batches.
pub struct TallyMaker;

impl TallyMaker {
    /// Adds one kept event to `batch`, and hands each of its samples to
    /// `also` as well (the report's time windows estimate from the same
    /// samples).
    #[inline]
    pub(crate) fn add_also(
        &mut self,
        batch: &mut Tally,
        ev: &JoinedEvent<'_>,
        mut also: impl FnMut(Target, Sample),
    ) {
        let left_out = if batch.lent {
            batch.kept.record(ev);
            let estimators = &mut batch.estimators;
            Estimators::samples(ev, |t, s| {
                estimators.put(t, s);
                also(t, s);
            })
        } else {
            let additions = &mut batch.additions;
            batch.kept.record_with(ev, |_, a| additions.push(a));
            let samples = &mut batch.samples;
            Estimators::samples(ev, |t, s| {
                samples.push((t, s));
                also(t, s);
            })
        };
        batch.estimators.zero_pass += u64::from(left_out);
    }
}

impl fb_join::Maker for TallyMaker {
    type Batch = Tally;

    fn batch(&mut self) -> Tally {
        Tally::default()
    }

    fn add(&mut self, batch: &mut Tally, ev: &JoinedEvent<'_>) {
        self.add_also(batch, ev, |_, _| {});
    }

    fn full(&self, batch: &Tally) -> bool {
        batch.additions.len() >= BATCH
    }

    fn clear(&mut self, batch: &mut Tally) {
        batch.kept = Metrics::default();
        batch.estimators = Estimators::default();
        batch.lent = false;
        batch.additions.clear();
        batch.samples.clear();
    }
}

/// The stats sink: the sum of every batch, in log order.
#[derive(Default)]
pub struct TallySink(pub Tally);

impl fb_join::Sink for TallySink {
    type Batch = Tally;
    type Maker = TallyMaker;

    fn maker(&self) -> TallyMaker {
        TallyMaker
    }

    fn first_batch(&mut self, _: &mut TallyMaker) -> Tally {
        let mut total = std::mem::take(&mut self.0);
        total.lent = true;
        total
    }

    fn batches_may_join(&self) -> bool {
        // Float sums are kept per event and added in log order.
        true
    }

    fn work_is_light(&self) -> bool {
        true
    }

    fn take(&mut self, batch: &mut Tally) -> Result<(), fb_join::Error> {
        self.absorb(batch);
        Ok(())
    }
}

impl TallySink {
    /// Takes a batch, in log order ([`fb_join::Sink::take`], which
    /// cannot fail here).
    pub(crate) fn absorb(&mut self, batch: &mut Tally) {
        if batch.lent {
            // The total, back from one thread's loop; the sink held an
            // empty tally meanwhile, which the loop clears and reuses.
            batch.lent = false;
            std::mem::swap(&mut self.0, batch);
            return;
        }
        let total = &mut self.0;
        // The batch's float sums are all +0.0, which leaves each sum as it
        // is (one that starts at +0.0 never becomes -0.0): only its counts
        // add.
        total.kept.merge(&batch.kept);
        for &a in &batch.additions {
            total.kept.add(a);
        }
        for &(target, sample) in &batch.samples {
            total.estimators.put(target, sample);
        }
        total.estimators.zero_pass += batch.estimators.zero_pass;
    }
}

/// `fb stats` and `vwlogs.stats`: the report of `job`'s inputs (the
/// `fb stats --json` document), joined on `threads` threads; the sums
/// add up in log order, so the report is the same bytes for any number.
pub fn run<R: crate::drive::Readable>(
    job: crate::job::Job<'_, R>,
    threads: usize,
    observer: &mut dyn crate::report::Observer,
) -> crate::job::Outcome<Value> {
    crate::job::on_threads(
        job,
        TallySink::default(),
        threads,
        observer,
        |done, TallySink(tally)| {
            report_json(
                done.inputs,
                done.run,
                done.joiner,
                &tally.kept,
                done.filtered,
                &tally.estimators,
            )
        },
    )
}

#[cfg(test)]
#[path = "stats_tests.rs"]
mod tests;
