//! `fb validate`: every problem of a log, with where it is.

use std::path::PathBuf;
use std::process::ExitCode;

use fb_format::{Framer, MessageKind, Payload, PayloadDecoder, StreamReader};
use fb_join::{Joiner, Kind};

use crate::input::{self, Input};
use crate::joinargs::JoinArgs;
use crate::Global;

/// Arguments of `fb validate`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Logs to check (files, directories, `-` for stdin); each must stand
    /// on its own (no checkpoint carries over from one to the next).
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,

    /// List at most this many problems (all are counted).
    #[arg(long, default_value_t = 100)]
    pub max_errors: usize,

    #[command(flatten)]
    pub join: JoinArgs,
}

/// Problems found so far, printed as they come up to the limit.
struct Problems {
    count: u64,
    max: usize,
}

impl Problems {
    fn add(
        &mut self,
        input: &str,
        offset: u64,
        message: Option<u64>,
        event: Option<&str>,
        what: &str,
    ) {
        self.count += 1;
        if self.count as usize <= self.max {
            let mut at = format!("{input}: byte {offset}");
            if let Some(m) = message {
                at.push_str(&format!(", message {m}"));
            }
            if let Some(e) = event {
                at.push_str(&format!(", event `{e}`"));
            }
            println!("{at}: {what}");
        }
    }
}

/// The joiner's findings that are about joinability (the structural ones
/// are found by the checks here already).
fn joinability(kind: Kind) -> bool {
    !matches!(
        kind,
        Kind::InvalidJoinedPayload
            | Kind::BadEvent
            | Kind::EventsDropped
            | Kind::InvalidPayload
            | Kind::InvalidContext
            | Kind::Framing
            | Kind::UnknownMessageType
    )
}

fn context_of<'a>(payload: &Payload<'a>) -> Option<&'a [u8]> {
    match payload {
        Payload::Cb(e) => e.context().map(|c| c.bytes()),
        Payload::Ccb(e) | Payload::Slates(e) => e.context().map(|c| c.bytes()),
        Payload::Ca(e) => e.context().map(|c| c.bytes()),
        Payload::MultiStep(e) => e.context().map(|c| c.bytes()),
        _ => None,
    }
}

fn check(
    input: &Input,
    joiner: &mut Joiner,
    problems: &mut Problems,
) -> Result<(u64, u64), String> {
    let name = input.name();
    let opened = input::open(input)?;
    if let Some(why) = opened.not_a_log {
        problems.add(&name, 0, None, None, &why);
        return Ok((0, 0));
    }
    let limit = u32::try_from(joiner.options().max_payload).unwrap_or(u32::MAX);
    let mut reader = StreamReader::with_framer(opened.reader, Framer::with_max_payload(limit));
    let mut decoder = PayloadDecoder::default();
    let (mut messages, mut events) = (0u64, 0u64);
    loop {
        let msg = match reader.next_message() {
            Ok(Some(msg)) => msg,
            Ok(None) => break,
            Err(err) => {
                problems.add(&name, err.offset(), None, None, &err.to_string());
                break;
            }
        };
        messages += 1;
        let at = |p: &mut Problems, event: Option<&str>, what: &str| {
            p.add(&name, msg.offset, Some(msg.index), event, what)
        };
        match msg.kind {
            MessageKind::Unknown(_) => {
                let w = msg
                    .unknown_warning()
                    .map(|w| w.to_string())
                    .unwrap_or_default();
                at(problems, None, &w);
            }
            MessageKind::Header => {
                if let Err(e) = msg.file_header() {
                    at(problems, None, &e.to_string());
                }
            }
            MessageKind::Checkpoint => {
                if let Err(e) = msg.checkpoint() {
                    at(problems, None, &e.to_string());
                }
            }
            MessageKind::Regular => match msg.events() {
                Err(e) => at(problems, None, &format!("{e}: the whole message is lost")),
                Ok(list) => {
                    for (position, ev) in list.enumerate() {
                        events += 1;
                        let view = match ev {
                            Ok(v) => v,
                            Err(e) => {
                                at(problems, None, &format!("event {position}: {e}"));
                                continue;
                            }
                        };
                        match decoder.payload(&view) {
                            Err(e) => at(problems, Some(view.id), &e.to_string()),
                            Ok(payload) => {
                                if let Some(ctx) = context_of(&payload) {
                                    if let Err(e) = serde_json::from_slice::<serde_json::Value>(ctx)
                                    {
                                        at(
                                            problems,
                                            Some(view.id),
                                            &format!("context is not valid JSON: {e}"),
                                        );
                                    }
                                }
                            }
                        }
                    }
                }
            },
            MessageKind::FileMagic | MessageKind::Eof => {}
        }
        // Joined for its diagnostics only.
        joiner.push_each(&msg, |_| {});
    }
    Ok((messages, events))
}

/// Checks every input; exit 0 clean, 1 problems found, 2 usage or I/O error.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, String> {
    let inputs = input::resolve(&args.inputs)?;
    let mut problems = Problems {
        count: 0,
        max: args.max_errors,
    };
    let (mut messages, mut events) = (0, 0);
    for input in &inputs {
        // Each log must stand on its own: a fresh joiner per input.
        let mut joiner = Joiner::new(args.join.options());
        let (m, e) = check(input, &mut joiner, &mut problems)?;
        messages += m;
        events += e;
        let diags = joiner.diagnostics();
        let name = input.name();
        for d in diags.kept().iter().filter(|d| joinability(d.kind)) {
            problems.add(
                &name,
                d.offset,
                Some(d.message),
                d.event_id.as_deref(),
                &d.detail,
            );
        }
        // Diagnostics beyond the joiner's keep limit are counted, not listed.
        let kept = diags.kept().iter().filter(|d| joinability(d.kind)).count() as u64;
        let counted: u64 = diags
            .counts()
            .iter()
            .filter(|(k, _)| joinability(**k))
            .map(|(_, v)| v)
            .sum();
        problems.count += counted - kept;
    }
    let listed = (problems.count as usize).min(args.max_errors);
    if problems.count as usize > listed {
        println!(
            "... and {} more problems (raise --max-errors to list them)",
            problems.count as usize - listed
        );
    }
    if !global.quiet {
        let verdict = if problems.count == 0 {
            "valid".to_string()
        } else {
            format!("{} problems", problems.count)
        };
        eprintln!(
            "fb: {} inputs, {messages} messages, {events} events: {verdict}",
            inputs.len()
        );
    }
    Ok(if problems.count == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
