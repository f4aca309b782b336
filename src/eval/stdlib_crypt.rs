//! stdlib's `pw_hash`: glibc's `crypt(3)` for the MD5 (`$1$`), SHA-256 (`$5$`) and SHA-512
//! (`$6$`) methods, as Ruby's `String#crypt` runs it. The bcrypt methods are refused (Ordo
//! does not compute them).

use super::compiler::{Compiler, R};
use super::functions::Args;
use super::stdlib::{arg, fail};
use super::values::value::Value;

fn sha256(data: &[u8]) -> Vec<u8> {
    crate::digest::sha256(data).to_vec()
}

fn sha512(data: &[u8]) -> Vec<u8> {
    crate::digest::sha512(data).to_vec()
}

fn md5(data: &[u8]) -> Vec<u8> {
    crate::digest::md5(data).to_vec()
}

const ITOA64: &[u8; 64] = b"./0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

fn b64_from_24bit(out: &mut String, b2: u8, b1: u8, b0: u8, n: usize) {
    let mut w = ((b2 as u32) << 16) | ((b1 as u32) << 8) | b0 as u32;
    for _ in 0..n {
        out.push(ITOA64[(w & 0x3f) as usize] as char);
        w >>= 6;
    }
}

/// Bytes of `block` repeated to `len` bytes.
fn stretch(block: &[u8], len: usize) -> Vec<u8> {
    block.iter().cycle().take(len).copied().collect()
}

/// glibc's SHA-crypt (`$5$`, `$6$`) with the default 5000 rounds.
fn sha_crypt(pw: &[u8], salt: &[u8], sha512_method: bool) -> String {
    let h: fn(&[u8]) -> Vec<u8> = if sha512_method { sha512 } else { sha256 };
    let len = if sha512_method { 64 } else { 32 };
    let salt = &salt[..salt.len().min(16)];
    let b = h(&[pw, salt, pw].concat());
    let mut a_in = [pw, salt].concat();
    a_in.extend(stretch(&b, pw.len()));
    let mut n = pw.len();
    while n > 0 {
        if n & 1 == 1 {
            a_in.extend_from_slice(&b);
        } else {
            a_in.extend_from_slice(pw);
        }
        n >>= 1;
    }
    let a = h(&a_in);
    let dp = h(&pw.repeat(pw.len()));
    let p = stretch(&dp, pw.len());
    let ds = h(&salt.repeat(16 + a[0] as usize));
    let s = stretch(&ds, salt.len());
    let mut c = a;
    for i in 0..5000 {
        let mut x = vec![];
        if i & 1 == 1 {
            x.extend_from_slice(&p);
        } else {
            x.extend_from_slice(&c);
        }
        if i % 3 != 0 {
            x.extend_from_slice(&s);
        }
        if i % 7 != 0 {
            x.extend_from_slice(&p);
        }
        if i & 1 == 1 {
            x.extend_from_slice(&c);
        } else {
            x.extend_from_slice(&p);
        }
        c = h(&x);
    }
    debug_assert_eq!(c.len(), len);
    let mut out = format!(
        "${}${}$",
        if sha512_method { 6 } else { 5 },
        String::from_utf8_lossy(salt)
    );
    if sha512_method {
        for i in 0..21 {
            let (x, y, z) = (i, (i + 21) % 63, (i + 42) % 63);
            // glibc's table: (0,21,42), (22,43,1), (44,2,23), ...
            let (x, y, z) = match i % 3 {
                0 => (x, y, z),
                1 => (y, z, x),
                _ => (z, x, y),
            };
            b64_from_24bit(&mut out, c[x], c[y], c[z], 4);
        }
        b64_from_24bit(&mut out, 0, 0, c[63], 2);
    } else {
        for i in 0..10 {
            let (x, y, z) = (i, (i + 10) % 30, (i + 20) % 30);
            let (x, y, z) = match i % 3 {
                0 => (x, y, z),
                1 => (z, x, y),
                _ => (y, z, x),
            };
            b64_from_24bit(&mut out, c[x], c[y], c[z], 4);
        }
        b64_from_24bit(&mut out, 0, c[31], c[30], 3);
    }
    out
}

/// glibc's MD5-crypt (`$1$`).
fn md5_crypt(pw: &[u8], salt: &[u8]) -> String {
    let salt = &salt[..salt.len().min(8)];
    let fin = md5(&[pw, salt, pw].concat());
    let mut ctx = [pw, b"$1$", salt].concat();
    let mut pl = pw.len() as isize;
    while pl > 0 {
        ctx.extend_from_slice(&fin[..(pl.min(16) as usize)]);
        pl -= 16;
    }
    let mut i = pw.len();
    while i > 0 {
        if i & 1 == 1 {
            ctx.push(0);
        } else {
            ctx.push(pw.first().copied().unwrap_or(0));
        }
        i >>= 1;
    }
    let mut fin = md5(&ctx);
    for i in 0..1000 {
        let mut x = vec![];
        if i & 1 == 1 {
            x.extend_from_slice(pw);
        } else {
            x.extend_from_slice(&fin);
        }
        if i % 3 != 0 {
            x.extend_from_slice(salt);
        }
        if i % 7 != 0 {
            x.extend_from_slice(pw);
        }
        if i & 1 == 1 {
            x.extend_from_slice(&fin);
        } else {
            x.extend_from_slice(pw);
        }
        fin = md5(&x);
    }
    let mut out = format!("$1${}$", String::from_utf8_lossy(salt));
    for (a, b, c) in [(0, 6, 12), (1, 7, 13), (2, 8, 14), (3, 9, 15), (4, 10, 5)] {
        b64_from_24bit(&mut out, fin[a], fin[b], fin[c], 4);
    }
    b64_from_24bit(&mut out, 0, 0, fin[11], 2);
    out
}

pub(super) fn f_pw_hash(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if a.values.len() != 3 {
        return Err(fail(
            c,
            a,
            format!("Wrong number of arguments given ({} for 3)", a.values.len()),
        ));
    }
    let unwrap = |v: Value| match v {
        Value::Sensitive(x) => *x,
        Value::Undef => Value::str(""),
        other => other,
    };
    let pw = unwrap(arg(a, 0));
    let method = unwrap(arg(a, 1));
    let salt = unwrap(arg(a, 2));
    let Value::Str(pw) = pw else {
        return Err(fail(c, a, "first argument must be a string"));
    };
    let Value::Str(method) = method else {
        return Err(fail(c, a, "second argument must be a string"));
    };
    let prefix = match method.to_lowercase().as_str() {
        "md5" => "1",
        "sha-256" => "5",
        "sha-512" => "6",
        "bcrypt" | "bcrypt-a" | "bcrypt-x" | "bcrypt-y" => "2",
        _ => return Err(fail(c, a, format!("{method} is not a valid hash type"))),
    };
    let Value::Str(salt) = salt else {
        return Err(fail(c, a, "third argument must be a string"));
    };
    if salt.is_empty() {
        return Err(fail(c, a, "third argument must not be empty"));
    }
    if prefix == "2" {
        return Err(fail(
            c,
            a,
            "Ordo does not compute bcrypt hashes (use md5, sha-256 or sha-512)",
        ));
    }
    if !salt
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'/')
    {
        return Err(fail(
            c,
            a,
            "characters in salt must be in the set [a-zA-Z0-9./]",
        ));
    }
    if pw.is_empty() {
        return Ok(Value::Undef);
    }
    Ok(Value::str(match prefix {
        "1" => md5_crypt(pw.as_bytes(), salt.as_bytes()),
        "5" => sha_crypt(pw.as_bytes(), salt.as_bytes(), false),
        _ => sha_crypt(pw.as_bytes(), salt.as_bytes(), true),
    }))
}
