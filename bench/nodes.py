#!/usr/bin/env python3
"""Catalogs per second for many nodes: `ordo compile --nodes` over N facts files.

    python3 bench/nodes.py [--ordo target/release/ordo] [--nodes 1000] [--size 1000] [--jobs 1 2]

Writes into a temporary directory a manifest (`gen_manifest.py mixed SIZE`, plus resources
that depend on facts: a role, the OS family, a list of mounts, the certname) and NODES facts
files (JSON and YAML alternately, roles and mounts varying by node), then runs
`ordo compile MANIFEST --nodes DIR --outdir OUT --jobs J` for each J and prints a Markdown
table: wall seconds, CPU seconds (user+sys of the child), catalogs per second by wall clock
and per CPU second. On a shared machine the CPU column is the steadier one.
"""

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
GEN = os.path.join(HERE, "..", "..", "shared", "tools", "gen_manifest.py")

FACT_CODE = r"""
class fleet {
  $role = $facts['role']
  notify { "role ${role} on ${trusted['certname']}": }
  file { '/etc/motd':
    content => "Welcome to ${facts['networking']['hostname']} (${facts['os']['family']} ${facts['os']['release']['major']})\n",
  }
  case $facts['os']['family'] {
    'RedHat': { package { 'httpd': ensure => installed } }
    default:  { package { 'apache2': ensure => installed } }
  }
  if $role == 'db' {
    package { 'postgresql': ensure => installed, before => Service['postgresql'] }
    service { 'postgresql': ensure => running }
  }
  $facts['mounts'].each |$m| {
    file { "/srv/${m}": ensure => directory, require => File['/etc/motd'] }
  }
}
include fleet
"""


def facts(i):
    family = "RedHat" if i % 3 == 0 else "Debian"
    role = ["web", "db", "cache"][i % 3]
    mounts = [f"m{j}" for j in range(i % 5)]
    return {
        "role": role,
        "os": {"family": family, "release": {"major": str(8 + i % 4)}},
        "networking": {"hostname": f"node{i}", "fqdn": f"node{i}.example.com"},
        "mounts": mounts,
    }


def yaml_of(d, indent=0):
    pad = "  " * indent
    out = []
    for k, v in d.items():
        if isinstance(v, dict):
            out.append(f"{pad}{k}:")
            out.append(yaml_of(v, indent + 1))
        elif isinstance(v, list):
            if v:
                out.append(f"{pad}{k}:")
                out.extend(f"{pad}  - {x}" for x in v)
            else:
                out.append(f"{pad}{k}: []")
        else:
            out.append(f"{pad}{k}: '{v}'")
    return "\n".join(out)


def main():
    import json

    ap = argparse.ArgumentParser()
    ap.add_argument("--ordo", default=os.path.join(HERE, "..", "target", "release", "ordo"))
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--size", type=int, default=1000)
    ap.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        manifest = os.path.join(tmp, "site.pp")
        code = subprocess.run([sys.executable, GEN, "mixed", str(a.size)], check=True,
                              capture_output=True, text=True).stdout
        with open(manifest, "w") as f:
            f.write(code + FACT_CODE)
        nodes = os.path.join(tmp, "nodes")
        os.mkdir(nodes)
        for i in range(a.nodes):
            name = f"node{i}.example.com"
            if i % 2:
                with open(os.path.join(nodes, name + ".yaml"), "w") as f:
                    f.write(yaml_of(facts(i)) + "\n")
            else:
                with open(os.path.join(nodes, name + ".json"), "w") as f:
                    json.dump(facts(i), f)
        print(f"{a.nodes} nodes, manifest gen_manifest mixed {a.size} + fact-dependent class")
        print()
        print("| jobs | wall s | cpu s | catalogs/s (wall) | catalogs/cpu-s |")
        print("|---:|---:|---:|---:|---:|")
        for jobs in a.jobs:
            out = os.path.join(tmp, f"out{jobs}")
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            t = time.monotonic()
            run = subprocess.run([a.ordo, "compile", manifest, "--nodes", nodes, "--outdir", out,
                                  "--jobs", str(jobs)], capture_output=True, text=True)
            wall = time.monotonic() - t
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            if run.returncode != 0:
                sys.exit(f"ordo failed:\n{run.stdout}\n{run.stderr[-2000:]}")
            done = len(os.listdir(out))
            print(f"| {jobs} | {wall:.2f} | {cpu:.2f} | {done / wall:.1f} | {done / cpu:.1f} |")


if __name__ == "__main__":
    main()
