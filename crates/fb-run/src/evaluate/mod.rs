//! Off-policy evaluation (`fb evaluate`, `vwlogs.evaluate`): how other
//! policies would have done on the logged decisions, with the estimators
//! and intervals of vw-estimators.
//!
//! - [`cats`]: the CATS transformer of continuous actions;
//! - [`special`]: the quantile functions the intervals need;
//! - [`estimators`]: constant-memory tallies and their estimates;
//! - [`multislot`]: the CCB multislot estimator, per slot id;
//! - [`policies`]: target policies and VW prediction files;
//! - `records`: joined events as compact records;
//! - [`mod@run`]: the sink that feeds events to the tallies;
//! - [`report`]: the JSON (and rows) every face shows;
//! - [`command`]: a run end to end ([`run()`]), for every face.

pub mod cats;
pub mod command;
pub mod estimators;
pub mod multislot;
pub mod policies;
pub(crate) mod records;
pub mod report;
pub mod run;
pub mod special;

pub use cats::Cats;
pub use command::run;
pub use policies::Spec;
pub use run::{By, Evaluation, Kind};
