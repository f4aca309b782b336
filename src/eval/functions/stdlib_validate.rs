//! stdlib's validators: `validate_legacy`, the deprecated `validate_*` functions and the
//! `is_*` predicates, with stdlib 8.5's rules and messages.

use crate::eval::compiler::{Compiler, Flow, R};
use crate::eval::functions::stdlib::{arg, fail, fail_plain, inspect, ruby_class};
use crate::eval::functions::Args;
use crate::eval::types::{self, PType};
use crate::eval::values::value::{Regex, Value};
use crate::eval::LogLevel;

pub(in crate::eval) fn is_integer_like(v: &Value) -> bool {
    match v {
        Value::Int(_) => true,
        Value::Str(s) => {
            let t = s.strip_prefix('-').unwrap_or(s);
            !t.is_empty()
                && t.chars().all(|c| c.is_ascii_digit())
                && (t == "0" || !t.starts_with('0'))
        }
        _ => false,
    }
}

fn is_float_like(v: &Value) -> bool {
    match v {
        Value::Float(_) => true,
        Value::Str(s) => {
            let t = s.strip_prefix('-').unwrap_or(s);
            t.contains('.') && t.parse::<f64>().is_ok() && !t.contains(['e', 'E'])
        }
        _ => false,
    }
}

fn is_numeric_like(v: &Value) -> bool {
    match v {
        Value::Int(_) | Value::Float(_) => true,
        Value::Str(s) => s.trim().parse::<f64>().is_ok() && !s.contains(['x', 'X']),
        _ => false,
    }
}

fn is_absolute_path(s: &str) -> bool {
    s.starts_with('/')
        || (s.len() > 2 && s.as_bytes()[1] == b':' && matches!(s.as_bytes()[2], b'\\' | b'/'))
        || s.starts_with("\\\\")
}

fn is_ipv4(s: &str) -> bool {
    s.parse::<std::net::Ipv4Addr>().is_ok()
}

fn is_ipv6(s: &str) -> bool {
    s.parse::<std::net::Ipv6Addr>().is_ok()
}

/// stdlib's `is_domain_name`: `.`, or at most 255 characters (without a final dot) of
/// dot-separated labels of 1 to 63 letters, digits and inner hyphens; with more than one
/// label, the last is alphabetic. Ruby's `^`/`$` anchor at line ends, as here.
pub(in crate::eval) fn is_domain_name(s: &str) -> bool {
    if s == "." {
        return true;
    }
    let domain = s.strip_suffix('.').unwrap_or(s);
    if domain.is_empty() || domain.chars().count() > 255 {
        return false;
    }
    let line_match = |pat: &str, text: &str| regex::Regex::new(pat).is_ok_and(|r| r.is_match(text));
    if domain.contains('.') && !line_match(r"(?m)\.[A-Za-z]+$", domain) {
        return false;
    }
    // Ruby's `split` drops trailing empty labels.
    let labels = domain.trim_end_matches('.').split('.');
    labels.into_iter().all(|l| {
        let n = l.chars().count();
        (1..=63).contains(&n)
            && !l.starts_with('-')
            && !l.ends_with('-')
            && line_match(r"(?mi)^[a-z0-9-]+$", l)
    })
}

/// stdlib's `is_email_address`: `\A([\w+\-].?)+@[a-z0-9\-]+(\.[a-z]+)*\.[a-z]+\z`
/// (lower-case domains only).
pub(in crate::eval) fn is_email_address(s: &str) -> bool {
    regex::Regex::new(r"\A([A-Za-z0-9_+\-].?)+@[a-z0-9\-]+(\.[a-z]+)*\.[a-z]+\z")
        .is_ok_and(|r| r.is_match(s))
}

fn predicate(name: &str, v: &Value) -> bool {
    let s = match v {
        Value::Str(s) => s.as_str(),
        _ => "",
    };
    match name {
        // A string that looks like a number is not a string to stdlib.
        "is_string" => matches!(v, Value::Str(_)) && !is_integer_like(v) && !is_float_like(v),
        "is_array" => matches!(v, Value::Array(_)),
        "is_hash" => matches!(v, Value::Hash(_)),
        "is_bool" => matches!(v, Value::Bool(_)),
        "is_integer" => is_integer_like(v),
        "is_float" => is_float_like(v),
        "is_numeric" => is_numeric_like(v),
        "is_absolute_path" => is_absolute_path(s),
        "is_ip_address" => is_ipv4(s) || is_ipv6(s),
        "is_ipv4_address" => is_ipv4(s),
        "is_ipv6_address" => is_ipv6(s),
        "is_domain_name" => is_domain_name(s),
        "is_mac_address" => {
            let parts: Vec<&str> = s.split(':').collect();
            (parts.len() == 6 || parts.len() == 20)
                && parts
                    .iter()
                    .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
        }
        "is_email_address" => is_email_address(s),
        _ => false,
    }
}

pub(in crate::eval) fn f_is(_c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    Ok(Value::Bool(predicate(&a.name, &arg(a, 0))))
}

/// Runs a legacy validator; `Err` carries its failure message.
fn legacy_check(name: &str, args: &[Value]) -> Result<(), String> {
    let first = args.first().cloned().unwrap_or(Value::Undef);
    let all = |ok: &dyn Fn(&Value) -> bool, what: &str| -> Result<(), String> {
        for v in args {
            if !ok(v) {
                return Err(format!(
                    "{} is not {what}.  It looks to be a {}",
                    inspect(v),
                    ruby_class(v)
                ));
            }
        }
        Ok(())
    };
    match name {
        "validate_string" => all(&|v| matches!(v, Value::Str(_) | Value::Undef), "a string"),
        "validate_bool" => all(&|v| matches!(v, Value::Bool(_)), "a boolean"),
        "validate_array" => all(&|v| matches!(v, Value::Array(_)), "an Array"),
        "validate_hash" => all(&|v| matches!(v, Value::Hash(_)), "a Hash"),
        "validate_absolute_path" => {
            for v in args {
                let items = match v {
                    Value::Array(x) => x.clone(),
                    other => vec![other.clone()],
                };
                for i in items {
                    if !matches!(&i, Value::Str(s) if is_absolute_path(s)) {
                        return Err(format!("{} is not an absolute path.", inspect(&i)));
                    }
                }
            }
            Ok(())
        }
        "validate_integer" | "validate_numeric" => {
            let int = name == "validate_integer";
            let items = match &first {
                Value::Array(x) => x.clone(),
                other => vec![other.clone()],
            };
            let bound = |i: usize| -> Option<f64> {
                match args.get(i) {
                    Some(Value::Int(n)) => Some(*n as f64),
                    Some(Value::Float(f)) => Some(*f),
                    Some(Value::Str(s)) if !s.is_empty() => s.parse().ok(),
                    _ => None,
                }
            };
            let (max, min) = (bound(1), bound(2));
            for v in items {
                let ok = if int {
                    is_integer_like(&v)
                } else {
                    is_numeric_like(&v)
                };
                if !ok {
                    return Err(format!(
                        "{name}(): Expected first argument to be {}, got {}",
                        if int {
                            "an Integer or Array"
                        } else {
                            "a Numeric or Array"
                        },
                        ruby_class(&v)
                    ));
                }
                let n: f64 = match &v {
                    Value::Int(i) => *i as f64,
                    Value::Float(f) => *f,
                    other => other.to_display().parse().unwrap_or(0.0),
                };
                if max.is_some_and(|m| n > m) {
                    return Err(format!(
                        "{name}(): Expected {} to be smaller or equal to {}, got {}",
                        inspect(&v),
                        args[1].to_display(),
                        inspect(&v)
                    ));
                }
                if min.is_some_and(|m| n < m) {
                    return Err(format!(
                        "{name}(): Expected {} to be greater or equal to {}, got {}",
                        inspect(&v),
                        args[2].to_display(),
                        inspect(&v)
                    ));
                }
            }
            Ok(())
        }
        "validate_re" => {
            let s = first.to_display();
            let pats = match args.get(1) {
                Some(Value::Array(x)) => x.clone(),
                Some(v) => vec![v.clone()],
                None => vec![],
            };
            let ok = pats.iter().any(|p| {
                let src = match p {
                    Value::Regex(r) => r.source.to_string(),
                    other => other.to_display(),
                };
                Regex::new(&src).is_ok_and(|r| r.is_match(&s))
            });
            if ok {
                Ok(())
            } else {
                Err(match args.get(2) {
                    Some(Value::Str(m)) => m.clone(),
                    _ => format!(
                        "validate_re(): {} does not match {}",
                        inspect(&first),
                        inspect(args.get(1).unwrap_or(&Value::Undef))
                    ),
                })
            }
        }
        "validate_slength" => {
            let max = args
                .get(1)
                .map(|v| v.to_display().parse::<usize>().unwrap_or(0))
                .unwrap_or(0);
            let min = args
                .get(2)
                .map(|v| v.to_display().parse::<usize>().unwrap_or(0))
                .unwrap_or(0);
            let items = match &first {
                Value::Array(x) => x.clone(),
                other => vec![other.clone()],
            };
            for v in items {
                let n = v.to_display().chars().count();
                if n > max {
                    return Err(format!("validate_slength(): Expected length of {} to be smaller or equal to {max}, got {n}", inspect(&v)));
                }
                if n < min {
                    return Err(format!("validate_slength(): Expected length of {} to be greater or equal to {min}, got {n}", inspect(&v)));
                }
            }
            Ok(())
        }
        "validate_ip_address" | "validate_ipv4_address" | "validate_ipv6_address" => {
            let p = name.trim_start_matches("validate_").replace("_address", "");
            for v in args {
                let s = v.to_display();
                let ok = match p.as_str() {
                    "ipv4" => is_ipv4(&s),
                    "ipv6" => is_ipv6(&s),
                    _ => is_ipv4(&s) || is_ipv6(&s),
                };
                if !ok {
                    return Err(format!(
                        "{} is not a valid {}{} address.",
                        inspect(v),
                        p.replace("ip", "IP"),
                        ""
                    ));
                }
            }
            Ok(())
        }
        // Unknown validators accept: stdlib would call an arbitrary function here.
        _ => Ok(()),
    }
}

pub(in crate::eval) fn f_validate(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if a.values.is_empty() {
        return Err(fail(c, a, "wrong number of arguments (0; must be > 0)"));
    }
    legacy_check(&a.name, &a.values).map_err(|m| fail_plain(c, a, m))?;
    Ok(Value::Undef)
}

impl Compiler<'_> {
    /// A type written as a string (`'Optional[String]'`), parsed and evaluated.
    pub(in crate::eval) fn type_from_string(
        &mut self,
        text: &str,
        span: crate::span::Span,
    ) -> R<PType> {
        let file = self.sources.add("<type string>", text);
        let parsed = crate::eval::compiler::parse_source(text, file);
        let Some(program) = parsed.program else {
            return Err(Flow::Err(self.runtime(
                format!("The string '{text}' cannot be parsed as a type"),
                span,
            )));
        };
        self.type_alias_depth += 1;
        let t = self.eval(&program.body, self.top);
        self.type_alias_depth -= 1;
        match t? {
            Value::Type(t) => Ok(*t),
            _ => Err(Flow::Err(self.runtime(
                format!("The string '{text}' cannot be parsed as a type"),
                span,
            ))),
        }
    }
}

/// `validate_legacy(Type, 'validate_x', value, extra...)`: the type decides; the old
/// validator only chooses between a deprecation warning and a failure.
pub(in crate::eval) fn f_validate_legacy(c: &mut Compiler<'_>, a: &mut Args) -> R<Value> {
    if a.values.len() < 3 {
        return Err(fail_plain(
            c,
            a,
            format!(
                "'validate_legacy' expects at least 3 arguments, got {}",
                a.values.len()
            ),
        ));
    }
    let t = match arg(a, 0) {
        Value::Type(t) => *t,
        Value::Str(s) => c.type_from_string(&s, a.span)?,
        other => {
            return Err(fail_plain(
                c,
                a,
                format!(
                    "'validate_legacy' parameter 'target_type' expects a Type value, got {}",
                    other.type_name()
                ),
            ))
        }
    };
    let func = arg(a, 1).to_display();
    let value = arg(a, 2);
    // stdlib 9 asks only the type, and names it in the failure (`validate_legacy(Integer, ...)`).
    if crate::eval::functions::stdlib9::is_stdlib9(c) {
        if t.is_instance(&value) {
            return Ok(Value::Undef);
        }
        let msg = format!("validate_legacy({t}, ...) {}", types::mismatch(&t, &value));
        return Err(fail_plain(c, a, msg));
    }
    let mut legacy_args = vec![value.clone()];
    legacy_args.extend(a.values[3..].iter().cloned());
    let previous = legacy_check(&func, &legacy_args).is_ok();
    if t.is_instance(&value) {
        if !previous {
            c.log(
                LogLevel::Notice,
                format!("Accepting previously invalid value for target type '{t}'"),
            );
        }
        return Ok(Value::Undef);
    }
    let msg = format!("validate_legacy({func}) {}", types::mismatch(&t, &value));
    if previous {
        c.log(LogLevel::Warning, msg);
        Ok(Value::Undef)
    } else {
        Err(fail_plain(c, a, msg))
    }
}
