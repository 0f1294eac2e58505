//! The layout limits of issue 11, checked on every test run so they hold as the code grows:
//! no Rust source file over 800 lines, no function over 100 lines in the library crates
//! (`crates/*/src`), and `crates/engine/src` (the runtime and the fluent API only) under 2,000
//! lines. Function lengths come from a real parse (`syn`), counted from the first line of the
//! signature to the closing brace, as an editor shows them.

use std::fs;
use std::path::{Path, PathBuf};

use syn::spanned::Spanned;
use syn::visit::Visit;

/// Longest source file, in lines.
const MAX_FILE_LINES: usize = 800;
/// Longest function in a library crate, in lines.
const MAX_FN_LINES: usize = 100;
/// Total lines of `crates/engine/src`.
const MAX_ENGINE_LINES: usize = 2_000;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .canonicalize()
        .expect("the repository root")
}

/// `path` relative to the repository root, for messages.
fn shown(path: &Path) -> String {
    path.strip_prefix(repo())
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let path = entry.expect("directory entry").path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|x| x == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The source directories of the workspace: each crate's `src`, `xtask/src`, `benches/src`.
fn source_dirs() -> Vec<PathBuf> {
    let root = repo();
    let mut dirs: Vec<PathBuf> = fs::read_dir(root.join("crates"))
        .expect("crates/")
        .map(|e| e.expect("crate entry").path().join("src"))
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    dirs.push(root.join("xtask/src"));
    dirs.push(root.join("benches/src"));
    dirs
}

fn line_count(path: &Path) -> usize {
    fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .count()
}

#[test]
fn no_source_file_is_over_the_limit() {
    let mut long = Vec::new();
    for dir in source_dirs() {
        for file in rust_files(&dir) {
            let n = line_count(&file);
            if n > MAX_FILE_LINES {
                long.push(format!("{} ({n} lines)", shown(&file)));
            }
        }
    }
    assert!(
        long.is_empty(),
        "files over {MAX_FILE_LINES} lines: {long:#?}"
    );
}

#[test]
fn the_engine_crate_stays_thin() {
    let total: usize = rust_files(&repo().join("crates/engine/src"))
        .iter()
        .map(|f| line_count(f))
        .sum();
    assert!(
        total < MAX_ENGINE_LINES,
        "crates/engine/src has {total} lines, the limit is {MAX_ENGINE_LINES}"
    );
}

/// Collects the functions (free, inherent, trait) longer than the limit.
struct LongFunctions<'a> {
    file: &'a Path,
    found: Vec<String>,
}

impl LongFunctions<'_> {
    /// Checks one function: from its signature's first line (after any doc comment and
    /// attributes) to its body's closing brace.
    fn check(&mut self, sig: &syn::Signature, body: Option<&syn::Block>) {
        let start = sig.span().start().line;
        let end = body.map_or_else(|| sig.span().end().line, |b| b.span().end().line);
        let lines = end - start + 1;
        if lines > MAX_FN_LINES {
            self.found.push(format!(
                "{}:{start} fn {} ({lines} lines)",
                shown(self.file),
                sig.ident
            ));
        }
    }
}

impl<'ast> Visit<'ast> for LongFunctions<'_> {
    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        self.check(&f.sig, Some(&f.block));
        syn::visit::visit_item_fn(self, f);
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        self.check(&f.sig, Some(&f.block));
        syn::visit::visit_impl_item_fn(self, f);
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        self.check(&f.sig, f.default.as_ref());
        syn::visit::visit_trait_item_fn(self, f);
    }
}

#[test]
fn no_library_function_is_over_the_limit() {
    let mut found = Vec::new();
    let crates = repo().join("crates");
    for dir in source_dirs().iter().filter(|d| d.starts_with(&crates)) {
        for file in rust_files(dir) {
            let text = fs::read_to_string(&file).expect("readable source");
            let ast = syn::parse_file(&text)
                .unwrap_or_else(|e| panic!("{}: does not parse: {e}", file.display()));
            let mut v = LongFunctions {
                file: &file,
                found: Vec::new(),
            };
            v.visit_file(&ast);
            found.append(&mut v.found);
        }
    }
    assert!(
        found.is_empty(),
        "functions over {MAX_FN_LINES} lines: {found:#?}"
    );
}

/// The check itself must see a long function: a parse of a made-up 101-line one is caught.
#[test]
fn the_function_check_sees_a_long_function() {
    let body = "    let _x = 1;\n".repeat(MAX_FN_LINES - 1);
    let text = format!("/// Doc.\n#[inline]\nfn long() {{\n{body}}}\nfn short() {{}}\n");
    let ast = syn::parse_file(&text).expect("parses");
    let mut v = LongFunctions {
        file: Path::new("made-up.rs"),
        found: Vec::new(),
    };
    v.visit_file(&ast);
    assert_eq!(v.found, ["made-up.rs:3 fn long (101 lines)"]);
}
