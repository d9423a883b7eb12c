//! What `cargo xtask bench` keeps of bench/RESULTS.md when it rewrites it:
//! everything below a mark, which holds figures it did not take (other
//! machines, single runs of one section).

use std::path::Path;

/// The line in RESULTS.md below which the bench writes nothing: figures
/// from other machines (16 cores) and the sections of single runs.
const KEPT_MARK: &str = "<!-- Kept by hand: `cargo xtask bench` rewrites only what is above. -->";

/// What RESULTS.md holds from [`KEPT_MARK`] on, the mark included. A file
/// without the mark is kept whole below a new one: the bench never drops
/// figures it did not write.
pub(crate) fn kept_by_hand(results: &Path) -> Result<String, String> {
    let old = match std::fs::read_to_string(results) {
        Ok(old) => old,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("{}: {e}", results.display())),
    };
    Ok(match old.find(KEPT_MARK) {
        Some(at) => old.get(at..).unwrap_or_default().to_string(),
        None if old.is_empty() => format!("{KEPT_MARK}\n"),
        None => format!("{KEPT_MARK}\n\n## Earlier results\n\n{old}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_below_the_mark_is_kept() {
        let dir = std::env::temp_dir().join(format!("xtask-results-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("RESULTS.md");
        let cases = [
            ("no file", None, format!("{KEPT_MARK}\n")),
            (
                "a mark",
                Some(format!("# old table\n\n{KEPT_MARK}\n\n## 16 cores\n")),
                format!("{KEPT_MARK}\n\n## 16 cores\n"),
            ),
            (
                "no mark",
                Some("# old table\n".to_string()),
                format!("{KEPT_MARK}\n\n## Earlier results\n\n# old table\n"),
            ),
        ];
        for (name, old, want) in cases {
            let _ = std::fs::remove_file(&file);
            if let Some(old) = old {
                std::fs::write(&file, old).unwrap();
            }
            assert_eq!(kept_by_hand(&file).unwrap(), want, "{name}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
