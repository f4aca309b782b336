#!/usr/bin/env python3
"""bench/run.py -- Ordo against Puppet on the same generated manifests, side by side.

usage: python3 bench/run.py [--ordo target/release/ordo] [--runs 5] [--sizes 1000,10000]
                            [--shapes chain,fanout,mixed,wide] [--no-puppet] [--markdown FILE]

For every shape and size, ../shared/tools/gen_manifest.py writes a manifest; then each command
below runs --runs times, Ordo and Puppet interleaved, and the table reports the median wall time,
the peak resident memory (ru_maxrss of the child) and the ratio Puppet/Ordo.

  ordo parse, ordo compile, ordo check, ordo apply --noop, ordo apply (real, under a fresh root)
  puppet catalog compile, puppet apply --noop, puppet apply (when `puppet` is on PATH)

Apply runs use the generator's --root, a fresh temporary directory for every run, so a "first
run" really creates every file; the "second run" applies again over the converged root.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GEN = os.path.join(ROOT, "..", "shared", "tools", "gen_manifest.py")


def run_once(argv, cwd=None):
    """Runs argv, returns (seconds, peak_rss_mb, exit_status)."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage.ru_maxrss / 1024.0, os.waitstatus_to_exitcode(status)


def generate(shape, n, root, path):
    with open(path, "w") as f:
        subprocess.run([sys.executable, GEN, shape, str(n), "--root", root], stdout=f, check=True)


def measure(label, make_argv, runs, prepare=None):
    """make_argv(run_index) -> argv; prepare(run_index) is called before each run, untimed."""
    times, mems, codes = [], [], set()
    for i in range(runs):
        if prepare:
            prepare(i)
        t, m, c = run_once(make_argv(i))
        times.append(t)
        mems.append(m)
        codes.add(c)
    return {"label": label, "median": statistics.median(times), "rss": max(mems), "codes": codes}


def fmt_row(shape, n, what, ordo, puppet):
    ratio = ""
    mem_ratio = ""
    if puppet and ordo and ordo["median"] > 0:
        ratio = "%.0fx" % (puppet["median"] / ordo["median"])
        mem_ratio = "%.1f%%" % (100.0 * ordo["rss"] / puppet["rss"]) if puppet["rss"] else ""
    def cell(r):
        if not r:
            return "n/a", "n/a"
        note = "" if r["codes"] <= {0, 2} else " (exit %s)" % ",".join(map(str, sorted(r["codes"])))
        return "%.3f s%s" % (r["median"], note), "%.0f MB" % r["rss"]
    ot, om = cell(ordo)
    pt, pm = cell(puppet)
    return "| %s | %d | %s | %s | %s | %s | %s | %s | %s |" % (
        shape, n, what, ot, om, pt, pm, ratio, mem_ratio)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ordo", default=os.path.join(ROOT, "target", "release", "ordo"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="1000,10000")
    ap.add_argument("--shapes", default="chain,fanout,mixed,wide")
    ap.add_argument("--no-puppet", action="store_true")
    ap.add_argument("--markdown", help="also write the table to this file")
    a = ap.parse_args()
    ordo = os.path.abspath(a.ordo)
    puppet = None if a.no_puppet else shutil.which("puppet")
    work = tempfile.mkdtemp(prefix="ordo-bench-")
    rows = []
    header = ("| shape | resources | command | Ordo median | Ordo peak RSS | Puppet median "
              "| Puppet peak RSS | speed-up | Ordo memory / Puppet |\n"
              "|---|---:|---|---:|---:|---:|---:|---:|---:|")
    print(header)
    try:
        for shape in a.shapes.split(","):
            for n in [int(s) for s in a.sizes.split(",")]:
                apply_root = os.path.join(work, "root-%s-%d" % (shape, n))
                manifest = os.path.join(work, "%s-%d.pp" % (shape, n))
                generate(shape, n, apply_root, manifest)
                node = ["--node", "bench.example.com"]
                pairs = [
                    ("parse", lambda i: [ordo, "parse", manifest], None),
                    ("compile", lambda i: [ordo, "compile", manifest] + node,
                     lambda i: ["puppet", "catalog", "compile", "--manifest", manifest,
                                "--render-as", "json", "--certname", "bench.example.com"]),
                    ("check", lambda i: [ordo, "check", manifest] + node, None),
                ]
                for what, ordo_argv, puppet_argv in pairs:
                    o = measure("ordo " + what, ordo_argv, a.runs)
                    p = measure("puppet " + what, puppet_argv, a.runs) if (puppet and puppet_argv) else None
                    line = fmt_row(shape, n, what, o, p)
                    rows.append(line)
                    print(line, flush=True)
                if n <= 10000 and shape != "wide":
                    def fresh(_i):
                        shutil.rmtree(apply_root, ignore_errors=True)
                    for what, extra, prep in (("apply --noop", ["--noop"], fresh),
                                              ("apply (first run)", [], fresh),
                                              ("apply (no change)", [], None)):
                        o = measure("ordo " + what, lambda i: [ordo, "apply", manifest] + node + extra,
                                    a.runs, prep)
                        if what == "apply (no change)" and not os.path.isdir(apply_root):
                            run_once([ordo, "apply", manifest] + node)
                        p = None
                        if puppet:
                            if what == "apply (no change)":
                                run_once(["puppet", "apply", manifest])
                            p = measure("puppet " + what, lambda i: ["puppet", "apply", manifest] + extra,
                                        a.runs, prep)
                        line = fmt_row(shape, n, what, o, p)
                        rows.append(line)
                        print(line, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(header + "\n" + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
