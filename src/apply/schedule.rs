//! The `schedule` metaparameter: whether a resource is due in this run, as Puppet's
//! `Puppet::Type::Schedule#match?` decides it (lib/puppet/type/schedule.rb), from the time the
//! resource was last checked (kept in the state directory, `schedules.json`).
//!
//! A resource names a `schedule` resource of the catalog or one of Puppet's default schedules
//! (`puppet`: hourly, twice an hour; `hourly`, `daily`, `weekly`, `monthly`; `never`). Every
//! attribute of the schedule must match: `range` (local clock times, possibly across
//! midnight, with `weekday` deciding by the day the range started), `period` with
//! `periodmatch` (`distance`: at least period/`repeat` since the last check; `number`: another
//! hour, day of month, month, or week), `weekday` (when there is no range). A resource that
//! is not due is skipped quietly, as Puppet does (its log says so at debug level only).

use crate::catalog::{Catalog, Resource};
use jiff::civil::Date;
use jiff::tz::TimeZone;
use jiff::{Timestamp, Zoned};
use serde_json::Value as Json;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Period {
    Hourly,
    Daily,
    Weekly,
    Monthly,
    Never,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeriodMatch {
    Distance,
    Number,
}

/// A clock time `[hour, minute, second]`.
type Clock = [i8; 3];

#[derive(Clone, Debug, PartialEq)]
pub struct Schedule {
    pub range: Vec<(Clock, Clock)>,
    pub period: Option<Period>,
    pub periodmatch: PeriodMatch,
    pub repeat: i64,
    /// Days of the week (0 = Sunday) when the schedule applies; `None`: every day.
    pub weekday: Option<[bool; 7]>,
}

/// The names of Puppet's default schedules.
pub const DEFAULTS: &[&str] = &["puppet", "hourly", "daily", "weekly", "monthly", "never"];

impl Schedule {
    fn empty() -> Schedule {
        Schedule {
            range: vec![],
            period: None,
            periodmatch: PeriodMatch::Distance,
            repeat: 1,
            weekday: None,
        }
    }

    /// One of Puppet's default schedules (`Schedule.mkdefaultschedules`).
    pub fn default_named(name: &str) -> Option<Schedule> {
        let mut s = Schedule::empty();
        s.period = Some(match name {
            "puppet" => {
                s.repeat = 2;
                Period::Hourly
            }
            "hourly" => Period::Hourly,
            "daily" => Period::Daily,
            "weekly" => Period::Weekly,
            "monthly" => Period::Monthly,
            "never" => Period::Never,
            _ => return None,
        });
        Some(s)
    }

    /// A `schedule` resource of the catalog, with Puppet's validation messages.
    pub fn from_resource(r: &Resource) -> Result<Schedule, String> {
        let mut s = Schedule::empty();
        let p = &r.parameters;
        if let Some(v) = p.get("periodmatch") {
            s.periodmatch = match text(v).as_str() {
                "distance" => PeriodMatch::Distance,
                "number" => PeriodMatch::Number,
                other => {
                    return Err(format!(
                        "Invalid value \"{other}\". Valid values are number, distance."
                    ))
                }
            };
        }
        if let Some(v) = p.get("period") {
            s.period = Some(match text(v).as_str() {
                "hourly" => Period::Hourly,
                "daily" => Period::Daily,
                "weekly" => Period::Weekly,
                "monthly" => Period::Monthly,
                "never" => Period::Never,
                other => return Err(format!(
                    "Invalid value \"{other}\". Valid values are hourly, daily, weekly, monthly, never."
                )),
            });
        }
        if let Some(v) = p.get("repeat") {
            let t = text(v);
            s.repeat = t
                .parse::<i64>()
                .ok()
                .filter(|n| *n >= 1)
                .ok_or_else(|| "Repeat must be a number".to_string())?;
            if s.repeat != 1 && s.periodmatch != PeriodMatch::Distance {
                return Err(
                    "Repeat must be 1 unless periodmatch is 'distance', not 'number'".to_string(),
                );
            }
        }
        if let Some(v) = p.get("range") {
            for value in list(v) {
                s.range.push(parse_range(&value)?);
            }
        }
        if let Some(v) = p.get("weekday") {
            let mut days = [false; 7];
            for value in list(v) {
                days[weekday_index(&value)
                    .ok_or_else(|| format!("{value} is not a valid day of the week"))?] = true;
            }
            s.weekday = Some(days);
        }
        Ok(s)
    }

    /// Whether a resource last checked at `previous` (Unix seconds, 0 when never) is due at
    /// `now` in time zone `tz`.
    pub fn matches(&self, previous: i64, now: i64, tz: &TimeZone) -> bool {
        let zoned = |t: i64| Timestamp::from_second(t).map(|ts| ts.to_zoned(tz.clone()));
        let (Ok(prev), Ok(now_z)) = (zoned(previous), zoned(now)) else {
            return true;
        };
        // Attributes in Puppet's order: range, period, repeat, weekday.
        if !self.range.is_empty() && !self.range.iter().any(|r| self.in_range(r, &now_z, tz)) {
            return false;
        }
        if let Some(period) = self.period {
            if !self.period_matches(period, &prev, &now_z, previous, now) {
                return false;
            }
        }
        if self.range.is_empty() {
            if let Some(days) = self.weekday {
                if !days[weekday(now_z.date())] {
                    return false;
                }
            }
        }
        true
    }

    fn weekday_ok(&self, day: Date) -> bool {
        self.weekday.is_none_or(|days| days[weekday(day)])
    }

    fn in_range(&self, (from, to): &(Clock, Clock), now: &Zoned, tz: &TimeZone) -> bool {
        let at = |d: Date, c: &Clock| {
            d.at(c[0], c[1], c[2], 0)
                .to_zoned(tz.clone())
                .map(|z| z.timestamp())
        };
        let today = now.date();
        let t = now.timestamp();
        let (Ok(start), Ok(end)) = (at(today, from), at(today, to)) else {
            return false;
        };
        if start < end {
            return start <= t && t <= end && self.weekday_ok(today);
        }
        // A range across midnight: tonight's window, or the one that began yesterday.
        if let (Ok(tomorrow), Ok(yesterday)) = (today.tomorrow(), today.yesterday()) {
            if let Ok(end_tomorrow) = at(tomorrow, to) {
                if start <= t && t <= end_tomorrow {
                    return self.weekday_ok(today);
                }
            }
            if let Ok(start_yesterday) = at(yesterday, from) {
                return start_yesterday <= t && t <= end && self.weekday_ok(yesterday);
            }
        }
        false
    }

    fn period_matches(
        &self,
        period: Period,
        prev: &Zoned,
        now: &Zoned,
        previous: i64,
        now_s: i64,
    ) -> bool {
        let scale = match period {
            Period::Never => return false,
            Period::Hourly => 3600,
            Period::Daily => 86_400,
            Period::Weekly => 604_800,
            Period::Monthly => 2_592_000,
        };
        match self.periodmatch {
            PeriodMatch::Distance => now_s - previous >= scale / self.repeat,
            PeriodMatch::Number => match period {
                Period::Hourly => now.hour() != prev.hour(),
                Period::Daily => now.day() != prev.day(),
                Period::Monthly => now.month() != prev.month(),
                Period::Weekly => {
                    weekday(prev.date()) > weekday(now.date()) || now_s - previous > 7 * 86_400
                }
                Period::Never => false,
            },
        }
    }
}

/// The schedules a catalog can use: its `schedule` resources, then Puppet's defaults.
pub fn catalog_schedules(catalog: &Catalog) -> Result<HashMap<String, Schedule>, String> {
    let mut out = HashMap::new();
    for name in DEFAULTS {
        out.insert(name.to_string(), Schedule::default_named(name).unwrap());
    }
    for r in &catalog.resources {
        if r.type_name.eq_ignore_ascii_case("schedule") {
            let s =
                Schedule::from_resource(r).map_err(|e| format!("Schedule[{}]: {e}", r.title))?;
            out.insert(r.title.clone(), s);
        }
    }
    Ok(out)
}

/// The schedule name a resource asks for, if any.
pub fn wanted(r: &Resource) -> Option<String> {
    r.parameters.get("schedule").map(text)
}

/// When each scheduled resource was last checked (`STATE_DIR/schedules.json` for the CLI).
pub struct Checked {
    path: PathBuf,
    times: BTreeMap<String, i64>,
    /// Whether `record` changed anything since the load.
    changed: bool,
}

impl Checked {
    pub fn load(path: &Path) -> Checked {
        let path = path.to_path_buf();
        let times = crate::apply::state::read_private(&path)
            .ok()
            .and_then(|b| serde_json::from_slice(&b).ok())
            .unwrap_or_default();
        Checked {
            path,
            times,
            changed: false,
        }
    }

    pub fn last(&self, reference: &str) -> i64 {
        self.times.get(reference).copied().unwrap_or(0)
    }

    pub fn record(&mut self, reference: &str, now: i64) {
        if self.times.insert(reference.to_string(), now) != Some(now) {
            self.changed = true;
        }
    }

    /// Writes the times when they changed (a run without scheduled resources writes
    /// nothing: each write is an fsync of the file and of its directory).
    pub fn save(&self) -> std::io::Result<()> {
        if !self.changed {
            return Ok(());
        }
        let bytes = serde_json::to_vec_pretty(&self.times)?;
        super::atomic::write_file(&self.path, &bytes, 0o600)
    }
}

fn text(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn list(v: &Json) -> Vec<String> {
    match v {
        Json::Array(items) => items.iter().map(text).collect(),
        other => vec![text(other)],
    }
}

fn weekday(d: Date) -> usize {
    d.weekday().to_sunday_zero_offset() as usize
}

fn weekday_index(value: &str) -> Option<usize> {
    if let Ok(n) = value.parse::<usize>() {
        return (n <= 6).then_some(n);
    }
    let lower = value.to_ascii_lowercase();
    const LONG: [&str; 7] = [
        "sunday",
        "monday",
        "tuesday",
        "wednesday",
        "thursday",
        "friday",
        "saturday",
    ];
    LONG.iter().position(|day| {
        lower.len() >= 3 && (day.starts_with(&lower) || lower == day.replace("day", ""))
    })
}

/// `"HH[:MM[:SS]] - HH[:MM[:SS]]"`, as Puppet's `range` parameter validates and munges it.
fn parse_range(value: &str) -> Result<(Clock, Clock), String> {
    let invalid = || format!("Invalid range value '{value}'");
    let (a, b) = value.split_once('-').ok_or_else(invalid)?;
    let clock = |s: &str| -> Result<Clock, String> {
        let parts: Vec<&str> = s.trim().split(':').collect();
        if parts.is_empty() || parts.len() > 3 {
            return Err(invalid());
        }
        let mut c = [0i8; 3];
        for (i, p) in parts.iter().enumerate() {
            c[i] = p.parse::<i8>().map_err(|_| invalid())?;
        }
        if !(0..=23).contains(&c[0]) {
            return Err(format!("Invalid hour '{}'", c[0]));
        }
        if !(0..=59).contains(&c[1]) {
            return Err(format!("Invalid minute '{}'", c[1]));
        }
        if !(0..=59).contains(&c[2]) {
            return Err(format!("Invalid second '{}'", c[2]));
        }
        Ok(c)
    };
    Ok((clock(a)?, clock(b)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use jiff::tz::Offset;

    fn utc() -> TimeZone {
        TimeZone::fixed(Offset::UTC)
    }

    /// Unix seconds of a UTC civil time.
    fn at(y: i16, m: i8, d: i8, h: i8, mi: i8) -> i64 {
        jiff::civil::date(y, m, d)
            .at(h, mi, 0, 0)
            .to_zoned(utc())
            .unwrap()
            .timestamp()
            .as_second()
    }

    #[test]
    fn defaults_follow_puppet() {
        let never = Schedule::default_named("never").unwrap();
        assert!(!never.matches(0, at(2026, 1, 1, 12, 0), &utc()));
        let puppet = Schedule::default_named("puppet").unwrap();
        let now = at(2026, 1, 1, 12, 0);
        assert!(puppet.matches(0, now, &utc()));
        // Twice an hour: due again 30 minutes after the last check, not before.
        assert!(!puppet.matches(now - 29 * 60, now, &utc()));
        assert!(puppet.matches(now - 30 * 60, now, &utc()));
        let daily = Schedule::default_named("daily").unwrap();
        assert!(!daily.matches(now - 3600, now, &utc()));
        assert!(daily.matches(now - 86_400, now, &utc()));
    }

    #[test]
    fn ranges_weekdays_and_period_numbers() {
        let mut s = Schedule::empty();
        s.range = vec![parse_range("22:00 - 02:00").unwrap()];
        // 2026-01-02 is a Friday.
        assert!(s.matches(0, at(2026, 1, 2, 23, 0), &utc()));
        assert!(s.matches(0, at(2026, 1, 3, 1, 0), &utc()));
        assert!(!s.matches(0, at(2026, 1, 3, 12, 0), &utc()));
        // The window that began on Friday night still counts as Friday's.
        s.weekday = Some([false, false, false, false, false, true, false]);
        assert!(s.matches(0, at(2026, 1, 3, 1, 0), &utc()));
        assert!(!s.matches(0, at(2026, 1, 3, 23, 0), &utc()));
        let mut n = Schedule::empty();
        n.period = Some(Period::Hourly);
        n.periodmatch = PeriodMatch::Number;
        assert!(!n.matches(at(2026, 1, 2, 10, 5), at(2026, 1, 2, 10, 55), &utc()));
        assert!(n.matches(at(2026, 1, 2, 10, 55), at(2026, 1, 2, 11, 5), &utc()));
    }

    #[test]
    fn parameters_are_validated_with_puppets_messages() {
        assert_eq!(parse_range("25 - 3").unwrap_err(), "Invalid hour '25'");
        assert_eq!(
            parse_range("nope").unwrap_err(),
            "Invalid range value 'nope'"
        );
        assert_eq!(weekday_index("Tues"), Some(2));
        assert_eq!(weekday_index("sat"), Some(6));
        assert_eq!(weekday_index("5"), Some(5));
        assert_eq!(weekday_index("Funday"), None);
    }
}
