#!/usr/bin/env python3
"""bench/first_run_floor.py -- the first run of N new files after `rm -rf`, with its floor.

usage: python3 bench/first_run_floor.py [--ordo target/release/ordo] [--rounds 5] [--files 1000]
                                        [--dir DIR]

Times three whole processes in turn, each right after `rm -rf` of the tree the previous one
left, --rounds times over: `ordo apply`, `puppet apply` (both on the chain manifest of
gen_manifest.py with its root under DIR), and a program that does nothing but create the same
files (`os.open` with O_CREAT|O_EXCL, a write, a close). That last row is the kernel's cost
of creating the files on that filesystem right after a deletion, the floor under any tool's
first run there. Prints the medians and each run; DIR (default: a temporary directory)
chooses the filesystem measured.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from run import NODE, ROOT, filesystem_of, generate


def create_only(root, n):
    os.makedirs(root)
    for i in range(n):
        fd = os.open(os.path.join(root, "f%d" % i), os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644)
        os.write(fd, b"v%d\n" % i)
        os.close(fd)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ordo", default=os.path.join(ROOT, "target", "release", "ordo"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--files", type=int, default=1000)
    ap.add_argument("--dir", help="where the trees are made (its filesystem is measured)")
    ap.add_argument("--create-only", metavar="ROOT", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.create_only:
        return create_only(a.create_only, a.files)
    work = tempfile.mkdtemp(prefix="ordo-floor-", dir=a.dir)
    tree = os.path.join(work, "root")
    manifest = os.path.join(work, "chain.pp")
    generate("chain", a.files, tree, manifest)
    cmds = {"ordo apply": [a.ordo, "apply", manifest, "--node", NODE],
            "puppet apply": ["puppet", "apply", manifest, "--certname", NODE],
            "creating the files only": [sys.executable, __file__, "--files", str(a.files),
                                        "--create-only", tree]}
    if not shutil.which("puppet"):
        del cmds["puppet apply"]
    print("trees under %s (%s), load %s" % (work, filesystem_of(work),
                                            " ".join("%.1f" % x for x in os.getloadavg())))
    times = {k: [] for k in cmds}
    try:
        for _ in range(a.rounds):
            for k, argv in cmds.items():
                shutil.rmtree(tree, ignore_errors=True)
                t = time.perf_counter()
                rc = subprocess.run(argv, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL).returncode
                times[k].append(time.perf_counter() - t)
                if rc not in (0, 2):
                    sys.exit("%s exited %d" % (k, rc))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("| after `rm -rf` | median | runs |\n|---|---:|---|")
    for k, v in times.items():
        print("| %s | %.3f s | %s |" % (k, statistics.median(v), ", ".join("%.3f" % x for x in v)))
    print("load at end: %s" % " ".join("%.1f" % x for x in os.getloadavg()))


if __name__ == "__main__":
    main()
