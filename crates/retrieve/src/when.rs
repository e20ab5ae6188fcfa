//! Query time: the time a query names ("last month", "in March", "on 13 October 2023",
//! "two weeks ago", "in the past three months"), read as event-time windows against the
//! search's clock. Seed section 3: episodes carry `event_at` "so the retriever can reduce the
//! rank of old episodes for a non-time-bounded query"; a query that names its time is
//! time-bounded, and the episodes inside its window are the ones it asks about.
//!
//! English only, rule-based: a sentence's words are matched against a small grammar of dates,
//! months, years, weekdays and relative spans; nothing else in the query is changed. Every
//! window is widened by a day on each side (time zones, a turn written after midnight).

use retold_domain::chrono::{
    DateTime, Datelike, Months, NaiveDate, TimeDelta as Duration, TimeZone, Utc, Weekday,
};

use retold_domain::Timestamp;

/// One window a query names: `[from, to)`, and the words that named it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeWindow {
    pub from: Timestamp,
    pub to: Timestamp,
    pub phrase: String,
}

impl TimeWindow {
    pub fn contains(&self, at: Timestamp) -> bool {
        self.from <= at && at < self.to
    }

    /// `last month (2023-04-01 to 2023-04-30)`: the phrase and the days it covers (before
    /// the day of slack on each side).
    pub fn describe(&self) -> String {
        let first = (self.from + Duration::days(1)).date_naive();
        let last = (self.to - Duration::days(1) - Duration::seconds(1)).date_naive();
        if first >= last {
            format!("{} ({first})", self.phrase)
        } else {
            format!("{} ({first} to {last})", self.phrase)
        }
    }
}

/// The windows `query` names, read against `now`; empty when it names no time.
pub fn time_windows(query: &str, now: Timestamp) -> Vec<TimeWindow> {
    let words = words(query);
    let today = now.date_naive();
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        match window_at(&words[i..], today, now) {
            Some((used, from, to)) => {
                out.push(TimeWindow {
                    from: from - Duration::days(1),
                    to: to + Duration::days(1),
                    phrase: words[i..i + used].join(" "),
                });
                i += used;
            }
            None => i += 1,
        }
    }
    out
}

/// Whether a question asks for a time: "When did…", "What year…", "In which month…",
/// "How long ago…", "What day of the week…", or for the time between events or their order
/// ("How many days passed between…", "Which did I do first, … or …?", "What is the order
/// of…"). Its answer is in records that name a time ("last Friday", "two weeks ago", "on 3
/// May"), so such records rank up (see [`names_a_time`]).
pub(crate) fn asks_when(query: &str) -> bool {
    let words = words(query);
    let mut w: &[String] = &words;
    if w.first().is_some_and(|x| {
        matches!(
            x.as_str(),
            "in" | "on"
                | "since"
                | "until"
                | "by"
                | "about"
                | "around"
                | "approximately"
                | "roughly"
                | "after"
        )
    }) {
        w = &w[1..];
    }
    let word = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    let has = |x: &str| w.iter().any(|v| v == x);
    let lead = match word(0) {
        "when" => true,
        "what" | "which" => {
            matches!(word(1), "year" | "month" | "date" | "day" | "week" | "weekend" | "season")
        }
        _ => false,
    };
    // How long ago…, how long has it been…, how many weeks (or hours: an incident's
    // timeline) passed between…
    let elapsed = (0..w.len()).any(|i| {
        word(i) == "how"
            && ((word(i + 1) == "long"
                && (word(i + 2) == "ago" || (word(i + 2) == "has" && word(i + 4) == "been")))
                || (word(i + 1) == "many"
                    && (unit(word(i + 2)).is_some()
                        || matches!(word(i + 2), "hours" | "minutes" | "seconds"))
                    && w[i + 3..].iter().any(|v| {
                        matches!(
                            v.as_str(),
                            "ago"
                                | "passed"
                                | "between"
                                | "since"
                                | "after"
                                | "before"
                                | "take"
                                | "took"
                                | "elapsed"
                                | "later"
                        )
                    })))
    });
    // Which did I do first, this or that?  What is the order of…
    let order = (matches!(word(0), "which" | "what" | "who") && has("first") && has("or"))
        || (has("order") && (has("earliest") || (word(0) == "what" && word(1) == "is") || word(1) == "what"));
    lead || elapsed || order
}

/// Whether `text` names a time: a date, month, year, weekday or relative span the query
/// grammar reads ("yesterday", "last week", "in 2022", "three days ago"), or one it does not
/// read as a window because it points ahead or is vague about its day ("tomorrow", "next
/// month", "last night", "the other day", "Friday").
pub(crate) fn names_a_time(text: &str) -> bool {
    let words = words(text);
    let word = |k: usize| words.get(k).map(String::as_str).unwrap_or("");
    let reference = Utc.with_ymd_and_hms(2000, 6, 15, 12, 0, 0).single().expect("a valid date");
    (0..words.len()).any(|i| {
        window_at(&words[i..], reference.date_naive(), reference).is_some()
            || weekday(word(i)).is_some()
            || matches!(word(i), "tomorrow" | "ago")
            || (matches!(word(i), "next" | "last")
                && matches!(
                    word(i + 1),
                    "night"
                        | "weekend"
                        | "week"
                        | "month"
                        | "year"
                        | "summer"
                        | "winter"
                        | "spring"
                        | "fall"
                        | "autumn"
                ))
            || (word(i) == "other" && matches!(word(i + 1), "day" | "week" | "night"))
    })
}

/// Lower-cased words; a hyphen stays inside a word so an ISO date is one word.
fn words(query: &str) -> Vec<String> {
    retold_domain::text::words_joined_by(query, &['-']).map(str::to_lowercase).collect()
}

/// A time window a query names: the number of words it used and `[from, to)`.
type Window = (usize, Timestamp, Timestamp);

/// The window starting at `w[0]`, read by the first reader whose words match: a date, a
/// month or year after a lead word, a named day, "N units ago", a relative period, "on" a
/// weekday. A reader whose words match but whose date does not exist ends the search.
fn window_at(w: &[String], today: NaiveDate, now: Timestamp) -> Option<Window> {
    let read = Reader { w, today, now };
    read.date()
        .or_else(|| read.month_or_year())
        .or_else(|| read.named_day())
        .or_else(|| read.ago())
        .or_else(|| read.relative())
        .or_else(|| read.on_weekday())
        .flatten()
}

/// The day `day` as a window of `used` words.
fn one_day(used: usize, day: NaiveDate) -> Option<Window> {
    Some((used, day_start(day), day_start(day.succ_opt()?)))
}

/// The words from one position of a query, with today and now. Each reader answers `None`
/// when its words do not match, `Some(None)` when they match a date that does not exist.
struct Reader<'a> {
    w: &'a [String],
    today: NaiveDate,
    now: Timestamp,
}

impl Reader<'_> {
    fn word(&self, k: usize) -> &str {
        self.w.get(k).map(String::as_str).unwrap_or("")
    }

    /// 2023-05-03; 13 October 2023, 13th of October, 1 February; October 13, 2023, May 3,
    /// June 2023.
    fn date(&self) -> Option<Option<Window>> {
        if let Some(day) = iso_date(self.word(0)) {
            return Some(one_day(1, day));
        }
        if let Some(d) = day_of_month(self.word(0)) {
            let of = usize::from(self.word(1) == "of");
            if let Some(m) = month(self.word(1 + of)) {
                return Some(self.day_of(m, d, 2 + of));
            }
        }
        let m = month(self.word(0))?;
        if let Some(d) = day_of_month(self.word(1)) {
            return Some(self.day_of(m, d, 2));
        }
        let y = year(self.word(1))?;
        Some(NaiveDate::from_ymd_opt(y, m, 1).and_then(|first| {
            Some((2, day_start(first), day_start(first.checked_add_months(Months::new(1))?)))
        }))
    }

    /// Day `d` of month `m`, its year the word at `at` when that is one (the window then
    /// uses it too), else the latest such day ([`dated`]).
    fn day_of(&self, m: u32, d: u32, at: usize) -> Option<Window> {
        let (year, used) = match year(self.word(at)) {
            Some(y) => (Some(y), at + 1),
            None => (None, at),
        };
        one_day(used, dated(year, m, d, self.today)?)
    }

    /// in June, since March, last March, during 2023.
    fn month_or_year(&self) -> Option<Option<Window>> {
        let lead = self.word(0);
        if !matches!(
            lead,
            "in" | "during" | "throughout" | "of" | "since" | "early" | "mid" | "late" | "last"
        ) {
            return None;
        }
        if let Some(m) = month(self.word(1)) {
            return Some(self.lead_month(lead, m));
        }
        if lead == "last" {
            return None;
        }
        let y = year(self.word(1))?;
        Some(NaiveDate::from_ymd_opt(y, 1, 1).zip(NaiveDate::from_ymd_opt(y + 1, 1, 1)).map(
            |(first, end)| {
                if lead == "since" {
                    (2, day_start(first), self.now)
                } else {
                    (2, day_start(first), day_start(end))
                }
            },
        ))
    }

    /// "in March" is the latest March that has begun; "last March" the one before the
    /// current month; a year after the month names it.
    fn lead_month(&self, lead: &str, m: u32) -> Option<Window> {
        let today = self.today;
        let mut first = NaiveDate::from_ymd_opt(today.year(), m, 1)?;
        if first > today || (lead == "last" && first.month() == today.month()) {
            first = first.with_year(today.year() - 1)?;
        }
        let (used, end) = match year(self.word(2)) {
            Some(y) => {
                first = first.with_year(y)?;
                (3, first.checked_add_months(Months::new(1))?)
            }
            None => (2, first.checked_add_months(Months::new(1))?),
        };
        Some(if lead == "since" {
            (used, day_start(first), self.now)
        } else {
            (used, day_start(first), day_start(end))
        })
    }

    /// today, tonight, yesterday, this morning.
    fn named_day(&self) -> Option<Option<Window>> {
        let today = self.today;
        match self.word(0) {
            "today" | "tonight" => Some(one_day(1, today)),
            "yesterday" => Some(today.pred_opt().map(|day| (1, day_start(day), day_start(today)))),
            "this" if matches!(self.word(1), "morning" | "afternoon" | "evening") => Some(one_day(2, today)),
            _ => None,
        }
    }

    /// N days ago, a couple of weeks ago, three months ago: around that day, by the unit's
    /// slack.
    fn ago(&self) -> Option<Option<Window>> {
        let (n, used) = count(self.w)?;
        let unit = unit(self.word(used))?;
        if self.word(used + 1) != "ago" {
            return None;
        }
        Some(unit.back(self.today, n).map(|centre| {
            let slack = unit.slack();
            (used + 2, day_start(centre - slack), day_start(centre + slack + Duration::days(1)))
        }))
    }

    /// in the last three months, the past few weeks, last week, this month, last weekend,
    /// this Friday.
    fn relative(&self) -> Option<Option<Window>> {
        let lead = self.word(0);
        if !matches!(lead, "last" | "past" | "previous" | "this") {
            return None;
        }
        if let Some((n, used)) = count(&self.w[1..])
            && let Some(unit) = unit(self.word(1 + used))
            && lead != "this"
        {
            return Some(unit.back(self.today, n).map(|from| (2 + used, day_start(from), self.now)));
        }
        let u = self.word(1);
        if u == "weekend" {
            return Some(self.weekend(lead));
        }
        if let Some(unit) = unit(u) {
            return Some(self.period(lead, unit));
        }
        let day = weekday(u)?;
        let date = if lead == "this" {
            Unit::Week
                .start_of(self.today)
                .map(|monday| monday + Duration::days(i64::from(day.num_days_from_monday())))
        } else {
            latest_before(self.today, day)
        };
        Some(date.and_then(|date| one_day(2, date)))
    }

    /// The latest weekend that began before today (or today, for "this weekend").
    fn weekend(&self, lead: &str) -> Option<Window> {
        let mut saturday = self.today;
        while saturday.weekday() != Weekday::Sat || (lead != "this" && saturday >= self.today) {
            saturday = saturday.pred_opt()?;
        }
        Some((2, day_start(saturday), day_start(saturday + Duration::days(2))))
    }

    /// "past week" rolls back one unit to now; "this week" is the calendar unit so far,
    /// "last week" the calendar unit before this one.
    fn period(&self, lead: &str, unit: Unit) -> Option<Window> {
        let today = self.today;
        if lead == "past" {
            return Some((2, day_start(unit.back(today, 1)?), self.now));
        }
        let start = unit.start_of(today)?;
        let (from, to) =
            if lead == "this" { (start, today.succ_opt()?) } else { (unit.back(start, 1)?, start) };
        Some((2, day_start(from), day_start(to)))
    }

    /// on Friday: the latest before today.
    fn on_weekday(&self) -> Option<Option<Window>> {
        if self.word(0) != "on" {
            return None;
        }
        let day = weekday(self.word(1))?;
        Some(latest_before(self.today, day).and_then(|date| one_day(2, date)))
    }
}

#[derive(Debug, Clone, Copy)]
enum Unit {
    Day,
    Week,
    Month,
    Year,
}

impl Unit {
    /// `n` units before `day`.
    fn back(self, day: NaiveDate, n: u32) -> Option<NaiveDate> {
        match self {
            Unit::Day => day.checked_sub_signed(Duration::days(i64::from(n))),
            Unit::Week => day.checked_sub_signed(Duration::weeks(i64::from(n))),
            Unit::Month => day.checked_sub_months(Months::new(n)),
            Unit::Year => day.checked_sub_months(Months::new(n.checked_mul(12)?)),
        }
    }

    /// The first day of the unit holding `day` (weeks begin on Monday).
    fn start_of(self, day: NaiveDate) -> Option<NaiveDate> {
        match self {
            Unit::Day => Some(day),
            Unit::Week => Some(day - Duration::days(i64::from(day.weekday().num_days_from_monday()))),
            Unit::Month => day.with_day(1),
            Unit::Year => NaiveDate::from_ymd_opt(day.year(), 1, 1),
        }
    }

    /// How far "N units ago" reaches on either side of its day: half a unit, at least a day.
    fn slack(self) -> Duration {
        match self {
            Unit::Day => Duration::zero(),
            Unit::Week => Duration::days(3),
            Unit::Month => Duration::days(15),
            Unit::Year => Duration::days(182),
        }
    }
}

fn unit(word: &str) -> Option<Unit> {
    match word {
        "day" | "days" => Some(Unit::Day),
        "week" | "weeks" => Some(Unit::Week),
        "month" | "months" => Some(Unit::Month),
        "year" | "years" => Some(Unit::Year),
        _ => None,
    }
}

/// A count at the start of `w` ("3", "three", "a", "a couple of", "a few", "several") and
/// the words it used.
fn count(w: &[String]) -> Option<(u32, usize)> {
    let word = |k: usize| w.get(k).map(String::as_str).unwrap_or("");
    if word(0) == "a" || word(0) == "an" {
        return match (word(1), word(2)) {
            ("couple", "of") => Some((2, 3)),
            ("couple", _) => Some((2, 2)),
            ("few", _) => Some((3, 2)),
            _ => Some((1, 1)),
        };
    }
    if let Ok(n) = word(0).parse::<u32>() {
        return (1..=1000).contains(&n).then_some((n, 1));
    }
    let n = match word(0) {
        "one" => 1,
        "two" => 2,
        "three" | "few" => 3,
        "four" | "several" => 4,
        "five" => 5,
        "six" => 6,
        "seven" => 7,
        "eight" => 8,
        "nine" => 9,
        "ten" => 10,
        "eleven" => 11,
        "twelve" => 12,
        _ => return None,
    };
    Some((n, 1))
}

fn month(word: &str) -> Option<u32> {
    let m = match word {
        "january" | "jan" => 1,
        "february" | "feb" => 2,
        "march" | "mar" => 3,
        "april" | "apr" => 4,
        "may" => 5,
        "june" | "jun" => 6,
        "july" | "jul" => 7,
        "august" | "aug" => 8,
        "september" | "sep" | "sept" => 9,
        "october" | "oct" => 10,
        "november" | "nov" => 11,
        "december" | "dec" => 12,
        _ => return None,
    };
    Some(m)
}

fn weekday(word: &str) -> Option<Weekday> {
    Some(match word {
        "monday" => Weekday::Mon,
        "tuesday" => Weekday::Tue,
        "wednesday" => Weekday::Wed,
        "thursday" => Weekday::Thu,
        "friday" => Weekday::Fri,
        "saturday" => Weekday::Sat,
        "sunday" => Weekday::Sun,
        _ => return None,
    })
}

/// A year between 1900 and 2199.
fn year(word: &str) -> Option<i32> {
    (word.len() == 4).then(|| word.parse::<i32>().ok()).flatten().filter(|y| (1900..2200).contains(y))
}

/// 1 to 31, with or without an ordinal suffix ("13", "13th", "1st").
fn day_of_month(word: &str) -> Option<u32> {
    let digits = ["st", "nd", "rd", "th"].iter().find_map(|s| word.strip_suffix(s)).unwrap_or(word);
    (1..=2)
        .contains(&digits.len())
        .then(|| digits.parse::<u32>().ok())
        .flatten()
        .filter(|d| (1..=31).contains(d))
}

/// `2023-05-03`, also as the date of an ISO timestamp (`2023-05-03T10:04:12Z` is the word
/// `2023-05-03t10` here: its time is not read).
fn iso_date(word: &str) -> Option<NaiveDate> {
    let mut parts = word.split('-');
    let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
    let d = match d.split_once('t') {
        Some((day, time)) if !time.is_empty() && time.bytes().all(|b| b.is_ascii_digit()) => day,
        _ => d,
    };
    if parts.next().is_some() || y.len() != 4 || m.len() > 2 || d.len() > 2 {
        return None;
    }
    NaiveDate::from_ymd_opt(y.parse().ok()?, m.parse().ok()?, d.parse().ok()?)
}

/// The day `month`/`day` of `year`, or without a year the latest one not after `today`.
fn dated(year: Option<i32>, month: u32, day: u32, today: NaiveDate) -> Option<NaiveDate> {
    match year {
        Some(y) => NaiveDate::from_ymd_opt(y, month, day),
        None => {
            let this = NaiveDate::from_ymd_opt(today.year(), month, day)?;
            if this > today { NaiveDate::from_ymd_opt(today.year() - 1, month, day) } else { Some(this) }
        }
    }
}

/// The latest `day` strictly before `today`.
fn latest_before(today: NaiveDate, day: Weekday) -> Option<NaiveDate> {
    let mut date = today.pred_opt()?;
    while date.weekday() != day {
        date = date.pred_opt()?;
    }
    Some(date)
}

fn day_start(day: NaiveDate) -> DateTime<Utc> {
    Utc.from_utc_datetime(&day.and_hms_opt(0, 0, 0).expect("midnight exists"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wednesday 5 April 2023, 19:25.
    fn now() -> Timestamp {
        Utc.with_ymd_and_hms(2023, 4, 5, 19, 25, 0).unwrap()
    }

    /// The days a query's single window covers, without the slack.
    fn days(query: &str) -> (String, NaiveDate, NaiveDate) {
        let windows = time_windows(query, now());
        assert_eq!(windows.len(), 1, "{query}: {windows:?}");
        let w = &windows[0];
        let first = (w.from + Duration::days(1)).date_naive();
        let last = (w.to - Duration::days(1) - Duration::seconds(1)).date_naive();
        (w.phrase.clone(), first, last)
    }

    fn ymd(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    #[test]
    fn an_iso_timestamp_is_read_as_its_day() {
        assert_eq!(days("What failed at 2023-05-03T10:04:12Z?").1, ymd(2023, 5, 3));
        assert_eq!(days("logs from 2023-05-03t09:00").1, ymd(2023, 5, 3));
    }

    #[test]
    fn absolute_dates_months_and_years() {
        let oct13 = ("october 13 2023".to_owned(), ymd(2023, 10, 13), ymd(2023, 10, 13));
        assert_eq!(days("What painting did Melanie show to Caroline on October 13, 2023?"), oct13);
        assert_eq!(days("What did Gina find on 1 February, 2023?").1, ymd(2023, 2, 1));
        assert_eq!(days("the 3rd of June 2023").1, ymd(2023, 6, 3));
        assert_eq!(days("logs from 2023-05-03 please").0, "2023-05-03");
        assert_eq!(
            days("What did Maria donate in December 2023?").1..=days("December 2023").2,
            ymd(2023, 12, 1)..=ymd(2023, 12, 31)
        );
        assert_eq!(days("How many times has Melanie gone to the beach in 2023?").1, ymd(2023, 1, 1));
        assert_eq!(days("in 2023").2, ymd(2023, 12, 31));
    }

    #[test]
    fn a_month_or_day_without_a_year_is_the_latest_one_that_has_begun() {
        // Asked in April 2023: March is this year's, December last year's.
        assert_eq!(days("How many doctor's appointments did I go to in March?").1, ymd(2023, 3, 1));
        assert_eq!(
            days("How many museums did I visit in December?"),
            ("in december".to_owned(), ymd(2022, 12, 1), ymd(2022, 12, 31))
        );
        assert_eq!(days("on May 3").1, ymd(2022, 5, 3));
        assert_eq!(days("last April").1, ymd(2022, 4, 1));
        let since = &time_windows("since March", now())[0];
        assert_eq!((since.from + Duration::days(1)).date_naive(), ymd(2023, 3, 1));
        assert_eq!(since.to, now() + Duration::days(1));
    }

    #[test]
    fn relative_spans_are_read_against_the_clock() {
        assert_eq!(
            days("What certification did I complete last month?"),
            ("last month".to_owned(), ymd(2023, 3, 1), ymd(2023, 3, 31))
        );
        assert_eq!(days("this month").1, ymd(2023, 4, 1));
        assert_eq!(days("last year").1..=days("last year").2, ymd(2022, 1, 1)..=ymd(2022, 12, 31));
        assert_eq!(days("last week").1..=days("last week").2, ymd(2023, 3, 27)..=ymd(2023, 4, 2));
        assert_eq!(days("yesterday").1, ymd(2023, 4, 4));
        // Wednesday: last Friday is 31 March, the past weekend 1-2 April.
        assert_eq!(days("What is the artist that I started to listen to last Friday?").1, ymd(2023, 3, 31));
        assert_eq!(
            days("Which bike did I service the past weekend?").1..=days("last weekend").2,
            ymd(2023, 4, 1)..=ymd(2023, 4, 2)
        );
        assert_eq!(days("on Monday").1, ymd(2023, 4, 3));
    }

    #[test]
    fn counted_spans_and_ago() {
        let (phrase, first, last) = days("What was the milestone I mentioned four weeks ago?");
        assert_eq!(phrase, "four weeks ago");
        assert_eq!((first, last), (ymd(2023, 3, 5), ymd(2023, 3, 11)));
        assert_eq!(days("the social media activity 5 days ago").1, ymd(2023, 3, 31));
        let (phrase, first, _) = days("What are the three trips I took in the past three months?");
        assert_eq!((phrase.as_str(), first), ("past three months", ymd(2023, 1, 5)));
        assert_eq!(days("babies born in the last few months").1, ymd(2023, 1, 5));
        assert_eq!(days("a couple of weeks ago").1, ymd(2023, 3, 19));
        let rolling = &time_windows("the past week", now())[0];
        assert_eq!(rolling.to, now() + Duration::days(1));
    }

    #[test]
    fn a_query_that_names_no_time_has_no_window() {
        for query in [
            "How many days ago did I attend the 5K charity run?",
            "Which seeds were started first, the tomatoes or the marigolds?",
            "You may want to check the build cache",
            "I reached 1300 followers",
            "How many sports have I played competitively in the past?",
            "When did Caroline go to the LGBTQ support group?",
            "error tok3f9-2023-99 from client 2",
        ] {
            assert_eq!(time_windows(query, now()), vec![], "{query}");
        }
    }

    #[test]
    fn a_window_is_widened_by_a_day_and_described_without_it() {
        let w = &time_windows("yesterday", now())[0];
        assert!(w.contains(Utc.with_ymd_and_hms(2023, 4, 3, 23, 0, 0).unwrap()));
        assert!(w.contains(Utc.with_ymd_and_hms(2023, 4, 5, 10, 0, 0).unwrap()));
        assert!(!w.contains(Utc.with_ymd_and_hms(2023, 4, 2, 23, 0, 0).unwrap()));
        assert_eq!(w.describe(), "yesterday (2023-04-04)");
        assert_eq!(time_windows("last month", now())[0].describe(), "last month (2023-03-01 to 2023-03-31)");
        assert_eq!(time_windows("between May 3 and June 2023", now()).len(), 2);
    }

    #[test]
    fn a_question_that_asks_when() {
        for q in [
            "When did Caroline go to the LGBTQ support group?",
            "In which month did Jon start his dance studio?",
            "What year did Melanie start painting?",
            "How long ago was Gina's birthday?",
            "What day of the week do I take a cocktail-making class?",
            "How many weeks passed between Maria adopting Coco and Shadow?",
            "How many days did it take for my iPad case to arrive after I bought it?",
            "Which event happened first, the narrator losing their phone charger or receiving the case?",
            "What is the order of the three trips I took in the past three months?",
            "How long has it been since I moved?",
        ] {
            assert!(asks_when(q), "{q}");
        }
        // The same forms over an agent's own memory (incidents, deploys, tickets): a time, the
        // time between two events, or which came first.
        for q in [
            "When did the payments service last fail over?",
            "How many hours passed between the alert and the rollback?",
            "How many days did the ticket stay open before it was closed?",
            "Which happened first, the schema migration or the cache flush?",
            "Who replied first, Priya or the on-call bot?",
            "What is the order of the three releases this quarter?",
        ] {
            assert!(asks_when(q), "{q}");
        }
        for q in [
            "How many retries does the client make?",
            "What was the first error in the log?",
            "Which region or zone hosts the replica?",
            "What did I order for the team lunch?",
        ] {
            assert!(!asks_when(q), "{q}");
        }
        for q in [
            "What did Caroline research?",
            "How long is the drive?",
            "Where did they meet when young?",
            "How many days a week do I attend fitness classes?",
            "How many years in total did I spend in formal education?",
            "What was the first thing I baked?",
        ] {
            assert!(!asks_when(q), "{q}");
        }
    }

    #[test]
    fn a_text_that_names_a_time() {
        for text in [
            "I went to a LGBTQ support group yesterday and it was so powerful.",
            "We camped at the beach last week!",
            "I ran a charity race the Sunday before",
            "It opened on 3 May.",
            "I'm heading there next month.",
            "That was two years ago.",
            "2024-05-03T10:04:12Z test suite auth failed with E4021",
        ] {
            assert!(names_a_time(text), "{text}");
        }
        for text in
            ["You may want to check the build cache", "I reached 1300 followers", "Thanks, that's so kind!"]
        {
            assert!(!names_a_time(text), "{text}");
        }
    }
}
