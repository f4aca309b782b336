//! `networking` (hostname, domain, fqdn, interfaces with their bindings, the primary
//! interface's values), `dhcp_servers`, and the legacy per-interface facts
//! (`ipaddress_eth0`, `macaddress`, `mtu_lo`...).
//!
//! Addresses come from the kernel's routing netlink socket (what `getifaddrs(3)`, and so
//! Facter, reads), links from /sys/class/net, IPv6 flags from /proc/net/if_inet6, the
//! default route from /proc/net/route.

use super::util::{dir_names, read, run, which};
use super::Gather;
use serde_json::{json, Map, Value as Json};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// One address of an interface.
struct Addr {
    ip: IpAddr,
    prefix: u8,
    /// The interface name (the IPv4 label, `eth0:1` for an alias).
    name: String,
}

/// The addresses of this machine, in the kernel's order, from a netlink `RTM_GETADDR` dump.
fn addresses() -> std::io::Result<Vec<Addr>> {
    use rustix::net::{
        netlink::SocketAddrNetlink, recv, sendto, socket, AddressFamily, RecvFlags, SendFlags,
        SocketType,
    };
    const RTM_GETADDR: u16 = 22;
    const NLM_F_REQUEST: u16 = 1;
    const NLM_F_DUMP: u16 = 0x300;
    const NLMSG_ERROR: u16 = 2;
    const NLMSG_DONE: u16 = 3;
    const IFA_ADDRESS: u16 = 1;
    const IFA_LOCAL: u16 = 2;
    const IFA_LABEL: u16 = 3;

    let fd = socket(AddressFamily::NETLINK, SocketType::RAW, None)?;
    // nlmsghdr (16 bytes) + ifaddrmsg (8 bytes, family AF_UNSPEC: all families).
    let mut req = Vec::with_capacity(24);
    req.extend_from_slice(&24u32.to_ne_bytes());
    req.extend_from_slice(&RTM_GETADDR.to_ne_bytes());
    req.extend_from_slice(&(NLM_F_REQUEST | NLM_F_DUMP).to_ne_bytes());
    req.extend_from_slice(&1u32.to_ne_bytes());
    req.extend_from_slice(&0u32.to_ne_bytes());
    req.extend_from_slice(&[0u8; 8]);
    sendto(&fd, &req, SendFlags::empty(), &SocketAddrNetlink::new(0, 0))?;

    let names = index_names();
    let mut out = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let u16_at = |b: &[u8], i: usize| u16::from_ne_bytes([b[i], b[i + 1]]);
    let u32_at = |b: &[u8], i: usize| u32::from_ne_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
    loop {
        let (n, _) = recv(&fd, &mut buf[..], RecvFlags::empty())?;
        if n == 0 {
            return Ok(out);
        }
        let b = &buf[..n];
        let mut at = 0;
        while at + 16 <= b.len() {
            let len = u32_at(b, at) as usize;
            let kind = u16_at(b, at + 4);
            if len < 16 || at + len > b.len() {
                break;
            }
            match kind {
                NLMSG_DONE => return Ok(out),
                NLMSG_ERROR => {
                    return Err(std::io::Error::other("netlink refused the address dump"))
                }
                _ if len >= 24 => {
                    let msg = &b[at + 16..at + len];
                    let (family, prefix, index) = (msg[0], msg[1], u32_at(msg, 4));
                    let (mut address, mut local, mut label) = (None, None, None);
                    let mut a = 8;
                    while a + 4 <= msg.len() {
                        let alen = usize::from(u16_at(msg, a));
                        let atype = u16_at(msg, a + 2);
                        if alen < 4 || a + alen > msg.len() {
                            break;
                        }
                        let data = &msg[a + 4..a + alen];
                        match atype {
                            IFA_ADDRESS => address = Some(data.to_vec()),
                            IFA_LOCAL => local = Some(data.to_vec()),
                            IFA_LABEL => {
                                label = Some(
                                    String::from_utf8_lossy(data)
                                        .trim_end_matches('\0')
                                        .to_string(),
                                )
                            }
                            _ => {}
                        }
                        a += (alen + 3) & !3;
                    }
                    let ip = match (family, local.or(address)) {
                        (2, Some(d)) if d.len() == 4 => {
                            Some(IpAddr::V4(Ipv4Addr::new(d[0], d[1], d[2], d[3])))
                        }
                        (10, Some(d)) if d.len() == 16 => {
                            let mut o = [0u8; 16];
                            o.copy_from_slice(&d);
                            Some(IpAddr::V6(Ipv6Addr::from(o)))
                        }
                        _ => None,
                    };
                    let name = label.filter(|_| family == 2).or_else(|| {
                        names
                            .iter()
                            .find(|(i, _)| *i == index)
                            .map(|(_, n)| n.clone())
                    });
                    if let (Some(ip), Some(name)) = (ip, name) {
                        out.push(Addr { ip, prefix, name });
                    }
                }
                _ => {}
            }
            at += (len + 3) & !3;
        }
    }
}

/// The interfaces by index (from /sys/class/net), in index order.
fn index_names() -> Vec<(u32, String)> {
    let mut v: Vec<(u32, String)> = dir_names("/sys/class/net")
        .into_iter()
        .filter_map(|n| {
            let i = read(format!("/sys/class/net/{n}/ifindex"))?.parse().ok()?;
            Some((i, n))
        })
        .collect();
    v.sort();
    v
}

/// A binding as Facter builds it: address, netmask, network (and scope6 for IPv6).
fn binding(ip: IpAddr, prefix: u8) -> Map<String, Json> {
    let mut m = Map::new();
    m.insert("address".into(), json!(ip.to_string()));
    match ip {
        IpAddr::V4(a) => {
            let mask = if prefix == 0 {
                0
            } else {
                u32::MAX << (32 - u32::from(prefix.min(32)))
            };
            m.insert("netmask".into(), json!(Ipv4Addr::from(mask).to_string()));
            m.insert(
                "network".into(),
                json!(Ipv4Addr::from(u32::from(a) & mask).to_string()),
            );
        }
        IpAddr::V6(a) => {
            let mask = if prefix == 0 {
                0
            } else {
                u128::MAX << (128 - u32::from(prefix.min(128)))
            };
            m.insert("netmask".into(), json!(Ipv6Addr::from(mask).to_string()));
            m.insert(
                "network".into(),
                json!(Ipv6Addr::from(u128::from(a) & mask).to_string()),
            );
            m.insert("scope6".into(), json!(scope6(a)));
        }
    }
    m
}

/// Facter's scope of an IPv6 address.
fn scope6(a: Ipv6Addr) -> String {
    let s = a.segments();
    let compat = s[..6] == [0; 6] && !(s[6] == 0 && s[7] <= 1);
    let scope = if s[0] & 0xffc0 == 0xfe80 {
        "link"
    } else if s[0] & 0xffc0 == 0xfec0 {
        "site"
    } else if a == Ipv6Addr::LOCALHOST {
        "host"
    } else {
        "global"
    };
    if compat {
        format!("compat,{scope}")
    } else {
        scope.to_string()
    }
}

/// Addresses Facter passes over when it picks an interface's main address: loopback,
/// link-local, IPv6 unique-local.
fn ignored(ip: &IpAddr) -> bool {
    match ip {
        IpAddr::V4(a) => a.is_loopback() || (a.octets()[0] == 169 && a.octets()[1] == 254),
        IpAddr::V6(a) => {
            a.is_loopback()
                || a.segments()[0] & 0xffc0 == 0xfe80
                || a.segments()[0] & 0xfe00 == 0xfc00
        }
    }
}

/// The flags of each IPv6 address (/proc/net/if_inet6), by interface and address.
fn ipv6_flags() -> Vec<(String, Ipv6Addr, Vec<&'static str>)> {
    const FLAGS: [(&str, u32); 8] = [
        ("temporary", 0x01),
        ("noad", 0x02),
        ("optimistic", 0x04),
        ("dadfailed", 0x08),
        ("homeaddress", 0x10),
        ("deprecated", 0x20),
        ("tentative", 0x40),
        ("permanent", 0x80),
    ];
    let text = std::fs::read_to_string("/proc/net/if_inet6").unwrap_or_default();
    text.lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            if f.len() != 6 {
                return None;
            }
            let ip = Ipv6Addr::from(u128::from_str_radix(f[0], 16).ok()?);
            let bits = u32::from_str_radix(f[4], 16).ok()?;
            let names = FLAGS
                .iter()
                .filter(|(_, b)| bits & b != 0)
                .map(|(n, _)| *n)
                .collect();
            Some((f[5].to_string(), ip, names))
        })
        .collect()
}

/// The interface of the default route (/proc/net/route).
fn default_route_interface() -> Option<String> {
    let text = std::fs::read_to_string("/proc/net/route").ok()?;
    text.lines().skip(1).find_map(|l| {
        let f: Vec<&str> = l.trim().split('\t').map(str::trim).collect();
        (f.len() > 7 && f[1] == "00000000" && f[7] == "00000000" && f[0] != "*")
            .then(|| f[0].to_string())
    })
}

/// The DHCP server of an interface, from the lease files Facter reads (systemd-networkd,
/// dhclient, NetworkManager) or `dhcpcd -U`.
fn dhcp(name: &str, index: Option<u32>) -> Option<String> {
    if let Some(i) = index {
        if let Some(t) = read(format!("/run/systemd/netif/leases/{i}")) {
            if let Some(l) = t.lines().find_map(|l| l.strip_prefix("SERVER_ADDRESS=")) {
                return Some(l.to_string());
            }
        }
    }
    for dir in [
        "/var/lib/dhclient/",
        "/var/lib/dhcp/",
        "/var/lib/dhcp3/",
        "/var/lib/NetworkManager/",
        "/var/db/",
    ] {
        for f in dir_names(dir) {
            if !(f.contains("dhclient") && f.contains(".lease")) {
                continue;
            }
            let Some(t) = read(format!("{dir}{f}")) else {
                continue;
            };
            if !t
                .lines()
                .any(|l| l.contains("interface") && l.contains(name))
            {
                continue;
            }
            if let Some(v) = t.split("dhcp-server-identifier ").nth(1) {
                let ip: String = v
                    .chars()
                    .take_while(|c| c.is_ascii_digit() || *c == '.')
                    .collect();
                if !ip.is_empty() {
                    return Some(ip);
                }
            }
        }
    }
    for f in dir_names("/var/lib/NetworkManager/") {
        if f.contains("internal") && f.ends_with(&format!("{name}.lease")) {
            if let Some(t) = read(format!("/var/lib/NetworkManager/{f}")) {
                if let Some(v) = t.lines().find_map(|l| l.strip_prefix("SERVER_ADDRESS=")) {
                    return Some(v.to_string());
                }
            }
        }
    }
    let dhcpcd = which("dhcpcd")?;
    let out = run(&dhcpcd.to_string_lossy(), &["-U", name])?;
    let v = out.split("dhcp_server_identifier='").nth(1)?;
    Some(v.split('\'').next()?.to_string())
}

/// Hostname, domain and FQDN as Facter finds them: the kernel's host name; the FQDN the
/// resolver's canonical name for it (here from /etc/hosts); else the domain of
/// /etc/resolv.conf.
fn names() -> (String, Option<String>, Option<String>) {
    let full = read("/proc/sys/kernel/hostname").unwrap_or_default();
    let (hostname, mut domain) = match full.split_once('.') {
        Some((h, d)) if !d.is_empty() => (h.to_string(), d.to_string()),
        _ => (full.clone(), String::new()),
    };
    let mut fqdn = None;
    if domain.is_empty() && !hostname.is_empty() {
        // The canonical name is the first name on the first /etc/hosts line naming the host.
        let hosts = std::fs::read_to_string("/etc/hosts").unwrap_or_default();
        let canonical = hosts.lines().find_map(|l| {
            let l = l.split('#').next().unwrap_or("");
            let mut f = l.split_whitespace();
            f.next()?;
            let names: Vec<&str> = f.collect();
            names
                .contains(&hostname.as_str())
                .then(|| names[0].to_string())
        });
        if let Some(c) = canonical.filter(|c| *c != hostname) {
            if let Some(d) = c.strip_prefix(&format!("{hostname}.")) {
                domain = d.to_string();
            }
            fqdn = Some(c);
        }
    }
    if domain.is_empty() {
        let resolv = std::fs::read_to_string("/etc/resolv.conf").unwrap_or_default();
        let word = |key: &str| {
            resolv.lines().find_map(|l| {
                let rest = l.strip_prefix(key)?;
                rest.starts_with([' ', '\t'])
                    .then(|| rest.split_whitespace().next().map(String::from))
                    .flatten()
            })
        };
        domain = word("domain")
            .or_else(|| word("search"))
            .unwrap_or_default();
    }
    let fqdn = fqdn.or_else(|| {
        (!hostname.is_empty()).then(|| {
            if domain.is_empty() {
                hostname.clone()
            } else {
                format!("{hostname}.{domain}")
            }
        })
    });
    (hostname, (!domain.is_empty()).then_some(domain), fqdn)
}

pub fn gather(g: &mut Gather) {
    let (hostname, domain, fqdn) = names();
    let mut networking = Map::new();
    if let Some(d) = &domain {
        networking.insert("domain".into(), json!(d));
        g.legacy("domain", json!(d));
    }
    if let Some(f) = &fqdn {
        networking.insert("fqdn".into(), json!(f));
        g.legacy("fqdn", json!(f));
    }
    if !hostname.is_empty() {
        networking.insert("hostname".into(), json!(hostname));
        g.legacy("hostname", json!(hostname));
    }

    let links = index_names();
    let addrs = match addresses() {
        Ok(a) => a,
        Err(e) => {
            g.warn("networking.interfaces", format!("reading addresses: {e}"));
            Vec::new()
        }
    };
    // Interfaces in the kernel's order: the links, then address labels (aliases).
    let mut order: Vec<String> = links.iter().map(|(_, n)| n.clone()).collect();
    for a in &addrs {
        if !order.contains(&a.name) {
            order.push(a.name.clone());
        }
    }
    let flags = ipv6_flags();
    let mut interfaces: Vec<(String, Map<String, Json>)> = Vec::new();
    for name in &order {
        let mut i = Map::new();
        let index = links.iter().find(|(_, n)| n == name).map(|(i, _)| *i);
        let mut b4 = Vec::new();
        let mut b6 = Vec::new();
        for a in addrs.iter().filter(|a| &a.name == name) {
            let mut b = binding(a.ip, a.prefix);
            match a.ip {
                IpAddr::V4(_) => b4.push((a.ip, b)),
                IpAddr::V6(v6) => {
                    if let Some((_, _, f)) = flags.iter().find(|(n, ip, _)| n == name && *ip == v6)
                    {
                        b.insert("flags".into(), json!(f));
                    }
                    b6.push((a.ip, b))
                }
            }
        }
        for (key, bindings, suffix) in [("bindings", &b4, ""), ("bindings6", &b6, "6")] {
            if bindings.is_empty() {
                continue;
            }
            let main = bindings
                .iter()
                .find(|(ip, _)| !ignored(ip))
                .unwrap_or(&bindings[0]);
            i.insert(format!("ip{suffix}"), main.1["address"].clone());
            i.insert(format!("netmask{suffix}"), main.1["netmask"].clone());
            i.insert(format!("network{suffix}"), main.1["network"].clone());
            if suffix == "6" {
                i.insert("scope6".into(), main.1["scope6"].clone());
            }
            i.insert(
                key.into(),
                Json::Array(
                    bindings
                        .iter()
                        .map(|(_, b)| Json::Object(b.clone()))
                        .collect(),
                ),
            );
        }
        if let Some(mac) = read(format!("/sys/class/net/{name}/address")).filter(|m| valid_mac(m)) {
            i.insert("mac".into(), json!(mac));
        }
        if let Some(mtu) =
            read(format!("/sys/class/net/{name}/mtu")).and_then(|m| m.parse::<u64>().ok())
        {
            i.insert("mtu".into(), json!(mtu));
        }
        if let Some(d) = dhcp(name, index) {
            i.insert("dhcp".into(), json!(d));
        }
        interfaces.push((name.clone(), i));
    }

    let primary = default_route_interface()
        .filter(|p| interfaces.iter().any(|(n, _)| n == p))
        .or_else(|| {
            interfaces.iter().find_map(|(n, i)| {
                let any = |k: &str| {
                    i.get(k).and_then(Json::as_array).is_some_and(|bs| {
                        bs.iter().any(|b| {
                            b["address"]
                                .as_str()
                                .and_then(|s| s.parse::<IpAddr>().ok())
                                .is_some_and(|ip| !ignored(&ip))
                        })
                    })
                };
                (any("bindings") || any("bindings6")).then(|| n.clone())
            })
        });

    // The legacy per-interface facts.
    let names: Vec<&str> = interfaces.iter().map(|(n, _)| n.as_str()).collect();
    if !interfaces.is_empty() {
        let mut sorted_names = names.clone();
        sorted_names.sort();
        g.legacy("interfaces", json!(sorted_names.join(",")));
    }
    for (name, i) in &interfaces {
        for (key, fact) in [
            ("ip", "ipaddress"),
            ("ip6", "ipaddress6"),
            ("mac", "macaddress"),
            ("mtu", "mtu"),
            ("netmask", "netmask"),
            ("netmask6", "netmask6"),
            ("network", "network"),
            ("network6", "network6"),
            ("scope6", "scope6"),
        ] {
            if let Some(v) = i.get(key) {
                g.legacy(&format!("{fact}_{name}"), v.clone());
            }
        }
    }

    let mut dhcp_servers = Map::new();
    if !interfaces.is_empty() {
        let primary_dhcp = primary
            .as_ref()
            .and_then(|p| interfaces.iter().find(|(n, _)| n == p))
            .and_then(|(_, i)| i.get("dhcp").cloned())
            .unwrap_or(Json::Null);
        dhcp_servers.insert("system".into(), primary_dhcp);
        for (n, i) in &interfaces {
            if let Some(d) = i.get("dhcp") {
                dhcp_servers.insert(n.clone(), d.clone());
            }
        }
        g.legacy("dhcp_servers", Json::Object(dhcp_servers));
    }

    if let Some(p) = &primary {
        if let Some((_, i)) = interfaces.iter().find(|(n, _)| n == p) {
            for (k, v) in i {
                if k != "bindings" && k != "bindings6" {
                    networking.insert(k.clone(), v.clone());
                }
            }
        }
        networking.insert("primary".into(), json!(p));
    }
    for (key, fact) in [
        ("ip", "ipaddress"),
        ("ip6", "ipaddress6"),
        ("mac", "macaddress"),
        ("netmask", "netmask"),
        ("netmask6", "netmask6"),
        ("network", "network"),
        ("network6", "network6"),
        ("scope6", "scope6"),
    ] {
        if let Some(v) = networking.get(key) {
            g.legacy(fact, v.clone());
        }
    }
    if !interfaces.is_empty() {
        networking.insert(
            "interfaces".into(),
            Json::Object(
                interfaces
                    .into_iter()
                    .map(|(n, i)| (n, Json::Object(i)))
                    .collect(),
            ),
        );
    }
    g.core("networking", Json::Object(networking));
}

/// A MAC address Facter keeps: 6 to 20 hex pairs, not all zero.
fn valid_mac(m: &str) -> bool {
    let parts: Vec<&str> = m.split([':', '-']).collect();
    (6..=20).contains(&parts.len())
        && parts
            .iter()
            .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
        && parts.iter().any(|p| *p != "00")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bindings_as_facter() {
        let b = binding("192.0.2.2".parse().unwrap(), 24);
        assert_eq!(b["netmask"], "255.255.255.0");
        assert_eq!(b["network"], "192.0.2.0");
        let b = binding("fe80::fc:ff:fe00:1".parse().unwrap(), 64);
        assert_eq!(b["netmask"], "ffff:ffff:ffff:ffff::");
        assert_eq!(b["network"], "fe80::");
        assert_eq!(b["scope6"], "link");
        assert_eq!(scope6("::1".parse().unwrap()), "host");
        assert_eq!(scope6("::10.0.0.1".parse().unwrap()), "compat,global");
        assert!(ignored(&"fd00::2".parse().unwrap()));
        assert!(!ignored(&"2001:db8::1".parse().unwrap()));
        assert!(valid_mac("02:fc:00:00:00:01"));
        assert!(!valid_mac("00:00:00:00:00:00"));
    }
}
