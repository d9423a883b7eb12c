//! `fb inspect`: the messages of one log, or its events as JSON lines.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use fb_format::{EventView, Message, MessageKind, Payload, PayloadDecoder, StreamReader};
use fb_schema::{IndexValue, OutcomeValue, TimeStamp};
use serde_json::{json, Value};

use crate::Global;
use fb_run::input::{Head, Input};
use fb_run::output::Output;
use fb_run::Error;

/// Arguments of `fb inspect`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The logs to look at (files, directories, `-` for stdin). With
    /// several, each listing starts with a `==> NAME <==` line, and each
    /// JSON line of --events carries a "file" key.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,

    /// How to read the logs.
    #[command(flatten)]
    pub read: crate::joinargs::ReadArgs,

    /// Dump every decoded event as a JSON line (metadata, typed payload)
    /// instead of the message listing; HEADER and CHECKPOINT too.
    #[arg(long)]
    pub events: bool,

    /// Only the message that starts at this byte offset (one log only).
    #[arg(long, value_name = "N")]
    pub offset: Option<u64>,

    /// Only count messages per type (framing only, nothing decoded).
    #[arg(long, conflicts_with_all = ["events", "offset"])]
    pub count: bool,

    /// The DSJSON line(s) of the decision with this event id, as `fb
    /// convert` writes them; with a fresh `LOG.fbidx` (`fb index`) only
    /// the blocks that may hold it are read. Exit 1 when it is not found.
    #[arg(long, value_name = "ID", conflicts_with_all = ["events", "offset", "count"])]
    pub event_id: Option<String>,

    /// With --event-id: read the whole log even if it has an index.
    #[arg(long, requires = "event_id")]
    pub no_index: bool,
}

fn ts(t: &TimeStamp) -> Value {
    Value::String(format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:07}Z",
        t.year(),
        t.month(),
        t.day(),
        t.hour(),
        t.minute(),
        t.second(),
        t.subsecond()
    ))
}

fn context(bytes: Option<flatbuffers::Vector<'_, u8>>) -> Value {
    let Some(bytes) = bytes else {
        return Value::Null;
    };
    serde_json::from_slice(bytes.bytes())
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(bytes.bytes()).into_owned()))
}

fn list<T: serde::Serialize, I: IntoIterator<Item = T>>(v: Option<I>) -> Value {
    v.map_or(Value::Null, |v| json!(v.into_iter().collect::<Vec<T>>()))
}

fn payload_json(p: &Payload<'_>) -> Value {
    match p {
        Payload::Cb(e) => json!({
            "type": "CbEvent", "deferred_action": e.deferred_action(), "action_ids": list(e.action_ids()),
            "probabilities": list(e.probabilities()), "model_id": e.model_id(),
            "learning_mode": format!("{:?}", e.learning_mode()), "context": context(e.context()),
        }),
        Payload::Ccb(e) | Payload::Slates(e) => json!({
            "type": if matches!(p, Payload::Ccb(_)) { "MultiSlotEvent (CCB)" } else { "MultiSlotEvent (Slates)" },
            "deferred_action": e.deferred_action(),
            "slots": e.slots().map_or(Value::Null, |s| s.iter().map(|s| json!({
                "id": s.id(), "action_ids": list(s.action_ids()), "probabilities": list(s.probabilities()),
            })).collect()),
            "baseline_actions": list(e.baseline_actions()), "model_id": e.model_id(),
            "learning_mode": format!("{:?}", e.learning_mode()), "context": context(e.context()),
        }),
        Payload::Ca(e) => json!({
            "type": "CaEvent", "deferred_action": e.deferred_action(), "action": e.action(),
            "pdf_value": e.pdf_value(), "model_id": e.model_id(),
            "learning_mode": format!("{:?}", e.learning_mode()), "context": context(e.context()),
        }),
        Payload::Outcome(o) => json!({
            "type": "OutcomeEvent",
            "value": match o.value() {
                OutcomeValue::Numeric(v) => json!(v),
                OutcomeValue::Literal(s) => json!(s),
                OutcomeValue::None => Value::Null,
                OutcomeValue::Unknown(tag) => json!({"unknown_tag": tag}),
            },
            "index": match o.index() {
                IndexValue::Numeric(v) => json!(v),
                IndexValue::Literal(s) => json!(s),
                IndexValue::None => Value::Null,
                IndexValue::Unknown(tag) => json!({"unknown_tag": tag}),
            },
            "action_taken": o.action_taken(),
        }),
        Payload::Dedup(d) => json!({
            "type": "DedupInfo", "ids": list(d.ids()),
            "values": d.values().map_or(Value::Null, |v| v.iter().collect()),
        }),
        Payload::MultiStep(e) => json!({
            "type": "MultiStepEvent", "event_id": e.event_id(), "previous_id": e.previous_id(),
            "action_ids": list(e.action_ids()), "probabilities": list(e.probabilities()),
            "model_id": e.model_id(), "deferred_action": e.deferred_action(), "context": context(e.context()),
        }),
        Payload::Episode(e) => json!({"type": "EpisodeEvent", "episode_id": e.episode_id()}),
        Payload::Unknown(t) => json!({"type": "unknown", "payload_type": t.0}),
        other => json!({"type": other.table_name()}),
    }
}

fn event_json(view: &EventView<'_>, decoder: &mut PayloadDecoder) -> Value {
    let payload = match decoder.payload(view) {
        Ok(p) => payload_json(&p),
        Err(e) => json!({"error": e.to_string()}),
    };
    json!({
        "message": view.index, "offset": view.offset, "position": view.position, "id": view.id,
        "payload_type": format!("{:?}", view.payload_type()),
        "encoding": format!("{:?}", view.meta.encoding()),
        "pass_probability": view.meta.pass_probability(), "app_id": view.meta.app_id(),
        "client_time": view.client_time().map(|t| ts(&t)), "enqueued": ts(&view.enqueued),
        "payload": payload,
    })
}

/// JSON lines for one message in `--events` mode.
fn message_json(msg: &Message<'_>, decoder: &mut PayloadDecoder, problems: &mut u64) -> Vec<Value> {
    let head = json!({"message": msg.index, "offset": msg.offset, "type": msg.kind.name()});
    match msg.kind {
        MessageKind::Regular => match msg.events() {
            Err(e) => {
                *problems += 1;
                vec![json!({"message": msg.index, "offset": msg.offset, "error": e.to_string()})]
            }
            Ok(events) => events
                .enumerate()
                .map(|(position, ev)| match ev {
                    Ok(view) => event_json(&view, decoder),
                    Err(e) => {
                        *problems += 1;
                        json!({"message": msg.index, "offset": msg.offset, "position": position, "error": e.to_string()})
                    }
                })
                .collect(),
        },
        MessageKind::Checkpoint => vec![match msg.checkpoint() {
            Ok(c) => json!({"message": msg.index, "offset": msg.offset, "type": "CHECKPOINT",
                "reward_function": format!("{:?}", c.reward_function_type()), "default_reward": c.default_reward(),
                "learning_mode": format!("{:?}", c.learning_mode_config()),
                "problem_type": format!("{:?}", c.problem_type_config()), "use_client_time": c.use_client_time()}),
            Err(e) => {
                *problems += 1;
                json!({"message": msg.index, "offset": msg.offset, "type": "CHECKPOINT", "error": e.to_string()})
            }
        }],
        MessageKind::Header => vec![match msg.file_header() {
            Ok(h) => {
                let props: BTreeMap<&str, &str> = h
                    .properties()
                    .map(|p| p.iter().map(|kv| (kv.key().unwrap_or(""), kv.value().unwrap_or(""))).collect())
                    .unwrap_or_default();
                json!({"message": msg.index, "offset": msg.offset, "type": "HEADER",
                    "join_time": h.join_time().map(ts), "properties": props})
            }
            Err(e) => {
                *problems += 1;
                json!({"message": msg.index, "offset": msg.offset, "type": "HEADER", "error": e.to_string()})
            }
        }],
        _ => vec![head],
    }
}

/// Event ids a listing line shows of a message (`-v`: all of them).
const IDS_SHOWN: usize = 10;

fn regular_details(msg: &Message<'_>, problems: &mut u64, verbose: bool) -> String {
    let (count, ids) = match fb_run::inspect::event_ids(msg) {
        Ok(found) => found,
        Err(err) => {
            *problems += 1;
            return format!("damaged: {err}");
        }
    };
    let shown = if verbose { usize::MAX } else { IDS_SHOWN };
    let more = ids.len().saturating_sub(shown);
    let ids: Vec<String> = ids
        .into_iter()
        .enumerate()
        .filter_map(|(k, id)| match id {
            Ok(id) => (k < shown).then_some(id),
            // Damage is always said, and counted.
            Err(err) => {
                *problems += 1;
                Some(format!("<{err}>"))
            }
        })
        .collect();
    let more = match more {
        0 => String::new(),
        n => format!(", ... and {n} more (-v lists them)"),
    };
    format!("{count} events: {}{more}", ids.join(", "))
}

fn listing_line(msg: &Message<'_>, problems: &mut u64, global: &Global) -> String {
    let details = match msg.kind {
        MessageKind::FileMagic => format!("version {}", msg.size_field),
        MessageKind::Regular => regular_details(msg, problems, global.verbose > 0),
        MessageKind::Unknown(_) => {
            if let (Some(w), false) = (msg.unknown_warning(), global.quiet) {
                eprintln!("fb: warning: {w}");
            }
            String::from("skipped")
        }
        _ => String::new(),
    };
    let size = match msg.kind {
        MessageKind::FileMagic => String::from("-"),
        _ => msg.payload.len().to_string(),
    };
    let line = format!(
        "{:>7}  {:>12}  {:<10}  {:>10}  {}",
        msg.index,
        msg.offset,
        msg.kind.name(),
        size,
        details
    );
    line.trim_end().to_string()
}

/// Lists (or dumps) the logs; exits 1 when one is damaged.
pub fn run(args: &Args, global: &Global) -> Result<ExitCode, Error> {
    let inputs = crate::say::resolve(&args.files, global.quiet)?;
    if args.offset.is_some() && inputs.len() > 1 {
        return Err(Error::Msg(format!(
            "--offset names a byte of one log, and {} logs were given: name one file",
            inputs.len()
        )));
    }
    let mut out = Output::stdout();
    if let Some(id) = &args.event_id {
        return by_event_id(args, global, &inputs, id, out);
    }
    let mut failed = false;
    let several = inputs.len() > 1;
    for (n, input) in inputs.iter().enumerate() {
        if several && !args.events {
            let gap = if n > 0 { "\n" } else { "" };
            out.put(format!("{gap}==> {} <==\n", input.name()).as_bytes())?;
        }
        failed |= !inspect(args, global, input, several, &mut out)?;
    }
    out.finish()?;
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// `--event-id`: the decision's lines from each input that holds it.
fn by_event_id(
    args: &Args,
    global: &Global,
    inputs: &[Input],
    id: &str,
    mut out: Output,
) -> Result<ExitCode, Error> {
    let mut lines = 0;
    for input in inputs {
        // A file is read as it goes (mapped with --mmap), never whole.
        let data = fb_run::input::OpenLog::open(input, args.read.maps())?;
        let index = match args.no_index {
            true => None,
            false => {
                fb_run::lookup::index_for(input, &data, &mut crate::say::Voice::new(global.quiet))?
            }
        };
        let found = fb_run::lookup::event_lines(
            &data,
            index.as_ref(),
            id,
            fb_join::Options::default(),
            &mut out,
        )?;
        if global.verbose > 0 {
            eprintln!(
                "fb: {}: {} line(s) for {id}, {} of {} bytes read{}",
                input.name(),
                found.lines,
                found.read,
                fb_format::index::LogSource::len(&data),
                if index.is_some() { " (indexed)" } else { "" }
            );
        }
        lines += found.lines;
    }
    out.finish()?;
    if lines == 0 {
        if !global.quiet {
            eprintln!("fb: no decision with event id {id}");
        }
        return Ok(ExitCode::from(1));
    }
    Ok(ExitCode::SUCCESS)
}

/// Lists one log; false when it is damaged or not a log.
fn inspect(
    args: &Args,
    global: &Global,
    input: &Input,
    several: bool,
    out: &mut Output,
) -> Result<bool, Error> {
    let opened = fb_run::input::open(input)?;
    match &opened.head {
        Head::NotALog(why) => {
            eprintln!("fb: {}: {why}", input.name());
            return Ok(false);
        }
        head => {
            if let (Some(w), false) = (head.warning(), global.quiet) {
                eprintln!("fb: warning: {}: {w}", input.name());
            }
        }
    }
    let mut reader = StreamReader::new(opened.reader);
    let mut decoder = PayloadDecoder::default();
    let mut problems = 0u64;
    let mut counts: BTreeMap<&'static str, u64> = BTreeMap::new();
    let mut found = args.offset.is_none();
    let mut nearest: (Option<u64>, Option<u64>) = (None, None);
    let name = Value::String(input.name());
    let mut text = Vec::new();
    if !args.events && !args.count {
        writeln!(
            text,
            "{:>7}  {:>12}  {:<10}  {:>10}  details",
            "index", "offset", "type", "size"
        )
        .map_err(|e| out.error(e))?;
    }
    loop {
        let msg = match reader.next_message() {
            Ok(Some(msg)) => msg,
            Ok(None) => break,
            Err(err) => {
                problems += 1;
                eprintln!("fb: {}: {err}", input.name());
                break;
            }
        };
        if args.count {
            *counts.entry(msg.kind.name()).or_default() += 1;
            continue;
        }
        if let Some(want) = args.offset {
            if msg.offset != want {
                if msg.offset < want {
                    nearest.0 = Some(msg.offset);
                } else if nearest.1.is_none() {
                    nearest.1 = Some(msg.offset);
                }
                continue;
            }
            found = true;
        }
        if args.events {
            for mut v in message_json(&msg, &mut decoder, &mut problems) {
                if several {
                    if let Value::Object(map) = &mut v {
                        map.insert("file".into(), name.clone());
                    }
                }
                writeln!(text, "{v}").map_err(|e| out.error(e))?;
            }
        } else {
            writeln!(text, "{}", listing_line(&msg, &mut problems, global))
                .map_err(|e| out.error(e))?;
        }
        if text.len() >= fb_run::output::BUFFER {
            out.put(&text)?;
            text.clear();
        }
        if args.offset.is_some() {
            break;
        }
    }
    if args.count {
        for (kind, n) in &counts {
            writeln!(text, "{kind:<10} {n}").map_err(|e| out.error(e))?;
        }
        writeln!(text, "{:<10} {}", "total", counts.values().sum::<u64>())
            .map_err(|e| out.error(e))?;
        writeln!(text, "{:<10} {}", "bytes", reader.offset()).map_err(|e| out.error(e))?;
    }
    out.put(&text)?;
    if !found {
        let offset = args.offset.unwrap_or(0);
        let near = match nearest {
            (Some(a), Some(b)) => format!("the nearest starts are at bytes {a} and {b}"),
            (Some(a), None) if offset >= reader.offset() => format!(
                "the log ends at byte {}; its last message starts at byte {a}",
                reader.offset()
            ),
            (Some(a), None) | (None, Some(a)) => format!("the nearest start is at byte {a}"),
            (None, None) => "the log holds no message".to_string(),
        };
        eprintln!("fb: no message starts at byte {offset}; {near}");
        return Ok(false);
    }
    Ok(problems == 0)
}
