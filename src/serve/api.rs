//! The endpoints a Puppet agent calls, with puppetserver's default authorization
//! (`auth.conf`): the CA's endpoints are open; a node reads and writes only its own catalog,
//! node, facts and report; the file server is open to any node with a valid certificate;
//! anything else, or a missing or bad certificate, gets 403.

use super::ca::{Autosign, Ca, ClientIdentity};
use super::envs::Envs;
use super::files;
use super::http::{percent_decode, Request, Response};
use super::pool::Pool;
use crate::cli::compile::{catalog_text, compile_text, error_line, CompileInputs, Mode};
use serde_json::{json, Value};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

/// Who is asking: from the client certificate, checked against the CA and its CRL.
#[derive(Clone, Debug)]
pub enum Peer {
    /// No certificate (a new agent asking for the CA's certificate, or enrolling).
    Anonymous,
    Valid(ClientIdentity),
    /// A certificate the CA did not sign, or revoked: why.
    Refused(String),
}

pub struct Server {
    pub ca: Ca,
    pub autosign: Autosign,
    pub envs: Envs,
    pub pool: Pool,
    pub reports: PathBuf,
    /// Reports kept per node (the oldest are removed).
    pub keep_reports: usize,
    pub timeout: Duration,
    /// The compile inputs common to every node (strict variables, storeconfigs).
    pub inputs: CompileInputs,
    /// `$server_facts` besides `environment`.
    pub server_facts: serde_json::Map<String, Value>,
}

impl Server {
    pub fn handle(self: &Arc<Self>, req: &Request, peer: &Peer) -> Response {
        let method = req.method.as_str();
        let path = req.path.as_str();
        if let Some(rest) = path.strip_prefix("/puppet-ca/v1/") {
            return self.ca_endpoint(method, rest, req);
        }
        if path == "/status/v1/simple" || path.starts_with("/status/v1/simple/") {
            return Response::text(200, "running");
        }
        let Some(rest) = path.strip_prefix("/puppet/v3/") else {
            return forbidden(req, peer);
        };
        let who = match peer {
            Peer::Valid(id) => id,
            _ => return forbidden(req, peer),
        };
        let (kind, key) = rest.split_once('/').unwrap_or((rest, ""));
        let own = key == who.certname;
        match (method, kind) {
            ("GET", "node") if own => self.node(req, key),
            ("POST" | "GET", "catalog") if own => self.catalog(req, who),
            ("PUT", "report") if own => self.report(req, key),
            ("PUT", "facts") if own => Response::json(200, "null"),
            ("GET" | "HEAD", "file_metadata" | "file_metadatas" | "file_content") => {
                self.file_server(req, kind, key)
            }
            ("GET" | "HEAD", "static_file_content") => self.static_file_content(req, key),
            ("GET", "environments") => {
                let envs: serde_json::Map<String, Value> = self
                    .envs
                    .names()
                    .into_iter()
                    .map(|n| (n, json!({"settings": {}})))
                    .collect();
                Response::json(
                    200,
                    json!({"search_paths": [self.envs.codedir.join("environments").to_string_lossy()],
                           "environments": envs})
                    .to_string(),
                )
            }
            ("GET" | "PUT" | "HEAD", "file_bucket_file") => {
                Response::error(404, "This server keeps no file bucket")
            }
            _ => forbidden(req, peer),
        }
    }

    fn ca_endpoint(&self, method: &str, rest: &str, req: &Request) -> Response {
        let (kind, name) = rest.split_once('/').unwrap_or((rest, ""));
        match (method, kind) {
            ("GET", "certificate") if name == "ca" => pem(self.ca.cert_pem()),
            ("GET", "certificate") => match self.ca.signed_pem(name) {
                Some(p) => Response::text(200, p),
                None => Response::text(404, format!("Could not find certificate {name}")),
            },
            ("GET", "certificate_revocation_list") if name == "ca" => pem(self.ca.crl_pem()),
            ("PUT", "certificate_request") => {
                let body = String::from_utf8_lossy(&req.body);
                match self.ca.submit_request(name, &body, &self.autosign) {
                    Ok(()) => {
                        log(&format!("Certificate request for {name} received"));
                        Response::text(200, "")
                    }
                    Err(e) => Response::text(400, e),
                }
            }
            ("GET", "certificate_request") => {
                match std::fs::read_to_string(self.ca.request_path(name)) {
                    Ok(p) if super::ca::valid_certname(name) => Response::text(200, p),
                    _ => Response::text(404, format!("Could not find certificate_request {name}")),
                }
            }
            _ => Response::text(404, format!("No route for {method} /puppet-ca/v1/{rest}")),
        }
    }

    fn env_name<'a>(&self, req: &'a Request, form: &'a [(String, String)]) -> &'a str {
        form.iter()
            .find(|(k, _)| k == "environment")
            .map(|(_, v)| v.as_str())
            .or_else(|| req.param("environment"))
            .unwrap_or("production")
    }

    fn node(&self, req: &Request, name: &str) -> Response {
        let env = self.env_name(req, &[]);
        if let Err(e) = self.envs.get(env) {
            return Response::error(404, &e);
        }
        Response::json(
            200,
            json!({"name": name, "environment": env, "parameters": {}}).to_string(),
        )
    }

    fn catalog(self: &Arc<Self>, req: &Request, who: &ClientIdentity) -> Response {
        let form = if req.method == "POST" {
            // Validated as text (std's fast check), not copied.
            match std::str::from_utf8(&req.body) {
                Ok(text) => super::http::parse_form(text),
                Err(_) => super::http::parse_form(&String::from_utf8_lossy(&req.body)),
            }
        } else {
            req.query.clone()
        };
        let field = |k: &str| form.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        let env_name = self.env_name(req, &form).to_string();
        let env = match self.envs.get(&env_name) {
            Ok(e) => e,
            Err(e) => return Response::error(404, &e),
        };
        // The facts are encoded twice: once as a form field, once before that.
        let facts = match field("facts") {
            Some(f) => {
                let text = percent_decode(f, false);
                match serde_json::from_str::<Value>(&text) {
                    // Taken out, not copied.
                    Ok(Value::Object(mut m)) => match m.remove("values") {
                        Some(values) => values,
                        None => Value::Object(m),
                    },
                    Ok(v) => v,
                    Err(e) => {
                        return Response::error(400, &format!("Could not read the facts: {e}"))
                    }
                }
            }
            None => json!({}),
        };
        if !facts.is_object() {
            return Response::error(400, "The facts are not a hash");
        }
        let mut server_facts = self.server_facts.clone();
        server_facts.insert("environment".into(), json!(env_name));
        let certname = who.certname.clone();
        let (host, domain) = match certname.split_once('.') {
            Some((h, d)) => (h.to_string(), json!(d)),
            None => (certname.clone(), Value::Null),
        };
        let extensions: serde_json::Map<String, Value> = who
            .extensions
            .iter()
            .map(|(k, v)| (k.clone(), json!(v)))
            .collect();
        let trusted = json!({
            "authenticated": "remote",
            "certname": certname,
            "extensions": extensions,
            "hostname": host,
            "domain": domain,
            "external": {},
        });
        let mut inputs = self.inputs.clone();
        // Past the time limit the compile stops itself (the evaluator asks the host at its
        // calls), freeing its worker; a request that waited the whole limit in the queue
        // stops at its first call.
        inputs.deadline = Some(std::time::Instant::now() + self.timeout);
        inputs.modulepath = vec![env.module_dirs.join(":")];
        inputs.hiera_config = env.hiera_config.clone();
        inputs.server = Some(crate::eval::ServerContext {
            environment: env_name.clone(),
            trusted,
            server_facts: Value::Object(server_facts),
        });
        // A static catalog (puppetserver's, when the agent asks): module files' metadata
        // inlined, with the checksum type both sides know.
        let static_checksum = match field("static_catalog") {
            Some("true") => {
                let agent = field("checksum_type").unwrap_or("md5");
                match super::static_catalog::common_checksum_type(agent) {
                    Some(t) => Some(t),
                    None => {
                        return Response::error(
                            400,
                            &format!(
                                "Unable to find a common checksum type between agent '{agent}' and server"
                            ),
                        )
                    }
                }
            }
            _ => None,
        };
        let deadline = inputs.deadline;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let env2 = env.clone();
        let me = self.clone();
        let job = move || {
            let out = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                me.compile(&env2, &certname, facts, &inputs, static_checksum)
            }))
            .unwrap_or_else(|_| Response::error(500, "Server Error: the compiler panicked"));
            let _ = tx.send(out);
        };
        if !self.pool.submit(Box::new(job)) {
            let mut r = Response::error(503, "The server is busy: too many compiles waiting");
            r.headers.push(("Retry-After", "5".into()));
            return r;
        }
        let timed_out = || {
            Response::error(
                503,
                &format!(
                    "Server Error: compiling the catalog of {} took more than {} s",
                    who.certname,
                    self.timeout.as_secs()
                ),
            )
        };
        match rx.recv_timeout(self.timeout) {
            // A compile that stopped itself at the limit may answer first: still a timeout.
            Ok(r)
                if r.status >= 500 && deadline.is_some_and(|d| std::time::Instant::now() >= d) =>
            {
                timed_out()
            }
            Ok(r) => r,
            Err(_) => timed_out(),
        }
    }

    /// Runs on a pool thread.
    fn compile(
        &self,
        env: &super::envs::Env,
        node: &str,
        facts: Value,
        inputs: &CompileInputs,
        static_checksum: Option<&str>,
    ) -> Response {
        let result = match compile_text(
            &env.manifest,
            &env.text,
            node,
            facts,
            inputs,
            Some((env.cache.clone(), env.files.clone())),
            Mode::Catalog,
        ) {
            Ok(r) => r,
            Err(e) => return Response::error(500, &format!("Server Error: {e}")),
        };
        for l in result.logs.iter().filter(|l| {
            !matches!(
                l.level,
                crate::eval::LogLevel::Info | crate::eval::LogLevel::Debug
            )
        }) {
            log(&format!("{node}: {}", l.render()));
        }
        let errors: Vec<_> = result.diagnostics.iter().filter(|d| d.is_error()).collect();
        let mut catalog = match result.catalog {
            Some(c) if errors.is_empty() => c,
            _ => {
                let msg: Vec<String> = errors.iter().map(|d| error_line(d, node)).collect();
                let msg = msg.join("\n");
                log(&msg);
                let msg = msg.strip_prefix("Error: ").unwrap_or(&msg);
                return Response::error(500, &format!("Server Error: {msg}"));
            }
        };
        if inputs.storeconfigs {
            if let Err(e) = crate::cli::compile::export_store(inputs).save(node, &result.exported) {
                return Response::error(500, &format!("Server Error: {e}"));
            }
        }
        catalog.environment = env.name.clone();
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        catalog.version = json!(now);
        catalog.code_id = Some(json!(env.code_id));
        catalog.catalog_uuid = Some(uuid());
        let text = catalog_text(&catalog, false);
        let text = match static_checksum {
            Some(t) => super::static_catalog::inline(&catalog, env, t).add_to(text),
            None => text,
        };
        Response::json(200, text)
    }

    fn report(&self, req: &Request, name: &str) -> Response {
        let dir = self.reports.join(name);
        if let Err(e) = std::fs::create_dir_all(&dir) {
            return Response::error(500, &format!("Could not store the report: {e}"));
        }
        let stamp = jiff::Timestamp::now()
            .strftime("%Y%m%d%H%M%S%6f")
            .to_string();
        let path = dir.join(format!("{stamp}.json"));
        if let Err(e) = super::ca::write_file(&path, &req.body) {
            return Response::error(500, &e);
        }
        rotate(&dir, self.keep_reports);
        Response::json(200, "[\"store\"]")
    }

    fn file_server(&self, req: &Request, kind: &str, key: &str) -> Response {
        let env = match self.envs.get(self.env_name(req, &[])) {
            Ok(e) => e,
            Err(e) => return Response::error(404, &e),
        };
        let Some((dirs, rel)) = files::resolve(&env, key) else {
            return Response::error(404, &format!("Could not find {kind} {key}"));
        };
        let o = files::Options {
            recurse: req
                .param("recurse")
                .is_some_and(|r| r == "true" || r == "yes"),
            recurselimit: req.param("recurselimit").and_then(|l| l.parse().ok()),
            follow_links: req.param("links") == Some("follow"),
            checksum_type: req.param("checksum_type").unwrap_or("sha256").to_string(),
            ignore: req.params("ignore").map(String::from).collect(),
            use_permissions: req.param("source_permissions") == Some("use"),
        };
        match kind {
            "file_metadata" => match files::metadata(&dirs, &rel, &o) {
                Some(m) => Response::json(200, m.to_string()),
                None => Response::error(404, &format!("Could not find file_metadata {key}")),
            },
            "file_metadatas" => {
                let fallback = env
                    .module_dirs
                    .iter()
                    .map(PathBuf::from)
                    .find(|d| d.is_dir())
                    .unwrap_or_else(|| self.envs.codedir.clone());
                let list = files::metadatas(&dirs, &rel, &o, &fallback);
                if list.is_empty() {
                    return Response::error(404, &format!("Could not find file_metadatas {key}"));
                }
                Response::json(200, Value::Array(list).to_string())
            }
            _ => match files::content(&dirs, &rel) {
                Some(c) => Response::new(200, "application/octet-stream", c),
                None => Response::error(404, &format!("Could not find file_content {key}")),
            },
        }
    }
}

impl Server {
    /// `static_file_content/DIR/MODULE/files/...`: a module file by the `content_uri` of a
    /// static catalog. puppetserver asks its `code-content-command` for the file as of the
    /// request's `code_id`; Ordo keeps no history and serves the current file.
    fn static_file_content(&self, req: &Request, path: &str) -> Response {
        let env = match self.envs.get(self.env_name(req, &[])) {
            Ok(e) => e,
            Err(e) => return Response::error(404, &e),
        };
        if req.param("code_id").is_none_or(str::is_empty) {
            return Response::error(400, "Invalid request: a code_id is required");
        }
        match super::static_catalog::static_file(&env, path).and_then(|p| std::fs::read(p).ok()) {
            Some(c) => Response::new(200, "application/octet-stream", c),
            None => Response::error(404, &format!("Could not find static_file_content {path}")),
        }
    }
}

fn pem(text: Result<String, String>) -> Response {
    match text {
        Ok(t) => Response::text(200, t),
        Err(e) => Response::text(500, e),
    }
}

fn forbidden(req: &Request, peer: &Peer) -> Response {
    let why = match peer {
        Peer::Anonymous => "no client certificate".to_string(),
        Peer::Refused(w) => w.clone(),
        Peer::Valid(id) => format!("not allowed for {}", id.certname),
    };
    log(&format!(
        "Forbidden request: {} {} ({why})",
        req.method, req.path
    ));
    Response::text(
        403,
        format!(
            "Forbidden request: {} (method {}). Please see the server logs for details.",
            req.path, req.method
        ),
    )
}

/// Keeps the `keep` newest reports of a node.
fn rotate(dir: &std::path::Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut names: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    if names.len() <= keep {
        return;
    }
    names.sort();
    for p in &names[..names.len() - keep] {
        let _ = std::fs::remove_file(p);
    }
}

/// A random (version 4) UUID.
pub fn uuid() -> String {
    let mut b = [0u8; 16];
    let _ = ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h = crate::digest::hex(&b);
    format!(
        "{}-{}-{}-{}-{}",
        &h[..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..]
    )
}

/// A line of the server's log (stderr), with the time.
pub fn log(msg: &str) {
    use std::io::Write;
    let t = jiff::Timestamp::now().strftime("%Y-%m-%dT%H:%M:%S%.3fZ");
    let _ = writeln!(std::io::stderr().lock(), "{t} {msg}");
}
