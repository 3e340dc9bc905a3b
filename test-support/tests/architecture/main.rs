//! The architecture, checked: modules import only from layers below them, and every `unsafe`
//! block and `asm!` is in the inventory (`docs/unsafe.md`).
//!
//! *Layers.* In every library crate of the workspace, the modules of each folder (the children
//! of one module) form a graph: `a → b` if code in `a` (or below it) names an item of `b` (or
//! below it). It must have no cycle, so that the folder reads as layers, each importing only
//! from those below it; and no module imports the items a module *above* it defines itself
//! (a `mod.rs` or `lib.rs` declares and re-exports its folder's modules; what its children need
//! lives in a child). Unit tests (`#[cfg(test)]`) are left out.
//!
//! *Unsafe.* Every `unsafe` keyword and `asm!` of the workspace's sources is counted per file and
//! item; the counts must equal the inventory's.

mod modules;
mod unsafe_sites;

use modules::{crate_modules, resolve};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The workspace's folder.
fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The folders of the workspace's members, from its manifest.
fn members() -> Vec<String> {
    let manifest = std::fs::read_to_string(workspace().join("Cargo.toml")).unwrap();
    let line = manifest
        .lines()
        .find(|l| l.starts_with("members"))
        .expect("a members line");
    line.split('"')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// A member's library root, if it has one.
fn library_root(member: &str) -> Option<PathBuf> {
    let dir = workspace().join(member);
    ["src/lib.rs", "lib.rs"]
        .iter()
        .map(|f| dir.join(f))
        .find(|p| p.exists())
}

/// In a folder's graph: the items its own module (`mod.rs`, `lib.rs`) defines itself.
const OWN: &str = "(its own items)";

/// What is wrong with the layers of the crate rooted at `root` (named `name` in messages).
fn layer_problems(name: &str, root: &Path) -> Vec<String> {
    let modules = crate_modules(root);
    let show = |p: &[String]| {
        if p.is_empty() {
            format!("{name} (root)")
        } else {
            format!("{name}::{}", p.join("::"))
        }
    };
    // Per folder (a module): the graph of its modules and its own items, each edge with one
    // reference that makes it.
    let mut edges: BTreeMap<Vec<String>, BTreeMap<(String, String), String>> = BTreeMap::new();
    for m in modules.values() {
        for (path, line, reexport) in &m.refs {
            let Some(target) = resolve(&modules, &m.path, path) else {
                continue;
            };
            let common = m
                .path
                .iter()
                .zip(&target)
                .take_while(|(a, b)| a == b)
                .count();
            let at = format!("{}:{line}", relative(&m.file));
            let (folder, from, to) = if target == m.path {
                continue;
            } else if common == target.len() {
                // An item that a module above this one defines itself.
                (target.clone(), m.path[common].clone(), OWN.to_string())
            } else if common == m.path.len() {
                if *reexport {
                    continue; // a folder naming its own modules' items
                }
                (m.path.clone(), OWN.to_string(), target[common].clone())
            } else {
                (
                    m.path[..common].to_vec(),
                    m.path[common].clone(),
                    target[common].clone(),
                )
            };
            edges
                .entry(folder)
                .or_default()
                .entry((from, to))
                .or_insert(at);
        }
    }
    let mut problems = Vec::new();
    for (folder, e) in &edges {
        if let Some(cycle) = find_cycle(e) {
            let mut steps = Vec::new();
            for w in cycle.windows(2) {
                let at = &e[&(w[0].clone(), w[1].clone())];
                steps.push(format!("{} → {} ({at})", w[0], w[1]));
            }
            problems.push(format!(
                "the modules of {} import each other in a circle: {}",
                show(folder),
                steps.join(", ")
            ));
        }
    }
    problems
}

fn relative(p: &Path) -> String {
    p.strip_prefix(workspace())
        .unwrap_or(p)
        .to_string_lossy()
        .into_owned()
}

/// A cycle of the graph `edges` as its nodes, the first repeated at the end.
fn find_cycle(edges: &BTreeMap<(String, String), String>) -> Option<Vec<String>> {
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (a, b) in edges.keys() {
        next.entry(a).or_default().push(b);
    }
    // Depth-first, with the path on a stack: an edge back into the path closes a cycle.
    fn visit<'a>(
        n: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        path: &mut Vec<&'a str>,
        done: &mut BTreeSet<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(k) = path.iter().position(|&p| p == n) {
            let mut c: Vec<String> = path[k..].iter().map(|s| s.to_string()).collect();
            c.push(n.to_string());
            return Some(c);
        }
        if !done.insert(n) {
            return None;
        }
        path.push(n);
        for &m in next.get(n).into_iter().flatten() {
            if let Some(c) = visit(m, next, path, done) {
                return Some(c);
            }
        }
        path.pop();
        None
    }
    let mut done = BTreeSet::new();
    for &n in next.keys() {
        if let Some(c) = visit(n, &next, &mut Vec::new(), &mut done) {
            return Some(c);
        }
    }
    None
}

#[test]
fn modules_import_only_from_layers_below_them() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for member in members() {
        if let Some(root) = library_root(&member) {
            problems.extend(layer_problems(&member, &root));
            checked += 1;
        }
    }
    assert!(
        checked >= 6,
        "the workspace's library crates were found ({checked})"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// A small crate written to a temporary folder: `files` are (path, text) under its `src/`.
fn planted(tag: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("architecture-{tag}-{}", std::process::id()));
    for (path, text) in files {
        let p = dir.join("src").join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    dir
}

/// The check finds a back-edge planted in a crate whose layers are otherwise one-way, and
/// names the files and lines of the circle; and a child that imports its parent's own item.
#[test]
fn the_layer_check_finds_a_planted_back_edge() {
    let lib = "mod storage;\nmod tape;\nmod sweep;\npub use sweep::Adjoints;\n";
    let storage = "pub(crate) struct Data;\n";
    let tape = "use crate::storage::Data;\npub(crate) struct Tape(pub Data);\n";
    let sweep = "use crate::tape::Tape;\npub struct Adjoints;\nfn f(_: &Tape) {}\n";
    let clean = planted(
        "clean",
        &[
            ("lib.rs", lib),
            ("storage.rs", storage),
            ("tape.rs", tape),
            ("sweep.rs", sweep),
        ],
    );
    assert_eq!(
        layer_problems("p", &clean.join("src/lib.rs")),
        Vec::<String>::new()
    );

    // storage names the sweep's `Adjoints` through the root's re-export: a circle through
    // three layers.
    let back = "pub(crate) struct Data;\nfn g(_: crate::Adjoints) {}\n";
    let bad = planted(
        "back",
        &[
            ("lib.rs", lib),
            ("storage.rs", back),
            ("tape.rs", tape),
            ("sweep.rs", sweep),
        ],
    );
    let problems = layer_problems("p", &bad.join("src/lib.rs"));
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert!(
        problems[0].starts_with("the modules of p (root) import each other in a circle:")
            && problems[0].contains("storage → sweep (")
            && problems[0].contains("storage.rs:2)"),
        "{}",
        problems[0]
    );

    // A child that imports an item its folder's `mod.rs` defines, which uses the child: a
    // circle through the folder's own items.
    let upward = planted(
        "upward",
        &[
            ("lib.rs", "mod sparse;\n"),
            (
                "sparse/mod.rs",
                "mod colour;\npub struct Pattern(colour::Colours);\n",
            ),
            (
                "sparse/colour.rs",
                "use super::Pattern;\npub struct Colours;\nfn c(_: &Pattern) {}\n",
            ),
        ],
    );
    let problems = layer_problems("p", &upward.join("src/lib.rs"));
    assert_eq!(
        problems,
        ["the modules of p::sparse import each other in a circle: \
          (its own items) → colour (src/sparse/mod.rs:2), colour → (its own items) \
          (src/sparse/colour.rs:1)"
            .replace(" (src/", &format!(" ({}/src/", upward.display()))]
    );
    for d in [clean, bad, upward] {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// The differences between the sites found and those listed.
fn inventory_problems(found: &unsafe_sites::Sites, listed: &unsafe_sites::Sites) -> Vec<String> {
    let mut problems = Vec::new();
    let keys: BTreeSet<_> = found.keys().chain(listed.keys()).collect();
    for k in keys {
        let (f, l) = (found.get(k).copied(), listed.get(k).copied());
        if f != l {
            let show = |c: Option<(usize, usize)>| {
                c.map_or("none".to_string(), |(u, a)| {
                    format!("{u} `unsafe`, {a} `asm!`")
                })
            };
            problems.push(format!(
                "`{}` `{}`: the code has {}, docs/unsafe.md lists {}",
                k.0,
                k.1,
                show(f),
                show(l)
            ));
        }
    }
    problems
}

#[test]
fn the_unsafe_inventory_lists_every_site() {
    let dirs: Vec<String> = members();
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let found = unsafe_sites::scan(&workspace(), &dirs);
    let text = std::fs::read_to_string(workspace().join("docs/unsafe.md")).unwrap();
    let listed = unsafe_sites::inventory(&text);
    assert!(!found.is_empty(), "the scan finds the known sites");
    let problems = inventory_problems(&found, &listed);
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// An `unsafe` block added without a line in the inventory is found, and so is a line whose
/// block is gone.
#[test]
fn the_inventory_check_finds_an_unlisted_block() {
    let dir = planted(
        "unsafe",
        &[(
            "lib.rs",
            "pub struct V(Vec<u8>);\nimpl V {\n    pub fn first(&self) -> u8 {\n        \
         // SAFETY: never empty\n        unsafe { *self.0.get_unchecked(0) }\n    }\n}\n\
         macro_rules! get { ($v:expr) => { unsafe { $v } } }\n",
        )],
    );
    let found = unsafe_sites::scan(&dir, &["src"]);
    let table = "| where | what | invariant |\n|---|---|---|\n\
                 | `src/lib.rs` `get!` | 1 `unsafe` | … |\n\
                 | `src/lib.rs` `gone` | 1 `unsafe` | … |\n";
    let problems = inventory_problems(&found, &unsafe_sites::inventory(table));
    assert_eq!(
        problems,
        [
            "`src/lib.rs` `V::first`: the code has 1 `unsafe`, 0 `asm!`, docs/unsafe.md lists none",
            "`src/lib.rs` `gone`: the code has none, docs/unsafe.md lists 1 `unsafe`, 0 `asm!`",
        ]
    );
    let _ = std::fs::remove_dir_all(dir);
}
