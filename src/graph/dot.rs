//! DOT output, like Puppet's `--graph` files.

use super::cycles::find_cycles;
use super::{Graph, Origin, Vertex};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Containment: what the catalog's edges say.
    Resources,
    /// Relationships between resources and containers (before expansion).
    Relationships,
    /// The graph that is walked: containers replaced by anchors.
    Expanded,
    /// Only the cycles.
    Cycles,
}

impl std::str::FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Kind, String> {
        match s {
            "resources" => Ok(Kind::Resources),
            "relationships" => Ok(Kind::Relationships),
            "expanded" => Ok(Kind::Expanded),
            "cycles" => Ok(Kind::Cycles),
            _ => Err(format!(
                "unknown graph kind '{s}' (expected resources, relationships, expanded or cycles)"
            )),
        }
    }
}

fn quote(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

fn edge_attrs(refresh: bool, origin: &Origin) -> String {
    let style = match origin {
        Origin::Containment { .. } => "dotted",
        Origin::Auto { .. } => "dashed",
        Origin::Metaparam { .. } => "solid",
    };
    if refresh {
        format!(" [style = {style}, label = \"~>\"]")
    } else {
        format!(" [style = {style}]")
    }
}

fn vertex_name(g: &Graph, v: Vertex) -> String {
    match v {
        Vertex::Resource(_) => g.name(v),
        Vertex::Admissible(_) => format!("Admissible_{}", g.name(v)),
        Vertex::Completed(_) => format!("Completed_{}", g.name(v)),
    }
}

pub fn to_dot(g: &Graph, kind: Kind) -> String {
    let (name, label) = match kind {
        Kind::Resources => ("Resources", "Resources"),
        Kind::Relationships => ("Relationships", "Relationships"),
        Kind::Expanded => ("Expanded_relationships", "Expanded_relationships"),
        Kind::Cycles => ("Resource_Cycles", "Resource Cycles"),
    };
    let mut out = format!("digraph {name} {{\n    label = {}\n", quote(label));
    match kind {
        Kind::Resources | Kind::Relationships => {
            for n in &g.nodes {
                out.push_str(&format!("    {};\n", quote(&n.reference.to_string())));
            }
            if kind == Kind::Resources {
                for (p, kids) in g.children.iter().enumerate() {
                    for k in kids {
                        out.push_str(&format!(
                            "    {} -> {};\n",
                            quote(&g.nodes[p].reference.to_string()),
                            quote(&g.nodes[*k].reference.to_string())
                        ));
                    }
                }
            } else {
                for r in &g.relations {
                    out.push_str(&format!(
                        "    {} -> {}{};\n",
                        quote(&g.nodes[r.source].reference.to_string()),
                        quote(&g.nodes[r.target].reference.to_string()),
                        edge_attrs(r.refresh, &r.origin)
                    ));
                }
            }
        }
        Kind::Expanded => {
            let vs = g.vertices();
            for v in &vs {
                out.push_str(&format!("    {};\n", quote(&vertex_name(g, *v))));
            }
            for v in &vs {
                for (t, l) in g.out_edges(*v) {
                    out.push_str(&format!(
                        "    {} -> {}{};\n",
                        quote(&vertex_name(g, *v)),
                        quote(&vertex_name(g, t)),
                        edge_attrs(l.refresh, &l.origin)
                    ));
                }
            }
        }
        Kind::Cycles => {
            for c in find_cycles(g) {
                let names: Vec<String> = c.path.iter().map(|v| quote(&g.name(*v))).collect();
                out.push_str(&format!("    {};\n", names.join(" -> ")));
            }
        }
    }
    out.push_str("}\n");
    out
}
