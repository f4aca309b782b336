//! Ruby's `Dir.glob` (stdlib's `glob`): `*`, `?`, `[set]`, `{a,b}`, `**/` and `\` escapes
//! over the file system, each directory's matches in name order. Wildcards do not match a
//! leading dot (hidden files), as with Ruby's default flags.

use crate::eval::host::{Host, PathKind};

/// The patterns `{a,b}` stands for, in order (`data/{one,two}.*`: `data/one.*`,
/// `data/two.*`); nested braces expand too. Unbalanced braces are kept as written.
pub fn expand_braces(pattern: &str) -> Vec<String> {
    let b = pattern.as_bytes();
    let mut depth = 0usize;
    let mut open = None;
    let mut commas = Vec::new();
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 1,
            b'{' => {
                if depth == 0 {
                    open = Some(i);
                    commas.clear();
                }
                depth += 1;
            }
            b',' if depth == 1 => commas.push(i),
            b'}' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    let start = open.unwrap_or(0);
                    let (head, tail) = (&pattern[..start], &pattern[i + 1..]);
                    let mut cuts = vec![start];
                    cuts.extend(&commas);
                    cuts.push(i);
                    let mut out = Vec::new();
                    for w in cuts.windows(2) {
                        let alt = &pattern[w[0] + 1..w[1]];
                        out.extend(expand_braces(&format!("{head}{alt}{tail}")));
                    }
                    return out;
                }
            }
            _ => {}
        }
        i += 1;
    }
    vec![pattern.to_string()]
}

/// The paths matching `pattern` (no braces), relative ones to the working directory.
pub fn glob(host: &dyn Host, pattern: &str) -> Vec<String> {
    if pattern.is_empty() {
        return Vec::new();
    }
    let (prefix, rest) = match pattern.strip_prefix('/') {
        Some(r) => ("/".to_string(), r.trim_start_matches('/')),
        None => (String::new(), pattern),
    };
    let dir_only = rest.ends_with('/');
    let segs: Vec<&str> = rest.split('/').filter(|s| !s.is_empty()).collect();
    let mut out = Vec::new();
    if segs.is_empty() {
        out.push(prefix);
        return out;
    }
    walk(host, &prefix, &segs, dir_only, &mut out);
    out
}

fn has_magic(seg: &str) -> bool {
    seg.contains(['*', '?', '[', '\\'])
}

/// The entries of directory `dir` (`""`: the working directory), sorted by name.
fn entries(host: &dyn Host, dir: &str) -> Vec<String> {
    let mut names = host.list_dir(dir);
    names.sort();
    names
}

fn is_dir(host: &dyn Host, path: &str) -> bool {
    host.path_kind(path) == Some(PathKind::Dir)
}

fn walk(host: &dyn Host, prefix: &str, segs: &[&str], dir_only: bool, out: &mut Vec<String>) {
    let Some((seg, rest)) = segs.split_first() else {
        return;
    };
    let last = rest.is_empty();
    let found = |out: &mut Vec<String>, path: String| {
        if last {
            if !dir_only {
                out.push(path);
            } else if is_dir(host, &path) {
                out.push(format!("{path}/"));
            }
        } else if is_dir(host, &path) {
            walk(host, &format!("{path}/"), rest, dir_only, out);
        }
    };
    if *seg == "**" && !last {
        // Zero or more (visible) directories.
        walk(host, prefix, rest, dir_only, out);
        for name in entries(host, prefix) {
            let path = format!("{prefix}{name}");
            if !name.starts_with('.') && is_dir(host, &path) {
                walk(host, &format!("{path}/"), segs, dir_only, out);
            }
        }
    } else if has_magic(seg) {
        let pat: Vec<char> = seg.chars().collect();
        for name in entries(host, prefix) {
            let hidden_ok = seg.starts_with('.') && name != "." && name != "..";
            if (!name.starts_with('.') || hidden_ok) && fnmatch(&pat, &name) {
                found(out, format!("{prefix}{name}"));
            }
        }
    } else {
        let path = format!("{prefix}{seg}");
        if host.path_kind(&path).is_some() {
            found(out, path);
        }
    }
}

/// Whether `name` matches the pattern segment `p` (`*`, `?`, `[set]`, `\x`).
fn fnmatch(p: &[char], name: &str) -> bool {
    let n: Vec<char> = name.chars().collect();
    match_from(p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let Some((&c, prest)) = p.split_first() else {
        return n.is_empty();
    };
    match c {
        '*' => (0..=n.len()).any(|k| match_from(prest, &n[k..])),
        '?' => !n.is_empty() && match_from(prest, &n[1..]),
        '[' => match (n.first(), class_match(prest, n.first().copied())) {
            (Some(_), Some((true, after))) => match_from(after, &n[1..]),
            (_, Some((false, _))) | (None, _) => false,
            // No closing `]`: a literal `[`.
            (Some(&ch), None) => ch == '[' && match_from(prest, &n[1..]),
        },
        '\\' if !prest.is_empty() => {
            n.first() == Some(&prest[0]) && match_from(&prest[1..], &n[1..])
        }
        _ => n.first() == Some(&c) && match_from(prest, &n[1..]),
    }
}

/// A `[set]` after its `[`: whether `ch` is in it and the pattern after its `]`; None when
/// the set is not closed.
fn class_match(p: &[char], ch: Option<char>) -> Option<(bool, &[char])> {
    let ch = ch?;
    let (negate, mut i) = match p.first() {
        Some('!' | '^') => (true, 1),
        _ => (false, 0),
    };
    let mut hit = false;
    let mut first = true;
    while i < p.len() {
        if p[i] == ']' && !first {
            return Some((hit != negate, &p[i + 1..]));
        }
        first = false;
        let lo = if p[i] == '\\' && i + 1 < p.len() {
            i += 1;
            p[i]
        } else {
            p[i]
        };
        if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
            hit |= lo <= ch && ch <= p[i + 2];
            i += 3;
        } else {
            hit |= lo == ch;
            i += 1;
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn braces_and_patterns() {
        assert_eq!(
            expand_braces("d/{a,b{c,d}}.x"),
            ["d/a.x", "d/bc.x", "d/bd.x"]
        );
        assert_eq!(expand_braces("plain{"), ["plain{"]);
        let m = |p: &str, n: &str| fnmatch(&p.chars().collect::<Vec<_>>(), n);
        assert!(m("*.yaml", "one.yaml") && !m("*.yaml", "one.json"));
        assert!(m("[a-c]?", "bz") && !m("[!a-c]?", "bz") && m("\\*", "*"));
    }
}
