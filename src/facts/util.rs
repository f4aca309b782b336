//! Helpers shared by the fact groups: reading system files, running the few tools Facter
//! runs, and formatting numbers as Facter does (`23.54 GiB`, `2.45 GHz`, `4.37%`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A file's text, trimmed; `None` when it cannot be read.
pub fn read(path: impl AsRef<Path>) -> Option<String> {
    std::fs::read_to_string(path)
        .ok()
        .map(|s| s.trim().to_string())
}

/// The first executable named `name` on `PATH`.
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| is_executable(p))
}

pub fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The standard output of a tool (`None` when absent or failing), standard error dropped.
pub fn run(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .env("LC_ALL", "C")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Bytes as Facter shows them: `512 bytes`, `4.00 KiB`, `23.54 GiB` (two decimals, binary
/// prefixes; a value that rounds to 1024 of a unit is shown as 1.00 of the next).
pub fn bytes_human(bytes: u64) -> String {
    if bytes < 1024 {
        return format!("{bytes} bytes");
    }
    let mut exp = ((bytes as f64).log2() / 10.0).floor() as i32;
    let mut n = (100.0 * (bytes as f64 / 1024f64.powi(exp))).round() / 100.0;
    if (n - 1024.0).abs() < f64::EPSILON {
        exp += 1;
        n = 1.0;
    }
    let unit = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]
        .get((exp - 1) as usize)
        .copied()
        .unwrap_or("bytes");
    format!("{} {unit}", ruby_float_2(n))
}

/// A float printed as Ruby's `to_s` then padded to at least two decimals (`12.0` -> `12.00`).
fn ruby_float_2(n: f64) -> String {
    let s = format!("{n}");
    match s.split_once('.') {
        None => format!("{s}.00"),
        Some((_, d)) if d.len() == 1 => format!("{s}0"),
        Some(_) => s,
    }
}

/// Hertz as Facter shows them: `2.45 GHz`.
pub fn hertz_human(hz: u64) -> Option<String> {
    if hz == 0 {
        return None;
    }
    let power = (hz as f64).log10().floor() as i32;
    let exp = power - power % 3;
    let coefficient = if power == 0 {
        hz as f64
    } else {
        hz as f64 / 10f64.powi(exp)
    };
    let prefix = match exp {
        0 => "",
        3 => "k",
        6 => "M",
        9 => "G",
        _ => "T",
    };
    Some(format!("{:.2} {prefix}Hz", ruby_round_2(coefficient)))
}

/// Ruby's `Float#round(2)`: half up, judged on the decimal value (2.445 -> 2.45, where
/// rounding `2.445 * 100` would give 2.44).
fn ruby_round_2(x: f64) -> f64 {
    let s = 100.0;
    let mut f = (x * s).round();
    if x > 0.0 && (f + 0.5) / s <= x {
        f += 1.0;
    } else if x < 0.0 && (f - 0.5) / s >= x {
        f -= 1.0;
    }
    f / s
}

/// `used / total` as a percentage with two decimals (`4.37%`).
pub fn percent(used: u64, total: u64) -> String {
    format!("{:.2}%", used as f64 / total as f64 * 100.0)
}

/// Bytes in mebibytes, as a float (`memorysize_mb`).
pub fn mb(bytes: u64) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

/// The names in a directory, sorted; empty when it cannot be read.
pub fn dir_names(dir: impl AsRef<Path>) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| e.file_name().into_string().ok())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// `KEY=value` lines (os-release, udev data), quotes removed.
pub fn key_values(text: &str) -> Vec<(String, String)> {
    text.lines()
        .filter_map(|l| {
            let (k, v) = l.trim().split_once('=')?;
            Some((k.trim().to_string(), v.trim().replace('"', "")))
        })
        .collect()
}

/// Standard base64 decoding (SSH public keys); `None` on a character outside the alphabet.
pub fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' => break,
            b'\n' | b'\r' | b' ' => continue,
            _ => return None,
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_facter() {
        assert_eq!(bytes_human(0), "0 bytes");
        assert_eq!(bytes_human(4096), "4.00 KiB");
        assert_eq!(bytes_human(25276063744), "23.54 GiB");
        assert_eq!(bytes_human(12630458368), "11.76 GiB");
        assert_eq!(bytes_human(274877906944), "256.00 GiB");
        assert_eq!(bytes_human(1024 * 1024 - 1), "1.00 MiB");
        assert_eq!(hertz_human(2_450_000_000).as_deref(), Some("2.45 GHz"));
        assert_eq!(hertz_human(2_445_000_000).as_deref(), Some("2.45 GHz"));
        assert_eq!(hertz_human(800_000_000).as_deref(), Some("800.00 MHz"));
        assert_eq!(percent(1103929344, 25276063744), "4.37%");
        assert_eq!(base64_decode("aGVsbG8=").unwrap(), b"hello");
    }
}
