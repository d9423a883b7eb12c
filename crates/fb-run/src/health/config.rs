//! The configurations checkpoints put in force, as the report lists them:
//! each with the input it came from and when, told by the decisions
//! around it (a checkpoint carries no time of its own).

use fb_join::{ConfigChange, ConfigHistory, LearningMode};

use crate::report::RunReport;

/// One row of the configuration table.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// The input the checkpoint is in.
    pub input: String,
    /// Byte offset of the checkpoint in it.
    pub offset: u64,
    /// Its message index there.
    pub message: u64,
    /// Decisions joined before it.
    pub decisions_before: u64,
    /// Time of the last decision before it (text), if any.
    pub after: Option<String>,
    /// Problem type, or "unknown".
    pub problem_type: String,
    /// Reward function.
    pub reward_function: String,
    /// Default reward.
    pub default_reward: f32,
    /// Learning mode.
    pub learning_mode: String,
    /// Client time used instead of enqueued time.
    pub use_client_time: bool,
}

/// A learning mode's name, as the command line spells it.
pub fn mode_name(mode: LearningMode) -> String {
    match mode {
        LearningMode::Online => "online".into(),
        LearningMode::Apprentice => "apprentice".into(),
        LearningMode::LoggingOnly => "loggingonly".into(),
        LearningMode::Other(n) => format!("unknown ({n})"),
    }
}

/// A time as the report writes it: `YYYY-MM-DDTHH:MM:SS.ffffffZ`.
pub fn time_text(t: &fb_schema::TimeStamp) -> String {
    let mut text = Vec::new();
    fb_join::time::push_timestamp(&mut text, t, fb_join::Compat::Sane);
    String::from_utf8_lossy(&text).trim_matches('"').to_string()
}

fn row(run: &RunReport, index: usize, c: &ConfigChange) -> Row {
    let cfg = &c.config;
    Row {
        input: run.file_of_change(index).unwrap_or("-").to_string(),
        offset: c.offset,
        message: c.message,
        decisions_before: c.decisions_before,
        after: c.last_before.as_ref().map(time_text),
        problem_type: match cfg.problem_type {
            Some(p) => p.name().to_string(),
            None => "unknown".into(),
        },
        reward_function: cfg.reward_function.name().to_string(),
        default_reward: cfg.default_reward,
        learning_mode: mode_name(cfg.learning_mode),
        use_client_time: cfg.use_client_time,
    }
}

/// The rows of a run's configuration changes, in log order.
pub fn rows(run: &RunReport, history: &ConfigHistory) -> Vec<Row> {
    history
        .changes
        .iter()
        .enumerate()
        .map(|(i, c)| row(run, i, c))
        .collect()
}
