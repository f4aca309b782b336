//! Puppet's `Timespan`: a signed count of nanoseconds, its string formats (`%D-%H:%M:%S.%-N`),
//! and the arithmetic of timespans and timestamps.

use super::value::{Timestamp, Value};

const NS_PER_SEC: i64 = 1_000_000_000;
const NS_PER_MIN: i64 = 60 * NS_PER_SEC;
const NS_PER_HOUR: i64 = 60 * NS_PER_MIN;
const NS_PER_DAY: i64 = 24 * NS_PER_HOUR;

/// The formats Puppet tries, in order, on a string without a format; the first is how a
/// timespan prints.
pub const DEFAULT_FORMATS: [&str; 8] = [
    "%D-%H:%M:%S.%-N",
    "%H:%M:%S.%-N",
    "%M:%S.%-N",
    "%S.%-N",
    "%D-%H:%M:%S",
    "%H:%M:%S",
    "%D-%H:%M",
    "%S",
];

/// A duration in nanoseconds (Puppet's `Time::Timespan`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Timespan(pub i64);

#[derive(Clone, Copy, Debug, PartialEq)]
enum Unit {
    Day,
    Hour,
    Minute,
    Second,
    Milli,
    Nano,
}

/// One part of a format: literal text, or a field with its padding (`None` for `-`, no
/// padding), width, and whether it holds the total (the largest unit of the format does).
#[derive(Clone, Debug)]
enum Segment {
    Literal(String),
    Field {
        unit: Unit,
        pad: Option<char>,
        width: Option<usize>,
        total: bool,
    },
}

impl Unit {
    fn default_width(self) -> usize {
        match self {
            Unit::Day => 1,
            Unit::Milli => 3,
            Unit::Nano => 9,
            _ => 2,
        }
    }

    fn rank(self) -> u8 {
        match self {
            Unit::Nano => 0,
            Unit::Milli => 1,
            Unit::Second => 2,
            Unit::Minute => 3,
            Unit::Hour => 4,
            Unit::Day => 5,
        }
    }
}

/// Parses a format (Puppet's `FormatParser`): `%D %H %M %S %L %N`, flags `-` (no padding)
/// and `_` (blanks), a width, `%%`.
fn parse_format(f: &str) -> Result<Vec<Segment>, String> {
    let bad = |start: usize, pos: usize| {
        let expr: String = f.chars().skip(start).take(pos - start).collect();
        format!("Bad format specifier '{expr}' in '{f}', at position {pos}")
    };
    let mut out: Vec<Segment> = Vec::new();
    let (mut in_spec, mut pad_state) = (false, false);
    let (mut pad, mut width): (Option<char>, Option<usize>) = (Some('0'), None);
    let mut start = 0;
    let mut highest: Option<Unit> = None;
    let mut last = 0;
    for (pos, c) in f.chars().enumerate() {
        last = pos;
        if !in_spec {
            if c == '%' {
                in_spec = true;
                pad_state = true;
                start = pos;
                pad = Some('0');
                width = None;
            } else if let Some(Segment::Literal(s)) = out.last_mut() {
                s.push(c);
            } else {
                out.push(Segment::Literal(c.to_string()));
            }
            continue;
        }
        let unit = match c {
            '%' => {
                match out.last_mut() {
                    Some(Segment::Literal(s)) => s.push('%'),
                    _ => out.push(Segment::Literal("%".into())),
                }
                in_spec = false;
                continue;
            }
            '-' | '_' if pad_state => {
                pad = if c == '-' { None } else { Some(' ') };
                pad_state = false;
                continue;
            }
            'D' => Unit::Day,
            'H' => Unit::Hour,
            'M' => Unit::Minute,
            'S' => Unit::Second,
            'L' => Unit::Milli,
            'N' => Unit::Nano,
            d if d.is_ascii_digit() => {
                if pad_state && d == '0' {
                    pad = Some('0');
                } else {
                    let n = d as usize - '0' as usize;
                    width = Some(width.unwrap_or(0).saturating_mul(10).saturating_add(n));
                }
                pad_state = false;
                continue;
            }
            _ => return Err(bad(start, pos)),
        };
        if highest.is_none_or(|h| unit.rank() > h.rank()) {
            highest = Some(unit);
        }
        out.push(Segment::Field {
            unit,
            pad,
            width,
            total: false,
        });
        in_spec = false;
    }
    if in_spec {
        return Err(bad(start, last));
    }
    if let Some(h) = highest {
        if let Some(Segment::Field { total, .. }) = out
            .iter_mut()
            .find(|s| matches!(s, Segment::Field { unit, .. } if *unit == h))
        {
            *total = true;
        }
    }
    Ok(out)
}

impl Timespan {
    /// From seconds (a float keeps its fraction, truncated to nanoseconds).
    pub fn from_seconds(v: &Value) -> Option<Timespan> {
        match v {
            Value::Int(i) => i.checked_mul(NS_PER_SEC).map(Timespan),
            Value::Float(f) if f.is_finite() => {
                let ns = (f * NS_PER_SEC as f64).trunc();
                (ns.abs() < i64::MAX as f64).then_some(Timespan(ns as i64))
            }
            _ => None,
        }
    }

    /// From days, hours, minutes, seconds, milliseconds, microseconds and nanoseconds.
    pub fn from_fields(negative: bool, f: [i64; 7]) -> Option<Timespan> {
        let muls = [24, 60, 60, 1000, 1000, 1000];
        let mut ns = f[0];
        for (m, x) in muls.iter().zip(&f[1..]) {
            ns = ns.checked_mul(*m)?.checked_add(*x)?;
        }
        Some(Timespan(if negative { -ns } else { ns }))
    }

    /// Parses with one format; Puppet's error when the string does not fit it.
    pub fn parse_with(s: &str, format: &str) -> Result<Timespan, String> {
        let segs = parse_format(format)?;
        let fail = || format!("Unable to parse '{s}' using format '{format}'");
        let mut re = String::from(r"\A-?");
        for seg in &segs {
            match seg {
                Segment::Literal(l) => re.push_str(&format!("({})", regex::escape(l))),
                Segment::Field {
                    unit,
                    pad,
                    width,
                    total,
                } => {
                    let dw = unit.default_width();
                    re.push_str(&match (width, pad) {
                        (None, Some(' ')) if *total => r"\s*([0-9]+)".to_string(),
                        (None, Some(' ')) => format!(r"([0-9\s]{{1,{dw}}})"),
                        (None, _) if *total => "([0-9]+)".to_string(),
                        (None, _) => format!("([0-9]{{1,{dw}}})"),
                        (Some(w), None) => format!("([0-9]{{1,{w}}})"),
                        (Some(w), Some('0')) => format!("([0-9]{{{w}}})"),
                        (Some(w), _) => format!(r"([0-9\s]{{{w}}})"),
                    });
                }
            }
        }
        re.push_str(r"\z");
        let re = regex::Regex::new(&re).map_err(|_| fail())?;
        let caps = re.captures(s).ok_or_else(fail)?;
        let mut ns: i64 = 0;
        for (i, seg) in segs.iter().enumerate() {
            let Segment::Field {
                unit, width, total, ..
            } = seg
            else {
                continue;
            };
            let g = caps.get(i + 1).map_or("", |m| m.as_str()).trim_start();
            if g.is_empty() || !g.bytes().all(|b| b.is_ascii_digit()) {
                return Err(fail());
            }
            let n: i64 = g.parse().map_err(|_| fail())?;
            let add = match unit {
                Unit::Milli | Unit::Nano if *total => {
                    return Err("Format specifiers %L and %N denotes fractions and must be used together with a specifier of higher magnitude".into());
                }
                Unit::Milli | Unit::Nano => {
                    let p = 9 - g.len() as i64;
                    if p <= 0 {
                        Some(n)
                    } else {
                        n.checked_mul(10i64.pow(p as u32))
                    }
                }
                Unit::Day => n.checked_mul(NS_PER_DAY),
                Unit::Hour => n.checked_mul(NS_PER_HOUR),
                Unit::Minute => n.checked_mul(NS_PER_MIN),
                Unit::Second => n.checked_mul(NS_PER_SEC),
            };
            let _ = width;
            ns = add.and_then(|a| ns.checked_add(a)).ok_or_else(fail)?;
        }
        Ok(Timespan(if s.starts_with('-') { -ns } else { ns }))
    }

    /// Parses with the first of `formats` that fits (Puppet's default formats when none
    /// are given).
    pub fn parse(s: &str, formats: &[String]) -> Result<Timespan, String> {
        if let [one] = formats {
            return Self::parse_with(s, one);
        }
        for f in formats {
            if let Ok(t) = Self::parse_with(s, f) {
                return Ok(t);
            }
        }
        Err(format!(
            "Unable to parse '{s}' using any of the formats {}",
            formats.join(", ")
        ))
    }

    /// The default formats, as strings.
    pub fn default_formats() -> Vec<String> {
        DEFAULT_FORMATS.iter().map(|f| f.to_string()).collect()
    }

    /// Formats with a Puppet timespan format (`strftime`).
    pub fn format(self, format: &str) -> Result<String, String> {
        let segs = parse_format(format)?;
        let abs = self.0.unsigned_abs();
        let mut out = String::new();
        if self.0 < 0 {
            out.push('-');
        }
        for seg in &segs {
            let Segment::Field {
                unit,
                pad,
                width,
                total,
            } = seg
            else {
                if let Segment::Literal(l) = seg {
                    out.push_str(l);
                }
                continue;
            };
            let per = |n: u64| abs / n;
            let n: u64 = match unit {
                Unit::Day => per(NS_PER_DAY as u64),
                Unit::Hour if *total => per(NS_PER_HOUR as u64),
                Unit::Hour => per(NS_PER_HOUR as u64) % 24,
                Unit::Minute if *total => per(NS_PER_MIN as u64),
                Unit::Minute => per(NS_PER_MIN as u64) % 60,
                Unit::Second if *total => per(NS_PER_SEC as u64),
                Unit::Second => per(NS_PER_SEC as u64) % 60,
                Unit::Milli if *total => per(1_000_000),
                Unit::Milli => per(1_000_000) % 1000,
                Unit::Nano => {
                    let w = width.unwrap_or(9);
                    if w < 9 {
                        let v = abs / 10u64.pow((9 - w) as u32);
                        if *total {
                            v
                        } else {
                            v % 10u64.checked_pow(w as u32).unwrap_or(u64::MAX)
                        }
                    } else if *total {
                        abs
                    } else {
                        abs % NS_PER_SEC as u64
                    }
                }
            };
            let w = width.unwrap_or(unit.default_width());
            if matches!(unit, Unit::Milli | Unit::Nano) {
                // A fraction drops its trailing zeros unless zero-padded; padded, it is
                // left-justified with blanks (Ruby's `%-3d`).
                let mut digits = n.to_string();
                if !*total && *pad != Some('0') {
                    let kept = digits.trim_end_matches('0').len().max(1);
                    digits.truncate(kept);
                }
                match pad {
                    None => out.push_str(&digits),
                    Some(_) => out.push_str(&format!("{digits:<w$}")),
                }
            } else {
                match pad {
                    None => out.push_str(&n.to_string()),
                    Some(' ') => out.push_str(&format!("{n:>w$}")),
                    Some(_) => out.push_str(&format!("{n:0>w$}")),
                }
            }
        }
        Ok(out)
    }

    /// Seconds, as a float.
    pub fn to_f64(self) -> f64 {
        // Ruby's `@nsecs.fdiv(NSECS_PER_SEC)`.
        crate::eval::values::value::ruby_fdiv(i128::from(self.0), i128::from(NS_PER_SEC))
    }
}

impl std::fmt::Display for Timespan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.format(DEFAULT_FORMATS[0]) {
            Ok(s) => f.write_str(&s),
            Err(_) => write!(f, "{}", self.0),
        }
    }
}

fn ts_nanos(t: Timestamp) -> i128 {
    t.secs as i128 * NS_PER_SEC as i128 + t.nanos as i128
}

fn ts_from_nanos(ns: i128) -> Option<Timestamp> {
    let secs = i64::try_from(ns.div_euclid(NS_PER_SEC as i128)).ok()?;
    Some(Timestamp {
        secs,
        nanos: ns.rem_euclid(NS_PER_SEC as i128) as u32,
    })
}

/// Nanoseconds of a number of seconds, as Puppet adds them to a time value.
fn num_nanos(v: &Value) -> Option<i128> {
    match v {
        Value::Int(i) => Some(*i as i128 * NS_PER_SEC as i128),
        Value::Float(f) if f.is_finite() => Some((f * NS_PER_SEC as f64).trunc() as i128),
        _ => None,
    }
}

fn span_of(ns: i128) -> Result<Value, String> {
    i64::try_from(ns)
        .map(|n| Value::Timespan(Timespan(n)))
        .map_err(|_| "Timespan out of range".to_string())
}

fn stamp_of(ns: i128) -> Result<Value, String> {
    ts_from_nanos(ns)
        .map(Value::Timestamp)
        .ok_or_else(|| "Timestamp out of range".to_string())
}

/// `a_an_uc` of Puppet's label of a value in time arithmetic messages.
fn label(v: &Value) -> String {
    let n = v.type_name();
    let n = n.split('[').next().unwrap_or(&n).to_string();
    let article = if n.starts_with(['A', 'E', 'I', 'O', 'U']) {
        "an"
    } else {
        "a"
    };
    format!("{article} {n}")
}

/// `+ - * / %` with a timespan or a timestamp on the left (or a number plus one on the
/// right): `None` when neither side is a time value.
pub fn arith(op: &str, l: &Value, r: &Value) -> Option<Result<Value, String>> {
    use Value::{Timespan as Span, Timestamp as Stamp};
    let uc = |s: String| {
        let mut c = s.chars();
        c.next()
            .map(|f| f.to_uppercase().collect::<String>() + c.as_str())
            .unwrap_or_default()
    };
    Some(match (op, l, r) {
        ("+", Span(a), Span(b)) => span_of(a.0 as i128 + b.0 as i128),
        ("+", Span(a), Stamp(b)) | ("+", Stamp(b), Span(a)) => stamp_of(ts_nanos(*b) + a.0 as i128),
        ("+", Span(a), n) => match num_nanos(n) {
            Some(x) => span_of(a.0 as i128 + x),
            None => Err(format!("{} cannot be added to a Timespan", uc(label(n)))),
        },
        ("+", Stamp(a), n) => match num_nanos(n) {
            Some(x) => stamp_of(ts_nanos(*a) + x),
            None => Err(format!("{} cannot be added to a Timestamp", uc(label(n)))),
        },
        ("+", Value::Int(_) | Value::Float(_), Span(b)) => {
            span_of(num_nanos(l).unwrap_or(0) + b.0 as i128)
        }
        ("+", Value::Int(_) | Value::Float(_), Stamp(b)) => {
            stamp_of(num_nanos(l).unwrap_or(0) + ts_nanos(*b))
        }
        ("-", Span(a), Span(b)) => span_of(a.0 as i128 - b.0 as i128),
        ("-", Span(a), n) => match num_nanos(n) {
            Some(x) => span_of(a.0 as i128 - x),
            None => Err(format!(
                "{} cannot be subtracted from a Timespan",
                uc(label(n))
            )),
        },
        ("-", Stamp(a), Stamp(b)) => span_of(ts_nanos(*a) - ts_nanos(*b)),
        ("-", Stamp(a), Span(b)) => stamp_of(ts_nanos(*a) - b.0 as i128),
        ("-", Stamp(a), n) => match num_nanos(n) {
            Some(x) => stamp_of(ts_nanos(*a) - x),
            None => Err(format!(
                "{} cannot be subtracted from a Timestamp",
                uc(label(n))
            )),
        },
        ("*", Span(a), Value::Int(n)) => span_of(a.0 as i128 * *n as i128),
        ("*", Span(a), Value::Float(f)) => span_of((a.0 as f64 * f).trunc() as i128),
        ("*", Span(_), n) => Err(format!("A Timestamp cannot be multiplied by {}", label(n))),
        ("/", Span(a), Span(b)) if b.0 != 0 => Ok(Value::Float(a.0 as f64 / b.0 as f64)),
        ("/", Span(a), Value::Int(n)) if *n != 0 => span_of((a.0 as i128).div_euclid(*n as i128)),
        ("/", Span(a), Value::Float(f)) if *f != 0.0 => span_of((a.0 as f64 / f).floor() as i128),
        ("/", Span(_), Value::Int(0)) => Err("divided by 0".into()),
        ("/", Span(_), n) => Err(format!("A Timespan cannot be divided by {}", label(n))),
        _ => return None,
    })
}

/// Compares a time value with another of its kind or a number (seconds); `None` when
/// they do not compare.
pub fn compare(l: &Value, r: &Value) -> Option<std::cmp::Ordering> {
    use Value::{Timespan as Span, Timestamp as Stamp};
    let secs = |v: &Value| match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    match (l, r) {
        (Span(a), Span(b)) => Some(a.cmp(b)),
        (Stamp(a), Stamp(b)) => Some(a.cmp(b)),
        (Span(a), n) => a.to_f64().partial_cmp(&secs(n)?),
        (Stamp(a), n) => (ts_nanos(*a) as f64 / 1e9).partial_cmp(&secs(n)?),
        (n, Span(_) | Stamp(_)) => compare(r, n).map(std::cmp::Ordering::reverse),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_forms_print_and_parse() {
        let p = |s: &str| Timespan::parse(s, &Timespan::default_formats()).unwrap();
        assert_eq!(p("1-00:00:00").to_string(), "1-00:00:00.0");
        assert_eq!(p("10:20:30").to_string(), "0-10:20:30.0");
        assert_eq!(p("1-10:20:30.5").to_string(), "1-10:20:30.5");
        assert_eq!(p("-1-00:00:00").to_string(), "-1-00:00:00.0");
        assert_eq!(Timespan(1_000_000).to_string(), "0-00:00:00.1");
        assert!(Timespan::parse("10:20", &Timespan::default_formats()).is_err());
    }

    #[test]
    fn formats_with_totals() {
        let t = Timespan::parse_with("10:20:30", "%H:%M:%S").unwrap();
        assert_eq!(t.format("%M minutes %S").unwrap(), "620 minutes 30");
        assert_eq!(t.format("%-H %%").unwrap(), "10 %");
        assert_eq!(
            Timespan::parse_with("90", "%M").unwrap().to_string(),
            "0-01:30:00.0"
        );
        assert!(parse_format("%Q").is_err());
    }
}
