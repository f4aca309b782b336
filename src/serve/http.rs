//! HTTP/1.1 for `ordo serve`: requests read from a (TLS) stream with bounded sizes, responses
//! written whole (head and body in one write), keep-alive.

use std::io::{Read, Write};

/// The most a request head may take (request line and headers).
pub const MAX_HEAD: usize = 32 * 1024;
/// The most headers a request may have.
pub const MAX_HEADERS: usize = 100;
/// The most a request body may take (an agent's facts, or a report with many events).
pub const MAX_BODY: usize = 64 * 1024 * 1024;

#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The path, percent-decoded.
    pub path: String,
    /// The query parameters, decoded (`+` is a space).
    pub query: Vec<(String, String)>,
    /// Header names in lower case.
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// The request line as sent (for the access log).
    pub line: String,
    /// Whether the connection stays open after the answer.
    pub keep_alive: bool,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }

    pub fn params<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.query
            .iter()
            .filter(move |(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
    pub headers: Vec<(&'static str, String)>,
}

impl Response {
    pub fn new(status: u16, content_type: &'static str, body: impl Into<Vec<u8>>) -> Response {
        Response {
            status,
            content_type,
            body: body.into(),
            headers: Vec::new(),
        }
    }

    pub fn text(status: u16, body: impl Into<String>) -> Response {
        Response::new(status, "text/plain", body.into().into_bytes())
    }

    pub fn json(status: u16, body: impl Into<Vec<u8>>) -> Response {
        Response::new(status, "application/json", body)
    }

    /// An error as Puppet's server answers one: JSON with a message and a kind.
    pub fn error(status: u16, message: &str) -> Response {
        let kind = match status {
            404 => "NOT_FOUND",
            403 => "FORBIDDEN",
            400 => "BAD_REQUEST",
            _ => "RUNTIME_ERROR",
        };
        let body = serde_json::json!({"message": message, "issue_kind": kind});
        Response::json(status, body.to_string())
    }

    /// The whole answer: status line, headers and body.
    pub fn bytes(&self, keep_alive: bool, head_only: bool) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + self.body.len());
        let _ = write!(
            out,
            "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nX-Puppet-Version: {}\r\n",
            self.status,
            reason(self.status),
            self.content_type,
            self.body.len(),
            crate::PUPPET_VERSION
        );
        for (k, v) in &self.headers {
            let _ = write!(out, "{k}: {v}\r\n");
        }
        out.extend_from_slice(if keep_alive {
            b"Connection: keep-alive\r\n\r\n"
        } else {
            b"Connection: close\r\n\r\n"
        });
        if !head_only {
            out.extend_from_slice(&self.body);
        }
        out
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        200 => "OK",
        304 => "Not Modified",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Payload Too Large",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

/// Why no request could be read.
#[derive(Debug)]
pub enum ReadError {
    /// The peer closed the connection (or stopped) between requests.
    Closed,
    /// A request that breaks the rules: answered with this status, then closed.
    Bad(u16, String),
    /// The connection failed.
    Io(std::io::Error),
}

/// A connection's reader: bytes past the current request stay buffered for the next.
pub struct Reader {
    buf: Vec<u8>,
}

impl Default for Reader {
    fn default() -> Self {
        Reader::new()
    }
}

impl Reader {
    pub fn new() -> Reader {
        Reader { buf: Vec::new() }
    }

    /// Reads more from `s`. A read timeout asks `wait(partial)` whether to keep waiting:
    /// `partial` tells if a request has begun.
    fn fill(
        &mut self,
        s: &mut impl Read,
        wait: &mut dyn FnMut(bool) -> bool,
    ) -> Result<usize, ReadError> {
        let mut tmp = [0u8; 16 * 1024];
        loop {
            match s.read(&mut tmp) {
                Ok(n) => {
                    self.buf.extend_from_slice(&tmp[..n]);
                    return Ok(n);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) =>
                {
                    if !wait(!self.buf.is_empty()) {
                        return Err(if self.buf.is_empty() {
                            ReadError::Closed
                        } else {
                            ReadError::Bad(408, "Request timed out".into())
                        });
                    }
                }
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                    return Ok(0);
                }
                Err(e) => return Err(ReadError::Io(e)),
            }
        }
    }

    /// The next request of the connection; `expect` is called to answer `Expect:
    /// 100-continue` before the body is read.
    pub fn next(
        &mut self,
        s: &mut (impl Read + Write),
        wait: &mut dyn FnMut(bool) -> bool,
    ) -> Result<Request, ReadError> {
        let head_end = loop {
            if let Some(i) = find(&self.buf, b"\r\n\r\n") {
                break i;
            }
            if self.buf.len() > MAX_HEAD {
                return Err(ReadError::Bad(431, "Request head too large".into()));
            }
            if self.fill(s, wait)? == 0 {
                return Err(if self.buf.is_empty() {
                    ReadError::Closed
                } else {
                    ReadError::Bad(400, "Incomplete request".into())
                });
            }
        };
        if head_end > MAX_HEAD {
            return Err(ReadError::Bad(431, "Request head too large".into()));
        }
        let head = String::from_utf8_lossy(&self.buf[..head_end]).into_owned();
        self.buf.drain(..head_end + 4);
        let mut lines = head.split("\r\n");
        let line = lines.next().unwrap_or_default().to_string();
        let mut parts = line.split(' ');
        let (Some(method), Some(target), Some(version), None) =
            (parts.next(), parts.next(), parts.next(), parts.next())
        else {
            return Err(ReadError::Bad(400, "Bad request line".into()));
        };
        if !version.starts_with("HTTP/1.") {
            return Err(ReadError::Bad(400, "Unsupported HTTP version".into()));
        }
        let mut headers = Vec::new();
        for l in lines {
            let Some((k, v)) = l.split_once(':') else {
                return Err(ReadError::Bad(400, "Bad header line".into()));
            };
            if headers.len() >= MAX_HEADERS {
                return Err(ReadError::Bad(431, "Too many headers".into()));
            }
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
        let get = |n: &str| {
            headers
                .iter()
                .find(|(k, _)| k == n)
                .map(|(_, v)| v.to_ascii_lowercase())
        };
        let connection = get("connection").unwrap_or_default();
        let keep_alive = if version == "HTTP/1.0" {
            connection.contains("keep-alive")
        } else {
            !connection.contains("close")
        };
        if get("expect").is_some_and(|e| e.contains("100-continue")) {
            s.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")
                .and_then(|_| s.flush())
                .map_err(ReadError::Io)?;
        }
        let body = if get("transfer-encoding").is_some_and(|t| t.contains("chunked")) {
            self.chunked(s, wait)?
        } else {
            let len = match get("content-length") {
                Some(l) => l
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| ReadError::Bad(400, "Bad Content-Length".into()))?,
                None => 0,
            };
            if len > MAX_BODY {
                return Err(ReadError::Bad(413, "Request body too large".into()));
            }
            while self.buf.len() < len {
                if self.fill(s, wait)? == 0 {
                    return Err(ReadError::Bad(400, "Incomplete request body".into()));
                }
            }
            self.buf.drain(..len).collect()
        };
        let (path, query) = match target.split_once('?') {
            Some((p, q)) => (p, q),
            None => (target, ""),
        };
        Ok(Request {
            method: method.to_string(),
            path: percent_decode(path, false),
            query: parse_form(query),
            headers,
            body,
            line,
            keep_alive,
        })
    }

    fn chunked(
        &mut self,
        s: &mut impl Read,
        wait: &mut dyn FnMut(bool) -> bool,
    ) -> Result<Vec<u8>, ReadError> {
        let mut body = Vec::new();
        loop {
            let line_end = loop {
                if let Some(i) = find(&self.buf, b"\r\n") {
                    break i;
                }
                if self.buf.len() > 1024 || self.fill(s, wait)? == 0 {
                    return Err(ReadError::Bad(400, "Bad chunk".into()));
                }
            };
            let size_text = String::from_utf8_lossy(&self.buf[..line_end]).into_owned();
            let size_hex = size_text.split(';').next().unwrap_or_default().trim();
            let size = usize::from_str_radix(size_hex, 16)
                .map_err(|_| ReadError::Bad(400, "Bad chunk size".into()))?;
            self.buf.drain(..line_end + 2);
            if body.len() + size > MAX_BODY {
                return Err(ReadError::Bad(413, "Request body too large".into()));
            }
            if size == 0 {
                // Trailers, up to the blank line.
                loop {
                    if let Some(i) = find(&self.buf, b"\r\n") {
                        let blank = i == 0;
                        self.buf.drain(..i + 2);
                        if blank {
                            return Ok(body);
                        }
                    } else if self.buf.len() > MAX_HEAD || self.fill(s, wait)? == 0 {
                        return Err(ReadError::Bad(400, "Bad chunk trailer".into()));
                    }
                }
            }
            while self.buf.len() < size + 2 {
                if self.fill(s, wait)? == 0 {
                    return Err(ReadError::Bad(400, "Incomplete chunk".into()));
                }
            }
            body.extend(self.buf.drain(..size));
            self.buf.drain(..2);
        }
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `%XX` escapes decoded (and `+` as a space when `plus`); bad escapes are kept as they are.
pub fn percent_decode(s: &str, plus: bool) -> String {
    let b = s.as_bytes();
    let special = |c: &u8| *c == b'%' || (plus && *c == b'+');
    let Some(first) = b.iter().position(special) else {
        return s.to_string();
    };
    let mut out = Vec::with_capacity(b.len());
    out.extend_from_slice(&b[..first]);
    let mut i = first;
    while i < b.len() {
        match b[i] {
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(high), Some(low)) => {
                    out.push(high << 4 | low);
                    i += 3;
                }
                _ => {
                    out.push(b'%');
                    i += 1;
                }
            },
            b'+' if plus => {
                out.push(b' ');
                i += 1;
            }
            _ => {
                // The plain run up to the next escape, at once.
                let run = b[i + 1..]
                    .iter()
                    .position(special)
                    .map_or(b.len(), |n| i + 1 + n);
                out.extend_from_slice(&b[i..run]);
                i = run;
            }
        }
    }
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

/// `a=1&b=2` (a query or an `application/x-www-form-urlencoded` body), decoded.
/// The value of a hexadecimal digit.
fn hex(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        b'A'..=b'F' => Some(c - b'A' + 10),
        _ => None,
    }
}

pub fn parse_form(s: &str) -> Vec<(String, String)> {
    s.split('&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.split_once('=') {
            Some((k, v)) => (percent_decode(k, true), percent_decode(v, true)),
            None => (percent_decode(p, true), String::new()),
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stream over fixed input that records what is written.
    struct Fixed(std::io::Cursor<Vec<u8>>, Vec<u8>);
    impl Read for Fixed {
        fn read(&mut self, b: &mut [u8]) -> std::io::Result<usize> {
            self.0.read(b)
        }
    }
    impl Write for Fixed {
        fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
            self.1.extend_from_slice(b);
            Ok(b.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn read_all(input: &[u8]) -> Vec<Result<Request, ReadError>> {
        let mut s = Fixed(std::io::Cursor::new(input.to_vec()), Vec::new());
        let mut r = Reader::new();
        let mut out = Vec::new();
        loop {
            let next = r.next(&mut s, &mut |_| false);
            let stop = next.is_err();
            out.push(next);
            if stop {
                return out;
            }
        }
    }

    #[test]
    fn keep_alive_requests_in_one_stream() {
        let got = read_all(
            b"PUT /a%2Fb?x=1+2&y=%41 HTTP/1.1\r\nContent-Length: 3\r\nHost: h\r\n\r\nabcGET /c HTTP/1.1\r\nConnection: close\r\n\r\n",
        );
        let a = got[0].as_ref().unwrap();
        assert_eq!(a.path, "/a/b");
        assert_eq!(a.param("x"), Some("1 2"));
        assert_eq!(a.param("y"), Some("A"));
        assert_eq!(a.body, b"abc");
        assert!(a.keep_alive);
        let c = got[1].as_ref().unwrap();
        assert_eq!((c.method.as_str(), c.keep_alive), ("GET", false));
        assert!(matches!(got[2], Err(ReadError::Closed)));
    }

    #[test]
    fn chunked_and_limits() {
        let got = read_all(
            b"POST /x HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n",
        );
        assert_eq!(got[0].as_ref().unwrap().body, b"abcde");
        let big = format!(
            "POST /x HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert!(matches!(
            read_all(big.as_bytes())[0],
            Err(ReadError::Bad(413, _))
        ));
        let long = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_HEAD + 10));
        assert!(matches!(
            read_all(long.as_bytes())[0],
            Err(ReadError::Bad(431, _))
        ));
        assert!(matches!(
            read_all(b"GET /x\r\n\r\n")[0],
            Err(ReadError::Bad(400, _))
        ));
        assert!(matches!(
            read_all(b"GET /x HTTP/1.1\r\nHo")[0],
            Err(ReadError::Bad(400, _))
        ));
    }

    #[test]
    fn decoding() {
        assert_eq!(percent_decode("a%20b+c%", true), "a b c%");
        assert_eq!(percent_decode("a+b%2B", false), "a+b+");
        assert_eq!(percent_decode("%zz%4", false), "%zz%4");
    }
}
