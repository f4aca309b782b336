//! A syntax check of regular expression literals, standing in for Ruby's `Regexp.new`
//! (Puppet's lexer compiles every literal and reports Onigmo's complaint).

/// Returns Onigmo's message for the first problem found, if any.
pub fn check(pattern: &str) -> Option<&'static str> {
    let b = pattern.as_bytes();
    let mut i = 0;
    let mut groups = 0usize;
    // Whether a quantifier here would have something to repeat.
    let mut has_target = false;
    while i < b.len() {
        match b[i] {
            b'\\' => {
                if i + 1 >= b.len() {
                    return Some("too short escape sequence");
                }
                i += 2;
                has_target = true;
                continue;
            }
            b'[' => {
                i = match class_end(b, i) {
                    Ok(end) => end,
                    Err(m) => return Some(m),
                };
                has_target = true;
                continue;
            }
            b'(' => {
                groups += 1;
                i += 1;
                if b.get(i) == Some(&b'?') {
                    i += 1;
                }
                has_target = false;
                continue;
            }
            b')' => {
                if groups == 0 {
                    return Some("unmatched close parenthesis");
                }
                groups -= 1;
                has_target = true;
            }
            b'|' => has_target = false,
            b'*' | b'+' | b'?' => {
                if !has_target {
                    return Some("target of repeat operator is not specified");
                }
                // A following `?` or `+` modifies this quantifier.
                if matches!(b.get(i + 1), Some(b'?' | b'+')) {
                    i += 1;
                }
            }
            b'{' => {
                if let Some(end) = interval_end(b, i) {
                    if !has_target {
                        return Some("target of repeat operator is not specified");
                    }
                    i = end;
                    continue;
                }
                has_target = true;
            }
            b'^' | b'$' => has_target = false,
            _ => has_target = true,
        }
        i += 1;
    }
    if groups > 0 {
        return Some("end pattern with unmatched parenthesis");
    }
    None
}

/// The offset after the character class starting at `b[start] == '['`.
fn class_end(b: &[u8], start: usize) -> Result<usize, &'static str> {
    let mut i = start + 1;
    if b.get(i) == Some(&b'^') {
        i += 1;
    }
    if b.get(i) == Some(&b']') {
        i += 1;
    }
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'[' if b.get(i + 1) == Some(&b':') => {
                // POSIX bracket `[:alpha:]`
                match b[i + 2..].windows(2).position(|w| w == b":]") {
                    Some(p) => i += p + 4,
                    None => i += 1,
                }
            }
            b'[' => i = class_end(b, i)?,
            b']' => return Ok(i + 1),
            _ => i += 1,
        }
    }
    Err("premature end of char-class")
}

/// `{n}`, `{n,}`, `{,m}`, `{n,m}` at `b[start]`: the offset after it.
fn interval_end(b: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    let digits = |i: &mut usize| {
        let s = *i;
        while b.get(*i).is_some_and(u8::is_ascii_digit) {
            *i += 1;
        }
        *i > s
    };
    let lo = digits(&mut i);
    let mut hi = false;
    if b.get(i) == Some(&b',') {
        i += 1;
        hi = digits(&mut i);
    }
    if b.get(i) == Some(&b'}') && (lo || hi) {
        Some(i + 1)
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::check;

    #[test]
    fn onigmo_complaints() {
        assert_eq!(
            check("^a(b"),
            Some("end pattern with unmatched parenthesis")
        );
        assert_eq!(
            check("?i:a"),
            Some("target of repeat operator is not specified")
        );
        assert_eq!(check("a)"), Some("unmatched close parenthesis"));
        assert_eq!(check("[a-z"), Some("premature end of char-class"));
        assert_eq!(check(r"^(?:a|b)+\d{1,3}[\]x]*?$"), None);
        assert_eq!(check("a{,}"), None);
    }
}
