//! Property tests: the apply order respects every edge of random acyclic catalogs; noop never
//! touches the filesystem; catalogs survive a JSON round trip; the catalog reader and the
//! checks before the first change never panic on mutated input.

use ordo::apply::log::LogLine;
use ordo::apply::{apply, ApplyOptions};
use ordo::catalog::{Catalog, Edge, Resource, ResourceKind};
use ordo::graph::{order, Graph, Ordering, Vertex};
use proptest::prelude::*;
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

fn res(t: &str, title: &str, kind: ResourceKind) -> Resource {
    serde_json::from_value(json!({"type": t, "title": title, "kind": kind})).unwrap()
}

/// A random acyclic catalog: `n` notify resources spread over `k` classes (class `None` is
/// Class[main]), resource relationships that only go forward in a global rank, and class
/// relationships that only go from a lower class to a higher one.
#[derive(Debug, Clone)]
struct Dag {
    class_of: Vec<Option<usize>>,
    classes: usize,
    /// (from, to, parameter written on: 0 before, 1 notify, 2 require, 3 subscribe)
    edges: Vec<(usize, usize, u8)>,
    class_edges: Vec<(usize, usize)>,
    ordering: Ordering,
}

fn dag() -> impl Strategy<Value = Dag> {
    (1usize..14, 0usize..4).prop_flat_map(|(n, k)| {
        let class_of = proptest::collection::vec(proptest::option::weighted(0.7, 0..k.max(1)), n)
            .prop_map(move |v| {
                v.into_iter()
                    .map(|c| if k == 0 { None } else { c })
                    .collect::<Vec<_>>()
            });
        let edges = proptest::collection::vec((0..n, 0..n, 0u8..4), 0..(n * 2));
        let class_edges = proptest::collection::vec((0..k.max(1), 0..k.max(1)), 0..=k);
        let ordering = prop_oneof![
            Just(Ordering::Manifest),
            Just(Ordering::TitleHash),
            any::<u64>().prop_map(Ordering::Random),
        ];
        (class_of, edges, class_edges, ordering).prop_map(
            move |(class_of, edges, class_edges, ordering)| {
                // Rank: main-level resources first, then by class, then by index.
                let rank = |i: usize| (class_of[i].map_or(0, |c| c + 1), i);
                let edges = edges
                    .into_iter()
                    .filter(|(a, b, _)| {
                        rank(*a) < rank(*b) && class_of[*a] == class_of[*b]
                            || class_of[*a].map_or(0, |c| c + 1) < class_of[*b].map_or(0, |c| c + 1)
                    })
                    .collect();
                let class_edges = class_edges
                    .into_iter()
                    .filter(|(a, b)| a < b && k > 0)
                    .collect();
                Dag {
                    class_of,
                    classes: k,
                    edges,
                    class_edges,
                    ordering,
                }
            },
        )
    })
}

fn build(d: &Dag) -> Catalog {
    let mut c = Catalog::new("prop");
    c.resources
        .push(res("Stage", "main", ResourceKind::CompilableType));
    c.resources.push(res("Class", "main", ResourceKind::Class));
    c.edges.push(Edge {
        source: "Stage[main]".into(),
        target: "Class[main]".into(),
    });
    for k in 0..d.classes {
        let mut r = res("Class", &format!("C{k}"), ResourceKind::Class);
        let before: Vec<Value> = d
            .class_edges
            .iter()
            .filter(|(a, _)| *a == k)
            .map(|(_, b)| json!(format!("Class[C{b}]")))
            .collect();
        if !before.is_empty() {
            r.parameters.insert("before".into(), Value::Array(before));
        }
        c.resources.push(r);
        c.edges.push(Edge {
            source: "Class[main]".into(),
            target: format!("Class[C{k}]"),
        });
    }
    for (i, class) in d.class_of.iter().enumerate() {
        let mut r = res("Notify", &format!("r{i}"), ResourceKind::CompilableType);
        for (a, b, how) in &d.edges {
            let (param, other) = match how {
                0 if *a == i => ("before", *b),
                1 if *a == i => ("notify", *b),
                2 if *b == i => ("require", *a),
                3 if *b == i => ("subscribe", *a),
                _ => continue,
            };
            let list = r
                .parameters
                .entry(param.to_string())
                .or_insert_with(|| json!([]));
            list.as_array_mut()
                .unwrap()
                .push(json!(format!("Notify[r{other}]")));
        }
        c.resources.push(r);
        c.edges.push(Edge {
            source: match class {
                Some(k) => format!("Class[C{k}]"),
                None => "Class[main]".into(),
            },
            target: format!("Notify[r{i}]"),
        });
    }
    c
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn apply_order_respects_every_edge(d in dag()) {
        let c = build(&d);
        let g = Graph::build(&c, d.ordering);
        prop_assert!(g.errors.is_empty(), "{:?}", g.errors);
        prop_assert!(ordo::graph::cycles::find_cycles(&g).is_empty());
        let order = order::apply_order(&g);
        let mut pos: HashMap<String, usize> = HashMap::new();
        for (i, v) in order.iter().enumerate() {
            if let Vertex::Resource(n) = v {
                pos.insert(g.nodes[*n].reference.title.clone(), i);
            }
        }
        let n = d.class_of.len();
        prop_assert_eq!(pos.len(), n, "every resource is applied once");
        let p = |i: usize| pos[&format!("r{i}")];
        for (a, b, _) in &d.edges {
            prop_assert!(p(*a) < p(*b), "r{} must come before r{}: {:?}", a, b, order);
        }
        for (ca, cb) in &d.class_edges {
            for i in (0..n).filter(|i| d.class_of[*i] == Some(*ca)) {
                for j in (0..n).filter(|j| d.class_of[*j] == Some(*cb)) {
                    prop_assert!(p(i) < p(j), "Class[C{}] -> Class[C{}]: r{} before r{}", ca, cb, i, j);
                }
            }
        }
    }
}

/// What a file resource of the noop property finds and wants.
#[derive(Debug, Clone)]
enum Existing {
    Nothing,
    File(Vec<u8>, u32),
    Dir,
    Link(usize),
}

fn existing() -> impl Strategy<Value = Existing> {
    prop_oneof![
        Just(Existing::Nothing),
        (
            proptest::collection::vec(any::<u8>(), 0..64),
            0o400u32..0o777
        )
            .prop_map(|(b, m)| Existing::File(b, m)),
        Just(Existing::Dir),
        (0usize..6).prop_map(Existing::Link),
    ]
}

fn wanted() -> impl Strategy<Value = Value> {
    let ensure = prop_oneof![
        Just(json!("file")),
        Just(json!("present")),
        Just(json!("directory")),
        Just(json!("absent")),
        (0usize..6).prop_map(|t| json!(format!("link:{t}"))),
        Just(Value::Null),
    ];
    let content = proptest::option::of("[a-z\n]{0,20}");
    let mode = proptest::option::of(prop_oneof![Just("0644"), Just("0600"), Just("0755")]);
    let links = proptest::option::of(prop_oneof![Just("follow"), Just("manage")]);
    let force = any::<bool>();
    (ensure, content, mode, links, force).prop_map(
        |(e, c, m, l, f)| json!({"ensure": e, "content": c, "mode": m, "links": l, "force": f}),
    )
}

/// Everything observable under a directory: kinds, modes, contents, link targets and
/// modification times.
fn snapshot(dir: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            let key = p.strip_prefix(dir).unwrap().display().to_string();
            let kind = if m.file_type().is_symlink() {
                format!("link {}", std::fs::read_link(&p).unwrap().display())
            } else if m.is_dir() {
                stack.push(p.clone());
                "dir".to_string()
            } else {
                format!("file {:?}", std::fs::read(&p).unwrap())
            };
            out.insert(
                key,
                format!(
                    "{kind} mode {:o} uid {} mtime {}.{}",
                    m.permissions().mode(),
                    m.uid(),
                    m.mtime(),
                    m.mtime_nsec()
                ),
            );
        }
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn noop_never_touches_the_filesystem(
        cases in proptest::collection::vec((existing(), wanted()), 1..6)
    ) {
        let dir = tempfile::tempdir().unwrap();
        let sandbox = dir.path().join("sandbox");
        std::fs::create_dir(&sandbox).unwrap();
        let name = |i: usize| sandbox.join(format!("f{i}"));
        for (i, (have, _)) in cases.iter().enumerate() {
            match have {
                Existing::Nothing => {}
                Existing::File(b, m) => {
                    std::fs::write(name(i), b).unwrap();
                    std::fs::set_permissions(name(i), std::fs::Permissions::from_mode(*m)).unwrap();
                }
                Existing::Dir => {
                    std::fs::create_dir(name(i)).unwrap();
                    std::fs::write(name(i).join("inner"), "x").unwrap();
                }
                Existing::Link(t) => std::os::unix::fs::symlink(format!("f{t}"), name(i)).unwrap(),
            }
        }
        let mut c = Catalog::new("noop");
        c.resources.push(res("Stage", "main", ResourceKind::CompilableType));
        c.resources.push(res("Class", "main", ResourceKind::Class));
        for (i, (_, want)) in cases.iter().enumerate() {
            let mut r = res("File", name(i).to_str().unwrap(), ResourceKind::CompilableType);
            for (k, v) in want.as_object().unwrap() {
                let v = match v.as_str().and_then(|s| s.strip_prefix("link:")) {
                    Some(t) => json!(name(t.parse().unwrap()).to_str().unwrap()),
                    None => v.clone(),
                };
                if !v.is_null() {
                    r.parameters.insert(k.clone(), v);
                }
            }
            c.resources.push(r);
        }
        let before = snapshot(dir.path());
        let opts = ApplyOptions {
            noop: true,
            bucket_dir: dir.path().join("bucket"),
            pending_file: Some(dir.path().join("pending.json")),
            ..ApplyOptions::default()
        };
        // A catalog the validation refuses (generated attributes may contradict each
        // other) changes nothing either.
        let _ = apply(&c, &opts, &mut |_: &LogLine| {});
        prop_assert_eq!(before, snapshot(dir.path()));
    }
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        ".{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((".{0,6}", inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

fn resource() -> impl Strategy<Value = Resource> {
    (
        "[A-Z][a-z_:]{0,10}",
        ".{0,16}",
        proptest::collection::vec("[a-z]{1,6}", 0..3),
        proptest::option::of(".{0,10}"),
        proptest::option::of(any::<u32>()),
        any::<bool>(),
        proptest::option::of(prop_oneof![
            Just(ResourceKind::CompilableType),
            Just(ResourceKind::DefinedType),
            Just(ResourceKind::Class),
            Just(ResourceKind::Unknown),
        ]),
        proptest::collection::vec(("[a-z_]{1,8}", json_value()), 0..4),
        proptest::collection::vec("[a-z_]{1,8}", 0..2),
    )
        .prop_map(
            |(t, title, tags, file, line, exported, kind, params, sensitive)| Resource {
                type_name: t,
                title,
                tags: tags.into_iter().map(Into::into).collect(),
                file,
                line,
                exported,
                kind,
                parameters: params.into_iter().collect(),
                sensitive_parameters: sensitive,
            },
        )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn catalog_json_round_trips(
        resources in proptest::collection::vec(resource(), 0..5),
        edges in proptest::collection::vec((".{0,8}", ".{0,8}"), 0..4),
        name in ".{0,10}",
        version in json_value(),
        classes in proptest::collection::vec("[a-z:]{1,8}", 0..3),
    ) {
        let mut c = Catalog::new(name);
        c.version = version;
        c.resources = resources;
        c.edges = edges.into_iter().map(|(source, target)| Edge { source, target }).collect();
        c.classes = classes;
        let text = c.to_json_pretty();
        let back = ordo::cli::catalog_file::parse_catalog("c.json", &text)
            .map_err(|r| r.diagnostic.message.clone());
        prop_assert_eq!(back, Ok(c));
    }

    #[test]
    fn mutated_catalogs_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>(), 0u8..3), 1..8)
    ) {
        let base = std::fs::read(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/graph/containers.json"),
        )
        .unwrap();
        let mut bytes = base.clone();
        for (at, byte, op) in edits {
            if bytes.is_empty() {
                bytes.push(byte);
                continue;
            }
            let i = at.index(bytes.len());
            match op {
                0 => bytes[i] = byte,
                1 => bytes.insert(i, byte),
                _ => {
                    bytes.remove(i);
                }
            }
        }
        match ordo::cli::catalog_file::parse_catalog_bytes("m.json", &bytes) {
            Ok(c) => {
                let g = Graph::build(&c, Ordering::Manifest);
                let _ = ordo::apply::validate(&c, &g, false);
                let _ = order::apply_order(&g);
            }
            Err(r) => {
                let _ = r.render(ordo::diagnostics::RenderOptions { color: false });
            }
        }
    }
}
