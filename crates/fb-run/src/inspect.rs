//! What `fb inspect` and `vwlogs.inspect` show of a log's messages.

use fb_format::Message;

/// The events of a REGULAR message: how many, and in order their ids (an
/// id repeated in a row once) or what is wrong with an event that cannot
/// be read.
pub fn event_ids(
    msg: &Message<'_>,
) -> Result<(usize, Vec<Result<String, String>>), fb_format::Error> {
    let events = msg.events()?;
    let count = events.total();
    let mut ids: Vec<Result<String, String>> = Vec::new();
    for event in events {
        match event {
            Ok(view) => {
                if !matches!(ids.last(), Some(Ok(last)) if last == view.id) {
                    ids.push(Ok(view.id.to_string()));
                }
            }
            Err(err) => ids.push(Err(err.to_string())),
        }
    }
    Ok((count, ids))
}
