#!/usr/bin/env python3
"""bench/growth.py -- how `ordo apply` grows from one catalog size to a larger one.

usage: python3 bench/growth.py [--ordo target/release/ordo] [--runs 7] [--sizes 10000,100000]
                               [--shapes chain,fanout,mixed,wide] [--modes noop,nochange]
                               [--apply-dir DIR]

For each shape and apply mode, runs the small and the large manifest of gen_manifest.py
alternately (small, large, small, large, ...) so that both meet the same state of the machine,
and prints the medians of wall time and of CPU time (user + system of the process) for each
size, and their ratios. bench/run.py measures all runs of one size before the next: on a
shared VM whose speed drifts over minutes, a ratio of two such medians carries the drift.

Modes as in bench/run.py: `noop` (root absent, --noop), `first` (root absent), `nochange`
(root converged by an untimed run first).
"""
import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time

from run import NODE, ROOT, delete, filesystem_of, generate, run_usage


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ordo", default=os.path.join(ROOT, "target", "release", "ordo"))
    ap.add_argument("--runs", type=int, default=7)
    ap.add_argument("--sizes", default="10000,100000")
    ap.add_argument("--shapes", default="chain,fanout,mixed,wide")
    ap.add_argument("--modes", default="noop,nochange")
    ap.add_argument("--apply-dir", help="where the apply roots are made")
    a = ap.parse_args()
    small, large = (int(s) for s in a.sizes.split(","))
    ordo = os.path.abspath(a.ordo)
    work = tempfile.mkdtemp(prefix="ordo-growth-", dir=a.apply_dir)
    print("%s, %d runs of each size alternately, roots on %s, load %s" % (
        time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), a.runs, filesystem_of(work),
        " ".join("%.1f" % x for x in os.getloadavg())))
    print("| shape | mode | wall %d | wall %d | growth | CPU %d | CPU %d | growth |" % (
        small, large, small, large))
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    try:
        for shape in a.shapes.split(","):
            cmds = {}
            for n in (small, large):
                root = os.path.join(work, "root-%s-%d" % (shape, n))
                manifest = os.path.join(work, "%s-%d.pp" % (shape, n))
                generate(shape, n, root, manifest)
                cmds[n] = (root, [ordo, "apply", manifest, "--node", NODE])
            for mode in a.modes.split(","):
                extra = ["--noop"] if mode == "noop" else []
                if mode == "nochange":
                    for root, argv in cmds.values():
                        run_usage(argv)  # converge first (untimed)
                walls = {small: [], large: []}
                cpus = {small: [], large: []}
                for _ in range(a.runs):
                    for n, (root, argv) in cmds.items():
                        if mode != "nochange":
                            delete(root)
                        w, usage, rc = run_usage(argv + extra)
                        c = usage.ru_utime + usage.ru_stime
                        if rc not in (0, 2):
                            sys.exit("%s %s %d exited %d" % (shape, mode, n, rc))
                        walls[n].append(w)
                        cpus[n].append(c)
                med = {k: statistics.median(v) for k, v in walls.items()}
                cmed = {k: statistics.median(v) for k, v in cpus.items()}
                print("| %s | %s | %.3f s | %.3f s | %.1fx | %.3f s | %.3f s | %.1fx |" % (
                    shape, mode, med[small], med[large], med[large] / med[small],
                    cmed[small], cmed[large], cmed[large] / cmed[small]), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
