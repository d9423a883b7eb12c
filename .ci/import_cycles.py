#!/usr/bin/env python3
"""Fails when two files of a crate import each other (issue 38: "no file
imports another that imports it back").

File A imports file B when A names an item of B's module: `use crate::..`,
`use super::..`, or a `crate::..`/`super::..` path in code (comments are
left out). A module and its own submodules may name each other (a parent
re-exports what its children define; a child uses its parent's types):
only pairs where neither is inside the other count.

Usage: import_cycles.py [CRATES_DIR]   (default: crates)
Before reading the tree, it checks itself on a small tree with one cycle.
"""
import itertools
import os
import re
import sys
import tempfile


def module_of(src, path):
    parts = os.path.relpath(path, src)[:-3].split(os.sep)
    if parts[-1] in ("lib", "main", "mod"):
        parts = parts[:-1]
    return tuple(parts)


def without_comments(code):
    code = re.sub(r"//[^\n]*", "", code)
    return re.sub(r"/\*.*?\*/", "", code, flags=re.S)


def expand(prefix, body):
    """`a::{b, c::{d, e}}` after `prefix` as whole paths."""
    if not body.startswith("{"):
        return [prefix + body]
    parts, buf, depth = [], "", 0
    for ch in body[1:-1]:
        depth += (ch == "{") - (ch == "}")
        if ch == "," and depth == 0:
            parts.append(buf.strip())
            buf = ""
        else:
            buf += ch
    if buf.strip():
        parts.append(buf.strip())
    out = []
    for part in parts:
        nested = re.match(r"([\w:]*?)(\{.*\})$", part, re.S)
        if nested:
            out += expand(prefix + nested.group(1), nested.group(2))
        else:
            out.append(prefix + part)
    return out


def cycles(crates_dir):
    found = []
    for crate in sorted(os.listdir(crates_dir)):
        src = os.path.join(crates_dir, crate, "src")
        if not os.path.isdir(src):
            continue
        files = {}
        for folder, _, names in os.walk(src):
            for name in names:
                if name.endswith(".rs"):
                    path = os.path.join(folder, name)
                    files[module_of(src, path)] = path
        imports = {m: set() for m in files}
        for module, path in files.items():
            code = without_comments(open(path, encoding="utf-8").read())
            own = os.path.basename(path) in ("lib.rs", "main.rs", "mod.rs")
            base = module if own else module[:-1]
            paths = []
            for use in re.finditer(
                r"\buse\s+((?:crate|super|self)(?:::\w+)*)::(\{.*?\}|\w+)\s*(?:as\s+\w+\s*)?;",
                code,
                re.S,
            ):
                paths += expand(use.group(1) + "::", " ".join(use.group(2).split()))
            paths += re.findall(r"\b(crate(?:::\w+)+)", code)
            paths += re.findall(r"\b(super(?:::\w+)+)", code)
            for p in paths:
                segs = [s.strip() for s in p.split("::") if s.strip()]
                at = list(base)
                if segs and segs[0] == "crate":
                    at, segs = [], segs[1:]
                while segs and segs[0] in ("super", "self"):
                    if segs[0] == "super":
                        at = at[:-1]
                    segs = segs[1:]
                target = tuple(at)
                for s in segs:
                    if target + (s,) in files:
                        target += (s,)
                    else:
                        break
                if target != module and target in files:
                    imports[module].add(target)
        for a, b in itertools.combinations(sorted(files), 2):
            nested = a == b[: len(a)] or b == a[: len(b)]
            if not nested and b in imports[a] and a in imports[b]:
                found.append((files[a], files[b]))
    return found


def check_self():
    with tempfile.TemporaryDirectory() as tmp:
        src = os.path.join(tmp, "demo", "src")
        os.makedirs(os.path.join(src, "inner"))
        sources = {
            "lib.rs": "mod a; mod b; mod inner; pub use a::A;",
            "a.rs": "use crate::b::B; // crate::inner::x in a comment\npub struct A;",
            "b.rs": "use crate::{a::A, inner::{I}};\npub struct B;",
            "inner/mod.rs": "mod deep; pub use deep::I;",
            "inner/deep.rs": "pub struct I(super::super::a::A);",
        }
        for name, code in sources.items():
            with open(os.path.join(src, name), "w", encoding="utf-8") as f:
                f.write(code)
        got = {tuple(os.path.relpath(p, src) for p in pair) for pair in cycles(tmp)}
        want = {("a.rs", "b.rs")}
        if got != want:
            sys.exit(f"import_cycles.py: self-check found {got}, expected {want}")


if __name__ == "__main__":
    check_self()
    found = cycles(sys.argv[1] if len(sys.argv) > 1 else "crates")
    for a, b in found:
        print(f"import cycle: {a} <-> {b}")
    if found:
        sys.exit(f"{len(found)} pair(s) of files import each other: move what both need to one side")
    print("import cycles: none")
