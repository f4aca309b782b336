//! `ordo serve` against a real `puppet agent` on loopback, everything under a temp dir:
//! enrollment (autosign), a real apply with a module file and plugin sync, a second run that
//! changes nothing, an environment switch, the stored reports, and the authorization rules
//! (another node's data, no certificate, a foreign certificate, a revoked one: 403).
//!
//! Skipped with a note when `puppet` or `ruby` is absent, except under `CI=true`.

use crate::common::tool;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The server, stopped with SIGTERM when dropped.
struct Serve {
    child: Child,
    port: u16,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn write(p: &Path, text: &str) {
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn start(dir: &Path, args: &[&str]) -> Serve {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .arg("serve")
        .arg("--codedir")
        .arg(dir.join("code"))
        .args(["--bind", "127.0.0.1:0", "--certname", "ordo-test-server"])
        .arg("--ssldir")
        .arg(dir.join("ssl"))
        .arg("--reports")
        .arg(dir.join("reports"))
        .arg("--access-log")
        .arg(dir.join("access.log"))
        .args(args)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(dir.join("serve.err")).unwrap())
        .spawn()
        .expect("start ordo serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = line
        .trim()
        .rsplit(':')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| {
            panic!(
                "no port in {line:?}: {}",
                std::fs::read_to_string(dir.join("serve.err")).unwrap_or_default()
            )
        });
    Serve { child, port }
}

/// `puppet agent --test` for `certname` with its own confdir and vardir: the exit code
/// (`--detailed-exitcodes`) and the output.
fn agent(dir: &Path, port: u16, certname: &str, extra: &[&str]) -> (i32, String) {
    let a = dir.join("agent").join(certname);
    let mut cmd = Command::new("puppet");
    cmd.args([
        "agent",
        "--test",
        "--detailed-exitcodes",
        "--color",
        "false",
    ]);
    // Every directory of the agent in the temp dir (Debian's Puppet keeps its ssldir and
    // publicdir outside the confdir and vardir).
    for d in ["conf", "var", "run", "log", "code", "ssl", "public"] {
        cmd.arg(format!("--{d}dir")).arg(a.join(d));
    }
    let out = cmd
        .args(["--server", "127.0.0.1", "--certname", certname])
        .args(["--serverport", &port.to_string()])
        .args(extra)
        .stdin(Stdio::null())
        .output()
        .expect("run puppet agent");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    (out.status.code().unwrap_or(-1), text)
}

/// An HTTPS GET with Ruby's OpenSSL (as the agent's own client), with a client certificate
/// when given: the status code.
fn get(dir: &Path, port: u16, path: &str, cert: Option<(&Path, &Path)>) -> String {
    let script = dir.join("get.rb");
    write(
        &script,
        r#"require 'net/http'
require 'openssl'
url, cert, key = ARGV
u = URI(url)
h = Net::HTTP.new(u.host, u.port)
h.use_ssl = true
h.verify_mode = OpenSSL::SSL::VERIFY_NONE
if cert
  h.cert = OpenSSL::X509::Certificate.new(File.read(cert))
  h.key = OpenSSL::PKey.read(File.read(key))
end
begin
  puts h.get(u.request_uri).code
rescue => e
  puts "refused: #{e.class}"
end
"#,
    );
    let mut cmd = Command::new("ruby");
    cmd.arg(&script)
        .arg(format!("https://127.0.0.1:{port}{path}"));
    if let Some((c, k)) = cert {
        cmd.arg(c).arg(k);
    }
    let out = cmd.output().expect("run ruby");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A self-signed certificate for `name`, from no CA the server knows.
fn foreign_cert(dir: &Path, name: &str) -> (PathBuf, PathBuf) {
    let script = dir.join("foreign.rb");
    write(
        &script,
        r#"require 'openssl'
name, cert_path, key_path = ARGV
key = OpenSSL::PKey::RSA.new(2048)
c = OpenSSL::X509::Certificate.new
c.version = 2
c.serial = 2
c.subject = c.issuer = OpenSSL::X509::Name.parse("/CN=#{name}")
c.public_key = key.public_key
c.not_before = Time.now - 3600
c.not_after = Time.now + 3600
c.sign(key, OpenSSL::Digest::SHA256.new)
File.write(cert_path, c.to_pem)
File.write(key_path, key.to_pem)
"#,
    );
    let (c, k) = (dir.join("foreign.pem"), dir.join("foreign.key"));
    let ok = Command::new("ruby")
        .arg(&script)
        .arg(name)
        .arg(&c)
        .arg(&k)
        .status()
        .expect("run ruby");
    assert!(ok.success());
    (c, k)
}

#[test]
fn real_agent_enrolls_applies_and_is_authorized() {
    if !tool("puppet") || !tool("ruby") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let out = dir.join("out");
    std::fs::create_dir_all(&out).unwrap();
    let code = dir.join("code/environments");
    write(
        &code.join("production/manifests/site.pp"),
        &format!(
            r#"node default {{
  file {{ '{out}/hello.txt':
    ensure  => file,
    content => "hello from ${{trusted['certname']}} (${{trusted['extensions']['pp_role']}}) in ${{environment}} (${{trusted['authenticated']}}) via ${{server_facts['servername']}}\n",
  }}
  file {{ '{out}/copy.txt':
    ensure => file,
    source => 'puppet:///modules/hello/data.txt',
  }}
  file {{ '{out}/tree':
    ensure  => directory,
    recurse => true,
    source  => 'puppet:///modules/hello/tree',
  }}
}}
"#,
            out = out.display()
        ),
    );
    write(
        &code.join("production/modules/hello/files/data.txt"),
        "a module's file\n",
    );
    write(
        &code.join("production/modules/hello/files/tree/a.txt"),
        "a\n",
    );
    write(
        &code.join("production/modules/hello/files/tree/sub/b.txt"),
        "b\n",
    );
    write(
        &code.join("production/modules/hello/lib/facter/hello_fact.rb"),
        "Facter.add(:hello_fact) { setcode { 'hi' } }\n",
    );
    write(
        &code.join("other/manifests/site.pp"),
        &format!(
            "file {{ '{}/other.txt': ensure => file, content => \"in ${{environment}}\\n\" }}\n",
            out.display()
        ),
    );
    // An extension request, signed into the certificate: `$trusted['extensions']`.
    write(
        &dir.join("agent/node1.test/conf/csr_attributes.yaml"),
        "extension_requests:\n  pp_role: web\n",
    );
    let server = start(dir, &["--autosign", "all"]);
    let port = server.port;

    // First run: enrollment, plugin sync, a real apply.
    let t = Instant::now();
    let (code1, log1) = agent(dir, port, "node1.test", &[]);
    let first = t.elapsed();
    assert_eq!(code1, 2, "first run: changes expected\n{log1}");
    assert_eq!(
        std::fs::read_to_string(out.join("hello.txt")).unwrap(),
        "hello from node1.test (web) in production (remote) via ordo-test-server\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("copy.txt")).unwrap(),
        "a module's file\n"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("tree/sub/b.txt")).unwrap(),
        "b\n"
    );
    // A static catalog (the agent's default): the module files' metadata is in the
    // catalog, their content fetched by its content_uri; no metadata asked for them.
    let access = std::fs::read_to_string(dir.join("access.log")).unwrap();
    for asked in [
        "/puppet/v3/file_metadata/modules/hello",
        "/puppet/v3/file_metadatas/modules/hello",
        "/puppet/v3/file_content/modules/hello",
    ] {
        assert!(!access.contains(asked), "{asked} asked:\n{access}");
    }
    for fetched in [
        "/puppet/v3/static_file_content/modules/hello/files/data.txt?",
        "/puppet/v3/static_file_content/modules/hello/files/tree/sub/b.txt?",
    ] {
        assert!(
            access
                .lines()
                .any(|l| l.contains(fetched) && l.contains("\" 200 ")),
            "{fetched} not fetched:\n{access}"
        );
    }
    let synced = dir.join("agent/node1.test/var/lib/facter/hello_fact.rb");
    assert!(synced.is_file(), "plugin sync\n{log1}");

    // Second run: nothing to change.
    let t = Instant::now();
    let (code2, log2) = agent(dir, port, "node1.test", &[]);
    let second = t.elapsed();
    assert_eq!(code2, 0, "second run: no change expected\n{log2}");

    // Another environment.
    let (code3, log3) = agent(dir, port, "node1.test", &["--environment", "other"]);
    assert_eq!(code3, 2, "environment switch\n{log3}");
    assert_eq!(
        std::fs::read_to_string(out.join("other.txt")).unwrap(),
        "in other\n"
    );

    // One report per run.
    let reports = std::fs::read_dir(dir.join("reports/node1.test"))
        .unwrap()
        .count();
    assert_eq!(reports, 3);
    let access = std::fs::read_to_string(dir.join("access.log")).unwrap();
    assert_eq!(
        access
            .lines()
            .filter(|l| l.contains("\"POST /puppet/v3/catalog/node1.test") && l.contains("\" 200 "))
            .count(),
        3,
        "{access}"
    );

    // Authorization as puppetserver's default auth.conf.
    let ssl = dir.join("agent/node1.test/ssl");
    let (cert, key) = (
        ssl.join("certs/node1.test.pem"),
        ssl.join("private_keys/node1.test.pem"),
    );
    let own = Some((cert.as_path(), key.as_path()));
    assert_eq!(get(dir, port, "/puppet/v3/node/node1.test", own), "200");
    assert_eq!(get(dir, port, "/puppet/v3/node/node2.test", own), "403");
    assert_eq!(get(dir, port, "/puppet/v3/node/node1.test", None), "403");
    assert_eq!(get(dir, port, "/puppet-ca/v1/certificate/ca", None), "200");
    let (fc, fk) = foreign_cert(dir, "node1.test");
    assert_eq!(
        get(dir, port, "/puppet/v3/node/node1.test", Some((&fc, &fk))),
        "403"
    );

    // Revoked: refused from the next connection on.
    let cadir = dir.join("ssl/ca");
    let (_, listed) = ordo_ca(&["list", "--all"], &cadir);
    assert!(listed.contains("+ \"node1.test\""), "{listed}");
    let (revoked, out) = ordo_ca(&["revoke", "node1.test"], &cadir);
    assert!(revoked, "{out}");
    assert_eq!(get(dir, port, "/puppet/v3/node/node1.test", own), "403");

    // SIGTERM: a clean stop.
    let mut server = server;
    let pid = rustix::process::Pid::from_raw(server.child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    let t = Instant::now();
    let status = loop {
        if let Some(s) = server.child.try_wait().unwrap() {
            break s;
        }
        assert!(t.elapsed() < Duration::from_secs(20), "no stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(status.success());
    eprintln!(
        "agent runs against ordo serve: first (enrollment) {:.1} s, second {:.1} s",
        first.as_secs_f64(),
        second.as_secs_f64()
    );
}

fn openssl(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn ordo_ca(args: &[&str], cadir: &Path) -> (bool, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ordo"))
        .arg("ca")
        .args(args)
        .arg("--cadir")
        .arg(cadir)
        .output()
        .unwrap();
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// A puppetserver CA (RSA key in PKCS#1, serial file, signed certificates) imported with
/// `ordo ca import`: requests are signed by its key with its next serial, certificates
/// verify against its certificate, and a revocation gives a CRL OpenSSL accepts.
#[test]
fn imported_puppetserver_ca_signs_and_revokes() {
    if !tool("openssl") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let old = dir.join("puppetserver-ca");
    std::fs::create_dir_all(old.join("signed")).unwrap();
    openssl(
        &old,
        &["genrsa", "-traditional", "-out", "ca_key.pem", "2048"],
    );
    openssl(
        &old,
        &[
            "req",
            "-x509",
            "-new",
            "-key",
            "ca_key.pem",
            "-subj",
            "/CN=Puppet CA: old",
            "-days",
            "30",
            "-out",
            "ca_crt.pem",
            "-addext",
            "basicConstraints=critical,CA:true",
            "-addext",
            "keyUsage=keyCertSign,cRLSign",
        ],
    );
    assert!(std::fs::read_to_string(old.join("ca_key.pem"))
        .unwrap()
        .contains("BEGIN RSA PRIVATE KEY"));
    write(&old.join("serial"), "0A\n");
    std::fs::copy(old.join("ca_crt.pem"), old.join("signed/old-agent.pem")).unwrap();

    let cadir = dir.join("ca");
    let (ok, out) = ordo_ca(&["import", old.to_str().unwrap()], &cadir);
    assert!(ok, "{out}");
    assert!(out.contains("1 signed certificates"), "{out}");
    // A second import into the same directory is refused.
    assert!(!ordo_ca(&["import", old.to_str().unwrap()], &cadir).0);

    openssl(
        dir,
        &[
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            "/CN=agent1.test",
            "-keyout",
            "agent1.key",
            "-out",
            "agent1.csr",
        ],
    );
    std::fs::copy(
        dir.join("agent1.csr"),
        cadir.join("requests/agent1.test.pem"),
    )
    .unwrap();
    let (_, listed) = ordo_ca(&["list"], &cadir);
    assert!(listed.contains("\"agent1.test\""), "{listed}");
    let (ok, out) = ordo_ca(&["sign", "agent1.test"], &cadir);
    assert!(ok, "{out}");
    let signed = cadir.join("signed/agent1.test.pem");
    let ca_crt = old.join("ca_crt.pem");
    let verified = openssl(
        dir,
        &[
            "verify",
            "-CAfile",
            ca_crt.to_str().unwrap(),
            signed.to_str().unwrap(),
        ],
    );
    assert!(verified.contains(": OK"), "{verified}");
    let serial = openssl(
        dir,
        &["x509", "-in", signed.to_str().unwrap(), "-noout", "-serial"],
    );
    assert_eq!(serial.trim(), "serial=0A");
    assert_eq!(
        std::fs::read_to_string(cadir.join("serial"))
            .unwrap()
            .trim(),
        "0b"
    );

    let (ok, out) = ordo_ca(&["revoke", "agent1.test"], &cadir);
    assert!(ok, "{out}");
    let crl = cadir.join("ca_crl.pem");
    let text = Command::new("openssl")
        .args(["crl", "-in"])
        .arg(&crl)
        .args(["-CAfile"])
        .arg(&ca_crt)
        .args(["-noout", "-text"])
        .output()
        .unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&text.stdout),
        String::from_utf8_lossy(&text.stderr)
    );
    assert!(all.contains("verify OK"), "{all}");
    assert!(all.contains("Serial Number: 0A"), "{all}");
    let (_, listed) = ordo_ca(&["list", "--all"], &cadir);
    assert!(listed.contains("- \"agent1.test\""), "{listed}");
}

/// A compile past `--timeout` is answered 503 and stops: its worker (the only one) serves
/// the next request at once.
#[test]
fn timed_out_compile_stops_and_frees_its_worker() {
    if !tool("puppet") || !tool("ruby") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let code = dir.join("code/environments");
    write(
        &code.join("production/manifests/site.pp"),
        "notify { 'fast': }\n",
    );
    // Minutes of work in any build: sorting 20,000 numbers 100,000 times.
    write(
        &code.join("slow/manifests/site.pp"),
        "$big = 20000.map |$x| { 20000 - $x }\n\
         100000.each |$i| {\n  unless sort($big).empty { }\n}\n",
    );
    let server = start(
        dir,
        &["--autosign", "all", "--timeout", "1", "--workers", "1"],
    );
    let port = server.port;
    let (enrolled, log) = agent(dir, port, "node1.test", &[]);
    assert_eq!(enrolled, 2, "{log}");
    let ssl = dir.join("agent/node1.test/ssl");
    let (cert, key) = (
        ssl.join("certs/node1.test.pem"),
        ssl.join("private_keys/node1.test.pem"),
    );
    let own = Some((cert.as_path(), key.as_path()));
    let catalog = |env: &str| {
        let t = Instant::now();
        let status = get(
            dir,
            port,
            &format!("/puppet/v3/catalog/node1.test?environment={env}"),
            own,
        );
        (status, t.elapsed())
    };
    let (status, took) = catalog("slow");
    assert_eq!(status, "503");
    assert!(took < Duration::from_secs(10), "503 after {took:?}");
    // The slow compile stopped: the one worker is free for the next catalog.
    let (status, took) = catalog("production");
    assert_eq!(status, "200", "the worker is still busy");
    assert!(took < Duration::from_secs(10), "200 after {took:?}");
    let t = Instant::now();
    let log = loop {
        let log = std::fs::read_to_string(dir.join("serve.err")).unwrap();
        if log.contains("ran past the server's time limit") || t.elapsed() > Duration::from_secs(5)
        {
            break log;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert!(log.contains("ran past the server's time limit"), "{log}");
}
