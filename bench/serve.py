#!/usr/bin/env python3
"""Catalogs per second from `ordo serve` and from Debian's `puppetserver`, as agents ask.

    python3 bench/serve.py [--ordo target/release/ordo] [--clients 1 2 4] [--seconds 10]
                           [--site bench/serve_site.pp --node deb12.example.com]
                           [--servers ordo puppetserver]
                           [--workdir DIR [--keep-puppetserver | --stop-puppetserver]]

Sets up in a temporary directory a code directory whose production environment is a
roles/profiles site over the Forge modules of ../shared/forge (`serve_site.pp`: three forge
cases as profiles of one role, 79 resources; the modules and the core-type modules), starts `ordo serve --autosign all` on a free loopback
port, enrolls a client certificate (openssl), and then, for each client count C, has C
threads post the agent's catalog request (the form body `puppet agent` sends, with the
case node's facts) over keep-alive HTTPS connections for SECONDS seconds. Prints a Markdown
table: catalogs/s, p50 and p99 latency, server CPU per catalog, server RSS (peak).

Then the same against puppetserver (installed with `apt-get install -y puppetserver` when
absent), run from a private configuration in the temporary directory and tuned as its
docs say ("Tuning guide"): one JRuby instance per core (`max-active-instances`), no
JRuby recycling, code cached for good (`environment_timeout = unlimited`), a heap of 1 GB
per JRuby (`-Xms`/`-Xmx`); `autosign = true` for the bench's certificate. The same code
directory, node, certificate request and POST body. Last, the ratios Ordo / puppetserver.

puppetserver takes 10-25 minutes to start on a loaded machine and its JIT needs minutes of
requests: with `--workdir DIR --keep-puppetserver` the code directory, the certificates and
a running puppetserver are kept in DIR (its pid and port in DIR/puppetserver/state.json) and
the next run with the same DIR uses them; `--stop-puppetserver` stops it.

Loopback only; every loop is bounded in time.
"""

import argparse
import http.client
import json
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
FORGE = os.path.join(HERE, "..", "..", "shared", "forge")


def proc_cpu(pid):
    """User + system seconds of a process."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    tick = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / tick


def proc_rss(pid):
    """Current and peak resident memory (MiB)."""
    cur = peak = 0
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                cur = int(line.split()[1]) / 1024
            elif line.startswith("VmHWM:"):
                peak = int(line.split()[1]) / 1024
    return cur, peak


def setup(tmp, site_path, node):
    code = os.path.join(tmp, "code")
    env = os.path.join(code, "environments", "production")
    os.makedirs(os.path.join(env, "manifests"), exist_ok=True)
    os.makedirs(os.path.join(env, "modules"), exist_ok=True)
    with open(site_path) as f:
        site = f.read()
    with open(os.path.join(env, "manifests", "site.pp"), "w") as f:
        f.write(site)
    for base in ("modules", "vendor_modules"):
        d = os.path.join(FORGE, base)
        for m in sorted(os.listdir(d)):
            link = os.path.join(env, "modules", m)
            if not os.path.exists(link):
                os.symlink(os.path.abspath(os.path.join(d, m)), link)
    # Ruby types' schemas, found beside the modulepath.
    schemas = os.path.join(env, "resource-type-schemas.json")
    if not os.path.exists(schemas):
        os.symlink(os.path.abspath(os.path.join(FORGE, "types.json")), schemas)
    with open(os.path.join(FORGE, "facts", node + ".json")) as f:
        facts = json.load(f)
    return code, node, facts


def start(ordo, tmp, code, workers):
    args = [ordo, "serve", "--codedir", code, "--bind", "127.0.0.1:0",
            "--autosign", "all", "--ssldir", os.path.join(tmp, "ssl"),
            "--reports", os.path.join(tmp, "reports"),
            "--access-log", os.path.join(tmp, "access.log"),
            "--certname", "bench-server"]
    if workers:
        args += ["--workers", str(workers)]
    p = subprocess.Popen(args, stdout=subprocess.PIPE,
                         stderr=open(os.path.join(tmp, "serve.err"), "w"), text=True)
    line = p.stdout.readline()
    port = int(line.strip().rsplit(":", 1)[1])
    return p, port


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def ensure_puppetserver():
    jar = "/usr/share/puppetserver/puppetserver.jar"
    if not os.path.exists(jar):
        print("installing puppetserver (apt-get install -y puppetserver)", file=sys.stderr)
        subprocess.run(["apt-get", "install", "-y", "puppetserver"], check=True,
                       stdout=subprocess.DEVNULL)
    return jar


def status_ok(port):
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    try:
        c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx, timeout=5)
        c.request("GET", "/status/v1/simple")
        return c.getresponse().status == 200
    except (OSError, http.client.HTTPException):
        return False


class Kept:
    """A puppetserver started by an earlier run (--keep-puppetserver), by its pid."""

    def __init__(self, pid):
        self.pid = pid

    def poll(self):
        return None if os.path.exists(f"/proc/{self.pid}") else 0


def kept_puppetserver(tmp):
    state = os.path.join(tmp, "puppetserver", "state.json")
    if not os.path.exists(state):
        return None
    with open(state) as f:
        s = json.load(f)
    if Kept(s["pid"]).poll() is None:
        return Kept(s["pid"]), s["port"]
    return None


def start_puppetserver(tmp, code, cores, keep=False):
    """puppetserver in the foreground with its own conf.d, confdir, vardir and ssldir."""
    kept = kept_puppetserver(tmp)
    if kept:
        print(f"using the running puppetserver (pid {kept[0].pid}, port {kept[1]})",
              file=sys.stderr)
        p, port = kept
    else:
        p, port = launch_puppetserver(tmp, code, cores, keep)
    # Its start takes minutes (tens on a loaded machine).
    root = os.path.join(tmp, "puppetserver")
    deadline = time.monotonic() + 1800
    while time.monotonic() < deadline:
        if p.poll() is not None:
            sys.exit("puppetserver stopped:\n" + open(os.path.join(root, "out.log")).read()[-3000:]
                     + open(os.path.join(root, "log", "puppetserver.log")).read()[-3000:])
        if status_ok(port):
            return p, port
        time.sleep(2)
    os.kill(p.pid, 9)
    sys.exit("puppetserver did not start in 30 minutes")


def launch_puppetserver(tmp, code, cores, keep):
    jar = ensure_puppetserver()
    root = os.path.join(tmp, "puppetserver")
    conf, confdir = os.path.join(root, "conf.d"), os.path.join(root, "puppet")
    for d in (conf, confdir, os.path.join(root, "var"), os.path.join(root, "run"),
              os.path.join(root, "log")):
        os.makedirs(d, exist_ok=True)
    port = free_port()
    system = "/etc/puppet/puppetserver/conf.d"
    for f in ("auth.conf", "ca.conf", "metrics.conf", "web-routes.conf"):
        with open(os.path.join(system, f)) as src, open(os.path.join(conf, f), "w") as dst:
            dst.write(src.read())
    with open(os.path.join(conf, "global.conf"), "w") as f:
        f.write('global: { logging-config: "%s" }\n' % os.path.join(root, "logback.xml"))
    with open(os.path.join(root, "logback.xml"), "w") as f:
        f.write(f"""<configuration>
  <appender name="F" class="ch.qos.logback.core.FileAppender">
    <file>{root}/log/puppetserver.log</file>
    <encoder><pattern>%d %-5p [%c{{2}}] %m%n</pattern></encoder>
  </appender>
  <root level="warn"><appender-ref ref="F"/></root>
</configuration>
""")
    with open(os.path.join(conf, "webserver.conf"), "w") as f:
        f.write(f'webserver: {{ client-auth: want, ssl-host: 127.0.0.1, ssl-port: {port} }}\n')
    with open(os.path.join(conf, "puppetserver.conf"), "w") as f:
        f.write(f"""jruby-puppet: {{
    ruby-load-path: [/usr/lib/puppetserver/ruby/vendor_ruby]
    gem-home: /var/lib/puppetserver/jruby-gems
    gem-path: [/var/lib/puppetserver/jruby-gems, /usr/lib/puppetserver/vendored-jruby-gems]
    server-conf-dir: "{confdir}"
    server-code-dir: "{code}"
    server-var-dir: "{root}/var"
    server-run-dir: "{root}/run"
    server-log-dir: "{root}/log"
    max-active-instances: {cores}
    max-requests-per-instance: 0
}}
http-client: {{}}
profiler: {{ enabled: false }}
""")
    with open(os.path.join(confdir, "puppet.conf"), "w") as f:
        f.write(f"""[main]
certname = bench-puppetserver
ssldir = {confdir}/ssl
cadir = {confdir}/ca
environmentpath = {code}/environments
# In [main]: puppetserver does not take it from [server] (`puppet config print
# environment_timeout --section server` says 0 then: the code parsed at every request).
environment_timeout = unlimited
[server]
autosign = true
storeconfigs = false
reports = none
""")
    heap = f"{cores}g"
    args = ["java", f"-Xms{heap}", f"-Xmx{heap}", "-XX:ReservedCodeCacheSize=512m",
            "-Djruby.logger.class=com.puppetlabs.jruby_utils.jruby.Slf4jLogger",
            "-Djruby.lib=/usr/share/jruby/lib", "-jar", jar,
            "--config", conf, "--bootstrap-config", "/etc/puppet/puppetserver/services.d"]
    # A kept server runs in its own session, so that it outlives this script.
    p = subprocess.Popen(args, cwd="/usr/share/puppetserver", stdout=open(os.path.join(root, "out.log"), "w"),
                         stderr=subprocess.STDOUT, start_new_session=keep)
    if keep:
        with open(os.path.join(root, "state.json"), "w") as f:
            json.dump({"pid": p.pid, "port": port}, f)
    return p, port


def enroll(tmp, port, name):
    key, csr = os.path.join(tmp, "client.key"), os.path.join(tmp, "client.csr")
    paths = {k: os.path.join(tmp, k + ".pem") for k in ("ca", "cert")}
    paths["key"] = key
    if all(os.path.exists(f) for f in paths.values()):
        return paths
    subprocess.run(["openssl", "req", "-new", "-newkey", "rsa:2048", "-nodes",
                    "-subj", "/CN=" + name, "-keyout", key, "-out", csr],
                   check=True, capture_output=True)
    ctx = ssl.create_default_context()
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    c = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
    c.request("GET", "/puppet-ca/v1/certificate/ca")
    ca = c.getresponse().read()
    with open(csr, "rb") as f:
        request = f.read()
    # A server still starting its CA may refuse at first: a few tries.
    for attempt in range(10):
        c.request("PUT", f"/puppet-ca/v1/certificate_request/{name}", request,
                  {"Content-Type": "text/plain"})
        r = c.getresponse()
        text = r.read()
        if r.status == 200:
            break
        print(f"certificate request refused ({r.status}): {text[:300]!r}", file=sys.stderr)
        time.sleep(10)
    assert r.status == 200, r.status
    c.request("GET", f"/puppet-ca/v1/certificate/{name}")
    r = c.getresponse()
    cert = r.read()
    assert r.status == 200, r.status
    for k, v in (("ca", ca), ("cert", cert)):
        with open(paths[k], "wb") as f:
            f.write(v)
    return paths


def body(name, facts):
    """The form body `puppet agent` posts (Puppet::HTTP::Service::Compiler#post_catalog)."""
    q = lambda s: urllib.parse.quote(s, safe="")
    facts_json = json.dumps({"name": name, "values": facts,
                             "timestamp": "2026-01-01T00:00:00.000000000+00:00",
                             "expiration": "2026-01-01T00:30:00.000000000+00:00"})
    fields = [("facts_format", "application/json"), ("facts", q(facts_json)),
              ("environment", "production"), ("configured_environment", "production"),
              ("check_environment", "false"),
              ("transaction_uuid", "7d6a5a0e-0c8b-4a53-9d2c-0d6f1e0b9c11"),
              ("job_uuid", ""), ("static_catalog", "true"),
              ("checksum_type", "sha256.sha1.sha224.sha384.sha512.md5")]
    return "&".join(f"{k}={q(v)}" for k, v in fields).encode()


def client(port, paths, name, payload, deadline, out, errors, most=None):
    ctx = ssl.create_default_context(cafile=paths["ca"])
    ctx.check_hostname = False
    ctx.load_cert_chain(paths["cert"], paths["key"])
    conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
    headers = {"Content-Type": "application/x-www-form-urlencoded",
               "Accept": "application/json, application/vnd.puppet.rich+json"}
    while time.monotonic() < deadline and (most is None or len(out) + len(errors) < most):
        t = time.monotonic()
        try:
            conn.request("POST", f"/puppet/v3/catalog/{name}?environment=production",
                         payload, headers)
            r = conn.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException) as e:
            errors.append(str(e))
            conn.close()
            conn = http.client.HTTPSConnection("127.0.0.1", port, context=ctx)
            continue
        if r.status != 200:
            errors.append(f"{r.status} {data[:200]!r}")
            continue
        out.append((time.monotonic() - t, len(json.loads(data)["resources"])))


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * p))] if xs else float("nan")


def bench(label, proc, port, tmp, node, payload, a):
    """The table rows for one server: one dict per client count."""
    os.makedirs(tmp, exist_ok=True)
    paths = enroll(tmp, port, node)
    # One catalog first: parses the code (not part of the figures).
    warm, errs = [], []
    client(port, paths, node, payload, time.monotonic() + 600, warm, errs, most=1)
    if errs or not warm:
        sys.exit(f"{label}: the first catalog failed: {errs}")
    # Then a few seconds of warm-up (JIT, caches) at the highest client count.
    out, errors = [], []
    run_clients(port, paths, node, payload, max(a.clients), a.warmup, out, errors)
    print(f"\n{label}: {os.path.basename(a.site)} ({node}): {warm[0][1]} resources; "
          f"first catalog {warm[0][0] * 1000:.0f} ms; body {len(payload)} bytes; "
          f"warm-up {len(out)} catalogs, {len(errors)} errors; load {os.getloadavg()[0]:.2f}\n")
    print("| clients | catalogs/s | p50 ms | p99 ms | server CPU ms/catalog | server RSS MiB (peak) | errors |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    rows = {}
    for c in a.clients:
        out, errors = [], []
        cpu0 = proc_cpu(proc.pid)
        wall = run_clients(port, paths, node, payload, c, a.seconds, out, errors)
        cpu = proc_cpu(proc.pid) - cpu0
        lat = [x[0] for x in out]
        cur, peak = proc_rss(proc.pid)
        row = {"rate": len(out) / wall, "p50": pct(lat, 0.5) * 1000,
               "p99": pct(lat, 0.99) * 1000, "cpu": cpu / max(len(out), 1) * 1000,
               "rss": cur, "peak": peak, "errors": len(errors)}
        rows[c] = row
        print(f"| {c} | {row['rate']:.1f} | {row['p50']:.1f} | {row['p99']:.1f} | "
              f"{row['cpu']:.1f} | {cur:.0f} ({peak:.0f}) | {len(errors)} |", flush=True)
        if errors:
            print(f"  first error: {errors[0]}")
    return rows


def run_clients(port, paths, node, payload, count, seconds, out, errors):
    t0 = time.monotonic()
    deadline = t0 + seconds
    threads = [threading.Thread(target=client,
                                args=(port, paths, node, payload, deadline, out, errors))
               for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return time.monotonic() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ordo", default=os.path.join(HERE, "..", "target", "release", "ordo"))
    ap.add_argument("--clients", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=10,
                    help="seconds of requests before the figures (the JVM's JIT)")
    ap.add_argument("--site", default=os.path.join(HERE, "serve_site.pp"))
    ap.add_argument("--node", default="deb12.example.com")
    ap.add_argument("--workers", type=int, default=0)
    ap.add_argument("--servers", nargs="+", default=["ordo", "puppetserver"],
                    choices=["ordo", "puppetserver"])
    ap.add_argument("--workdir", help="keep the code, certificates and state here")
    ap.add_argument("--keep-puppetserver", action="store_true",
                    help="leave puppetserver running (needs --workdir); later runs use it")
    ap.add_argument("--stop-puppetserver", action="store_true",
                    help="stop the puppetserver kept in --workdir, then exit")
    a = ap.parse_args()
    if (a.keep_puppetserver or a.stop_puppetserver) and not a.workdir:
        ap.error("--keep-puppetserver and --stop-puppetserver need --workdir")
    if a.stop_puppetserver:
        kept = kept_puppetserver(a.workdir)
        if kept:
            os.kill(kept[0].pid, 15)
            print(f"stopped puppetserver (pid {kept[0].pid})")
        return
    cores = os.cpu_count() or 1
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; {cores} cores; "
          f"load {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    if a.workdir:
        os.makedirs(a.workdir, exist_ok=True)
        run_all(a, os.path.abspath(a.workdir), cores)
    else:
        with tempfile.TemporaryDirectory() as tmp:
            run_all(a, tmp, cores)


def run_all(a, tmp, cores):
    results = {}
    code, node, facts = setup(tmp, a.site, a.node)
    payload = body(node, facts)
    for server in a.servers:
        if server == "ordo":
            p, port = start(os.path.abspath(a.ordo), tmp, code, a.workers)
        else:
            p, port = start_puppetserver(tmp, code, cores, a.keep_puppetserver)
        keep = server == "puppetserver" and (a.keep_puppetserver or isinstance(p, Kept))
        try:
            results[server] = bench(server, p, port, os.path.join(tmp, server + "-client"),
                                    node, payload, a)
        finally:
            if not keep:
                p.terminate()
                try:
                    p.wait(timeout=120)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
    if len(results) == 2:
        o, ps = results["ordo"], results["puppetserver"]
        print("\nOrdo / puppetserver:\n")
        print("| clients | catalogs/s | p50 latency | CPU per catalog | RSS (peak) |")
        print("|---:|---:|---:|---:|---:|")
        for c in a.clients:
            x, y = o[c], ps[c]
            print(f"| {c} | {x['rate'] / y['rate']:.1f}x | {x['p50'] / y['p50']:.3f} | "
                  f"{x['cpu'] / y['cpu']:.3f} | 1/{y['peak'] / max(x['peak'], 1):.0f} |")
    print(f"\nload after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
