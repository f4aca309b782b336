//! `ordo serve`: a compile server for unmodified Puppet agents (docs/serve.md), and
//! `ordo ca`: its certificate authority.
//!
//! Threads, no async runtime: the accepting thread starts a thread per connection (TLS with
//! rustls, HTTP/1.1 keep-alive: `http.rs`); catalogs are compiled by a pool of workers
//! sized to the cores behind a bounded queue (`pool.rs`); everything else is answered on
//! the connection's thread (`api.rs`). Environments are read once and shared (`envs.rs`).

// The server talks to the machine (files, network, clock): the core's IO rules
// (clippy.toml) are not its.
#![allow(clippy::disallowed_methods)]

pub mod api;
pub mod ca;
pub mod envs;
pub mod files;
pub mod http;
pub mod pool;
pub mod static_catalog;

use api::{Peer, Server};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

/// The most connections served at once; more are closed at once.
const MAX_CONNECTIONS: usize = 1024;
/// A connection with no request for this long is closed.
const IDLE: Duration = Duration::from_secs(30);
/// How long shutdown waits for requests in progress.
const DRAIN: Duration = Duration::from_secs(30);

#[derive(clap::Args, Debug, Clone)]
pub struct ServeArgs {
    /// Puppet's code directory: `environments/NAME/{manifests,modules,hiera.yaml}`,
    /// `modules/` (the base modulepath) and `hiera.yaml` (the global layer).
    #[arg(long)]
    pub codedir: PathBuf,
    /// Address and port to listen on (port 0: any free port, printed at start).
    #[arg(long, default_value = "127.0.0.1:8140")]
    pub bind: String,
    /// Which certificate requests are signed as they arrive: `off`, `all`, or a
    /// comma-separated list of certnames and globs (`*.example.com`).
    #[arg(long, default_value = "off")]
    pub autosign: String,
    /// Where the server keeps its own certificate and key, and the CA by default.
    #[arg(long, default_value = "/var/lib/ordo/serve/ssl")]
    pub ssldir: PathBuf,
    /// The CA directory (puppetserver's layout; default: SSLDIR/ca). Servers behind one
    /// load balancer share it.
    #[arg(long)]
    pub cadir: Option<PathBuf>,
    /// The server's certname (default: this machine's hostname).
    #[arg(long)]
    pub certname: Option<String>,
    /// More DNS names for the server's certificate (comma-separated; the certname,
    /// `localhost` and `puppet` are always in it, and 127.0.0.1 and ::1).
    #[arg(long, value_delimiter = ',')]
    pub dns_alt_names: Vec<String>,
    /// Where reports are stored, one file per run: REPORTS/NODE/TIME.json.
    #[arg(long, default_value = "/var/lib/ordo/serve/reports")]
    pub reports: PathBuf,
    /// Reports kept per node.
    #[arg(long, default_value_t = 100)]
    pub keep_reports: usize,
    /// Compile workers (default: the available cores).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Compiles waiting at most; more are answered 503.
    #[arg(long)]
    pub queue: Option<usize>,
    /// Seconds a catalog request may take before it is answered 503.
    #[arg(long, default_value_t = 60)]
    pub timeout: u64,
    /// Append the access log here (puppetserver's format) instead of standard output.
    #[arg(long)]
    pub access_log: Option<PathBuf>,
    /// Unknown variables are errors.
    #[arg(long)]
    pub strict_variables: bool,
    /// Keep exported resources in the store under `--state-dir` and collect those of
    /// other nodes (as `ordo compile --storeconfigs`).
    #[arg(long)]
    pub storeconfigs: bool,
    /// Ordo's state directory (holds the exported-resources store).
    #[arg(long, default_value = crate::apply::state::DEFAULT_STATE_DIR)]
    pub state_dir: PathBuf,
}

#[derive(clap::Args, Debug, Clone)]
pub struct CaArgs {
    #[command(subcommand)]
    pub action: CaAction,
    /// The CA directory.
    #[arg(long, global = true, default_value = "/var/lib/ordo/serve/ssl/ca")]
    pub cadir: PathBuf,
}

#[derive(clap::Subcommand, Debug, Clone)]
pub enum CaAction {
    /// List requests waiting to be signed, and signed and revoked certificates.
    List {
        /// Also the signed and revoked certificates.
        #[arg(long)]
        all: bool,
    },
    /// Sign waiting requests.
    Sign {
        #[arg(required_unless_present = "all")]
        names: Vec<String>,
        /// Every waiting request.
        #[arg(long)]
        all: bool,
    },
    /// Revoke certificates (their serials go into the CRL).
    Revoke {
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Copy a puppetserver CA directory (e.g. /etc/puppetlabs/puppetserver/ca) into an
    /// empty `--cadir`: enrolled agents keep their certificates.
    Import { from: PathBuf },
}

/// A line on standard output (surviving a closed pipe, as `ordo`'s other output).
fn say(line: &str) {
    use std::io::Write as _;
    crate::cli::note_stdout(
        writeln!(std::io::stdout().lock(), "{line}").and_then(|_| std::io::stdout().flush()),
    );
}

macro_rules! say {
    ($($t:tt)*) => { say(&format!($($t)*)) };
}

/// `ordo ca`.
pub fn ca_command(args: &CaArgs) -> i32 {
    let ca = ca::Ca::new(&args.cadir);
    let result = match &args.action {
        CaAction::Import { from } => ca.import(from).map(|n| {
            say!(
                "Imported the CA of {} and {n} signed certificates into {}",
                from.display(),
                args.cadir.display()
            );
        }),
        CaAction::List { all } => ca.ensure().and_then(|_| ca.list()).map(|items| {
            for i in items.iter().filter(|i| *all || i.state == "requested") {
                match i.state {
                    "requested" => say!("  \"{}\" (SHA256) {}", i.name, i.fingerprint),
                    state => say!(
                        "{} \"{}\" (SHA256) {} serial {} expires {}",
                        if state == "signed" { "+" } else { "-" },
                        i.name,
                        i.fingerprint,
                        i.serial,
                        i.not_after
                    ),
                }
            }
        }),
        CaAction::Sign { names, all } => ca.ensure().and_then(|_| {
            let names = if *all {
                ca.list()?
                    .into_iter()
                    .filter(|i| i.state == "requested")
                    .map(|i| i.name)
                    .collect()
            } else {
                names.clone()
            };
            for n in &names {
                ca.sign(n)?;
                say!("Signed certificate request for {n}");
            }
            Ok(())
        }),
        CaAction::Revoke { names } => ca.ensure().and_then(|_| {
            for n in names {
                ca.revoke(n)?;
                say!("Revoked certificate for {n}");
            }
            Ok(())
        }),
    };
    match result {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

/// Accepts every client certificate during the handshake (the key's possession is still
/// proven), so that a missing, foreign or revoked one gets a 403 naming why rather than a
/// failed handshake; whether it is valid is decided by the CA's verifier afterwards.
#[derive(Debug)]
struct Deferred {
    inner: Arc<dyn ClientCertVerifier>,
}

impl ClientCertVerifier for Deferred {
    fn offer_client_auth(&self) -> bool {
        true
    }
    fn client_auth_mandatory(&self) -> bool {
        false
    }
    fn root_hint_subjects(&self) -> &[rustls::DistinguishedName] {
        self.inner.root_hint_subjects()
    }
    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }
    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }
    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }
    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// The TLS configuration, made again when the CRL changes (a revocation by `ordo ca`).
struct Tls {
    cert_chain: Vec<CertificateDer<'static>>,
    key_pem: String,
    ca: ca::Ca,
    current: RwLock<Option<TlsState>>,
}

struct TlsState {
    config: Arc<rustls::ServerConfig>,
    verifier: Arc<dyn ClientCertVerifier>,
    crl_stamp: Option<SystemTime>,
}

impl Tls {
    fn build(&self) -> Result<TlsState, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut roots = rustls::RootCertStore::empty();
        for der in ca::pem_all(&self.ca.cert_pem()?, "CERTIFICATE") {
            roots
                .add(CertificateDer::from(der))
                .map_err(|e| format!("Bad CA certificate: {e}"))?;
        }
        let crls: Vec<rustls::pki_types::CertificateRevocationListDer<'static>> =
            ca::pem_all(&self.ca.crl_pem()?, "X509 CRL")
                .into_iter()
                .map(Into::into)
                .collect();
        let verifier = rustls::server::WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            provider.clone(),
        )
        .with_crls(crls)
        .allow_unknown_revocation_status()
        .build()
        .map_err(|e| format!("Could not set up client verification: {e}"))?;
        let key = ca::pem_der(&self.key_pem, "PRIVATE KEY")?;
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .with_client_cert_verifier(Arc::new(Deferred {
                inner: verifier.clone(),
            }))
            .with_single_cert(self.cert_chain.clone(), PrivateKeyDer::Pkcs8(key.into()))
            .map_err(|e| format!("TLS: {e}"))?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsState {
            config: Arc::new(config),
            verifier,
            crl_stamp: mtime(&self.ca.crl_path()),
        })
    }

    /// The configuration for a new connection, current with the CRL.
    fn current(&self) -> Option<(Arc<rustls::ServerConfig>, Arc<dyn ClientCertVerifier>)> {
        let stamp = mtime(&self.ca.crl_path());
        {
            let s = self.current.read().unwrap_or_else(|e| e.into_inner());
            if let Some(s) = s.as_ref().filter(|s| s.crl_stamp == stamp) {
                return Some((s.config.clone(), s.verifier.clone()));
            }
        }
        let mut s = self.current.write().unwrap_or_else(|e| e.into_inner());
        match self.build() {
            Ok(new) => {
                api::log("The CRL changed: client certificates are checked against the new one");
                *s = Some(new);
            }
            Err(e) => {
                api::log(&format!("Error: keeping the previous CRL: {e}"));
                if let Some(s) = s.as_mut() {
                    s.crl_stamp = stamp;
                }
            }
        }
        s.as_ref().map(|s| (s.config.clone(), s.verifier.clone()))
    }
}

fn mtime(p: &Path) -> Option<SystemTime> {
    std::fs::metadata(p).and_then(|m| m.modified()).ok()
}

/// The server's certificate and key: made by the CA on first start, kept in the ssldir.
fn server_identity(
    ca: &ca::Ca,
    args: &ServeArgs,
    certname: &str,
    bind: &SocketAddr,
) -> Result<(String, String), String> {
    let certs = args.ssldir.join("certs");
    let keys = args.ssldir.join("private_keys");
    let cert_path = certs.join(format!("{certname}.pem"));
    let key_path = keys.join(format!("{certname}.pem"));
    if let (Ok(c), Ok(k)) = (
        std::fs::read_to_string(&cert_path),
        std::fs::read_to_string(&key_path),
    ) {
        return Ok((c, k));
    }
    for d in [&certs, &keys] {
        std::fs::create_dir_all(d).map_err(|e| format!("Could not create {}: {e}", d.display()))?;
    }
    let mut dns = vec![certname.to_string(), "localhost".into(), "puppet".into()];
    if let Some(h) = ca::hostname() {
        dns.push(h);
    }
    dns.extend(args.dns_alt_names.iter().cloned());
    dns.sort();
    dns.dedup();
    let mut ips: Vec<std::net::IpAddr> = vec![
        std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::Ipv6Addr::LOCALHOST.into(),
    ];
    if !bind.ip().is_unspecified() && !ips.contains(&bind.ip()) {
        ips.push(bind.ip());
    }
    let (cert, key) = ca.issue_server_cert(certname, &dns, &ips)?;
    ca::write_file(&cert_path, cert.as_bytes())?;
    std::fs::write(&key_path, key.as_bytes())
        .and_then(|_| {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&key_path, std::fs::Permissions::from_mode(0o600))
        })
        .map_err(|e| format!("Could not write {}: {e}", key_path.display()))?;
    Ok((cert, key))
}

/// `ordo serve`: runs until SIGTERM or SIGINT; returns the exit code.
pub fn run(args: &ServeArgs) -> i32 {
    match serve(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("Error: {e}");
            1
        }
    }
}

fn serve(args: &ServeArgs) -> Result<(), String> {
    let _ = rustls::crypto::ring::default_provider().install_default();
    if !args.codedir.is_dir() {
        return Err(format!(
            "The code directory {} does not exist",
            args.codedir.display()
        ));
    }
    // Metadata names files by absolute paths (agents refuse others).
    let codedir = std::fs::canonicalize(&args.codedir)
        .map_err(|e| format!("Could not read {}: {e}", args.codedir.display()))?;
    let bind: SocketAddr = args
        .bind
        .parse()
        .map_err(|e| format!("Bad --bind address {}: {e}", args.bind))?;
    let listener =
        TcpListener::bind(bind).map_err(|e| format!("Could not listen on {bind}: {e}"))?;
    let local = listener
        .local_addr()
        .map_err(|e| format!("Could not listen on {bind}: {e}"))?;
    let cadir = args.cadir.clone().unwrap_or_else(|| args.ssldir.join("ca"));
    let ca = ca::Ca::new(&cadir);
    ca.ensure()?;
    ca.refresh_crl()?;
    let certname = args
        .certname
        .clone()
        .or_else(ca::hostname)
        .unwrap_or_else(|| "localhost".into());
    let (cert_pem, key_pem) = server_identity(&ca, args, &certname, &local)?;
    let mut cert_chain: Vec<CertificateDer<'static>> = ca::pem_all(&cert_pem, "CERTIFICATE")
        .into_iter()
        .map(CertificateDer::from)
        .collect();
    cert_chain.extend(
        ca::pem_all(&ca.cert_pem()?, "CERTIFICATE")
            .into_iter()
            .map(CertificateDer::from),
    );
    let mut tls = Tls {
        cert_chain,
        key_pem,
        ca: ca::Ca::new(&cadir),
        current: RwLock::new(None),
    };
    let state = tls.build()?;
    *tls.current.get_mut().unwrap_or_else(|e| e.into_inner()) = Some(state);
    let tls = Arc::new(tls);

    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let workers = args.workers.unwrap_or(cores).max(1);
    let queue = args.queue.unwrap_or(workers * 16);
    let pool =
        pool::Pool::new(workers, queue).map_err(|e| format!("Could not start workers: {e}"))?;
    let mut inputs = crate::cli::compile::CompileInputs {
        strict_variables: args.strict_variables,
        storeconfigs: args.storeconfigs,
        ..Default::default()
    };
    inputs.state_dir = Some(args.state_dir.clone());
    let mut server_facts = serde_json::Map::new();
    server_facts.insert("serverversion".into(), crate::PUPPET_VERSION.into());
    server_facts.insert("servername".into(), certname.clone().into());
    if !local.ip().is_unspecified() {
        let key = if local.is_ipv4() {
            "serverip"
        } else {
            "serverip6"
        };
        server_facts.insert(key.into(), local.ip().to_string().into());
    }
    let server = Arc::new(Server {
        ca,
        autosign: ca::Autosign::parse(&args.autosign),
        envs: envs::Envs::new(&codedir),
        pool,
        reports: args.reports.clone(),
        keep_reports: args.keep_reports.max(1),
        timeout: Duration::from_secs(args.timeout.max(1)),
        inputs,
        server_facts,
    });
    let access: Arc<Mutex<Box<dyn std::io::Write + Send>>> =
        Arc::new(Mutex::new(match &args.access_log {
            Some(p) => Box::new(
                std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(p)
                    .map_err(|e| format!("Could not open {}: {e}", p.display()))?,
            ),
            None => Box::new(std::io::stdout()),
        }));

    let stopping = Arc::new(AtomicBool::new(false));
    {
        let stopping = stopping.clone();
        let server = server.clone();
        let wake = if local.ip().is_unspecified() {
            SocketAddr::new(std::net::Ipv4Addr::LOCALHOST.into(), local.port())
        } else {
            local
        };
        let mut signals = signal_hook::iterator::Signals::new([
            signal_hook::consts::SIGTERM,
            signal_hook::consts::SIGINT,
            signal_hook::consts::SIGHUP,
        ])
        .map_err(|e| format!("Could not set up signals: {e}"))?;
        std::thread::spawn(move || {
            for sig in signals.forever() {
                if sig == signal_hook::consts::SIGHUP {
                    api::log("SIGHUP: environments will be read again");
                    server.envs.clear();
                    continue;
                }
                stopping.store(true, Ordering::SeqCst);
                // Wake the accepting thread.
                let _ = TcpStream::connect_timeout(&wake, Duration::from_secs(1));
                return;
            }
        });
    }

    api::log(&format!(
        "Listening on {local} as {certname} ({workers} workers, queue {queue}, code in {}, CA in {})",
        codedir.display(),
        cadir.display()
    ));
    say(&format!("Listening on {local}"));
    let active = Arc::new(AtomicUsize::new(0));
    for stream in listener.incoming() {
        if stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        if active.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            continue;
        }
        active.fetch_add(1, Ordering::SeqCst);
        let (server, tls, stopping, active2, access) = (
            server.clone(),
            tls.clone(),
            stopping.clone(),
            active.clone(),
            access.clone(),
        );
        let spawned = std::thread::Builder::new()
            .name("conn".into())
            .stack_size(256 << 10)
            .spawn(move || {
                connection(&server, &tls, stream, &stopping, &access);
                active2.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            active.fetch_sub(1, Ordering::SeqCst);
        }
    }
    api::log("Stopping: finishing the requests in progress");
    let start = Instant::now();
    while active.load(Ordering::SeqCst) > 0 && start.elapsed() < DRAIN {
        std::thread::sleep(Duration::from_millis(20));
    }
    server.pool.stop();
    api::log("Stopped");
    Ok(())
}

/// Serves one connection: the TLS handshake, then requests until the peer closes, the
/// connection stays idle, or the server stops.
fn connection(
    server: &Arc<Server>,
    tls: &Tls,
    tcp: TcpStream,
    stopping: &AtomicBool,
    access: &Mutex<Box<dyn std::io::Write + Send>>,
) {
    use std::io::Write;
    let _ = tcp.set_nodelay(true);
    let _ = tcp.set_read_timeout(Some(Duration::from_secs(1)));
    let _ = tcp.set_write_timeout(Some(Duration::from_secs(30)));
    let remote = tcp
        .peer_addr()
        .map_or_else(|_| "-".to_string(), |a| a.ip().to_string());
    let Some((config, verifier)) = tls.current() else {
        return;
    };
    let Ok(conn) = rustls::ServerConnection::new(config) else {
        return;
    };
    let mut stream = rustls::StreamOwned::new(conn, tcp);
    let deadline = Instant::now() + Duration::from_secs(10);
    while stream.conn.is_handshaking() {
        match stream.conn.complete_io(&mut stream.sock) {
            Ok(_) => {}
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) && Instant::now() < deadline
                    && !stopping.load(Ordering::SeqCst) => {}
            Err(_) => return,
        }
    }
    let peer = match stream.conn.peer_certificates() {
        None | Some([]) => Peer::Anonymous,
        Some(certs) => match verifier.verify_client_cert(&certs[0], &certs[1..], UnixTime::now()) {
            Ok(_) => match ca::identity(&certs[0]) {
                Some(id) => Peer::Valid(id),
                None => Peer::Refused("a certificate without a common name".into()),
            },
            Err(e) => Peer::Refused(format!("client certificate refused: {e}")),
        },
    };
    let mut reader = http::Reader::new();
    loop {
        let idle = Instant::now();
        // Wait while the connection has been quiet less than IDLE; between requests, not
        // once the server is stopping. A request begun is given the same time to finish.
        let mut wait =
            |partial: bool| idle.elapsed() <= IDLE && (partial || !stopping.load(Ordering::SeqCst));
        let req = match reader.next(&mut stream, &mut wait) {
            Ok(r) => r,
            Err(http::ReadError::Bad(status, msg)) => {
                let r = http::Response::text(status, msg);
                let _ = stream.write_all(&r.bytes(false, false));
                let _ = stream.flush();
                stream.conn.send_close_notify();
                let _ = stream.flush();
                return;
            }
            Err(_) => {
                stream.conn.send_close_notify();
                let _ = stream.flush();
                return;
            }
        };
        let started = Instant::now();
        let response = server.handle(&req, &peer);
        let keep = req.keep_alive && !stopping.load(Ordering::SeqCst);
        let bytes = response.bytes(keep, req.method == "HEAD");
        let written = stream.write_all(&bytes).and_then(|_| stream.flush());
        log_access(access, &remote, &req, &peer, &response, started.elapsed());
        if written.is_err() {
            return;
        }
        if !keep {
            stream.conn.send_close_notify();
            let _ = stream.flush();
            return;
        }
    }
}

/// A line in puppetserver's access log format:
/// `%h %l %u [%t] "%r" %s %b "%i{Referer}" "%i{User-Agent}" %D %i{Content-Length}`.
fn log_access(
    access: &Mutex<Box<dyn std::io::Write + Send>>,
    remote: &str,
    req: &http::Request,
    peer: &Peer,
    response: &http::Response,
    took: Duration,
) {
    let user = match peer {
        Peer::Valid(id) => id.certname.as_str(),
        _ => "-",
    };
    let time = jiff::Timestamp::now().strftime("%d/%b/%Y:%H:%M:%S +0000");
    let line = format!(
        "{remote} - {user} [{time}] \"{}\" {} {} \"{}\" \"{}\" {} {}\n",
        req.line,
        response.status,
        response.body.len(),
        req.header("referer").unwrap_or("-"),
        req.header("user-agent").unwrap_or("-"),
        took.as_millis(),
        req.header("content-length").unwrap_or("-"),
    );
    let mut w = access.lock().unwrap_or_else(|e| e.into_inner());
    let _ = w.write_all(line.as_bytes());
    let _ = w.flush();
}
