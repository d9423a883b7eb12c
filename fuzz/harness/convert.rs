//! Fuzz harness over the whole convert path, shared by the `convert` fuzz
//! target and the regression test that replays `tests/data/fuzz/convert/`
//! (`crates/fb-join/tests/recover.rs` includes this file). A panic is a
//! finding.

use fb_join::{convert, convert_recovering, dsjson, Caches, Compat, JoinedEvents, Joiner, Options};

/// Target (c): the first byte chooses options (multistep, dedup
/// inlining); the rest is the log. It is converted in both compat modes
/// and with the recovering conversion. Checks: no error writing to a
/// `Vec`; every line of the recovering conversion (sane mode) is valid
/// JSON; skipped ranges are ordered, non-empty and within the input; on an
/// intact log (nothing skipped, no framing error, nothing after an EOF)
/// the recovering conversion writes exactly what `convert` writes.
/// Whatever the log, `convert` (which recycles events) writes what fresh
/// events from `JoinedEvents` give, and writes the same with its speed
/// caches off (`Caches::Off`), in both modes. (The parallel conversion is left to
/// `crates/fb-join/tests/parallel.rs`: its worker threads leave std's
/// per-thread channel context behind, which LeakSanitizer reports.)
pub fn convert_all(data: &[u8]) {
    let [flags, input @ ..] = data else {
        return;
    };
    let options = |compat| {
        Options::default()
            .compat(compat)
            .multistep(flags & 1 != 0)
            .inline_dedup(flags & 2 != 0)
    };
    let mut plain = Vec::new();
    let summary =
        convert(input, &mut plain, options(Compat::Sane)).expect("writing to a Vec cannot fail");
    let mut reference = Vec::new();
    convert(input, &mut reference, options(Compat::Reference))
        .expect("writing to a Vec cannot fail");
    for (compat, cached) in [(Compat::Sane, &plain), (Compat::Reference, &reference)] {
        let mut uncached = Vec::new();
        convert(input, &mut uncached, options(compat).caches(Caches::Off))
            .expect("writing to a Vec cannot fail");
        assert!(
            uncached == *cached,
            "{compat:?}: caches off changed the output"
        );
    }

    let mut fresh = Vec::new();
    let mut writer = dsjson::Writer::new(Compat::Sane);
    for ev in JoinedEvents::new(input, options(Compat::Sane)) {
        writer.write_line(&ev, &mut fresh);
    }
    assert!(fresh == plain, "recycled events changed the output");

    let mut joiner = Joiner::new(options(Compat::Sane));
    let mut recovered = Vec::new();
    let report = convert_recovering(&mut joiner, input, &mut recovered)
        .expect("writing to a Vec cannot fail");
    for line in recovered.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
        if let Err(e) = check_json_line(line) {
            panic!("{e}: {}", String::from_utf8_lossy(line));
        }
    }
    let mut end = 0;
    for range in &report.skipped {
        assert!(range.start >= end && range.end > range.start, "{range:?}");
        end = range.end;
    }
    assert!(end <= input.len() as u64);
    if report.skipped.is_empty()
        && summary.framing_error.is_none()
        && report.summary.messages == summary.messages
    {
        assert_eq!(
            String::from_utf8_lossy(&recovered),
            String::from_utf8_lossy(&plain),
            "recovery changed the output of an intact log"
        );
    }
}

/// fb-join's sane mode rejects contexts that are not UTF-8 JSON
/// (`fb_join::json::validate`), so every line must be UTF-8. (An earlier
/// check skipped string contents unchecked; the fuzzer's find is replayed
/// from `tests/data/fuzz/convert/context-not-utf8`.)
pub const CONTEXTS_ARE_UTF8_CHECKED: bool = true;

/// Why `line` is not a valid DSJSON line: bad syntax, or (when
/// [`CONTEXTS_ARE_UTF8_CHECKED`]) not UTF-8.
pub fn check_json_line(line: &[u8]) -> Result<(), String> {
    serde_json::from_slice::<serde_json::Value>(line).map_err(|e| format!("not JSON ({e})"))?;
    if CONTEXTS_ARE_UTF8_CHECKED {
        std::str::from_utf8(line).map_err(|e| format!("not UTF-8 ({e})"))?;
    }
    Ok(())
}
