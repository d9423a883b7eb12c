//! What Python hands us to read: paths (folders expanded as `fb` does),
//! `bytes`, and binary file objects (local, or fsspec's for object
//! stores), each turned into a reader for the pipeline.

use std::io::{self, Read};
use std::path::PathBuf;
use std::sync::Arc;

use fb_run::input::Input;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyString, PyTuple};

/// One source, in the order given.
pub enum Src {
    /// A file (folders were expanded into their files).
    Path(PathBuf),
    /// The contents of a `bytes` object, copied once: reading them must
    /// not need the interpreter, which may be busy waiting for our rows.
    Bytes(String, Arc<[u8]>),
    /// A binary file object; reading it takes the interpreter's lock.
    File(String, Py<PyAny>),
}

impl Src {
    /// The input the shared report and messages know it as.
    pub fn input(&self) -> Input {
        match self {
            Self::Path(p) => Input::File(p.clone()),
            Self::Bytes(name, _) | Self::File(name, _) => Input::Other(name.clone()),
        }
    }

    /// Whether reading it takes the interpreter's lock.
    pub fn needs_gil(&self) -> bool {
        matches!(self, Self::File(..))
    }

    /// A reader of its bytes from the first.
    pub fn open(&self) -> Result<Box<dyn Read + Send>, String> {
        match self {
            Self::Path(p) => std::fs::File::open(p)
                .map(|f| Box::new(f) as Box<dyn Read + Send>)
                .map_err(|e| format!("cannot open {}: {e}", p.display())),
            Self::Bytes(_, b) => Ok(Box::new(io::Cursor::new(Arc::clone(b)))),
            Self::File(_, f) => Ok(Box::new(PyReader(Python::attach(|py| f.clone_ref(py))))),
        }
    }
}

/// A Python binary file object as `io::Read`: each read takes the
/// interpreter's lock and calls its `read(n)`.
struct PyReader(Py<PyAny>);

impl Read for PyReader {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        Python::attach(|py| {
            let got = self
                .0
                .call_method1(py, "read", (buf.len(),))
                .map_err(|e| io::Error::other(e.to_string()))?;
            let got = got.bind(py);
            let bytes = got.cast::<PyBytes>().map_err(|_| {
                io::Error::other("the file object's read() gave no bytes: open it in binary mode")
            })?;
            let data = bytes.as_bytes();
            // A file object that returns more than asked is broken: an
            // error, rather than bytes silently lost.
            if data.len() > buf.len() {
                return Err(io::Error::other(
                    "the file object's read(n) returned more than n bytes",
                ));
            }
            buf[..data.len()].copy_from_slice(data);
            Ok(data.len())
        })
    }
}

/// The name of a file object for messages: its `path` (fsspec), `name`
/// (open files), or what it is.
fn file_name(obj: &Bound<'_, PyAny>) -> String {
    for attr in ["path", "name"] {
        if let Ok(v) = obj.getattr(attr) {
            if let Ok(s) = v.extract::<String>() {
                return s;
            }
        }
    }
    format!(
        "<{}>",
        obj.get_type()
            .name()
            .map_or("file".into(), |n| n.to_string())
    )
}

/// `io.TextIOBase`: files whose `read` gives text.
fn text_io_base(py: Python<'_>) -> PyResult<Bound<'_, PyAny>> {
    py.import("io")?.getattr("TextIOBase")
}

/// Turns what the user gave into sources: a path, a list or tuple of
/// them, a folder (its files, sorted, as `fb` reads it), `bytes`, or an
/// object with a `read` method.
pub fn sources(obj: &Bound<'_, PyAny>) -> PyResult<Vec<Src>> {
    let mut items: Vec<Bound<'_, PyAny>> = Vec::new();
    if obj.is_instance_of::<PyList>() || obj.is_instance_of::<PyTuple>() {
        for item in obj.try_iter()? {
            items.push(item?);
        }
        if items.is_empty() {
            return Err(pyo3::exceptions::PyValueError::new_err(
                "source: an empty list names no log",
            ));
        }
    } else {
        items.push(obj.clone());
    }
    let mut out = Vec::new();
    let mut paths: Vec<PathBuf> = Vec::new();
    let flush = |paths: &mut Vec<PathBuf>, out: &mut Vec<Src>| -> PyResult<()> {
        if paths.is_empty() {
            return Ok(());
        }
        let inputs = fb_run::input::resolve(paths)
            .map_err(pyo3::exceptions::PyFileNotFoundError::new_err)?;
        paths.clear();
        for input in inputs {
            if let Input::File(p) = input {
                out.push(Src::Path(p));
            }
        }
        Ok(())
    };
    for (n, item) in items.iter().enumerate() {
        if let Ok(b) = item.cast::<PyBytes>() {
            flush(&mut paths, &mut out)?;
            out.push(Src::Bytes(format!("<bytes #{n}>"), Arc::from(b.as_bytes())));
        } else if item.is_instance_of::<PyString>() || item.hasattr("__fspath__")? {
            let path: PathBuf = item.extract()?;
            if path.as_os_str() == "-" {
                return Err(pyo3::exceptions::PyValueError::new_err(
                    "source: `-` (standard input) is for the fb command; pass sys.stdin.buffer",
                ));
            }
            paths.push(path);
        } else if item.is_instance(&text_io_base(item.py())?)? {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "source: {} is open in text mode: open it with \"rb\"",
                file_name(item)
            )));
        } else if item.hasattr("read")? {
            flush(&mut paths, &mut out)?;
            out.push(Src::File(file_name(item), item.clone().unbind()));
        } else {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!(
                "source: expected a path, a list of paths, bytes or a binary file object, \
                 not {}",
                item.get_type().name()?
            )));
        }
    }
    flush(&mut paths, &mut out)?;
    Ok(out)
}
