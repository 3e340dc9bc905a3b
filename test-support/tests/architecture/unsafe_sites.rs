//! The `unsafe` of the sources: per file and item (`Type::method`, `function`, `macro!`), how
//! many `unsafe` keywords and `asm!` invocations it holds (in macro bodies too), and the table
//! of the inventory that lists them.

use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use std::collections::BTreeMap;
use std::path::Path;

/// `(file, item)` → `(unsafe keywords, asm! invocations)`.
pub type Sites = BTreeMap<(String, String), (usize, usize)>;

/// The sites of every `.rs` file under `dirs` (relative to `root`, with `/` separators).
pub fn scan(root: &Path, dirs: &[&str]) -> Sites {
    let mut sites = Sites::new();
    for d in dirs {
        let mut files = Vec::new();
        rust_files(&root.join(d), &mut files);
        for f in files {
            let rel = f
                .strip_prefix(root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/");
            let text = std::fs::read_to_string(&f).unwrap();
            let file = syn::parse_file(&text).unwrap_or_else(|e| panic!("{rel}: {e}"));
            scan_items(&file.items, "", &rel, &mut sites);
        }
    }
    sites
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            if p.file_name().is_some_and(|n| n != "target") {
                rust_files(&p, out);
            }
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// `unsafe` keywords and `asm!` invocations in `tokens`.
pub fn count(tokens: TokenStream) -> (usize, usize) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    let (mut u, mut a) = (0, 0);
    for (k, t) in tokens.iter().enumerate() {
        match t {
            TokenTree::Group(g) => {
                let (gu, ga) = count(g.stream());
                u += gu;
                a += ga;
            }
            TokenTree::Ident(id) if id == "unsafe" => u += 1,
            TokenTree::Ident(id) if id == "asm" || id == "global_asm" => {
                if matches!(tokens.get(k + 1), Some(TokenTree::Punct(p)) if p.as_char() == '!') {
                    a += 1;
                }
            }
            _ => {}
        }
    }
    (u, a)
}

fn add(sites: &mut Sites, file: &str, item: String, tokens: TokenStream) {
    let (u, a) = count(tokens);
    if u + a > 0 {
        let e = sites.entry((file.to_string(), item)).or_default();
        e.0 += u;
        e.1 += a;
    }
}

fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map(|s| s.ident.to_string())
            .unwrap_or_default(),
        other => other.to_token_stream().to_string(),
    }
}

fn scan_items(items: &[syn::Item], prefix: &str, file: &str, sites: &mut Sites) {
    for item in items {
        match item {
            syn::Item::Fn(f) => add(
                sites,
                file,
                format!("{prefix}{}", f.sig.ident),
                f.to_token_stream(),
            ),
            syn::Item::Impl(i) => {
                let ty = type_name(&i.self_ty);
                if let Some(u) = &i.unsafety {
                    let name = match &i.trait_ {
                        Some((_, t, _)) => format!(
                            "impl {} for {ty}",
                            t.segments
                                .last()
                                .map(|s| s.ident.to_string())
                                .unwrap_or_default()
                        ),
                        None => format!("impl {ty}"),
                    };
                    add(sites, file, name, u.to_token_stream());
                }
                for ii in &i.items {
                    match ii {
                        syn::ImplItem::Fn(f) => add(
                            sites,
                            file,
                            format!("{prefix}{ty}::{}", f.sig.ident),
                            f.to_token_stream(),
                        ),
                        other => add(
                            sites,
                            file,
                            format!("{prefix}{ty}"),
                            other.to_token_stream(),
                        ),
                    }
                }
            }
            syn::Item::Trait(t) => {
                let name = format!("{prefix}{}", t.ident);
                if let Some(u) = &t.unsafety {
                    add(
                        sites,
                        file,
                        format!("unsafe trait {name}"),
                        u.to_token_stream(),
                    );
                }
                for ti in &t.items {
                    if let syn::TraitItem::Fn(f) = ti {
                        add(
                            sites,
                            file,
                            format!("{name}::{}", f.sig.ident),
                            f.to_token_stream(),
                        );
                    }
                }
            }
            syn::Item::Macro(m) => {
                let name = match &m.ident {
                    Some(id) => format!("{prefix}{id}!"),
                    None => format!(
                        "{prefix}{}!",
                        m.mac
                            .path
                            .segments
                            .last()
                            .map(|s| s.ident.to_string())
                            .unwrap_or_default()
                    ),
                };
                add(sites, file, name, m.mac.tokens.clone());
            }
            syn::Item::Mod(md) => {
                if let Some((_, inner)) = &md.content {
                    scan_items(inner, &format!("{prefix}{}::", md.ident), file, sites);
                }
            }
            other => add(
                sites,
                file,
                format!("{prefix}(item)"),
                other.to_token_stream(),
            ),
        }
    }
}

/// The inventory's table: each row's first cell names the file and the item in backticks
/// (`` `reverse/src/storage/mod.rs` `TapeData::weighted` ``), its second the counts
/// (`` 1 `unsafe` ``, `` 2 `unsafe`, 1 `asm!` ``).
pub fn inventory(text: &str) -> Sites {
    let mut sites = Sites::new();
    for line in text.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.len() < 4 || !cells[1].starts_with('`') {
            continue;
        }
        let quoted: Vec<&str> = cells[1].split('`').skip(1).step_by(2).collect();
        let [file, item] = quoted[..] else {
            panic!("an inventory row's first cell names a file and an item: {line}");
        };
        let mut counts = (0, 0);
        let words: Vec<&str> = cells[2]
            .split([' ', ','])
            .filter(|w| !w.is_empty())
            .collect();
        for w in words.windows(2) {
            if let Ok(n) = w[0].parse::<usize>() {
                match w[1] {
                    "`unsafe`" => counts.0 += n,
                    "`asm!`" => counts.1 += n,
                    other => {
                        panic!("an inventory count names `unsafe` or `asm!`, not {other}: {line}")
                    }
                }
            }
        }
        let e = sites
            .entry((file.to_string(), item.to_string()))
            .or_default();
        e.0 += counts.0;
        e.1 += counts.1;
    }
    sites
}
