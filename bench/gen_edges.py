#!/usr/bin/env python3
"""Writes a Puppet JSON catalog with about a million edges, for `ordo check` at scale.

    python3 bench/gen_edges.py [--resources N] [--edges E] [--cycle] > big.json

Resources (files, execs, notifies) sit in classes of 100 (Stage[main] > Class[Main] >
Class[Bench::GroupK] > resources: the catalog's `edges` are this containment). Each resource
also carries relationship metaparameters: `require` and `subscribe` point at earlier
resources, `before` and `notify` at later ones, so the graph is acyclic; `notify`/`subscribe`
only ever make an exec the refreshed end. Every resource requires the one just before it, so
with `--cycle` a single `before` from resource N/2 back to N/2 - 5 closes exactly one small
dependency cycle. Targets are drawn from a seeded generator: the output is reproducible.

The edge count printed on stderr is the catalog's containment edges plus one per reference
in a relationship metaparameter (the graph stage adds a few automatic relationships and the
container anchors on top).
"""

import argparse
import json
import random
import sys

GROUP = 100


def kind(i):
    # 5 in 10 files, 3 in 10 execs, 2 in 10 notifies
    m = i % 10
    return "File" if m < 5 else ("Exec" if m < 8 else "Notify")


def title(i):
    k = kind(i)
    if k == "File":
        return f"/srv/bench/g{i // GROUP}/f{i}"
    if k == "Exec":
        return f"run-{i}"
    return f"note-{i}"


def ref(i):
    return f"{kind(i)}[{title(i)}]"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--resources", type=int, default=100_000)
    ap.add_argument("--edges", type=int, default=1_000_000)
    ap.add_argument("--cycle", action="store_true")
    ap.add_argument("--seed", type=int, default=42)
    a = ap.parse_args()
    n = a.resources
    rng = random.Random(a.seed)
    groups = (n + GROUP - 1) // GROUP
    containment = 2 + groups + n + 1  # the /srv/bench dir files below are contained too
    # References per resource to reach the edge target.
    per = max(1, round((a.edges - containment) / n))

    resources = [
        {"type": "Stage", "title": "main", "tags": ["stage"], "exported": False,
         "parameters": {"name": "main"}},
        {"type": "Class", "title": "Main", "tags": ["class"], "exported": False,
         "parameters": {"name": "main"}},
        {"type": "File", "title": "/srv/bench", "tags": ["file", "class"],
         "file": "bench.pp", "line": 1, "exported": False,
         "parameters": {"ensure": "directory"}},
    ]
    edges = [
        {"source": "Stage[main]", "target": "Class[Main]"},
        {"source": "Class[Main]", "target": "File[/srv/bench]"},
    ]
    for g in range(groups):
        cls = f"Bench::Group{g}"
        resources.append({"type": "Class", "title": cls, "tags": ["class", f"group{g}"],
                          "file": "bench.pp", "line": 2, "exported": False})
        edges.append({"source": "Stage[main]", "target": f"Class[{cls}]"})
    refs = 0
    for i in range(n):
        k = kind(i)
        params = {}
        if k == "File":
            params["ensure"] = "file"
            params["content"] = f"file {i}\n"
        elif k == "Exec":
            params["command"] = f"/bin/true {i}"
            params["refreshonly"] = True
        else:
            params["message"] = f"note {i}"
        rel = {"require": [], "before": [], "notify": [], "subscribe": []}
        if i > 0:
            rel["require"].append(ref(i - 1))
        budget = per - len(rel["require"])
        seen = {i - 1}
        tries = 0
        while budget > 0 and tries < 50:
            tries += 1
            choice = rng.random()
            if choice < 0.25 and k == "Exec" and i > 0:
                # subscribe: an earlier resource refreshes this exec
                j = rng.randrange(max(0, i - 5000), i)
                param = "subscribe"
            elif choice < 0.5 and i + 1 < n:
                # notify a later exec
                j = rng.randrange(i + 1, min(n, i + 5000))
                j = (j // 10) * 10 + 5 + rng.randrange(3)
                if j <= i or j >= n:
                    continue
                param = "notify"
            elif choice < 0.75 and i + 1 < n:
                j = rng.randrange(i + 1, min(n, i + 5000))
                param = "before"
            elif i > 0:
                j = rng.randrange(max(0, i - 5000), i)
                param = "require"
            else:
                continue
            if j in seen or j == i:
                continue
            seen.add(j)
            rel[param].append(ref(j))
            budget -= 1
        if a.cycle and i == n // 2:
            rel["before"].append(ref(i - 5))
        for p, v in rel.items():
            if v:
                params[p] = v if len(v) > 1 else v[0]
                refs += len(v)
        resources.append({"type": k, "title": title(i), "tags": [k.lower(), "bench"],
                          "file": "bench.pp", "line": 3 + i, "exported": False,
                          "parameters": params})
        edges.append({"source": f"Class[Bench::Group{i // GROUP}]", "target": ref(i)})
    catalog = {
        "tags": ["settings", "class"],
        "name": "bench.example.com",
        "version": 1,
        "code_id": None,
        "catalog_uuid": "00000000-0000-4000-8000-000000000000",
        "catalog_format": 2,
        "environment": "production",
        "resources": resources,
        "edges": edges,
        "classes": ["settings"] + [f"bench::group{g}" for g in range(groups)],
    }
    json.dump(catalog, sys.stdout, indent=1)
    sys.stdout.write("\n")
    print(f"{len(resources)} resources, {len(edges)} containment edges, {refs} relationship "
          f"references: {len(edges) + refs} edges", file=sys.stderr)


if __name__ == "__main__":
    main()
