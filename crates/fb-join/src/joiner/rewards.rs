//! A decision's reward from its outcomes, by the reward function of the
//! configuration in force (SEMANTICS.md §4).

use super::Joiner;
use crate::event::Outcome;
use crate::reward::{compute, Signal};
use crate::{time, RewardFunction};

impl Joiner {
    pub(super) fn reward<'o>(
        &mut self,
        outcomes: impl Iterator<Item = &'o Outcome> + Clone,
    ) -> f32 {
        self.reward_over(outcomes, true)
    }

    /// The reward over `outcomes`; with `timed` false their times are
    /// ignored (all equal).
    pub(super) fn reward_over<'o>(
        &mut self,
        outcomes: impl Iterator<Item = &'o Outcome> + Clone,
        timed: bool,
    ) -> f32 {
        let mut signals = std::mem::take(&mut self.signals);
        signals.clear();
        // Only `earliest` looks at times, and only to choose between two
        // rewards or more (activations are none): a time key costs a
        // calendar computation per outcome, and most decisions have one.
        let timed = timed
            && self.config.reward_function == RewardFunction::Earliest
            && outcomes
                .clone()
                .filter(|o| !o.action_taken)
                .nth(1)
                .is_some();
        signals.extend(outcomes.map(|o| signal(o, timed)));
        let reward = compute(
            self.config.reward_function,
            &signals,
            self.config.default_reward,
            self.opts.compat,
        );
        self.signals = signals;
        reward
    }
}

fn signal(o: &Outcome, timed: bool) -> Signal {
    Signal {
        value: o.value.number(),
        time: if timed { time::key(&o.time) } else { (0, 0) },
        activation: o.action_taken,
    }
}
