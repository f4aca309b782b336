//! The certificate authority of `ordo serve`, kept in a directory laid out as puppetserver's
//! (`/etc/puppetlabs/puppetserver/ca`), so that one can stand in for the other:
//!
//! - `ca_crt.pem`, `ca_key.pem`: the CA's certificate and key (made once, on first use);
//! - `ca_crl.pem`: the revocation list, signed again on each revocation;
//! - `serial`: the next serial number, in hexadecimal;
//! - `inventory.txt`: one line per issued certificate (serial, validity, subject);
//! - `requests/NAME.pem`: the certificate requests waiting to be signed;
//! - `signed/NAME.pem`: the issued certificates.
//!
//! Changes are serialized by a lock file (`.lock`) so that `ordo ca sign` and a running
//! server do not issue the same serial twice.

use rcgen::{
    CertificateParams, CertificateRevocationListParams, CustomExtension, DistinguishedName, DnType,
    ExtendedKeyUsagePurpose, IsCa, Issuer, KeyIdMethod, KeyPair, KeyUsagePurpose, PublicKeyData,
    RevokedCertParams, SanType, SerialNumber, SignatureAlgorithm,
};
use std::path::{Path, PathBuf};
use x509_parser::prelude::*;

/// Validity of issued certificates (puppetserver's `ca_ttl` default is 15 years for the CA;
/// agents get 5).
const CERT_YEARS: i16 = 5;
const CA_YEARS: i16 = 15;
/// A revocation list is valid this long; it is signed again when the server starts and
/// whenever a certificate is revoked.
const CRL_DAYS: i32 = 365;

/// Puppet's registered certificate extensions (`puppet/ssl/oids.rb`): their short names in
/// `$trusted['extensions']`.
const PP_OIDS: &[(&str, &str)] = &[
    ("1.3.6.1.4.1.34380.1.1.1", "pp_uuid"),
    ("1.3.6.1.4.1.34380.1.1.2", "pp_instance_id"),
    ("1.3.6.1.4.1.34380.1.1.3", "pp_image_name"),
    ("1.3.6.1.4.1.34380.1.1.4", "pp_preshared_key"),
    ("1.3.6.1.4.1.34380.1.1.5", "pp_cost_center"),
    ("1.3.6.1.4.1.34380.1.1.6", "pp_product"),
    ("1.3.6.1.4.1.34380.1.1.7", "pp_project"),
    ("1.3.6.1.4.1.34380.1.1.8", "pp_application"),
    ("1.3.6.1.4.1.34380.1.1.9", "pp_service"),
    ("1.3.6.1.4.1.34380.1.1.10", "pp_employee"),
    ("1.3.6.1.4.1.34380.1.1.11", "pp_created_by"),
    ("1.3.6.1.4.1.34380.1.1.12", "pp_environment"),
    ("1.3.6.1.4.1.34380.1.1.13", "pp_role"),
    ("1.3.6.1.4.1.34380.1.1.14", "pp_software_version"),
    ("1.3.6.1.4.1.34380.1.1.15", "pp_department"),
    ("1.3.6.1.4.1.34380.1.1.16", "pp_cluster"),
    ("1.3.6.1.4.1.34380.1.1.17", "pp_provisioner"),
    ("1.3.6.1.4.1.34380.1.1.18", "pp_region"),
    ("1.3.6.1.4.1.34380.1.1.19", "pp_datacenter"),
    ("1.3.6.1.4.1.34380.1.1.20", "pp_zone"),
    ("1.3.6.1.4.1.34380.1.1.21", "pp_network"),
    ("1.3.6.1.4.1.34380.1.1.22", "pp_securitypolicy"),
    ("1.3.6.1.4.1.34380.1.1.23", "pp_cloudplatform"),
    ("1.3.6.1.4.1.34380.1.1.24", "pp_apptier"),
    ("1.3.6.1.4.1.34380.1.1.25", "pp_hostname"),
    ("1.3.6.1.4.1.34380.1.1.26", "pp_owner"),
    ("1.3.6.1.4.1.34380.1.3.1", "pp_authorization"),
    ("1.3.6.1.4.1.34380.1.3.13", "pp_auth_role"),
];

/// The Puppet extension arc: extensions under it are copied from a request into the
/// certificate and shown in `$trusted['extensions']`.
const PUPPET_ARC: &str = "1.3.6.1.4.1.34380.1.";

/// Which requests are signed as they arrive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Autosign {
    Off,
    All,
    /// Certnames or globs (`*.example.com`).
    Names(Vec<String>),
}

impl Autosign {
    /// `off`, `all` (or `true`), or a comma-separated list of names and globs.
    pub fn parse(s: &str) -> Autosign {
        match s.trim() {
            "" | "off" | "false" => Autosign::Off,
            "all" | "true" => Autosign::All,
            list => Autosign::Names(
                list.split(',')
                    .map(|n| n.trim().to_string())
                    .filter(|n| !n.is_empty())
                    .collect(),
            ),
        }
    }

    pub fn allows(&self, name: &str) -> bool {
        match self {
            Autosign::Off => false,
            Autosign::All => true,
            Autosign::Names(globs) => globs.iter().any(|g| glob_match(g, name)),
        }
    }
}

/// `*` (any run of characters) and `?` (one character) against a whole name.
pub fn glob_match(glob: &str, name: &str) -> bool {
    let (g, n): (Vec<char>, Vec<char>) = (glob.chars().collect(), name.chars().collect());
    let (mut gi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match g.get(gi) {
            Some('*') => {
                star = Some((gi, ni));
                gi += 1;
            }
            Some(c) if *c == '?' || *c == n[ni] => {
                gi += 1;
                ni += 1;
            }
            _ => match star {
                Some((sg, sn)) => {
                    gi = sg + 1;
                    ni = sn + 1;
                    star = Some((sg, sn + 1));
                }
                None => return false,
            },
        }
    }
    g[gi..].iter().all(|c| *c == '*')
}

/// A certname Puppet accepts: lower-case letters, digits, `-`, `_` and `.`, not empty.
pub fn valid_certname(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 255
        && !name.starts_with('.')
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_.".contains(&b))
}

/// The CA directory.
pub struct Ca {
    pub dir: PathBuf,
}

/// A certificate of the CA's inventory, for `ordo ca list`.
#[derive(Debug)]
pub struct Listed {
    pub name: String,
    /// `signed`, `revoked` or `requested`.
    pub state: &'static str,
    /// The SHA-256 fingerprint (`AA:BB:...`).
    pub fingerprint: String,
    pub serial: String,
    pub not_after: String,
}

/// A certificate request's public key, as rcgen signs it.
struct RequestKey {
    spki_key: Vec<u8>,
    alg: &'static SignatureAlgorithm,
}

impl PublicKeyData for RequestKey {
    fn der_bytes(&self) -> &[u8] {
        &self.spki_key
    }
    fn algorithm(&self) -> &'static SignatureAlgorithm {
        self.alg
    }
}

/// What a client certificate tells the compiler: `$trusted`.
#[derive(Clone, Debug)]
pub struct ClientIdentity {
    pub certname: String,
    /// The Puppet extensions, by short name (or OID), with their text values.
    pub extensions: Vec<(String, String)>,
}

impl Ca {
    pub fn new(dir: &Path) -> Ca {
        Ca {
            dir: dir.to_path_buf(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    pub fn cert_path(&self) -> PathBuf {
        self.path("ca_crt.pem")
    }

    pub fn crl_path(&self) -> PathBuf {
        self.path("ca_crl.pem")
    }

    pub fn signed_path(&self, name: &str) -> PathBuf {
        self.dir.join("signed").join(format!("{name}.pem"))
    }

    pub fn request_path(&self, name: &str) -> PathBuf {
        self.dir.join("requests").join(format!("{name}.pem"))
    }

    /// Holds the directory's lock while `f` runs.
    fn locked<T>(&self, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(self.path(".lock"))
            .map_err(|e| {
                format!(
                    "Could not lock the CA directory {}: {e}",
                    self.dir.display()
                )
            })?;
        file.lock().map_err(|e| {
            format!(
                "Could not lock the CA directory {}: {e}",
                self.dir.display()
            )
        })?;
        let out = f();
        let _ = file.unlock();
        out
    }

    /// Creates the CA (key, self-signed certificate, empty CRL, serial) unless the directory
    /// already holds one.
    pub fn ensure(&self) -> Result<(), String> {
        for sub in ["", "signed", "requests"] {
            std::fs::create_dir_all(self.dir.join(sub))
                .map_err(|e| format!("Could not create {}: {e}", self.dir.join(sub).display()))?;
        }
        self.locked(|| {
            if self.cert_path().exists() {
                if !self.crl_path().exists() {
                    self.write_crl(&[])?;
                }
                return Ok(());
            }
            let key = KeyPair::generate().map_err(|e| format!("Could not make the CA key: {e}"))?;
            let mut params = CertificateParams::default();
            let mut dn = DistinguishedName::new();
            dn.push(
                DnType::CommonName,
                format!(
                    "Ordo CA: {}",
                    hostname().unwrap_or_else(|| "localhost".into())
                ),
            );
            params.distinguished_name = dn;
            params.is_ca = IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
            params.key_usages = vec![
                KeyUsagePurpose::KeyCertSign,
                KeyUsagePurpose::CrlSign,
                KeyUsagePurpose::DigitalSignature,
            ];
            params.serial_number = Some(SerialNumber::from_slice(&[1]));
            let (from, to) = validity(CA_YEARS);
            params.not_before = from;
            params.not_after = to;
            let cert = params
                .self_signed(&key)
                .map_err(|e| format!("Could not make the CA certificate: {e}"))?;
            write_private(&self.path("ca_key.pem"), key.serialize_pem().as_bytes())?;
            write_file(&self.cert_path(), cert.pem().as_bytes())?;
            write_file(&self.path("serial"), b"0002\n")?;
            self.write_crl(&[])?;
            Ok(())
        })
    }

    /// The CA's certificate (PEM).
    pub fn cert_pem(&self) -> Result<String, String> {
        read_text(&self.cert_path())
    }

    /// The revocation list (PEM).
    pub fn crl_pem(&self) -> Result<String, String> {
        read_text(&self.crl_path())
    }

    fn issuer(&self) -> Result<Issuer<'static, KeyPair>, String> {
        let key_pem = read_text(&self.path("ca_key.pem"))?;
        let key = load_key(&key_pem)?;
        Issuer::from_ca_cert_pem(&self.cert_pem()?, key)
            .map_err(|e| format!("Could not read the CA certificate: {e}"))
    }

    /// Takes the next serial number.
    fn next_serial(&self) -> Result<Vec<u8>, String> {
        let path = self.path("serial");
        let text = read_text(&path)?;
        let hex = text.trim();
        let bytes = hex_bytes(hex).ok_or_else(|| format!("Bad serial in {}", path.display()))?;
        let next = increment(&bytes);
        write_file(&path, format!("{}\n", to_hex(&next, "")).as_bytes())?;
        Ok(bytes)
    }

    /// Stores a certificate request (PEM) from an agent; signs it at once when `autosign`
    /// allows. `Err` for a bad request: its name, signature or a certificate already issued.
    pub fn submit_request(&self, name: &str, pem: &str, autosign: &Autosign) -> Result<(), String> {
        if !valid_certname(name) {
            return Err(format!("Certname '{name}' is not valid"));
        }
        let der = pem_der(pem, "CERTIFICATE REQUEST")?;
        let (cn, _) = read_request(&der)?;
        if cn != name {
            return Err(format!(
                "Instance name \"{name}\" does not match requested key \"{cn}\""
            ));
        }
        if self.signed_path(name).exists() && !self.is_revoked(name)? {
            return Err(format!(
                "{name} already has a signed certificate; ignoring certificate request"
            ));
        }
        write_file(&self.request_path(name), pem.as_bytes())?;
        if autosign.allows(name) {
            self.sign(name)?;
        }
        Ok(())
    }

    /// Signs the waiting request of `name`.
    pub fn sign(&self, name: &str) -> Result<(), String> {
        let pem = read_text(&self.request_path(name))
            .map_err(|_| format!("Could not find a certificate request for {name}"))?;
        let der = pem_der(&pem, "CERTIFICATE REQUEST")?;
        let (cn, request) = read_request(&der)?;
        let cert = self.issue(&cn, request.key, request.sans, request.extensions)?;
        write_file(&self.signed_path(name), cert.as_bytes())?;
        let _ = std::fs::remove_file(self.request_path(name));
        Ok(())
    }

    /// Issues a certificate for `name` (the server's own, with its alternative names), with
    /// a new key: the certificate and key (PEM). Kept in `signed/` like the agents'.
    pub fn issue_server_cert(
        &self,
        name: &str,
        dns: &[String],
        ips: &[std::net::IpAddr],
    ) -> Result<(String, String), String> {
        let key = KeyPair::generate().map_err(|e| format!("Could not make a key: {e}"))?;
        let mut sans: Vec<SanType> = Vec::new();
        for d in dns {
            sans.push(SanType::DnsName(
                d.clone()
                    .try_into()
                    .map_err(|e| format!("Bad DNS name {d}: {e}"))?,
            ));
        }
        sans.extend(ips.iter().map(|ip| SanType::IpAddress(*ip)));
        let spki = RequestKey {
            spki_key: key.public_key_raw().to_vec(),
            alg: key.algorithm(),
        };
        let cert = self.issue(name, spki, sans, Vec::new())?;
        write_file(&self.signed_path(name), cert.as_bytes())?;
        Ok((cert, key.serialize_pem()))
    }

    fn issue(
        &self,
        name: &str,
        key: RequestKey,
        sans: Vec<SanType>,
        extensions: Vec<CustomExtension>,
    ) -> Result<String, String> {
        self.locked(|| {
            let issuer = self.issuer()?;
            let serial = self.next_serial()?;
            let mut params = CertificateParams::default();
            let mut dn = DistinguishedName::new();
            dn.push(DnType::CommonName, name);
            params.distinguished_name = dn;
            params.serial_number = Some(SerialNumber::from_slice(&serial));
            let (from, to) = validity(CERT_YEARS);
            params.not_before = from;
            params.not_after = to;
            params.key_usages = vec![
                KeyUsagePurpose::DigitalSignature,
                KeyUsagePurpose::KeyEncipherment,
            ];
            params.extended_key_usages = vec![
                ExtendedKeyUsagePurpose::ServerAuth,
                ExtendedKeyUsagePurpose::ClientAuth,
            ];
            params.subject_alt_names = sans;
            params.custom_extensions = extensions;
            params.use_authority_key_identifier_extension = true;
            params.key_identifier_method = KeyIdMethod::Sha256;
            let cert = params
                .signed_by(&key, &issuer)
                .map_err(|e| format!("Could not sign the certificate of {name}: {e}"))?;
            let (from, to) = (today(-1), today_plus_years(CERT_YEARS));
            let line = format!(
                "0x{} {from}T00:00:00UTC {to}T00:00:00UTC /CN={name}\n",
                to_hex(&serial, "")
            );
            append(&self.path("inventory.txt"), line.as_bytes())?;
            Ok(cert.pem())
        })
    }

    /// The signed certificate of `name` (PEM), if any.
    pub fn signed_pem(&self, name: &str) -> Option<String> {
        if !valid_certname(name) {
            return None;
        }
        std::fs::read_to_string(self.signed_path(name)).ok()
    }

    /// Revokes the certificate of `name`: its serial goes into a new revocation list.
    pub fn revoke(&self, name: &str) -> Result<(), String> {
        let pem = self
            .signed_pem(name)
            .ok_or_else(|| format!("Could not find a signed certificate for {name}"))?;
        let der = pem_der(&pem, "CERTIFICATE")?;
        let (_, cert) = X509Certificate::from_der(&der)
            .map_err(|e| format!("Could not read the certificate of {name}: {e}"))?;
        let serial = cert.raw_serial().to_vec();
        self.locked(|| {
            let mut revoked = self.revoked_serials()?;
            if !revoked.contains(&serial) {
                revoked.push(serial);
            }
            self.write_crl(&revoked)
        })
    }

    /// The serial numbers the revocation list holds.
    fn revoked_serials(&self) -> Result<Vec<Vec<u8>>, String> {
        let Ok(pem) = self.crl_pem() else {
            return Ok(Vec::new());
        };
        let der = pem_der(&pem, "X509 CRL")?;
        let (_, crl) = CertificateRevocationList::from_der(&der)
            .map_err(|e| format!("Could not read the revocation list: {e}"))?;
        Ok(crl
            .iter_revoked_certificates()
            .map(|r| r.raw_serial().to_vec())
            .collect())
    }

    fn is_revoked(&self, name: &str) -> Result<bool, String> {
        let Some(pem) = self.signed_pem(name) else {
            return Ok(false);
        };
        let der = pem_der(&pem, "CERTIFICATE")?;
        let Ok((_, cert)) = X509Certificate::from_der(&der) else {
            return Ok(false);
        };
        Ok(self
            .revoked_serials()?
            .contains(&cert.raw_serial().to_vec()))
    }

    /// Signs a revocation list of `serials` (call with the lock held).
    fn write_crl(&self, serials: &[Vec<u8>]) -> Result<(), String> {
        let issuer = self.issuer()?;
        let number = self.crl_number()? + 1;
        let params = CertificateRevocationListParams {
            this_update: date(today(-1)),
            next_update: date(today(CRL_DAYS)),
            crl_number: SerialNumber::from_slice(&number.to_be_bytes()),
            issuing_distribution_point: None,
            revoked_certs: serials
                .iter()
                .map(|s| RevokedCertParams {
                    serial_number: SerialNumber::from_slice(s),
                    revocation_time: date(today(-1)),
                    reason_code: None,
                    invalidity_date: None,
                })
                .collect(),
            key_identifier_method: KeyIdMethod::Sha256,
        };
        let crl = params
            .signed_by(&issuer)
            .map_err(|e| format!("Could not sign the revocation list: {e}"))?;
        let pem = crl
            .pem()
            .map_err(|e| format!("Could not write the revocation list: {e}"))?;
        write_file(&self.crl_path(), pem.as_bytes())
    }

    fn crl_number(&self) -> Result<u64, String> {
        let Ok(pem) = self.crl_pem() else {
            return Ok(0);
        };
        let der = pem_der(&pem, "X509 CRL")?;
        let Ok((_, crl)) = CertificateRevocationList::from_der(&der) else {
            return Ok(0);
        };
        Ok(crl
            .crl_number()
            .and_then(|n| u64::try_from(n.clone()).ok())
            .unwrap_or(0))
    }

    /// The requests and certificates, by name.
    pub fn list(&self) -> Result<Vec<Listed>, String> {
        let revoked = self.revoked_serials()?;
        let mut out = Vec::new();
        for (sub, kind) in [
            ("requests", "CERTIFICATE REQUEST"),
            ("signed", "CERTIFICATE"),
        ] {
            let Ok(entries) = std::fs::read_dir(self.dir.join(sub)) else {
                continue;
            };
            for e in entries.flatten() {
                let p = e.path();
                let Some(name) = p
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.strip_suffix(".pem"))
                else {
                    continue;
                };
                let Ok(der) = read_text(&p).and_then(|t| pem_der(&t, kind)) else {
                    continue;
                };
                let fingerprint = to_hex(&crate::digest::sha256(&der), ":").to_uppercase();
                let mut item = Listed {
                    name: name.to_string(),
                    state: "requested",
                    fingerprint,
                    serial: String::new(),
                    not_after: String::new(),
                };
                if sub == "signed" {
                    let Ok((_, cert)) = X509Certificate::from_der(&der) else {
                        continue;
                    };
                    item.serial = to_hex(cert.raw_serial(), "");
                    item.not_after = cert.validity().not_after.to_string();
                    item.state = if revoked.contains(&cert.raw_serial().to_vec()) {
                        "revoked"
                    } else {
                        "signed"
                    };
                }
                out.push(item);
            }
        }
        out.sort_by(|a, b| a.name.cmp(&b.name).then(a.state.cmp(b.state)));
        Ok(out)
    }

    /// Copies a puppetserver CA directory (`ca_crt.pem`, `ca_key.pem`, `ca_crl.pem`,
    /// `serial`, `inventory.txt`, `signed/`) into this one, so that agents enrolled with
    /// puppetserver keep their certificates. Refused when this directory already has a CA.
    pub fn import(&self, from: &Path) -> Result<usize, String> {
        if self.cert_path().exists() {
            return Err(format!(
                "{} already holds a CA; import into an empty directory",
                self.dir.display()
            ));
        }
        std::fs::create_dir_all(self.dir.join("signed"))
            .and_then(|_| std::fs::create_dir_all(self.dir.join("requests")))
            .map_err(|e| format!("Could not create {}: {e}", self.dir.display()))?;
        let key = read_text(&from.join("ca_key.pem"))?;
        load_key(&key)?;
        let cert = read_text(&from.join("ca_crt.pem"))?;
        // A bundle (puppetserver with an intermediate CA) starts with the signing CA.
        pem_der(&cert, "CERTIFICATE")?;
        write_private(&self.path("ca_key.pem"), key.as_bytes())?;
        write_file(&self.cert_path(), cert.as_bytes())?;
        for f in ["ca_crl.pem", "serial", "inventory.txt"] {
            if let Ok(t) = std::fs::read(from.join(f)) {
                write_file(&self.path(f), &t)?;
            }
        }
        if !self.path("serial").exists() {
            write_file(&self.path("serial"), b"0002\n")?;
        }
        let mut n = 0;
        if let Ok(entries) = std::fs::read_dir(from.join("signed")) {
            for e in entries.flatten() {
                let p = e.path();
                if p.extension().is_some_and(|x| x == "pem") {
                    let t = std::fs::read(&p)
                        .map_err(|e| format!("Could not read {}: {e}", p.display()))?;
                    write_file(&self.dir.join("signed").join(e.file_name()), &t)?;
                    n += 1;
                }
            }
        }
        self.locked(|| {
            if !self.crl_path().exists() {
                self.write_crl(&[])?;
            }
            Ok(())
        })?;
        Ok(n)
    }

    /// Signs the revocation list again (fresh dates, same revocations).
    pub fn refresh_crl(&self) -> Result<(), String> {
        self.locked(|| {
            let revoked = self.revoked_serials()?;
            self.write_crl(&revoked)
        })
    }
}

/// A request's subject name, key, alternative names and Puppet extensions.
struct Request {
    key: RequestKey,
    sans: Vec<SanType>,
    extensions: Vec<CustomExtension>,
}

/// Reads and checks a certificate request (DER): its common name and what to sign.
fn read_request(der: &[u8]) -> Result<(String, Request), String> {
    let (_, csr) = X509CertificationRequest::from_der(der)
        .map_err(|e| format!("Could not read the certificate request: {e}"))?;
    csr.verify_signature()
        .map_err(|_| "The certificate request's signature does not verify".to_string())?;
    let info = &csr.certification_request_info;
    let cn = info
        .subject
        .iter_common_name()
        .next()
        .and_then(|c| c.as_str().ok())
        .ok_or("The certificate request has no common name")?
        .to_string();
    let alg_oid: Vec<u64> = csr
        .signature_algorithm
        .algorithm
        .iter()
        .ok_or("Unknown signature algorithm in the certificate request")?
        .collect();
    let alg = SignatureAlgorithm::from_oid(&alg_oid)
        .map_err(|_| "Unsupported signature algorithm in the certificate request".to_string())?;
    let mut sans = Vec::new();
    let mut extensions = Vec::new();
    for ext in csr.requested_extensions().into_iter().flatten() {
        if let ParsedExtension::SubjectAlternativeName(san) = ext {
            for g in &san.general_names {
                match g {
                    GeneralName::DNSName(d) => sans.push(SanType::DnsName(
                        d.to_string()
                            .try_into()
                            .map_err(|e| format!("Bad DNS alternative name {d}: {e}"))?,
                    )),
                    GeneralName::IPAddress(b) => {
                        if let Some(ip) = ip_from(b) {
                            sans.push(SanType::IpAddress(ip));
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    // Puppet's own extensions (pp_*), copied as requested.
    if let Some(all) = csr
        .certification_request_info
        .iter_attributes()
        .find_map(|a| {
            if let ParsedCriAttribute::ExtensionRequest(r) = a.parsed_attribute() {
                Some(r)
            } else {
                None
            }
        })
    {
        for e in &all.extensions {
            let oid = e.oid.to_id_string();
            if oid.starts_with(PUPPET_ARC) {
                let parts: Vec<u64> = e.oid.iter().into_iter().flatten().collect();
                let mut c = CustomExtension::from_oid_content(&parts, e.value.to_vec());
                c.set_criticality(e.critical);
                extensions.push(c);
            }
        }
    }
    let raw = info.subject_pki.subject_public_key.data.to_vec();
    Ok((
        cn,
        Request {
            key: RequestKey { spki_key: raw, alg },
            sans,
            extensions,
        },
    ))
}

fn ip_from(b: &[u8]) -> Option<std::net::IpAddr> {
    match b.len() {
        4 => Some(std::net::IpAddr::from(<[u8; 4]>::try_from(b).ok()?)),
        16 => Some(std::net::IpAddr::from(<[u8; 16]>::try_from(b).ok()?)),
        _ => None,
    }
}

/// The certname and Puppet extensions of a client certificate (DER).
pub fn identity(der: &[u8]) -> Option<ClientIdentity> {
    let (_, cert) = X509Certificate::from_der(der).ok()?;
    let certname = cert
        .subject()
        .iter_common_name()
        .next()?
        .as_str()
        .ok()?
        .to_string();
    let mut extensions = Vec::new();
    for e in cert.extensions() {
        let oid = e.oid.to_id_string();
        if !oid.starts_with(PUPPET_ARC) {
            continue;
        }
        let name = PP_OIDS
            .iter()
            .find(|(o, _)| *o == oid)
            .map_or(oid.clone(), |(_, n)| n.to_string());
        extensions.push((name, extension_text(e.value)));
    }
    Some(ClientIdentity {
        certname,
        extensions,
    })
}

/// An extension's value as Puppet shows it: the string of a DER string, else the raw text.
fn extension_text(value: &[u8]) -> String {
    if let Ok((_, any)) = x509_parser::der_parser::asn1_rs::Any::from_der(value) {
        if let Ok(s) = std::str::from_utf8(any.data) {
            return s.to_string();
        }
    }
    String::from_utf8_lossy(value).into_owned()
}

/// A key from PEM: PKCS#8, or an RSA PKCS#1 key (puppetserver's `ca_key.pem`), wrapped
/// into PKCS#8 for ring.
pub fn load_key(pem: &str) -> Result<KeyPair, String> {
    if pem.contains("BEGIN RSA PRIVATE KEY") {
        let der = pem_der(pem, "RSA PRIVATE KEY")?;
        let pkcs8 = rsa_pkcs1_to_pkcs8(&der);
        let key = rustls::pki_types::PrivatePkcs8KeyDer::from(pkcs8);
        return KeyPair::from_pkcs8_der_and_sign_algo(&key, &rcgen::PKCS_RSA_SHA256)
            .map_err(|e| format!("Could not read the CA key: {e}"));
    }
    KeyPair::from_pem(pem).map_err(|e| format!("Could not read the CA key: {e}"))
}

/// PKCS#8 around an RSA PKCS#1 key: SEQUENCE { 0, { rsaEncryption, NULL }, OCTET STRING }.
fn rsa_pkcs1_to_pkcs8(pkcs1: &[u8]) -> Vec<u8> {
    fn tlv(tag: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![tag];
        let n = body.len();
        if n < 0x80 {
            v.push(n as u8);
        } else {
            let bytes: Vec<u8> = n
                .to_be_bytes()
                .iter()
                .copied()
                .skip_while(|b| *b == 0)
                .collect();
            v.push(0x80 | bytes.len() as u8);
            v.extend(bytes);
        }
        v.extend_from_slice(body);
        v
    }
    let alg = [
        0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    let mut body = vec![0x02, 0x01, 0x00];
    body.extend_from_slice(&alg);
    body.extend(tlv(0x04, pkcs1));
    tlv(0x30, &body)
}

/// The DER of the first PEM block of `label`.
pub fn pem_der(text: &str, label: &str) -> Result<Vec<u8>, String> {
    for pem in x509_parser::pem::Pem::iter_from_buffer(text.as_bytes()) {
        match pem {
            Ok(p) if p.label == label => return Ok(p.contents),
            Ok(_) => continue,
            Err(e) => return Err(format!("Bad PEM ({label}): {e}")),
        }
    }
    Err(format!("No {label} in the PEM text"))
}

/// Every PEM block of `label`, as DER.
pub fn pem_all(text: &str, label: &str) -> Vec<Vec<u8>> {
    x509_parser::pem::Pem::iter_from_buffer(text.as_bytes())
        .flatten()
        .filter(|p| p.label == label)
        .map(|p| p.contents)
        .collect()
}

fn read_text(p: &Path) -> Result<String, String> {
    std::fs::read_to_string(p).map_err(|e| format!("Could not read {}: {e}", p.display()))
}

/// Writes a file whole: a temporary file renamed over it.
pub fn write_file(p: &Path, data: &[u8]) -> Result<(), String> {
    write_mode(p, data, 0o644)
}

fn write_private(p: &Path, data: &[u8]) -> Result<(), String> {
    write_mode(p, data, 0o600)
}

fn write_mode(p: &Path, data: &[u8], mode: u32) -> Result<(), String> {
    use std::io::Write;
    use std::os::unix::fs::OpenOptionsExt;
    let tmp = p.with_extension(format!("tmp{}", std::process::id()));
    let written = std::fs::OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .mode(mode)
        .open(&tmp)
        .and_then(|mut f| f.write_all(data).and_then(|_| f.sync_all()))
        .and_then(|_| std::fs::rename(&tmp, p));
    written.map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("Could not write {}: {e}", p.display())
    })
}

fn append(p: &Path, data: &[u8]) -> Result<(), String> {
    use std::io::Write;
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(p)
        .and_then(|mut f| f.write_all(data))
        .map_err(|e| format!("Could not write {}: {e}", p.display()))
}

fn hex_bytes(s: &str) -> Option<Vec<u8>> {
    let s = if s.len() % 2 == 1 {
        format!("0{s}")
    } else {
        s.to_string()
    };
    if s.is_empty() {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&s[i..i + 2], 16).ok())
        .collect()
}

pub fn to_hex(b: &[u8], sep: &str) -> String {
    b.iter()
        .map(|x| format!("{x:02x}"))
        .collect::<Vec<_>>()
        .join(sep)
}

/// A big-endian number plus one (kept positive: a leading zero byte when the top bit is set).
fn increment(b: &[u8]) -> Vec<u8> {
    let mut v = b.to_vec();
    let mut i = v.len();
    loop {
        if i == 0 {
            v.insert(0, 1);
            break;
        }
        i -= 1;
        if v[i] == 0xff {
            v[i] = 0;
        } else {
            v[i] += 1;
            break;
        }
    }
    if v[0] & 0x80 != 0 {
        v.insert(0, 0);
    }
    v
}

/// Today plus `days` (UTC), as `YYYY-MM-DD`.
fn today(days: i32) -> jiff::civil::Date {
    let now = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date();
    now.checked_add(jiff::Span::new().days(days)).unwrap_or(now)
}

fn today_plus_years(years: i16) -> jiff::civil::Date {
    let now = today(0);
    now.checked_add(jiff::Span::new().years(years))
        .unwrap_or(now)
}

fn date(d: jiff::civil::Date) -> ::time::OffsetDateTime {
    rcgen::date_time_ymd(i32::from(d.year()), d.month() as u8, d.day() as u8)
}

/// From yesterday (clocks differ) to `years` from now.
fn validity(years: i16) -> (::time::OffsetDateTime, ::time::OffsetDateTime) {
    (date(today(-1)), date(today_plus_years(years)))
}

pub fn hostname() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*.example.com", "a.example.com"));
        assert!(!glob_match("*.example.com", "example.com"));
        assert!(glob_match("web?", "web1"));
        assert!(glob_match("*", "x"));
        assert!(!glob_match("web?", "web12"));
        let a = Autosign::parse("db1, *.web.test");
        assert!(a.allows("db1") && a.allows("x.web.test") && !a.allows("db2"));
        assert!(!Autosign::parse("off").allows("x") && Autosign::parse("all").allows("x"));
    }

    #[test]
    fn serials_count_up() {
        assert_eq!(increment(&[0x02]), vec![0x03]);
        assert_eq!(increment(&[0x7f]), vec![0x00, 0x80]);
        assert_eq!(increment(&[0x00, 0xff]), vec![0x01, 0x00]);
        assert_eq!(hex_bytes("0002"), Some(vec![0, 2]));
        assert_eq!(hex_bytes("a"), Some(vec![0x0a]));
    }
}
