#!/usr/bin/env python3
"""bench/run.py -- Ordo against Puppet on the same generated manifests, side by side.

usage: python3 bench/run.py [--ordo target/release/ordo] [--compiler ORDO_WITH_COMPILE]
                            [--runs 5] [--sizes 1000,10000,100000] [--shapes chain,fanout,mixed,wide]
                            [--jobs 1,2] [--puppet-compile-max 10000] [--puppet-apply-max 1000]
                            [--apply-max 100000] [--apply-dir DIR] [--no-puppet] [--quick]
                            [--markdown FILE]

For every shape and size, ../shared/tools/gen_manifest.py writes a manifest; then each command
runs --runs times, Ordo and Puppet interleaved (ordo, puppet, ordo, puppet, ...) so that a
change in the machine's load hits both alike, and the table reports the median wall time, the
peak resident memory (ru_maxrss of the child and its waited-for descendants), the speed-up
Puppet/Ordo and the one-minute load average when the row was done.

  parse     ordo parse                      (no Puppet row: `puppet parser validate` also
                                             loads the whole runtime, so the ratio says little)
  compile   ordo compile -o catalog.json    puppet catalog compile --render-as json
  check     ordo check catalog.json         (Puppet has no equivalent), and ordo check
            manifest.pp (compile and check in one process)
  apply     ordo apply (per --jobs value)   puppet apply, in three modes: --noop over an empty
            root, first run over an empty root, no-change run over the converged root; every
            shape (wide: notify resources only) up to --apply-max (100,000), Puppet up to
            --puppet-apply-max (10,000)

Apply runs use the generator's --root, absent before every noop and first run. --prepare
says how it is made absent, untimed: `user` (the default) deletes the previous run's tree as a
person timing the two commands by hand does (`rm -rf`, nothing synced), so each run meets
what the other left (its dirty pages, the inodes it just freed); `calm` moves the tree aside
and syncs the filesystem first (see `set_aside`), which measures each tool's own work and
nothing of the other's. docs/performance.md explains why the two differ. When the measured
`ordo apply` cannot read a manifest (the evaluator is not merged), the
Ordo apply row is `ordo compile` then `ordo apply catalog.json`, timed together (both
processes), which is what `puppet apply manifest.pp` does in one.

A missing subcommand (for instance `compile` before the evaluator is merged) gives `n/a` cells,
not a failure; `--compiler` names another Ordo build (for instance the evaluator's branch)
that then compiles: its rows say `[--compiler]`, and it makes the catalogs `check` and
`apply` need.

An extra shape, `io`, is generated here rather than by gen_manifest.py: N independent execs
that each wait 20 ms (a stand-in for resources whose cost is waiting on I/O), the workload
where `--jobs 2` must beat `--jobs 1`.

--quick: one run, sizes 1000, shapes chain,wide,io, Puppet only for 1000 (a smoke test of
the harness, not a measurement).
"""
import argparse
import datetime
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GEN = os.path.join(ROOT, "..", "shared", "tools", "gen_manifest.py")
NODE = "bench.example.com"


def run_usage(argv, cwd=None):
    """Runs argv, returns (seconds, resource usage of the child and its waited-for
    descendants, exit_status)."""
    start = time.perf_counter()
    p = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                         stdin=subprocess.DEVNULL)
    _, status, usage = os.wait4(p.pid, 0)
    elapsed = time.perf_counter() - start
    return elapsed, usage, os.waitstatus_to_exitcode(status)


def run_once(argv, cwd=None):
    """Runs argv, returns (seconds, peak_rss_mb, exit_status)."""
    elapsed, usage, code = run_usage(argv, cwd)
    return elapsed, usage.ru_maxrss / 1024.0, code


def has_subcommand(ordo, sub):
    """Does this ordo binary know `sub`? (clap exits 2 on an unknown subcommand.)"""
    if not ordo or not os.path.exists(ordo):
        return False
    p = subprocess.run([ordo, sub, "--help"], stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
    return p.returncode == 0


def generate(shape, n, root, path):
    if shape == "io":
        with open(path, "w") as f:
            f.write("file { '%s': ensure => directory }\n" % root)
            for i in range(n):
                f.write("exec { 'wait-%d': command => '/bin/sleep 0.02', "
                        "require => File['%s'] }\n" % (i, root))
        return
    with open(path, "w") as f:
        subprocess.run([sys.executable, GEN, shape, str(n), "--root", root], stdout=f, check=True)


def delete(root):
    """Makes `root` absent as a person does between two timed runs: deleted, nothing synced."""
    if os.path.lexists(root):
        shutil.rmtree(root)


def set_aside(root, trash):
    """Makes `root` absent for a first run, as on a machine that never had it: the previous
    run's tree is renamed into `trash` (removed with the work directory at the end), not
    deleted, and the filesystem is synced. Deleting it here would be timed into the next
    run: on ext4 without a journal, every file created in a block group during the 30 s after
    inodes of that group were freed scans past each of those inodes (the kernel's
    `recently_deleted`), a cost of this harness's own deletions that grows with their number;
    and the sync leaves no dirty data of one tool's run to be written back during the other's.
    Both tools get the same preparation, untimed."""
    if os.path.lexists(root):
        os.makedirs(trash, exist_ok=True)
        os.rename(root, os.path.join(trash, "%d" % len(os.listdir(trash))))
    os.sync()


class Cell:
    def __init__(self):
        self.times, self.mems, self.codes = [], [], set()

    def add(self, t, m, c):
        self.times.append(t)
        self.mems.append(m)
        self.codes.add(c)

    def median(self):
        return statistics.median(self.times)

    def text(self):
        note = "" if self.codes <= {0, 2} else " (exit %s)" % ",".join(map(str, sorted(self.codes)))
        return "%.3f s%s" % (self.median(), note), "%.0f MB" % max(self.mems)


def filesystem_of(path):
    """The type and device of the filesystem holding `path`, as findmnt names them."""
    out = subprocess.run(["findmnt", "-n", "-o", "FSTYPE,SOURCE", "-T", path],
                         capture_output=True, text=True).stdout.split()
    return " on ".join(out) if out else "unknown filesystem"


def measure_pair(runs, ordo_argv, puppet_argv, prepare=None):
    """Interleaved: ordo run, puppet run, ordo run, ... Either argv may be None (no row).
    prepare(which, i) runs untimed before each run."""
    o = Cell() if ordo_argv else None
    p = Cell() if puppet_argv else None
    for i in range(runs):
        for cell, argv, which in ((o, ordo_argv, "ordo"), (p, puppet_argv, "puppet")):
            if cell is None:
                continue
            if prepare:
                prepare(which, i)
            cell.add(*run_once(argv))
    return o, p


def row(shape, n, what, o, p, why=""):
    ot, om = o.text() if o else ("n/a" + (" (%s)" % why if why else ""), "")
    pt, pm = p.text() if p else ("", "")
    ratio = mem = ""
    if o and p and o.median() > 0:
        ratio = "%.1fx" % (p.median() / o.median())
        mem = "%.1f%%" % (100.0 * max(o.mems) / max(p.mems)) if max(p.mems) else ""
    return "| %s | %d | %s | %s | %s | %s | %s | %s | %s | %.1f |" % (
        shape, n, what, ot, om, pt, pm, ratio, mem, os.getloadavg()[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ordo", default=os.path.join(ROOT, "target", "release", "ordo"))
    ap.add_argument("--compiler", help="Ordo binary used (untimed) to make catalogs when "
                    "--ordo has no `compile`")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--sizes", default="1000,10000,100000")
    ap.add_argument("--shapes", default="chain,fanout,mixed,wide,io")
    ap.add_argument("--jobs", default="1,2", help="--jobs values for Ordo's apply rows")
    ap.add_argument("--apply-max", type=int, default=100000, help="largest size applied")
    ap.add_argument("--io-max", type=int, default=1000, help="largest size of the io shape")
    ap.add_argument("--puppet-compile-max", type=int, default=10000)
    ap.add_argument("--puppet-apply-max", type=int, default=10000)
    ap.add_argument("--no-puppet", action="store_true")
    ap.add_argument("--prepare", choices=("user", "calm"), default="user",
                    help="how the apply root is made absent before a run (see above)")
    ap.add_argument("--apply-dir", help="directory under which the apply roots are made "
                    "(default: the run's temporary directory); the filesystem it is on shapes "
                    "the first-run rows, see docs/performance.md")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--modes", default="parse,compile,check,noop,first,nochange",
                    help="the rows to measure (comma-separated): parse, compile, check, and the "
                    "apply modes noop, first (first run) and nochange")
    a = ap.parse_args()
    if a.quick:
        a.runs, a.sizes, a.shapes = 1, "1000", "chain,wide,io"
        a.puppet_compile_max = a.puppet_apply_max = 1000
    ordo = os.path.abspath(a.ordo)
    if not os.path.exists(ordo):
        sys.exit("no Ordo binary at %s (cargo build --release, or --ordo PATH)" % ordo)
    puppet = None if a.no_puppet else shutil.which("puppet")
    can = {s: has_subcommand(ordo, s) for s in ("parse", "compile", "check", "apply")}
    compiler = ordo if can["compile"] else (os.path.abspath(a.compiler) if a.compiler else None)
    if compiler and not has_subcommand(compiler, "compile"):
        compiler = None
    work = tempfile.mkdtemp(prefix="ordo-bench-")
    roots = tempfile.mkdtemp(prefix="ordo-bench-roots-", dir=a.apply_dir) if a.apply_dir else work
    jobs = [int(j) for j in a.jobs.split(",")]
    rows = []
    meta = ["date: %s" % datetime.datetime.now().isoformat(timespec="minutes"),
            "machine: %s, %d cores, %s" % (platform.machine(), os.cpu_count() or 0,
                                           platform.platform()),
            "ordo: %s (%s)" % (ordo, ", ".join(s for s in can if can[s]) or "no subcommand"),
            "compiler for catalogs: %s" % (compiler or "none"),
            "puppet: %s" % (subprocess.run([puppet, "--version"], capture_output=True,
                                           text=True).stdout.strip() if puppet else "not run"),
            "runs: %d per cell, interleaved; apply roots prepared the %s way; load average at "
            "start: %s" % (a.runs, a.prepare, " ".join("%.1f" % x for x in os.getloadavg())),
            "apply roots: %s (%s)" % (roots, filesystem_of(roots))]
    header = ("| shape | resources | command | Ordo median | Ordo peak RSS | Puppet median "
              "| Puppet peak RSS | speed-up | Ordo memory / Puppet | load |\n"
              "|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for m in meta:
        print(m)
    print(header)

    def emit(line):
        rows.append(line)
        print(line, flush=True)

    try:
        for shape in a.shapes.split(","):
            for n in [int(s) for s in a.sizes.split(",")]:
                if shape == "io" and n > a.io_max:
                    continue
                apply_root = os.path.join(roots, "root-%s-%d" % (shape, n))
                manifest = os.path.join(work, "%s-%d.pp" % (shape, n))
                catalog = os.path.join(work, "%s-%d.json" % (shape, n))
                generate(shape, n, apply_root, manifest)
                have_catalog = False
                if compiler:
                    have_catalog = subprocess.run(
                        [compiler, "compile", manifest, "--node", NODE, "-o", catalog],
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode == 0
                modes = set(a.modes.split(","))
                if shape != "io" and "parse" in modes:
                    o = measure_pair(a.runs, [ordo, "parse", manifest] if can["parse"] else None,
                                     None)[0]
                    emit(row(shape, n, "parse", o, None, "no `parse`"))
                if shape != "io" and "compile" in modes:
                    use_puppet = puppet and n <= a.puppet_compile_max
                    scratch = os.path.join(work, "out.json")
                    o, p = measure_pair(
                        a.runs,
                        [compiler, "compile", manifest, "--node", NODE, "-o", scratch]
                        if compiler else None,
                        ["puppet", "catalog", "compile", "--manifest", manifest, "--render-as",
                         "json", "--certname", NODE] if use_puppet else None)
                    emit(row(shape, n, "compile" if can["compile"] or not compiler else "compile [--compiler]",
                             o, p, "no `compile`"))
                if shape != "io" and "check" in modes:
                    o = measure_pair(a.runs, [ordo, "check", catalog]
                                     if can["check"] and have_catalog else None, None)[0]
                    emit(row(shape, n, "check (catalog JSON)", o, None,
                             "no `check`" if not can["check"] else "no catalog"))
                    o = measure_pair(a.runs, [ordo, "check", manifest, "--node", NODE]
                                     if can["check"] else None, None)[0]
                    emit(row(shape, n, "check (manifest: compile + check)", o, None,
                             "no `check`"))
                if n > a.apply_max or not can["apply"]:
                    continue
                direct = subprocess.run([ordo, "apply", "--noop", manifest, "--node", NODE],
                                        stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL).returncode in (0, 2)
                if not direct and not have_catalog:
                    emit(row(shape, n, "apply", None, None, "no catalog"))
                    continue
                use_puppet = puppet and n <= a.puppet_apply_max

                def fresh(_which, _i):
                    if a.prepare == "user":
                        delete(apply_root)
                    else:
                        set_aside(apply_root, os.path.join(roots, "trash"))

                def ordo_apply(extra, j):
                    if direct:
                        return [ordo, "apply", manifest, "--node", NODE, "--jobs", str(j)] + extra
                    # compile + apply, timed together as one shell command.
                    return ["/bin/sh", "-c", '"$0" compile "$1" --node "$2" -o "$3" && '
                            'exec "$5" apply "$3" --jobs "$4" ' + " ".join(extra),
                            compiler, manifest, NODE, os.path.join(work, "apply.json"), str(j),
                            ordo]
                how = "" if direct else " [compile+apply]"
                for mode, what, extra, prep in (("noop", "apply --noop", ["--noop"], fresh),
                                                ("first", "apply (first run)", [], fresh),
                                                ("nochange", "apply (no change)", [], None)):
                    if mode not in modes:
                        continue
                    for k, j in enumerate(jobs):
                        if what == "apply (no change)":
                            run_once(ordo_apply([], j))  # converge first (untimed)
                        pup = ["puppet", "apply", manifest, "--certname", NODE] + extra
                        # Puppet has one row per mode (it has no --jobs): measured with the
                        # first --jobs value, interleaved with it.
                        pair_puppet = pup if use_puppet and k == 0 else None
                        if what == "apply (no change)" and pair_puppet:
                            run_once(pup)
                        o, p = measure_pair(a.runs, ordo_apply(extra, j), pair_puppet, prep)
                        emit(row(shape, n, "%s --jobs %d%s" % (what, j, how), o, p))
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(roots, ignore_errors=True)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write("\n".join("- " + m for m in meta) + "\n\n" + header + "\n"
                    + "\n".join(rows) + "\n")


if __name__ == "__main__":
    main()
