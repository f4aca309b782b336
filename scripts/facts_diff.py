#!/usr/bin/env python3
"""Differential test of `ordo facts` against Facter on this machine.

    scripts/facts_diff.py [--ordo target/debug/ordo] [--timing N] [--strict] [--modulepath DIRS]

Runs `facter --json --show-legacy` and `ordo facts --json --show-legacy` (external facts
off in both, so only the gathered facts are compared), then lists:
- the fact paths Facter gives that Ordo lacks (missing),
- the values that differ, each classed as volatile (uptime, free memory, load, mount usage:
  they change between two runs) or not,
- the paths Ordo gives that Facter does not (extra: facts Facter failed to gather here).
With --modulepath (colon-separated module folders), the modules' custom facts are compared
too: Facter gets `--custom-dir MODULE/lib/facter` for each, Ordo the modulepath, and the
custom facts are listed with their values.
Installs Debian's `facter` with apt-get when it is absent. With --timing N, also times both
commands N times each and prints the medians. Exit status 1 with --strict when a path is
missing or a non-volatile value differs.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

# Paths whose values move between two runs (regular expressions on the dotted path).
VOLATILE = [
    r"^load_averages\.",
    r"^system_uptime\.", r"^uptime(_days|_hours|_seconds)?$",
    r"^memory\.(system|swap)\.(available|available_bytes|used|used_bytes|capacity)$",
    r"^memoryfree(_mb)?$", r"^swapfree(_mb)?$",
    r"^mountpoints\..*\.(available|available_bytes|used|used_bytes|capacity)$",
    r"^processors\.speed$",  # the current clock of CPU 0, as /proc/cpuinfo reads now
    r"^path$",  # the environment of the process (facter is a Ruby wrapper script)
]


def flatten(value, prefix="", out=None):
    """Dotted paths to leaves (list items by index)."""
    if out is None:
        out = {}
    if isinstance(value, dict) and value:
        for k, v in value.items():
            flatten(v, f"{prefix}.{k}" if prefix else k, out)
    elif isinstance(value, list) and value:
        for i, v in enumerate(value):
            flatten(v, f"{prefix}.{i}", out)
    else:
        out[prefix] = value
    return out


def volatile(path):
    return any(re.search(p, path) for p in VOLATILE)


def custom_dirs(modulepath):
    """The folders of custom facts of the modules, as Puppet gives them to Facter."""
    dirs = []
    for d in filter(None, modulepath.split(":")):
        for m in sorted(os.listdir(d)) if os.path.isdir(d) else []:
            for sub in ("lib/facter", "plugins/facter"):
                f = os.path.join(d, m, sub)
                if os.path.isdir(f):
                    dirs.append(f)
    return dirs


def facter_cmd(modulepath):
    if shutil.which("facter") is None:
        print("facter is absent: installing Debian's facter", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "facter"], check=True,
                       stdout=subprocess.DEVNULL)
    cmd = ["facter", "--json", "--show-legacy", "--no-external-facts"]
    for d in custom_dirs(modulepath or ""):
        cmd += ["--custom-dir", d]
    return cmd


def custom_names(modulepath):
    """Names the modules' custom facts add (`Facter.add(:name`), as written."""
    names = set()
    for d in custom_dirs(modulepath or ""):
        for f in sorted(os.listdir(d)):
            if f.endswith(".rb"):
                with open(os.path.join(d, f), errors="replace") as fh:
                    for m in re.finditer(r"Facter\.add\(\s*[:'\"]([A-Za-z0-9_]+)", fh.read()):
                        names.add(m.group(1).lower())
    return sorted(names)


def run_json(cmd):
    # Facter exits 1 when a fact failed (it still prints the others): the output counts.
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        return json.loads(p.stdout)
    except ValueError:
        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")


def median_time(cmd, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ordo", default=os.path.join(here, "..", "target", "debug", "ordo"))
    ap.add_argument("--timing", type=int, default=0, metavar="N")
    ap.add_argument("--strict", action="store_true")
    ap.add_argument("--modulepath", metavar="DIRS")
    args = ap.parse_args()

    fcmd = facter_cmd(args.modulepath)
    ocmd = [args.ordo, "facts", "--json", "--show-legacy", "--no-external-facts"]
    if args.modulepath:
        ocmd += ["--modulepath", args.modulepath]
    ftree = run_json(fcmd)
    otree = run_json(ocmd)
    facter = flatten(ftree)
    ordo = flatten(otree)

    missing = sorted(p for p in facter if p not in ordo)
    extra = sorted(p for p in ordo if p not in facter)
    differ = sorted(p for p in facter if p in ordo and facter[p] != ordo[p])
    moving = [p for p in differ if volatile(p)]
    real = [p for p in differ if not volatile(p)]

    print(f"Facter paths: {len(facter)}  Ordo paths: {len(ordo)}")
    print(f"missing in Ordo: {len(missing)}")
    for p in missing:
        print(f"  {p} = {json.dumps(facter[p])}")
    for title, paths in (("not volatile", real), ("volatile", moving)):
        print(f"values that differ ({title}): {len(paths)}")
        for p in paths:
            print(f"  {p}: facter {json.dumps(facter[p])}  ordo {json.dumps(ordo[p])}")
    print(f"only in Ordo: {len(extra)}")
    for p in extra:
        print(f"  {p} = {json.dumps(ordo[p])}")
    if args.modulepath:
        names = custom_names(args.modulepath)
        same = [n for n in names if ftree.get(n) == otree.get(n)]
        print(f"custom facts of the modules: {len(names)}, the same in both: {len(same)}")
        for n in names:
            mark = "=" if n in same else "DIFFERS"
            print(f"  {n} {mark} facter {json.dumps(ftree.get(n))}"
                  + ("" if n in same else f"  ordo {json.dumps(otree.get(n))}"))

    if args.timing:
        f = median_time(fcmd, args.timing)
        o = median_time(ocmd, args.timing)
        print(f"median of {args.timing}: facter {f * 1000:.1f} ms, ordo facts {o * 1000:.1f} ms "
              f"({f / o:.1f}x)")

    if args.strict and (missing or real or (args.modulepath and len(same) != len(names))):
        sys.exit(1)


if __name__ == "__main__":
    main()
