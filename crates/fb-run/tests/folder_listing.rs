//! What a folder given as input lists: its files and the links that name
//! files, in name order; not its folders, links to folders, hidden files
//! or files that are not logs (those are told apart).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use std::path::PathBuf;

use fb_run::input::{resolve_all, Input};

#[cfg(unix)]
#[test]
fn a_folder_lists_its_files_and_links_to_files() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fb-folder-listing");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    let log = b"VWFB\x01\x00\x00\x00";
    // (name, what it is, listed as an input)
    let cases: [(&str, &str, bool); 7] = [
        ("a.fb", "log", true),
        ("b-link.fb", "link to a.fb", true),
        ("c.txt", "not a log", false),
        ("d-dir-link", "link to sub", false),
        (".hidden.fb", "log", false),
        ("sub", "folder", false),
        ("z.fb", "log", true),
    ];
    for (name, what, _) in cases {
        let path = dir.join(name);
        match what {
            "log" => std::fs::write(&path, log).unwrap(),
            "not a log" => std::fs::write(&path, b"hello").unwrap(),
            "link to a.fb" => std::os::unix::fs::symlink(dir.join("a.fb"), &path).unwrap(),
            "link to sub" => std::os::unix::fs::symlink(dir.join("sub"), &path).unwrap(),
            _ => {}
        }
    }
    let resolved = resolve_all(std::slice::from_ref(&dir)).unwrap();
    let expected: Vec<Input> = cases
        .iter()
        .filter(|(_, _, listed)| *listed)
        .map(|(name, _, _)| Input::File(dir.join(name)))
        .collect();
    assert_eq!(resolved.inputs, expected);
    assert_eq!(resolved.not_logs, vec![dir.join("c.txt")] as Vec<PathBuf>);
    std::fs::remove_dir_all(&dir).unwrap();
}
