//! stdlib's `pw_hash`: glibc's `crypt(3)` for the MD5 (`$1$`), SHA-256 (`$5$`) and SHA-512
//! (`$6$`) methods, as Ruby's `String#crypt` runs it. The bcrypt methods are refused (Ordo
//! does not compute them).

use super::compiler::{Compiler, R};
use super::functions::Args;
use super::stdlib::{arg, fail};
use super::value::Value;

const K512: [u64; 80] = [
    0x428a2f98d728ae22,
    0x7137449123ef65cd,
    0xb5c0fbcfec4d3b2f,
    0xe9b5dba58189dbbc,
    0x3956c25bf348b538,
    0x59f111f1b605d019,
    0x923f82a4af194f9b,
    0xab1c5ed5da6d8118,
    0xd807aa98a3030242,
    0x12835b0145706fbe,
    0x243185be4ee4b28c,
    0x550c7dc3d5ffb4e2,
    0x72be5d74f27b896f,
    0x80deb1fe3b1696b1,
    0x9bdc06a725c71235,
    0xc19bf174cf692694,
    0xe49b69c19ef14ad2,
    0xefbe4786384f25e3,
    0x0fc19dc68b8cd5b5,
    0x240ca1cc77ac9c65,
    0x2de92c6f592b0275,
    0x4a7484aa6ea6e483,
    0x5cb0a9dcbd41fbd4,
    0x76f988da831153b5,
    0x983e5152ee66dfab,
    0xa831c66d2db43210,
    0xb00327c898fb213f,
    0xbf597fc7beef0ee4,
    0xc6e00bf33da88fc2,
    0xd5a79147930aa725,
    0x06ca6351e003826f,
    0x142929670a0e6e70,
    0x27b70a8546d22ffc,
    0x2e1b21385c26c926,
    0x4d2c6dfc5ac42aed,
    0x53380d139d95b3df,
    0x650a73548baf63de,
    0x766a0abb3c77b2a8,
    0x81c2c92e47edaee6,
    0x92722c851482353b,
    0xa2bfe8a14cf10364,
    0xa81a664bbc423001,
    0xc24b8b70d0f89791,
    0xc76c51a30654be30,
    0xd192e819d6ef5218,
    0xd69906245565a910,
    0xf40e35855771202a,
    0x106aa07032bbd1b8,
    0x19a4c116b8d2d0c8,
    0x1e376c085141ab53,
    0x2748774cdf8eeb99,
    0x34b0bcb5e19b48a8,
    0x391c0cb3c5c95a63,
    0x4ed8aa4ae3418acb,
    0x5b9cca4f7763e373,
    0x682e6ff3d6b2b8a3,
    0x748f82ee5defb2fc,
    0x78a5636f43172f60,
    0x84c87814a1f0ab72,
    0x8cc702081a6439ec,
    0x90befffa23631e28,
    0xa4506cebde82bde9,
    0xbef9a3f7b2c67915,
    0xc67178f2e372532b,
    0xca273eceea26619c,
    0xd186b8c721c0c207,
    0xeada7dd6cde0eb1e,
    0xf57d4f7fee6ed178,
    0x06f067aa72176fba,
    0x0a637dc5a2c898a6,
    0x113f9804bef90dae,
    0x1b710b35131c471b,
    0x28db77f523047d84,
    0x32caab7b40c72493,
    0x3c9ebe0a15c9bebc,
    0x431d67c49c100d4c,
    0x4cc5d4becb3e42b6,
    0x597f299cfc657e2a,
    0x5fcb6fab3ad6faec,
    0x6c44198c4a475817,
];

fn sha512(data: &[u8]) -> Vec<u8> {
    let mut h: [u64; 8] = [
        0x6a09e667f3bcc908,
        0xbb67ae8584caa73b,
        0x3c6ef372fe94f82b,
        0xa54ff53a5f1d36f1,
        0x510e527fade682d1,
        0x9b05688c2b3e6c1f,
        0x1f83d9abfb41bd6b,
        0x5be0cd19137e2179,
    ];
    let mut m = data.to_vec();
    let bits = (data.len() as u128) * 8;
    m.push(0x80);
    while m.len() % 128 != 112 {
        m.push(0);
    }
    m.extend_from_slice(&bits.to_be_bytes());
    for block in m.chunks(128) {
        let mut w = [0u64; 80];
        for (i, word) in block.chunks(8).enumerate() {
            let mut b = [0u8; 8];
            b.copy_from_slice(word);
            w[i] = u64::from_be_bytes(b);
        }
        for i in 16..80 {
            let s0 = w[i - 15].rotate_right(1) ^ w[i - 15].rotate_right(8) ^ (w[i - 15] >> 7);
            let s1 = w[i - 2].rotate_right(19) ^ w[i - 2].rotate_right(61) ^ (w[i - 2] >> 6);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = h;
        for i in 0..80 {
            let s1 = v[4].rotate_right(14) ^ v[4].rotate_right(18) ^ v[4].rotate_right(41);
            let ch = (v[4] & v[5]) ^ (!v[4] & v[6]);
            let t1 = v[7]
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(K512[i])
                .wrapping_add(w[i]);
            let s0 = v[0].rotate_right(28) ^ v[0].rotate_right(34) ^ v[0].rotate_right(39);
            let maj = (v[0] & v[1]) ^ (v[0] & v[2]) ^ (v[1] & v[2]);
            let t2 = s0.wrapping_add(maj);
            v = [
                t1.wrapping_add(t2),
                v[0],
                v[1],
                v[2],
                v[3].wrapping_add(t1),
                v[4],
                v[5],
                v[6],
            ];
        }
        for (x, y) in h.iter_mut().zip(v) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().flat_map(|v| v.to_be_bytes()).collect()
}

fn sha256(data: &[u8]) -> Vec<u8> {
    crate::digest::sha256(data).to_vec()
}

fn md5(data: &[u8]) -> Vec<u8> {
    let hex = super::strings::md5_hex(data);
    (0..16)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap_or(0))
        .collect()
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
