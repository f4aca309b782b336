//! Time zones as Ruby's `DateTime._strptime(tz, '%z')` reads them, which Puppet's
//! `Timestamp#format` and `strftime` use: offsets (`+05:30`, `-0800`, `UTC+3`, `GMT-2`,
//! `+5.5`) and Ruby's fixed table of zone names (`EST`, `CEST`, `Tokyo Standard Time`),
//! without daylight-saving rules. Data only: no time zone database is read.

/// Ruby's zone names and their offsets from UTC in seconds (`date/zonetab.list`, the
/// values as Ruby 3.1 answers them; the longer names only with ` standard time`).
const ZONES: &[(&str, i32)] = &[
    ("ut", 0),
    ("gmt", 0),
    ("est", -18000),
    ("edt", -14400),
    ("cst", -21600),
    ("cdt", -18000),
    ("mst", -25200),
    ("mdt", -21600),
    ("pst", -28800),
    ("pdt", -25200),
    ("a", 3600),
    ("b", 7200),
    ("c", 10800),
    ("d", 14400),
    ("e", 18000),
    ("f", 21600),
    ("g", 25200),
    ("h", 28800),
    ("i", 32400),
    ("k", 36000),
    ("l", 39600),
    ("m", 43200),
    ("n", -3600),
    ("o", -7200),
    ("p", -10800),
    ("q", -14400),
    ("r", -18000),
    ("s", -21600),
    ("t", -25200),
    ("u", -28800),
    ("v", -32400),
    ("w", -36000),
    ("x", -39600),
    ("y", -43200),
    ("z", 0),
    ("utc", 0),
    ("wet", 0),
    ("at", -7200),
    ("brst", -7200),
    ("ndt", -5400),
    ("art", -10800),
    ("adt", -10800),
    ("brt", -10800),
    ("clst", -10800),
    ("nst", -9000),
    ("ast", -14400),
    ("clt", -14400),
    ("akdt", -28800),
    ("ydt", -28800),
    ("akst", -32400),
    ("hadt", -32400),
    ("hdt", -32400),
    ("yst", -32400),
    ("ahst", -36000),
    ("hast", -36000),
    ("hst", -36000),
    ("nt", -39600),
    ("idlw", -43200),
    ("bst", 3600),
    ("cet", 3600),
    ("fwt", 3600),
    ("met", 3600),
    ("mewt", 3600),
    ("mez", 3600),
    ("swt", 3600),
    ("wat", 3600),
    ("west", 3600),
    ("cest", 7200),
    ("eet", 7200),
    ("fst", 7200),
    ("mest", 7200),
    ("mesz", 7200),
    ("sast", 7200),
    ("sst", -39600),
    ("cat", 7200),
    ("bt", 10800),
    ("eat", 10800),
    ("eest", 10800),
    ("msk", 10800),
    ("msd", 14400),
    ("ist", 19800),
    ("wast", 7200),
    ("cct", 23400),
    ("sgt", 28800),
    ("wadt", 28800),
    ("jst", 32400),
    ("kst", 32400),
    ("east", -21600),
    ("gst", 36000),
    ("eadt", 39600),
    ("idle", 43200),
    ("nzst", 43200),
    ("nzt", 43200),
    ("nzdt", 46800),
    ("acdt", 37800),
    ("acst", 34200),
    ("act", -18000),
    ("acwst", 31500),
    ("aedt", 39600),
    ("aest", 36000),
    ("aft", 16200),
    ("almt", 21600),
    ("anast", 43200),
    ("anat", 43200),
    ("aoe", -43200),
    ("aqtt", 18000),
    ("awdt", 32400),
    ("awst", 28800),
    ("azost", 0),
    ("azot", -3600),
    ("azst", 18000),
    ("azt", 14400),
    ("bnt", 28800),
    ("bot", -14400),
    ("btt", 21600),
    ("cast", 28800),
    ("chadt", 49500),
    ("chast", 45900),
    ("chost", 32400),
    ("chot", 28800),
    ("chst", 36000),
    ("chut", 36000),
    ("cidst", -14400),
    ("cist", -18000),
    ("ckt", -36000),
    ("cot", -18000),
    ("cvt", -3600),
    ("cxt", 25200),
    ("davt", 25200),
    ("ddut", 36000),
    ("easst", -18000),
    ("ect", -18000),
    ("egst", 0),
    ("egt", -3600),
    ("fet", 10800),
    ("fjst", 46800),
    ("fjt", 43200),
    ("fkst", -10800),
    ("fkt", -14400),
    ("fnt", -7200),
    ("galt", -21600),
    ("gamt", -32400),
    ("get", 14400),
    ("gft", -10800),
    ("gilt", 43200),
    ("gyt", -14400),
    ("hkt", 28800),
    ("hovst", 28800),
    ("hovt", 25200),
    ("ict", 25200),
    ("idt", 10800),
    ("iot", 21600),
    ("irdt", 16200),
    ("irkst", 32400),
    ("irkt", 28800),
    ("irst", 12600),
    ("kgt", 21600),
    ("kost", 39600),
    ("krast", 28800),
    ("krat", 25200),
    ("kuyt", 14400),
    ("lhdt", 39600),
    ("lhst", 37800),
    ("lint", 50400),
    ("magst", 43200),
    ("magt", 39600),
    ("mart", -30600),
    ("mawt", 18000),
    ("mht", 43200),
    ("mmt", 23400),
    ("mut", 14400),
    ("mvt", 18000),
    ("myt", 28800),
    ("nct", 39600),
    ("nfdt", 43200),
    ("nft", 39600),
    ("novst", 25200),
    ("novt", 25200),
    ("npt", 20700),
    ("nrt", 43200),
    ("nut", -39600),
    ("omsst", 25200),
    ("omst", 21600),
    ("orat", 18000),
    ("pet", -18000),
    ("petst", 43200),
    ("pett", 43200),
    ("pgt", 36000),
    ("phot", 46800),
    ("pht", 28800),
    ("pkt", 18000),
    ("pmdt", -7200),
    ("pmst", -10800),
    ("pont", 39600),
    ("pwt", 32400),
    ("pyst", -10800),
    ("qyzt", 21600),
    ("ret", 14400),
    ("rott", -10800),
    ("sakt", 39600),
    ("samt", 14400),
    ("sbt", 39600),
    ("sct", 14400),
    ("sret", 39600),
    ("srt", -10800),
    ("syot", 10800),
    ("taht", -36000),
    ("tft", 18000),
    ("tjt", 18000),
    ("tkt", 46800),
    ("tlt", 32400),
    ("tmt", 18000),
    ("tost", 50400),
    ("tot", 46800),
    ("trt", 10800),
    ("tvt", 43200),
    ("ulast", 32400),
    ("ulat", 28800),
    ("uyst", -7200),
    ("uyt", -10800),
    ("uzt", 18000),
    ("vet", -14400),
    ("vlast", 39600),
    ("vlat", 36000),
    ("vost", 21600),
    ("vut", 39600),
    ("wakt", 43200),
    ("warst", -10800),
    ("wft", 43200),
    ("wgst", -7200),
    ("wgt", -10800),
    ("wib", 25200),
    ("wit", 32400),
    ("wita", 28800),
    ("wt", 0),
    ("yakst", 36000),
    ("yakt", 32400),
    ("yapt", 36000),
    ("yekst", 21600),
    ("yekt", 18000),
    ("afghanistan", 16200),
    ("alaskan", -32400),
    ("arab", 10800),
    ("arabian", 14400),
    ("arabic", 10800),
    ("atlantic", -14400),
    ("aus central", 34200),
    ("aus eastern", 36000),
    ("azores", -3600),
    ("canada central", -21600),
    ("cape verde", -3600),
    ("caucasus", 14400),
    ("cen. australia", 34200),
    ("central america", -21600),
    ("central asia", 21600),
    ("central europe", 3600),
    ("central european", 3600),
    ("central pacific", 39600),
    ("central", -21600),
    ("china", 28800),
    ("dateline", -43200),
    ("e. africa", 10800),
    ("e. australia", 36000),
    ("e. europe", 7200),
    ("e. south america", -10800),
    ("eastern", -18000),
    ("egypt", 7200),
    ("ekaterinburg", 18000),
    ("fiji", 43200),
    ("fle", 7200),
    ("greenland", -10800),
    ("greenwich", 0),
    ("gtb", 7200),
    ("hawaiian", -36000),
    ("india", 19800),
    ("iran", 12600),
    ("jerusalem", 7200),
    ("korea", 32400),
    ("mexico", -21600),
    ("mountain", -25200),
    ("myanmar", 23400),
    ("n. central asia", 21600),
    ("nepal", 20700),
    ("new zealand", 43200),
    ("newfoundland", -12600),
    ("north asia east", 28800),
    ("north asia", 25200),
    ("pacific sa", -14400),
    ("pacific", -28800),
    ("romance", 3600),
    ("russian", 10800),
    ("sa eastern", -10800),
    ("sa pacific", -18000),
    ("sa western", -14400),
    ("samoa", -39600),
    ("se asia", 25200),
    ("malay peninsula", 28800),
    ("south africa", 7200),
    ("sri lanka", 21600),
    ("taipei", 28800),
    ("tasmania", 36000),
    ("tokyo", 32400),
    ("tonga", 46800),
    ("us eastern", -18000),
    ("us mountain", -25200),
    ("vladivostok", 36000),
    ("w. australia", 28800),
    ("w. central africa", 3600),
    ("w. europe", 3600),
    ("west asia", 18000),
    ("west pacific", 36000),
    ("yakutsk", 32400),
];

/// The offset from UTC in seconds of a time zone as Ruby's `%z` reads it; `None` where
/// Puppet says "Illegal timezone". `current` (the machine's zone) is UTC here.
pub fn utc_offset(tz: &str) -> Option<i32> {
    if tz.eq_ignore_ascii_case("current") {
        return Some(0);
    }
    zone_to_diff(zone_prefix(tz)?)
}

/// The part of `tz` Ruby's `%z` pattern takes: a signed number of hours (after an optional
/// `gmt`/`utc`), words ending in `standard time` or `daylight time`, or one word with an
/// optional ` dst`.
fn zone_prefix(tz: &str) -> Option<&str> {
    let lower = tz.to_ascii_lowercase();
    let b = lower.as_bytes();
    let digits_from = |mut i: usize| {
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    };
    let mut i = ["gmt", "utc", "ut"]
        .iter()
        .find(|p| lower.starts_with(*p) && matches!(b.get(p.len()), Some(b'+' | b'-')))
        .map_or(0, |p| p.len());
    if matches!(b.get(i), Some(b'+' | b'-')) {
        let end = digits_from(i + 1);
        if end == i + 1 {
            return None;
        }
        i = end;
        if matches!(b.get(i), Some(b',' | b'.' | b':'))
            && b.get(i + 1).is_some_and(u8::is_ascii_digit)
        {
            i = digits_from(i + 1);
            if b.get(i) == Some(&b':') && b.get(i + 1).is_some_and(u8::is_ascii_digit) {
                i = digits_from(i + 1);
            }
        }
        return Some(&tz[..i]);
    }
    let word_end = |from: usize| {
        let mut j = from;
        while b.get(j).is_some_and(u8::is_ascii_alphabetic) {
            j += 1;
        }
        j
    };
    // Words, dots and blanks, then `standard time` or `daylight time`.
    for suffix in ["standard", "daylight"] {
        let mut from = 0;
        while let Some(at) = lower[from..].find(suffix).map(|k| k + from) {
            let head_ok = at > 0
                && b[..at]
                    .iter()
                    .all(|c| c.is_ascii_alphabetic() || *c == b'.' || c.is_ascii_whitespace());
            let rest = &lower[at + suffix.len()..];
            let blanks = rest.len() - rest.trim_start().len();
            if head_ok && blanks > 0 && rest.trim_start().starts_with("time") {
                let end = at + suffix.len() + blanks + 4;
                if !b
                    .get(end)
                    .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
                {
                    return Some(&tz[..end]);
                }
            }
            from = at + 1;
        }
    }
    let end = word_end(0);
    if end == 0 {
        return None;
    }
    let with_dst = end + 4;
    if b.get(end).is_some_and(u8::is_ascii_whitespace)
        && lower[end + 1..].starts_with("dst")
        && !b
            .get(with_dst)
            .is_some_and(|c| c.is_ascii_alphanumeric() || *c == b'_')
    {
        return Some(&tz[..with_dst]);
    }
    if b.get(end).is_some_and(|c| c.is_ascii_digit() || *c == b'_') {
        return None;
    }
    Some(&tz[..end])
}

/// Ruby's `date_zone_to_diff`: a name from the table (an hour more for daylight time or
/// `dst`), else `[gmt|utc]+HH[:MM[:SS]]`, `+HH.fraction` or `+HHMM[SS]`.
fn zone_to_diff(zone: &str) -> Option<i32> {
    let lower = zone.to_ascii_lowercase();
    let squeezed = lower.split_whitespace().collect::<Vec<_>>().join(" ");
    let (name, dst) = if let Some(n) = squeezed.strip_suffix(" standard time") {
        (n, false)
    } else if let Some(n) = squeezed.strip_suffix(" daylight time") {
        (n, true)
    } else if let Some(n) = squeezed.strip_suffix(" dst") {
        (n, true)
    } else {
        (squeezed.as_str(), false)
    };
    if let Some((_, off)) = ZONES.iter().find(|(n, _)| *n == name) {
        return Some(off + if dst { 3600 } else { 0 });
    }
    let mut s = lower.as_str();
    if s.len() > 3 && (s.starts_with("gmt") || s.starts_with("utc")) {
        s = &s[3..];
    }
    let (neg, s) = match s.as_bytes().first() {
        Some(b'+') => (false, &s[1..]),
        Some(b'-') => (true, &s[1..]),
        _ => return None,
    };
    let lead = s.bytes().take_while(u8::is_ascii_digit).count();
    let num = |t: &str| t.parse::<i64>().unwrap_or(0);
    let hour = num(&s[..lead]);
    let rest = &s[lead..];
    let secs = if let Some(r) = rest.strip_prefix(':') {
        let mut parts = r.split(':');
        let min = num(parts.next().unwrap_or(""));
        let sec = num(parts.next().unwrap_or(""));
        if hour > 23 || min > 59 || sec > 59 {
            return None;
        }
        hour * 3600 + min * 60 + sec
    } else if let Some(frac) = rest.strip_prefix(['.', ',']) {
        let f: f64 = format!("0.{frac}").parse().unwrap_or(0.0);
        hour * 3600 + (f * 3600.0) as i64
    } else if s.len() > 2 {
        let odd = s.len() % 2;
        let two = |at: usize, n: usize| s.get(at..at + n).map_or(0, num);
        let mut v = two(0, 2 - odd) * 3600;
        if s.len() >= 3 {
            v += two(2 - odd, 2) * 60;
        }
        if s.len() >= 5 {
            v += two(4 - odd, 2);
        }
        v
    } else {
        hour * 3600
    };
    i32::try_from(if neg { -secs } else { secs }).ok()
}

#[cfg(test)]
mod tests {
    use super::utc_offset;

    #[test]
    fn zones_read_as_ruby_reads_them() {
        // Expectations from Ruby 3.1's `DateTime._strptime(tz, '%z')[:offset]`.
        for (tz, off) in [
            ("EST", Some(-18000)),
            ("est", Some(-18000)),
            ("CEST", Some(7200)),
            ("JST", Some(32400)),
            ("z", Some(0)),
            ("UTC", Some(0)),
            ("+0130", Some(5400)),
            ("-05:00", Some(-18000)),
            ("UTC+3", Some(10800)),
            ("GMT-2", Some(-7200)),
            ("+5.5", Some(19800)),
            ("+530", Some(19800)),
            ("Tokyo Standard Time", Some(32400)),
            ("Eastern Daylight Time", Some(-14400)),
            ("CET DST", Some(7200)),
            ("Europe/Stockholm", None),
            ("PST8PDT", None),
            ("nowhere", None),
        ] {
            assert_eq!(utc_offset(tz), off, "{tz}");
        }
    }
}
