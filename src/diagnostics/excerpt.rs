//! A line of input drawn around a problem: a compiled catalog or a facts file is often one
//! line holding every value (secrets too), so only the bytes near the problem are shown, with
//! the secrets' values hidden.

/// What a hidden value is replaced by, in every output.
pub const REDACTED: &str = "[redacted]";

/// At most this many bytes of the offending line are shown on each side of the problem: a
/// compiled catalog is often one line, holding every value (secrets too) of the catalog.
const EXCERPT_SIDE: usize = 80;

/// [`excerpt`], and what to add to the message when the drawing's column is not the
/// problem's: ` (line L, column C)`.
pub fn drawn(text: &str, offset: usize, secrets: &[String], mask: bool) -> (String, usize, String) {
    let (excerpt, at) = excerpt(text, offset, secrets, mask);
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let mut place = String::new();
    if offset - line_start != at - excerpt[..at].rfind('\n').map_or(0, |i| i + 1) {
        // The drawing's column is the excerpt's: say where the problem really is.
        let column = text[line_start..offset].chars().count() + 1;
        let line = excerpt[..at].bytes().filter(|&b| b == b'\n').count() + 1;
        place = format!(" (line {line}, column {column})");
    }
    (excerpt, at, place)
}

/// The text a refusal is drawn from: the lines before the problem's line left empty (so its
/// line number stays right), and of that line only the bytes around `offset`, with the
/// values of sensitive parameters replaced (every string value when `mask`). Returns the
/// text and `offset` in it.
fn excerpt(text: &str, offset: usize, secrets: &[String], mask: bool) -> (String, usize) {
    let line_start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let mut from = offset.saturating_sub(EXCERPT_SIDE).max(line_start);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let mut to = (offset + EXCERPT_SIDE).min(line_end);
    while !text.is_char_boundary(to) {
        to -= 1;
    }
    let lines_before = text[..line_start].bytes().filter(|&b| b == b'\n').count();
    let mut out = "\n".repeat(lines_before);
    if from > line_start {
        out.push('…');
    }
    let at = if mask {
        let (shown, at) = masked_values(text, line_start, from, offset, to);
        let at = out.len() + at;
        out.push_str(&shown);
        at
    } else {
        out.push_str(&scrub(&text[from..offset], secrets));
        let at = out.len();
        out.push_str(&scrub(&text[offset..to], secrets));
        at
    };
    if to < line_end {
        out.push('…');
    }
    (out, at)
}

/// `text[from..to]` (a part of the line that starts at `line_start`) with the content of
/// every string that is not an object key replaced by `…`; and where `offset` is in it.
/// The line is read from its start to know which bytes are inside strings.
fn masked_values(
    text: &str,
    line_start: usize,
    from: usize,
    offset: usize,
    to: usize,
) -> (String, usize) {
    let b = text.as_bytes();
    // Whether the string opening at `i` is followed by `:` (an object key).
    let is_key = |i: usize| {
        let mut j = i + 1;
        let mut esc = false;
        while j < b.len() && b[j] != b'\n' {
            match (esc, b[j]) {
                (true, _) => esc = false,
                (false, b'\\') => esc = true,
                (false, b'"') => break,
                _ => {}
            }
            j += 1;
        }
        b.get(j + 1..)
            .and_then(|rest| rest.iter().take(256).find(|c| !c.is_ascii_whitespace()))
            == Some(&b':')
    };
    let mut out: Vec<u8> = Vec::new();
    let mut at = None;
    let (mut in_str, mut esc, mut key, mut marked) = (false, false, false, false);
    for (i, &c) in b.iter().enumerate().take(to).skip(line_start) {
        if at.is_none() && i >= offset {
            at = Some(out.len());
        }
        let shown = i >= from;
        if in_str {
            let closing = !esc && c == b'"';
            esc = !esc && c == b'\\';
            if closing {
                in_str = false;
                if shown {
                    out.push(c);
                }
            } else if shown && key {
                out.push(c);
            } else if shown && !marked {
                out.extend_from_slice("…".as_bytes());
                marked = true;
            }
            continue;
        }
        if c == b'"' {
            (in_str, esc, marked) = (true, false, false);
            key = is_key(i);
        }
        if shown {
            out.push(c);
        }
    }
    let split = at.unwrap_or(out.len());
    let head = String::from_utf8_lossy(&out[..split]).into_owned();
    let at = head.len();
    (head + &String::from_utf8_lossy(&out[split..]), at)
}

/// `s` with every secret replaced by `[redacted]`.
pub fn scrub(s: &str, secrets: &[String]) -> String {
    let mut out = s.to_string();
    for secret in secrets {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), REDACTED);
        }
    }
    out
}
