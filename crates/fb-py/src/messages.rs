//! `vwlogs.inspect`: the messages of one log, one dict each, read lazily
//! as the Python side iterates.

use std::io::Read;
use std::sync::Mutex;

use fb_format::{MessageKind, StreamReader};
use pyo3::prelude::*;
use pyo3::types::PyDict;

use crate::drive::Damage;
use crate::source::Src;

/// An iterator over the messages of one log.
#[pyclass(module = "vwlogs._native", name = "Messages")]
pub struct Messages {
    reader: Mutex<Option<StreamReader<Box<dyn Read + Send>>>>,
    name: String,
}

impl Messages {
    /// Opens `src`.
    pub fn open(src: Src) -> PyResult<Self> {
        let name = src.input().name();
        let reader = src.open().map_err(pyo3::exceptions::PyOSError::new_err)?;
        Ok(Self {
            reader: Mutex::new(Some(StreamReader::new(reader))),
            name,
        })
    }
}

#[pymethods]
impl Messages {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    /// The next message: index, offset, type, size (payload bytes), and
    /// for REGULAR messages the number of events and their ids in order
    /// (an id repeated in a row once), or what is wrong with the payload.
    fn __next__<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyDict>>> {
        let mut guard = self.reader.lock().unwrap_or_else(|p| p.into_inner());
        let Some(reader) = guard.as_mut() else {
            return Ok(None);
        };
        let msg = match reader.next_message() {
            Ok(Some(msg)) => msg,
            Ok(None) => {
                *guard = None;
                return Ok(None);
            }
            Err(e) => {
                let damage = Damage {
                    path: self.name.clone(),
                    offset: e.offset(),
                    message_index: e.index(),
                    message: format!("{}: {e}", self.name),
                };
                *guard = None;
                return Err(crate::log_error(py, &damage));
            }
        };
        let d = PyDict::new(py);
        d.set_item("index", msg.index)?;
        d.set_item("offset", msg.offset)?;
        d.set_item("type", msg.kind.name())?;
        d.set_item(
            "size",
            match msg.kind {
                MessageKind::FileMagic => None,
                _ => Some(msg.payload.len()),
            },
        )?;
        if msg.kind == MessageKind::Regular {
            match fb_run::inspect::event_ids(&msg) {
                Ok((count, found)) => {
                    d.set_item("events", count)?;
                    let (ids, problems): (Vec<_>, Vec<_>) =
                        found.into_iter().partition(Result::is_ok);
                    let ids: Vec<String> = ids.into_iter().flatten().collect();
                    d.set_item("event_ids", ids)?;
                    if !problems.is_empty() {
                        let problems: Vec<String> =
                            problems.into_iter().filter_map(Result::err).collect();
                        d.set_item("problems", problems)?;
                    }
                }
                Err(e) => d.set_item("problems", vec![e.to_string()])?,
            }
        }
        Ok(Some(d))
    }
}
