//! Continuous actions (CA): vw-estimators' CATS transformer
//! (`bandits/cats_utils.py`). A CATS policy predicts a point; VW
//! discretizes the range [min, max] into `num_actions` bins and explores
//! within `bandwidth` of the centre of the predicted point's bin. The
//! target's density at the logged action is then `1 / b` when the logged
//! action is within `bandwidth` of that centre (b: the window
//! `[centre − bandwidth, centre + bandwidth]` clipped to [min, max]), else
//! 0; the logged density is the log's `pdf_value`. The CB estimators then
//! take these densities as `q` and `p`.
//!
//! The parameters are those the loop's model was trained with (VW's
//! `--cats`, `--bandwidth`, `--min_value`, `--max_value`); the log does
//! not hold them, so they are options.

use std::fmt;
use std::str::FromStr;

/// The CATS parameters.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Cats {
    /// Bins of the range (VW's `--cats N`).
    pub num_actions: u32,
    /// Radius of exploration around a bin's centre.
    pub bandwidth: f64,
    /// Smallest action.
    pub min: f64,
    /// Largest action.
    pub max: f64,
}

impl Cats {
    /// The form the option takes, for help and errors.
    pub const FORM: &'static str = "NUM_ACTIONS,BANDWIDTH,MIN,MAX";

    /// One bin's width.
    fn unit_range(&self) -> f64 {
        (self.max - self.min) / f64::from(self.num_actions)
    }

    /// The transformer's `baseline1` prediction: the centre of the first
    /// bin.
    pub fn baseline(&self) -> f64 {
        self.min + self.unit_range() / 2.0
    }

    /// The uniform density over [min, max] (fb's own `uniform` for CA:
    /// vw-estimators has none).
    pub fn uniform(&self) -> f64 {
        1.0 / (self.max - self.min)
    }

    /// The density a policy predicting `predicted` gives the logged
    /// action `logged`.
    pub fn density(&self, logged: f64, predicted: f64) -> f64 {
        let unit = self.unit_range();
        let last = f64::from(self.num_actions) - 1.0;
        let bin = ((predicted - self.min) / unit).floor().min(last);
        let centre = self.min + bin * unit + unit / 2.0;
        // Python's math.isclose(centre, logged, abs_tol=bandwidth), whose
        // rel_tol defaults to 1e-9.
        let tol = (1e-9 * centre.abs().max(logged.abs())).max(self.bandwidth);
        if (centre - logged).abs() <= tol {
            let b = self.max.min(centre + self.bandwidth) - self.min.max(centre - self.bandwidth);
            1.0 / b
        } else {
            0.0
        }
    }
}

impl FromStr for Cats {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let parts: Vec<&str> = s.split(',').map(str::trim).collect();
        let bad = |why: &str| format!("`{s}` is not {}: {why}", Self::FORM);
        let [n, bw, min, max] = parts[..] else {
            return Err(bad("four numbers separated by commas"));
        };
        let num_actions = n
            .parse::<u32>()
            .ok()
            .filter(|&n| n >= 1)
            .ok_or_else(|| bad("NUM_ACTIONS is a whole number from 1"))?;
        let float = |x: &str, what: &str| {
            x.parse::<f64>()
                .ok()
                .filter(|v| v.is_finite())
                .ok_or_else(|| bad(&format!("{what} is not a finite number")))
        };
        let bandwidth = float(bw, "BANDWIDTH")?;
        let (min, max) = (float(min, "MIN")?, float(max, "MAX")?);
        if bandwidth <= 0.0 {
            return Err(bad("BANDWIDTH must be above 0"));
        }
        if min >= max {
            return Err(bad("MIN must be below MAX"));
        }
        Ok(Self {
            num_actions,
            bandwidth,
            min,
            max,
        })
    }
}

impl fmt::Display for Cats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{},{},{},{}",
            self.num_actions, self.bandwidth, self.min, self.max
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_refuses() {
        let c: Cats = "4, 1.5, 0, 100".parse().unwrap();
        assert_eq!(
            c,
            Cats {
                num_actions: 4,
                bandwidth: 1.5,
                min: 0.0,
                max: 100.0
            }
        );
        for (name, text) in [
            ("three numbers", "4,1,0"),
            ("zero bins", "0,1,0,1"),
            ("zero bandwidth", "4,0,0,1"),
            ("min above max", "4,1,5,1"),
            ("not a number", "4,x,0,1"),
            ("infinite", "4,1,0,inf"),
        ] {
            assert!(text.parse::<Cats>().is_err(), "{name}");
        }
    }

    #[test]
    fn densities_by_hand() {
        // Bins of 25 over [0, 100]; centres 12.5, 37.5, 62.5, 87.5.
        let c: Cats = "4,10,0,100".parse().unwrap();
        assert_eq!(c.baseline(), 12.5);
        assert_eq!(c.uniform(), 0.01);
        for (name, logged, predicted, want) in [
            // Window [2.5, 22.5]: width 20.
            ("inside the first bin's window", 20.0, 3.0, 1.0 / 20.0),
            ("outside it", 23.0, 3.0, 0.0),
            // Window [27.5, 47.5].
            ("second bin", 30.0, 40.0, 1.0 / 20.0),
            // Predicted past max: the last bin; window [77.5, 97.5].
            ("past max", 90.0, 150.0, 1.0 / 20.0),
        ] {
            assert_eq!(c.density(logged, predicted), want, "{name}");
        }
        // A window clipped by min: bandwidth 20 around 12.5 is [0, 32.5].
        let wide: Cats = "4,20,0,100".parse().unwrap();
        assert_eq!(wide.density(1.0, 12.5), 1.0 / 32.5);
    }
}
