//! The layout the code's architecture depends on, checked: no cycle between
//! the crate's modules, the data model at the bottom, one registry row per
//! format file, and every format named by `--help` and the usage line.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

use roundup::{adapters, encoders};

fn src() -> PathBuf {
    roundup_testkit::repo_root().join("src")
}

fn rust_files(dir: &Path, into: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, into);
        } else if path.extension().is_some_and(|e| e == "rs") {
            into.push(path);
        }
    }
}

/// The top-level module a file of `src/` belongs to (`machine` for
/// `src/machine/open_round.rs`); `None` for the library's root and the
/// binary (`src/bin/`).
fn module_of(path: &Path) -> Option<String> {
    let relative = path.strip_prefix(src()).ok()?;
    let first = relative.components().next()?.as_os_str().to_string_lossy().into_owned();
    let name = first.trim_end_matches(".rs").to_owned();
    (name != "lib" && name != "bin").then_some(name)
}

/// Which top-level modules each module uses through `crate::name`.
fn module_graph() -> BTreeMap<String, BTreeSet<String>> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for file in files {
        let Some(module) = module_of(&file) else { continue };
        let text = std::fs::read_to_string(&file).expect("a readable source file");
        let uses = graph.entry(module.clone()).or_default();
        for (at, _) in text.match_indices("crate::") {
            // `$crate::` in a macro means the same crate.
            let name: String =
                text[at + "crate::".len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            if !name.is_empty() && name != module && name.chars().next().is_some_and(char::is_lowercase) {
                uses.insert(name);
            }
        }
    }
    graph
}

/// A cycle of the graph, if it has one.
fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        graph: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut cycle = path[at..].to_vec();
            cycle.push(node.to_owned());
            return Some(cycle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, path, done) {
                return Some(cycle);
            }
        }
        path.pop();
        done.insert(node.to_owned());
        None
    }
    let mut done = BTreeSet::new();
    graph.keys().find_map(|node| visit(node, graph, &mut Vec::new(), &mut done))
}

#[test]
fn the_modules_form_no_cycle() {
    let graph = module_graph();
    assert!(graph.contains_key("machine") && graph.contains_key("adapters"), "the graph was read: {graph:?}");
    assert_eq!(find_cycle(&graph), None, "module graph: {graph:#?}");
}

/// The check must be able to fail: a graph with a cycle is caught.
#[test]
fn a_cycle_is_found() {
    let mut graph = BTreeMap::new();
    graph.insert("a".to_owned(), BTreeSet::from(["b".to_owned()]));
    graph.insert("b".to_owned(), BTreeSet::from(["c".to_owned()]));
    graph.insert("c".to_owned(), BTreeSet::from(["a".to_owned()]));
    assert_eq!(find_cycle(&graph), Some(vec!["a".into(), "b".into(), "c".into(), "a".into()]));
    graph.get_mut("c").unwrap().clear();
    assert_eq!(find_cycle(&graph), None);
}

#[test]
fn the_data_model_depends_on_nothing_else() {
    let graph = module_graph();
    assert_eq!(graph.get("model"), Some(&BTreeSet::new()));
}

/// The formats of `src/<dir>/`: every `.rs` but the module's own, its
/// shared helpers and their tests, and every folder with a `mod.rs` (a format whose
/// translation is split over files of its own), named as the format is
/// (`openai_chat.rs` is `openai-chat`).
fn format_files(dir: &str) -> BTreeSet<String> {
    std::fs::read_dir(src().join(dir))
        .expect("the directory exists")
        .map(|e| e.expect("a directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs") || p.join("mod.rs").is_file())
        .map(|p| p.file_stem().expect("a file name").to_string_lossy().replace('_', "-"))
        .filter(|name| {
            !["mod", "support", "borrowed", "printed", "scan-tests", "run-lists", "history"].contains(&name.as_str())
        })
        .collect()
}

#[test]
fn every_format_file_is_one_registry_row() {
    let inputs: BTreeSet<String> = adapters::REGISTRY.iter().map(|f| f.name().to_owned()).collect();
    assert_eq!(inputs.len(), adapters::REGISTRY.len(), "input format names are unique");
    assert_eq!(inputs, format_files("adapters"));
    let outputs: BTreeSet<String> = encoders::REGISTRY.iter().map(|f| f.name().to_owned()).collect();
    assert_eq!(outputs.len(), encoders::REGISTRY.len(), "output format names are unique");
    assert_eq!(outputs, format_files("encoders"));
}

#[test]
fn formats_and_usage_errors_name_every_format() {
    let roundup = || Command::new(env!("CARGO_BIN_EXE_roundup"));
    let formats = roundup().arg("formats").output().expect("roundup runs");
    assert!(formats.status.success());
    let formats = String::from_utf8(formats.stdout).expect("formats is UTF-8");
    let one_line = |about: &str| about.split_whitespace().collect::<Vec<_>>().join(" ");
    for (name, about) in adapters::REGISTRY
        .iter()
        .map(|f| (f.name(), f.about()))
        .chain(encoders::REGISTRY.iter().map(|f| (f.name(), f.about())))
    {
        assert!(formats.lines().any(|line| line.trim_start().starts_with(&format!("{name} "))), "{name}");
        assert!(formats.contains(&one_line(about)), "{name}: {formats}");
    }
    let usage = roundup().args(["replay", "--from", "bogus"]).output().expect("roundup runs");
    assert_eq!(usage.status.code(), Some(2));
    let usage = String::from_utf8(usage.stderr).expect("usage is UTF-8");
    let inputs: Vec<&str> = adapters::REGISTRY.iter().map(|f| f.name()).collect();
    assert!(usage.contains(&format!("[possible values: auto, {}]", inputs.join(", "))), "{usage}");
    let usage = roundup().args(["replay", "--emit", "bogus"]).output().expect("roundup runs");
    let usage = String::from_utf8(usage.stderr).expect("usage is UTF-8");
    let outputs: Vec<&str> = encoders::REGISTRY.iter().map(|f| f.name()).collect();
    assert!(usage.contains(&format!("[possible values: {}]", outputs.join(", "))), "{usage}");
}

#[test]
fn every_format_can_be_chosen_by_name() {
    for format in adapters::REGISTRY {
        let run = Command::new(env!("CARGO_BIN_EXE_roundup"))
            .args(["replay", "--from", format.name(), "-q"])
            .arg(roundup_testkit::repo_root().join("examples/session.ops.jsonl"))
            .output()
            .expect("roundup runs");
        // The ops example read as another format may be all bad lines
        // (exit 1, with a hint), but it is never a usage error (exit 2).
        assert!(matches!(run.status.code(), Some(0 | 1)), "--from {}: {:?}", format.name(), run.status);
        if format.name() == "ops" {
            assert_eq!(run.status.code(), Some(0));
        }
        let summaries = String::from_utf8_lossy(&run.stdout).matches(r#""type":"summary""#).count();
        assert!(summaries >= 1, "--from {} wrote no summary", format.name());
    }
    for format in encoders::REGISTRY {
        let run = Command::new(env!("CARGO_BIN_EXE_roundup"))
            .args(["replay", "--emit", format.name()])
            .arg(roundup_testkit::repo_root().join("examples/session.ops.jsonl"))
            .output()
            .expect("roundup runs");
        assert_eq!(run.status.code(), Some(0), "--emit {}", format.name());
        assert!(!run.stdout.is_empty(), "--emit {} wrote nothing", format.name());
    }
}

/// `unsafe` is forbidden in every crate of the repository, for every
/// target: the workspace's lints (which the root and the test kit take) and
/// the fuzz crate's own. And the supply-chain policy is in the repository.
#[test]
fn every_crate_forbids_unsafe_code() {
    let root = roundup_testkit::repo_root();
    let manifest = |path: &str| std::fs::read_to_string(root.join(path)).expect("the manifest exists");
    let workspace = manifest("Cargo.toml");
    assert!(workspace.contains("[workspace.lints.rust]\nunsafe_code = \"forbid\""));
    for path in ["Cargo.toml", "crates/testkit/Cargo.toml"] {
        assert!(manifest(path).contains("[lints]\nworkspace = true"), "{path} takes the workspace lints");
    }
    assert!(manifest("fuzz/Cargo.toml").contains("[lints.rust]\nunsafe_code = \"forbid\""));
    let deny = manifest("deny.toml");
    assert!(deny.contains("[licenses]") && deny.contains("[bans]") && deny.contains("[sources]"));
}
