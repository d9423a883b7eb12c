//! Prints every event of a joined log, one per line (a debugging aid).
//!
//! `cargo run -p fb-format --example dump -- FILE`

use fb_format::{MessageKind, Payload, PayloadDecoder, SliceReader};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let path = std::env::args().nth(1).ok_or("usage: dump FILE")?;
    let data = std::fs::read(&path)?;
    let mut decoder = PayloadDecoder::default();
    for msg in SliceReader::new(&data) {
        let msg = match msg {
            Ok(m) => m,
            Err(e) => {
                println!("error: {e}");
                break;
            }
        };
        if msg.kind == MessageKind::Checkpoint {
            println!("#{} CHECKPOINT {:?}", msg.index, msg.checkpoint());
        }
        if msg.kind != MessageKind::Regular {
            println!("#{} {}", msg.index, msg.kind);
            continue;
        }
        let events = match msg.events() {
            Ok(e) => e,
            Err(e) => {
                println!("#{} REGULAR error {e}", msg.index);
                continue;
            }
        };
        println!("#{} REGULAR {} events", msg.index, events.total());
        for ev in events {
            match ev {
                Err(e) => println!("  error {e}"),
                Ok(v) => {
                    let t = v.enqueued;
                    print!(
                        "  id={} type={:?} enc={:?} pass={} enq={}-{}-{}T{}:{}:{}.{} ct={:?} ",
                        v.id,
                        v.payload_type(),
                        v.meta.encoding(),
                        v.meta.pass_probability(),
                        t.year(),
                        t.month(),
                        t.day(),
                        t.hour(),
                        t.minute(),
                        t.second(),
                        t.subsecond(),
                        v.client_time().map(|c| (c.second(), c.subsecond()))
                    );
                    match decoder.payload(&v) {
                        Ok(Payload::Cb(c)) => println!(
                            "CB deferred={} a={:?} p={:?} mode={:?} model={:?} ctx={}",
                            c.deferred_action(),
                            c.action_ids().map(|a| a.iter().collect::<Vec<_>>()),
                            c.probabilities().map(|a| a.iter().collect::<Vec<_>>()),
                            c.learning_mode(),
                            c.model_id(),
                            c.context()
                                .map(|c| String::from_utf8_lossy(c.bytes()).into_owned())
                                .unwrap_or_default()
                        ),
                        Ok(Payload::MultiStep(c)) => println!(
                            "MS ev={:?} prev={:?} a={:?} deferred={}",
                            c.event_id(),
                            c.previous_id(),
                            c.action_ids().map(|a| a.iter().collect::<Vec<_>>()),
                            c.deferred_action()
                        ),
                        Ok(Payload::Ccb(c)) | Ok(Payload::Slates(c)) => println!(
                            "MULTISLOT deferred={} slots={:?} base={:?} mode={:?}",
                            c.deferred_action(),
                            c.slots().map(|s| s
                                .iter()
                                .map(|s| (
                                    s.id(),
                                    s.action_ids().map(|a| a.iter().collect::<Vec<_>>())
                                ))
                                .collect::<Vec<_>>()),
                            c.baseline_actions().map(|a| a.iter().collect::<Vec<_>>()),
                            c.learning_mode()
                        ),
                        Ok(p) => println!("{p:?}"),
                        Err(e) => println!("payload error {e}"),
                    }
                }
            }
        }
    }
    Ok(())
}
