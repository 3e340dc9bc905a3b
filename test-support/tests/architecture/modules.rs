//! A crate's module tree read from its sources, and the imports between its modules.
//!
//! A module's *references* are the paths it names in code (not in comments or docs): `use`
//! trees, paths in expressions and types, and `crate::`/`super::`/`self::` paths inside macro
//! invocations and `macro_rules!` bodies. Each is resolved to the module that defines the item,
//! following the re-exports (`pub use child::Item`) of the modules it passes through. Items
//! under `#[cfg(test)]` are left out: unit tests are not part of the architecture.

use proc_macro2::{TokenStream, TokenTree};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use syn::visit::Visit;

/// A module: its path from the crate root (`[]` for the root), its file, the modules it
/// declares, the items it defines itself, its re-exports, and the paths it references.
#[derive(Debug, Default)]
pub struct Module {
    pub path: Vec<String>,
    pub file: PathBuf,
    pub children: Vec<String>,
    pub items: BTreeSet<String>,
    /// `use a::b::Name` (or `as Name`), public or not (its modules see it too): Name → the
    /// path it names, made absolute (`None` for an item of another crate).
    pub reexports: BTreeMap<String, Option<Vec<String>>>,
    /// Absolute paths referenced (unresolved), with the line of each and whether it is a
    /// re-export (`pub use`, `pub(crate) use`), which names an item without using it.
    pub refs: Vec<(Vec<String>, usize, bool)>,
    /// Its `#[macro_export]` macros.
    pub exported: Vec<String>,
}

/// Every module of the crate whose root file is `root`, by path.
pub fn crate_modules(root: &Path) -> BTreeMap<Vec<String>, Module> {
    let mut out = BTreeMap::new();
    let dir = root
        .parent()
        .expect("a root file in a folder")
        .to_path_buf();
    let file = read(root);
    collect(&file.items, Vec::new(), root, &dir, &mut out);
    // A `#[macro_export]` macro is named from the crate's root: as if the root re-exported it
    // from the module that defines it.
    let exported: Vec<(String, Vec<String>)> = out
        .values()
        .flat_map(|m| m.exported.iter().map(|n| (n.clone(), m.path.clone())))
        .collect();
    let root = out.get_mut(&Vec::new()).expect("the root module");
    for (name, path) in exported {
        let mut target = path;
        target.push(name.clone());
        root.reexports.insert(name, Some(target));
    }
    out
}

fn read(path: &Path) -> syn::File {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    syn::parse_file(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Whether the attributes hold `#[cfg(test)]` (or `#[cfg(doctest)]`).
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && {
            let tokens = a
                .meta
                .require_list()
                .map(|l| l.tokens.to_string())
                .unwrap_or_default();
            tokens == "test" || tokens == "doctest"
        }
    })
}

/// The file of `mod name;` declared in `file`, whose own modules' files are in `dir`.
fn child_file(dir: &Path, name: &str, attrs: &[syn::Attribute]) -> PathBuf {
    for a in attrs {
        if a.path().is_ident("path")
            && let syn::Meta::NameValue(nv) = &a.meta
            && let syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) = &nv.value
        {
            return dir.join(s.value());
        }
    }
    let flat = dir.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        dir.join(name).join("mod.rs")
    }
}

fn collect(
    items: &[syn::Item],
    path: Vec<String>,
    file: &Path,
    dir: &Path,
    out: &mut BTreeMap<Vec<String>, Module>,
) {
    let mut m = Module {
        path: path.clone(),
        file: file.to_path_buf(),
        ..Module::default()
    };
    let mut refs = Refs {
        here: &path,
        out: Vec::new(),
    };
    for item in items {
        if is_test_only(item_attrs(item)) {
            continue;
        }
        match item {
            syn::Item::Mod(md) => {
                let name = md.ident.to_string();
                let mut child = path.clone();
                child.push(name.clone());
                m.children.push(name.clone());
                match &md.content {
                    Some((_, inner)) => collect(inner, child, file, &dir.join(&name), out),
                    None => {
                        let f = child_file(dir, &name, &md.attrs);
                        let sub = f.parent().unwrap().to_path_buf();
                        // `a.rs` keeps its modules in `a/`; `a/mod.rs` in `a/`.
                        let sub = if f.file_name().unwrap() == "mod.rs" {
                            sub
                        } else {
                            sub.join(&name)
                        };
                        let parsed = read(&f);
                        collect(&parsed.items, child, &f, &sub, out);
                    }
                }
                continue;
            }
            syn::Item::Use(u) => {
                let public = !matches!(u.vis, syn::Visibility::Inherited);
                let mut leaves = Vec::new();
                use_leaves(&u.tree, Vec::new(), &mut leaves);
                for (p, name) in leaves {
                    let line = u.use_token.span.start().line;
                    let abs = absolute(&path, &p, &m.children);
                    if name != "*" {
                        m.reexports.insert(name, abs.clone());
                    }
                    if let Some(abs) = abs {
                        m.refs.push((abs, line, public));
                    }
                }
                continue;
            }
            _ => {}
        }
        if let Some(name) = item_name(item) {
            if let syn::Item::Macro(mac) = item
                && mac.attrs.iter().any(|a| a.path().is_ident("macro_export"))
            {
                m.exported.push(name.clone());
            }
            m.items.insert(name);
        }
        refs.visit_item(item);
    }
    m.refs
        .extend(refs.out.into_iter().map(|(p, line)| (p, line, false)));
    out.insert(path, m);
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_name(item: &syn::Item) -> Option<String> {
    use syn::Item::*;
    Some(match item {
        Const(i) => i.ident.to_string(),
        Enum(i) => i.ident.to_string(),
        Fn(i) => i.sig.ident.to_string(),
        Static(i) => i.ident.to_string(),
        Struct(i) => i.ident.to_string(),
        Trait(i) => i.ident.to_string(),
        Type(i) => i.ident.to_string(),
        Union(i) => i.ident.to_string(),
        Macro(i) => i.ident.as_ref()?.to_string(),
        _ => return None,
    })
}

/// The leaves of a `use` tree: each full path and the name it binds (`*` for a glob).
fn use_leaves(tree: &syn::UseTree, prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let with = |s: String| {
        let mut p = prefix.clone();
        p.push(s);
        p
    };
    match tree {
        syn::UseTree::Path(p) => use_leaves(&p.tree, with(p.ident.to_string()), out),
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                let last = prefix.last().cloned().unwrap_or_default();
                out.push((prefix, last));
            } else {
                out.push((with(name.clone()), name));
            }
        }
        syn::UseTree::Rename(r) => out.push((with(r.ident.to_string()), r.rename.to_string())),
        syn::UseTree::Glob(_) => out.push((prefix, "*".to_string())),
        syn::UseTree::Group(g) => {
            for t in &g.items {
                use_leaves(t, prefix.clone(), out);
            }
        }
    }
}

/// A path written in module `here` made absolute from the crate root: `crate::`, `super::`,
/// `self::`, or a first segment that names one of `here`'s own modules. Other paths (external
/// crates, the prelude, local names) give `None`.
fn absolute(here: &[String], p: &[String], children: &[String]) -> Option<Vec<String>> {
    let first = p.first()?;
    let mut base: Vec<String>;
    let mut rest = p;
    match first.as_str() {
        "crate" => {
            base = Vec::new();
            rest = &p[1..];
        }
        "self" => {
            base = here.to_vec();
            rest = &p[1..];
        }
        "super" => {
            base = here.to_vec();
            while rest.first().map(String::as_str) == Some("super") {
                base.pop()?;
                rest = &rest[1..];
            }
        }
        name if children.iter().any(|c| c == name) => base = here.to_vec(),
        _ => return None,
    }
    base.extend(rest.iter().cloned());
    Some(base)
}

/// The paths a module's items reference, made absolute where they can be.
struct Refs<'a> {
    here: &'a [String],
    out: Vec<(Vec<String>, usize)>,
}

impl Refs<'_> {
    fn push(&mut self, segments: Vec<String>, line: usize) {
        // Children are not known yet: `child::x` is kept relative and resolved by `resolve`.
        let abs = match segments.first().map(String::as_str) {
            Some("crate" | "self" | "super") => absolute(self.here, &segments, &[]),
            // `child::x`, or a name a `use` of this module binds: resolved by `resolve`, once
            // the module's children and bindings are known.
            Some(_) => {
                let mut p = self.here.to_vec();
                p.push("\u{0}relative".to_string());
                p.extend(segments);
                Some(p)
            }
            None => None,
        };
        if let Some(p) = abs {
            self.out.push((p, line));
        }
    }

    /// `crate :: a :: b` sequences in a macro's tokens.
    fn scan(&mut self, tokens: TokenStream) {
        let tokens: Vec<TokenTree> = tokens.into_iter().collect();
        let mut k = 0;
        while k < tokens.len() {
            match &tokens[k] {
                TokenTree::Group(g) => self.scan(g.stream()),
                TokenTree::Ident(id)
                    if matches!(id.to_string().as_str(), "crate" | "super" | "self") =>
                {
                    let line = id.span().start().line;
                    let mut segs = vec![id.to_string()];
                    let mut j = k + 1;
                    while j + 2 < tokens.len() + 1 {
                        let colons = matches!((&tokens.get(j), &tokens.get(j + 1)),
                            (Some(TokenTree::Punct(a)), Some(TokenTree::Punct(b)))
                                if a.as_char() == ':' && b.as_char() == ':');
                        match (colons, tokens.get(j + 2)) {
                            (true, Some(TokenTree::Ident(next))) => {
                                segs.push(next.to_string());
                                j += 3;
                            }
                            _ => break,
                        }
                    }
                    if segs.len() > 1 {
                        self.push(segs, line);
                    }
                    k = j;
                    continue;
                }
                _ => {}
            }
            k += 1;
        }
    }
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_item_mod(&mut self, _: &'ast syn::ItemMod) {}

    fn visit_item(&mut self, i: &'ast syn::Item) {
        if !is_test_only(item_attrs(i)) {
            syn::visit::visit_item(self, i);
        }
    }

    fn visit_attribute(&mut self, _: &'ast syn::Attribute) {}

    // `pub(crate)`, `pub(super)`: who may see an item, not what it uses.
    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {}

    fn visit_path(&mut self, p: &'ast syn::Path) {
        let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
        let line = p
            .segments
            .first()
            .map_or(0, |s| s.ident.span().start().line);
        self.push(segments, line);
        syn::visit::visit_path(self, p);
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.scan(m.tokens.clone());
    }

    fn visit_use_tree(&mut self, t: &'ast syn::UseTree) {
        // A `use` inside a function body.
        let mut leaves = Vec::new();
        use_leaves(t, Vec::new(), &mut leaves);
        for (p, _) in leaves {
            self.push(p, 0);
        }
    }
}

/// Where a reference leads: the module that defines the item, found by walking the path down
/// the tree and following re-exports. `None` for a path that leaves the crate.
pub fn resolve(
    modules: &BTreeMap<Vec<String>, Module>,
    from: &[String],
    path: &[String],
) -> Option<Vec<String>> {
    // A relative path (`child::item` written in `from`): absolute only if `child` is one of
    // `from`'s modules.
    let path: Vec<String> = match path.iter().position(|s| s == "\u{0}relative") {
        Some(k) => {
            let (base, rest) = (&path[..k], &path[k + 1..]);
            let m = modules.get(base)?;
            let first = rest.first()?;
            // A lone name is a value or a type, never a module: `shape` is a local there.
            if rest.len() > 1 && m.children.iter().any(|c| c == first) {
                base.iter().chain(rest).cloned().collect()
            } else {
                // A name bound by a `use` of the module (else a local name, a prelude item).
                let mut p = m.reexports.get(first)?.clone()?;
                p.extend(rest[1..].iter().cloned());
                p
            }
        }
        None => path.to_vec(),
    };
    let _ = from;
    follow(modules, &path, 0)
}

fn follow(
    modules: &BTreeMap<Vec<String>, Module>,
    path: &[String],
    depth: usize,
) -> Option<Vec<String>> {
    if depth > 16 {
        return None;
    }
    let mut here: Vec<String> = Vec::new();
    for (k, seg) in path.iter().enumerate() {
        let m = modules.get(&here)?;
        if m.children.iter().any(|c| c == seg) {
            here.push(seg.clone());
            continue;
        }
        if let Some(target) = m.reexports.get(seg) {
            let mut next = target.clone()?;
            next.extend(path[k + 1..].iter().cloned());
            return follow(modules, &next, depth + 1);
        }
        // An item of `here` (or a method or variant of one).
        return Some(here);
    }
    Some(here)
}
