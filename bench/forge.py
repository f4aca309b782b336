#!/usr/bin/env python3
"""Compile time of the forge cases (real Forge modules), Ordo against Puppet 7.23.

    python3 bench/forge.py [--ordo target/release/ordo] [--runs 3] [--cases 101,102]

For each case of ../shared/forge/cases (site.pp, node, optional hiera.yaml), times
`ordo compile` as the forge runner calls it (median of RUNS) and `puppet catalog compile`
set up as ../shared/forge/tools/puppet_compile.sh sets it up (facts through the yaml facts
terminus, so Facter is not run; one run: Puppet takes seconds), whole processes, wall
clock, interleaved. Prints one row per case and the median of the per-case ratios.
Needs `puppet` on the PATH.
"""

import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
FORGE = os.path.join(HERE, "..", "..", "shared", "forge")


def timed(cmd, cwd):
    start = time.perf_counter()
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, r.returncode


def ordo_cmd(ordo, case, node):
    cmd = [ordo, "compile", "site.pp", "--node", node, "--facts", f"../../facts/{node}.json",
           "--modulepath", "../../modules:../../vendor_modules"]
    if os.path.exists(os.path.join(case, "hiera.yaml")):
        cmd += ["--hiera-config", "hiera.yaml"]
    return cmd


def puppet_cmd(case, node, work):
    env = os.path.join(work, "env", "production", "manifests")
    os.makedirs(env)
    os.makedirs(os.path.join(work, "var", "yaml", "facts"))
    shutil.copy(os.path.join(case, "site.pp"), env)
    facts = json.load(open(os.path.join(FORGE, "facts", f"{node}.json")))
    with open(os.path.join(work, "var", "yaml", "facts", f"{node}.yaml"), "w") as f:
        f.write(f"--- !ruby/object:Puppet::Node::Facts\nname: {node}\nvalues: {json.dumps(facts)}\n")
    mp = f"{os.path.abspath(os.path.join(FORGE, 'modules'))}:{os.path.abspath(os.path.join(FORGE, 'vendor_modules'))}"
    cmd = ["puppet", "catalog", "compile", node, "--confdir", f"{work}/conf", "--vardir", f"{work}/var",
           "--codedir", f"{work}/code", "--environmentpath", f"{work}/env", "--basemodulepath", mp,
           "--facts_terminus", "yaml", "--yamldir", f"{work}/var/yaml", "--clientyamldir",
           f"{work}/var/yaml", "--render-as", "json", "--color=false"]
    if os.path.exists(os.path.join(case, "hiera.yaml")):
        cmd += ["--hiera_config", os.path.join(case, "hiera.yaml")]
    return cmd


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ordo", default=os.path.join(HERE, "..", "target", "release", "ordo"))
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cases", default="")
    a = ap.parse_args()
    ordo = os.path.abspath(a.ordo)
    names = sorted(os.listdir(os.path.join(FORGE, "cases")))
    if a.cases:
        names = [n for n in names if n in a.cases.split(",")]
    ratios = []
    print("| case | Ordo median | Puppet | ratio |\n|---|---:|---:|---:|")
    for name in names:
        case = os.path.join(FORGE, "cases", name)
        node = open(os.path.join(case, "node")).read().strip()
        ordo_times = [timed(ordo_cmd(ordo, case, node), case)[0] for _ in range(a.runs)]
        with tempfile.TemporaryDirectory() as work:
            puppet, _ = timed(puppet_cmd(case, node, work), case)
        o = statistics.median(ordo_times)
        ratios.append(puppet / o)
        print(f"| {name} | {o:.3f} s | {puppet:.3f} s | {puppet / o:.1f}x |", flush=True)
    print(f"\n{len(ratios)} cases: median ratio {statistics.median(ratios):.1f}x "
          f"(min {min(ratios):.1f}x, max {max(ratios):.1f}x)")


if __name__ == "__main__":
    main()
