//! `processors`, `memory`, `disks`, `partitions`, `mountpoints`, `filesystems`, `dmi`,
//! `virtual`, `is_virtual`, `hypervisors`, and their legacy names.

use super::util::{bytes_human, dir_names, hertz_human, mb, percent, read, run, which};
use super::{obj, Gather};
use serde_json::{json, Map, Value as Json};

pub fn gather(g: &mut Gather) {
    processors(g);
    memory(g);
    let mounts = mountpoints(g);
    disks(g);
    partitions(g, &mounts);
    filesystems(g);
    let dmi = dmi(g);
    virtualization(g, &dmi);
}

fn processors(g: &mut Gather) {
    let cpuinfo = match std::fs::read_to_string("/proc/cpuinfo") {
        Ok(t) => t,
        Err(e) => return g.warn("processors", format!("/proc/cpuinfo: {e}")),
    };
    let (mut count, mut models, mut physical, mut speed) = (0u64, Vec::new(), Vec::new(), 0u64);
    for line in cpuinfo.lines() {
        let Some((k, v)) = line.split_once(':') else {
            if line.trim() == "processor" {
                count += 1;
            }
            continue;
        };
        let (k, v) = (k.trim(), v.trim());
        match k {
            "processor" => count += 1,
            "model name" | "cpu" => models.push(v.to_string()),
            "physical id" => physical.push(v.parse::<i64>().unwrap_or(0)),
            "cpu MHz" | "clock" => {
                let digits: String = v.chars().take_while(char::is_ascii_digit).collect();
                speed = digits.parse::<u64>().unwrap_or(0) * 1_000_000;
            }
            _ => {}
        }
    }
    physical.sort();
    physical.dedup();
    let mut physicalcount = physical.len();
    if physicalcount == 0 {
        let mut ids: Vec<String> = dir_names("/sys/devices/system/cpu")
            .into_iter()
            .filter(|d| {
                d.strip_prefix("cpu")
                    .is_some_and(|n| !n.is_empty() && n.chars().all(|c| c.is_ascii_digit()))
            })
            .filter_map(|d| {
                read(format!(
                    "/sys/devices/system/cpu/{d}/topology/physical_package_id"
                ))
            })
            .collect();
        ids.sort();
        ids.dedup();
        physicalcount = ids.len();
    }
    // Cores per socket and threads per core, as lscpu counts them (from the topology).
    let (cores, threads) = topology();
    let isa = g.isa.clone();
    let value = obj(vec![
        ("cores", cores.map(Json::from)),
        ("count", Some(json!(count))),
        ("isa", Some(json!(isa))),
        ("models", Some(json!(models))),
        ("physicalcount", Some(json!(physicalcount))),
        ("speed", hertz_human(speed).map(Json::from)),
        ("threads", threads.map(Json::from)),
    ]);
    g.core("processors", value);
    g.legacy("processorcount", json!(count));
    g.legacy("physicalprocessorcount", json!(physicalcount));
    g.legacy("hardwareisa", json!(isa));
    for (i, m) in models.iter().enumerate() {
        g.legacy(&format!("processor{i}"), json!(m));
    }
}

/// Cores per socket and threads per core of the online CPUs (sysfs topology).
fn topology() -> (Option<u64>, Option<u64>) {
    let mut cpus = Vec::new();
    for d in dir_names("/sys/devices/system/cpu") {
        let Some(n) = d.strip_prefix("cpu") else {
            continue;
        };
        if n.is_empty() || !n.chars().all(|c| c.is_ascii_digit()) {
            continue;
        }
        let t = format!("/sys/devices/system/cpu/{d}/topology");
        let (Some(pkg), Some(core)) = (
            read(format!("{t}/physical_package_id")),
            read(format!("{t}/core_id")),
        ) else {
            continue;
        };
        cpus.push((pkg, core));
    }
    if cpus.is_empty() {
        return (None, None);
    }
    let mut cores = cpus.clone();
    cores.sort();
    cores.dedup();
    let mut sockets: Vec<&String> = cpus.iter().map(|(p, _)| p).collect();
    sockets.sort();
    sockets.dedup();
    let threads = cpus.len() / cores.len().max(1);
    let per_socket = cores.len() / sockets.len().max(1);
    (Some(per_socket as u64), Some(threads as u64))
}

fn memory(g: &mut Gather) {
    let text = match std::fs::read_to_string("/proc/meminfo") {
        Ok(t) => t,
        Err(e) => return g.warn("memory", format!("/proc/meminfo: {e}")),
    };
    let kb = |key: &str| -> Option<u64> {
        text.lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .and_then(|v| v.split_whitespace().next()?.parse::<u64>().ok())
            .map(|v| v * 1024)
    };
    let Some(total) = kb("MemTotal") else {
        return g.warn("memory", "no MemTotal in /proc/meminfo");
    };
    let available = kb("MemAvailable").unwrap_or_else(|| {
        kb("MemFree").unwrap_or(0) + kb("Buffers").unwrap_or(0) + kb("Cached").unwrap_or(0)
    });
    let block = |total: u64, free: u64| {
        let used = total.saturating_sub(free);
        json!({
            "available": bytes_human(free),
            "available_bytes": free,
            "capacity": percent(used, total),
            "total": bytes_human(total),
            "total_bytes": total,
            "used": bytes_human(used),
            "used_bytes": used,
        })
    };
    let mut m = Map::new();
    let swap_total = kb("SwapTotal").unwrap_or(0);
    if swap_total > 0 {
        let swap_free = kb("SwapFree").unwrap_or(0);
        m.insert("swap".into(), block(swap_total, swap_free));
        g.legacy("swapfree", json!(bytes_human(swap_free)));
        g.legacy("swapfree_mb", json!(mb(swap_free)));
        g.legacy("swapsize", json!(bytes_human(swap_total)));
        g.legacy("swapsize_mb", json!(mb(swap_total)));
    }
    m.insert("system".into(), block(total, available));
    g.core("memory", Json::Object(m));
    g.legacy("memoryfree", json!(bytes_human(available)));
    g.legacy("memoryfree_mb", json!(mb(available)));
    g.legacy("memorysize", json!(bytes_human(total)));
    g.legacy("memorysize_mb", json!(mb(total)));
}

/// A mount: device, filesystem, path, options.
pub struct Mount {
    device: String,
    path: String,
}

/// `/proc/mounts` fields unescaped (`\040` is a space).
fn unescape(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\'
            && i + 3 < b.len()
            && b[i + 1..i + 4].iter().all(|c| (b'0'..=b'7').contains(c))
        {
            out.push((b[i + 1] - b'0') * 64 + (b[i + 2] - b'0') * 8 + (b[i + 3] - b'0'));
            i += 4;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn mountpoints(g: &mut Gather) -> Vec<Mount> {
    let text = match std::fs::read_to_string("/proc/mounts") {
        Ok(t) => t,
        Err(e) => {
            g.warn("mountpoints", format!("/proc/mounts: {e}"));
            return Vec::new();
        }
    };
    let root_device = || {
        let cmdline = read("/proc/cmdline").unwrap_or_default();
        cmdline
            .split_whitespace()
            .find_map(|w| w.strip_prefix("root="))
            .map(String::from)
    };
    let mut fact = Map::new();
    let mut mounts = Vec::new();
    for line in text.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 4 {
            continue;
        }
        let mut device = unescape(f[0]);
        let path = unescape(f[1]);
        let fstype = unescape(f[2]);
        if ((path.starts_with("/proc") || path.starts_with("/sys")) && fstype != "tmpfs")
            || fstype == "autofs"
        {
            continue;
        }
        if device == "/dev/root" {
            device = root_device().unwrap_or(device);
        }
        let (size, avail, used) = match rustix::fs::statvfs(path.as_str()) {
            Ok(s) => {
                let frag = s.f_frsize;
                let size = s.f_blocks * frag;
                (size, s.f_bavail * frag, size - s.f_bfree * frag)
            }
            Err(_) => (0, 0, 0),
        };
        let total = used + avail;
        let capacity = if used == total {
            "100%".to_string()
        } else if used > 0 {
            percent(used, total)
        } else {
            "0%".to_string()
        };
        let options: Vec<String> = f[3].split(',').map(|o| o.trim().to_string()).collect();
        fact.insert(
            path.clone(),
            json!({
                "available": bytes_human(avail),
                "available_bytes": avail,
                "capacity": capacity,
                "device": device,
                "filesystem": fstype,
                "options": options,
                "size": bytes_human(size),
                "size_bytes": size,
                "used": bytes_human(used),
                "used_bytes": used,
            }),
        );
        mounts.push(Mount { device, path });
    }
    g.core("mountpoints", Json::Object(fact));
    mounts
}

/// A udev property of a block device (`/run/udev/data/bMAJ:MIN`).
fn udev_property(disk: &str, key: &str) -> Option<String> {
    let dev = read(format!("/sys/block/{disk}/dev"))?;
    let text = read(format!("/run/udev/data/b{dev}"))?;
    text.lines()
        .find_map(|l| l.strip_prefix("E:")?.strip_prefix(key)?.strip_prefix('='))
        .map(String::from)
}

fn disks(g: &mut Gather) {
    let mut fact = Map::new();
    for disk in dir_names("/sys/block") {
        let base = format!("/sys/block/{disk}");
        if std::fs::metadata(format!("{base}/device")).is_err() {
            continue;
        }
        let nonempty = |v: Option<String>| v.filter(|s| !s.is_empty());
        let size = read(format!("{base}/size"))
            .and_then(|s| s.parse::<u64>().ok())
            .map(|s| s * 512);
        let serial = nonempty(udev_property(&disk, "ID_SERIAL_SHORT"))
            .or_else(|| nonempty(read(format!("{base}/device/serial"))));
        let wwn = nonempty(udev_property(&disk, "ID_WWN_WITH_EXTENSION"))
            .or_else(|| nonempty(udev_property(&disk, "ID_WWN")));
        let d = obj(vec![
            (
                "model",
                nonempty(read(format!("{base}/device/model"))).map(Json::from),
            ),
            ("serial", serial.map(Json::from)),
            ("size", size.map(|s| json!(bytes_human(s)))),
            ("size_bytes", size.map(Json::from)),
            (
                "type",
                read(format!("{base}/queue/rotational"))
                    .map(|r| json!(if r == "0" { "ssd" } else { "hdd" })),
            ),
            (
                "vendor",
                nonempty(read(format!("{base}/device/vendor"))).map(Json::from),
            ),
            ("wwn", wwn.map(Json::from)),
        ]);
        for (key, suffix) in [
            ("model", "model"),
            ("size_bytes", "size"),
            ("vendor", "vendor"),
        ] {
            if let Some(v) = d.get(key) {
                g.legacy(&format!("blockdevice_{disk}_{suffix}"), v.clone());
            }
        }
        fact.insert(disk, d);
    }
    if !fact.is_empty() {
        let names: Vec<&str> = fact.keys().map(String::as_str).collect();
        g.legacy("blockdevices", json!(names.join(",")));
        g.core("disks", Json::Object(fact));
    }
}

/// `blkid` output: device -> its `KEY="value"` pairs.
fn blkid() -> Vec<(String, Vec<(String, String)>)> {
    let Some(tool) = which("blkid") else {
        return Vec::new();
    };
    let out = run(&tool.to_string_lossy(), &[]).unwrap_or_default();
    out.lines()
        .filter_map(|l| {
            let (dev, rest) = l.split_once(": ")?;
            let mut pairs = Vec::new();
            let mut s = rest.trim();
            while let Some(eq) = s.find("=\"") {
                let key = s[..eq].trim().to_string();
                let after = &s[eq + 2..];
                let end = after.find('"').unwrap_or(after.len());
                pairs.push((key, after[..end].to_string()));
                s = after.get(end + 1..).unwrap_or("");
            }
            Some((dev.to_string(), pairs))
        })
        .collect()
}

fn partitions(g: &mut Gather, mounts: &[Mount]) {
    let mut parts: Vec<(String, String, Option<String>)> = Vec::new();
    for dev in dir_names("/sys/block") {
        let base = format!("/sys/block/{dev}");
        if std::path::Path::new(&format!("{base}/device")).is_dir() {
            for sub in dir_names(&base) {
                if sub.starts_with(&dev) && std::path::Path::new(&format!("{base}/{sub}")).is_dir()
                {
                    parts.push((format!("/dev/{sub}"), format!("{base}/{sub}"), None));
                }
            }
        } else if std::path::Path::new(&format!("{base}/dm")).is_dir() {
            let name = read(format!("{base}/dm/name")).unwrap_or_default();
            let n = if name.is_empty() {
                format!("/dev/{dev}")
            } else {
                format!("/dev/mapper/{name}")
            };
            parts.push((n, base, None));
        } else if std::path::Path::new(&format!("{base}/loop")).is_dir() {
            let backing = read(format!("{base}/loop/backing_file")).filter(|b| !b.is_empty());
            parts.push((format!("/dev/{dev}"), base, backing));
        }
    }
    if parts.is_empty() {
        return;
    }
    let ids = blkid();
    let mut fact = Map::new();
    for (name, path, backing) in parts {
        let size = read(format!("{path}/size"))
            .and_then(|s| s.parse::<u64>().ok())
            .unwrap_or(0)
            * 512;
        let info = ids
            .iter()
            .find(|(d, _)| *d == name)
            .map(|(_, p)| p.clone())
            .unwrap_or_default();
        let get = |k: &str| info.iter().find(|(ik, _)| ik == k).map(|(_, v)| json!(v));
        let mount = mounts
            .iter()
            .find(|m| m.device == name)
            .map(|m| json!(m.path));
        fact.insert(
            name,
            obj(vec![
                ("backing_file", backing.map(Json::from)),
                ("filesystem", get("TYPE")),
                ("label", get("LABEL")),
                ("mount", mount),
                ("partlabel", get("PARTLABEL")),
                ("partuuid", get("PARTUUID")),
                ("size", Some(json!(bytes_human(size)))),
                ("size_bytes", Some(json!(size))),
                ("uuid", get("UUID")),
            ]),
        );
    }
    g.core("partitions", Json::Object(fact));
}

fn filesystems(g: &mut Gather) {
    let text = match std::fs::read_to_string("/proc/filesystems") {
        Ok(t) => t,
        Err(e) => return g.warn("filesystems", format!("/proc/filesystems: {e}")),
    };
    let mut v: Vec<&str> = text
        .lines()
        .filter_map(|l| {
            let t: Vec<&str> = l.split_whitespace().collect();
            (t.len() == 1 && t[0] != "fuseblk").then_some(t[0])
        })
        .collect();
    v.sort();
    g.core("filesystems", json!(v.join(",")));
}

/// The DMI strings of /sys/class/dmi/id.
pub struct Dmi {
    bios_vendor: Option<String>,
    product_name: Option<String>,
    sys_vendor: Option<String>,
}

fn dmi(g: &mut Gather) -> Dmi {
    let id = |f: &str| read(format!("/sys/class/dmi/id/{f}")).filter(|s| !s.is_empty());
    let chassis = id("chassis_type")
        .and_then(|t| t.parse::<usize>().ok())
        .map(chassis_name);
    let fact = obj(vec![
        (
            "bios",
            Some(obj(vec![
                ("release_date", id("bios_date").map(Json::from)),
                ("vendor", id("bios_vendor").map(Json::from)),
                ("version", id("bios_version").map(Json::from)),
            ])),
        ),
        (
            "board",
            Some(obj(vec![
                ("asset_tag", id("board_asset_tag").map(Json::from)),
                ("manufacturer", id("board_vendor").map(Json::from)),
                ("product", id("board_name").map(Json::from)),
                ("serial_number", id("board_serial").map(Json::from)),
            ])),
        ),
        (
            "chassis",
            Some(obj(vec![
                ("asset_tag", id("chassis_asset_tag").map(Json::from)),
                ("type", chassis.map(Json::from)),
            ])),
        ),
        ("manufacturer", id("sys_vendor").map(Json::from)),
        (
            "product",
            Some(obj(vec![
                ("name", id("product_name").map(Json::from)),
                ("serial_number", id("product_serial").map(Json::from)),
                ("uuid", id("product_uuid").map(Json::from)),
            ])),
        ),
    ]);
    // Empty groups are no facts.
    let fact: Map<String, Json> = fact
        .as_object()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|(_, v)| !v.as_object().is_some_and(Map::is_empty))
        .collect();
    for (path, legacy) in [
        ("/bios/release_date", "bios_release_date"),
        ("/bios/vendor", "bios_vendor"),
        ("/bios/version", "bios_version"),
        ("/board/asset_tag", "boardassettag"),
        ("/board/manufacturer", "boardmanufacturer"),
        ("/board/product", "boardproductname"),
        ("/board/serial_number", "boardserialnumber"),
        ("/chassis/asset_tag", "chassisassettag"),
        ("/chassis/type", "chassistype"),
        ("/manufacturer", "manufacturer"),
        ("/product/name", "productname"),
        ("/product/serial_number", "serialnumber"),
        ("/product/uuid", "uuid"),
    ] {
        if let Some(v) = Json::Object(fact.clone()).pointer(path) {
            g.legacy(legacy, v.clone());
        }
    }
    if !fact.is_empty() {
        g.core("dmi", Json::Object(fact));
    }
    Dmi {
        bios_vendor: id("bios_vendor"),
        product_name: id("product_name"),
        sys_vendor: id("sys_vendor"),
    }
}

/// The SMBIOS chassis type names Facter uses.
fn chassis_name(t: usize) -> String {
    const NAMES: [&str; 37] = [
        "Other",
        "Unknown",
        "Desktop",
        "Low Profile Desktop",
        "Pizza Box",
        "Mini Tower",
        "Tower",
        "Portable",
        "Laptop",
        "Notebook",
        "Hand Held",
        "Docking Station",
        "All in One",
        "Sub Notebook",
        "Space-Saving",
        "Lunch Box",
        "Main System Chassis",
        "Expansion Chassis",
        "SubChassis",
        "Bus Expansion Chassis",
        "Peripheral Chassis",
        "Storage Chassis",
        "Rack Mount Chassis",
        "Sealed-Case PC",
        "Multi-system",
        "CompactPCI",
        "AdvancedTCA",
        "Blade",
        "Blade Enclosure",
        "Tablet",
        "Convertible",
        "Detachable",
        "IoT Gateway",
        "Embedded PC",
        "Mini PC",
        "Stick PC",
        "Unknown",
    ];
    NAMES
        .get(t.wrapping_sub(1))
        .unwrap_or(&"Unknown")
        .to_string()
}

/// A container this process runs in: `docker`, `lxc` or `systemd_nspawn`, with details.
fn container() -> Option<(String, Json)> {
    let cgroup = read("/proc/1/cgroup").unwrap_or_default();
    // PID 1's environment may be unreadable even to root (a sandbox): then what the
    // cgroups and the marker files say.
    let environ = match std::fs::read("/proc/1/environ") {
        Ok(b) => String::from_utf8_lossy(&b).replace('\0', "\n"),
        Err(_) => read("/run/systemd/container")
            .map(|c| format!("container={c}"))
            .unwrap_or_default(),
    };
    if let Some(i) = cgroup.find("docker/") {
        let id = cgroup[i + 7..].lines().next().unwrap_or("").to_string();
        return Some(("docker".into(), json!({"id": id})));
    }
    let lxc = cgroup.lines().find_map(|l| {
        let path = l.splitn(3, ':').nth(2)?;
        path.strip_prefix("/lxc/")
            .map(|r| r.split('/').next().unwrap_or("").to_string())
    });
    if let Some(name) = lxc {
        return Some(("lxc".into(), json!({"name": name})));
    }
    if environ.lines().any(|l| l == "container=lxc") {
        return Some(("lxc".into(), json!({})));
    }
    if environ.lines().any(|l| l == "container=systemd-nspawn") {
        let id = read("/etc/machine-id").map_or(json!({}), |i| json!({"id": i}));
        return Some(("systemd_nspawn".into(), id));
    }
    None
}

/// `virtual`, `is_virtual`, `hypervisors`: containers first, then what DMI, the CPU and
/// the kernel say of a hypervisor (what `virt-what` looks at, without running it).
fn virtualization(g: &mut Gather, dmi: &Dmi) {
    const BY_PRODUCT: [(&str, &str); 11] = [
        ("VMware", "vmware"),
        ("VirtualBox", "virtualbox"),
        ("Parallels", "parallels"),
        ("KVM", "kvm"),
        ("Virtual Machine", "hyperv"),
        ("RHEV Hypervisor", "rhev"),
        ("oVirt Node", "ovirt"),
        ("HVM domU", "xenhvm"),
        ("Bochs", "bochs"),
        ("OpenBSD", "vmm"),
        ("BHYVE", "bhyve"),
    ];
    let cpu_flags = std::fs::read_to_string("/proc/cpuinfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("flags").map(String::from))
        .unwrap_or_default();
    let hypervisor_flag = cpu_flags.split_whitespace().any(|f| f == "hypervisor");
    let clocksources = read("/sys/devices/system/clocksource/clocksource0/available_clocksource")
        .unwrap_or_default();
    let xen_type = read("/sys/hypervisor/type");
    let product = dmi.product_name.clone().unwrap_or_default();
    let bios = dmi.bios_vendor.clone().unwrap_or_default();
    let by_product = BY_PRODUCT
        .iter()
        .find(|(k, _)| product.contains(k))
        .map(|(_, v)| v.to_string());

    // What virt-what would name: the hypervisor under the (possible) container.
    let kvm = clocksources.split_whitespace().any(|c| c == "kvm-clock")
        || product.contains("KVM")
        || bios.contains("SeaBIOS")
        || bios.contains("Amazon EC2")
        || bios.contains("Google")
        || product.contains("OpenStack");
    let machine = if xen_type.as_deref() == Some("xen") {
        Some(
            if std::path::Path::new("/proc/xen/capabilities").exists()
                && read("/proc/xen/capabilities").is_some_and(|c| c.contains("control_d"))
            {
                "xen0".to_string()
            } else {
                "xenu".to_string()
            },
        )
    } else if bios.contains("Google") {
        Some("gce".into())
    } else if let Some(p) = by_product.clone() {
        Some(p)
    } else if kvm {
        Some("kvm".into())
    } else if hypervisor_flag {
        Some("virtual".into())
    } else {
        None
    };
    let container = container();
    let virtual_ = container
        .as_ref()
        .map(|(c, _)| c.clone())
        .or_else(|| machine.clone())
        .unwrap_or_else(|| "physical".into());
    const PHYSICAL: [&str; 6] = [
        "physical",
        "xen0",
        "vmware_server",
        "vmware_workstation",
        "openvzhn",
        "vserver_host",
    ];
    g.core("virtual", json!(virtual_));
    g.core("is_virtual", json!(!PHYSICAL.contains(&virtual_.as_str())));

    let mut hypervisors = Map::new();
    if let Some((c, info)) = container {
        hypervisors.insert(c, info);
    }
    match machine.as_deref() {
        Some("kvm") => {
            let vendor = dmi.sys_vendor.clone().unwrap_or_default();
            let provider = if vendor == "Google" {
                json!({"google": true})
            } else if vendor.starts_with("OpenStack") {
                json!({"openstack": true})
            } else if vendor.starts_with("Amazon") {
                json!({"amazon": true})
            } else {
                json!({})
            };
            hypervisors.insert("kvm".into(), provider);
        }
        Some("vmware") => {
            hypervisors.insert("vmware".into(), json!({}));
        }
        Some("hyperv") => {
            hypervisors.insert("hyperv".into(), json!({}));
        }
        Some("xenu") | Some("xen0") | Some("xenhvm") => {
            let privileged = machine.as_deref() == Some("xen0");
            let ctx = if machine.as_deref() == Some("xenhvm") {
                "hvm"
            } else {
                "pv"
            };
            hypervisors.insert(
                "xen".into(),
                json!({"context": ctx, "privileged": privileged}),
            );
        }
        Some("virtualbox") => {
            hypervisors.insert("virtualbox".into(), json!({}));
        }
        _ => {}
    }
    if !hypervisors.is_empty() {
        g.core("hypervisors", Json::Object(hypervisors));
    }
}
