package recall

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// timeWindow is a span of time a query names: [from, to), or, when month is
// set, that month of any year ("in June" with no year).
type timeWindow struct {
	from, to time.Time
	month    time.Month
}

// contains reports whether t falls in the window, allowing slack after its
// end: people talk about an event in the days after it happened.
func (w timeWindow) contains(t time.Time, slack time.Duration) bool {
	if w.month != 0 {
		start := time.Date(t.Year(), w.month, 1, 0, 0, 0, 0, time.UTC)
		if t.Before(start) {
			start = start.AddDate(-1, 0, 0)
		}
		return t.Before(start.AddDate(0, 1, 0).Add(slack))
	}
	return !t.Before(w.from) && t.Before(w.to.Add(slack))
}

var monthNames = map[string]time.Month{
	"january": time.January, "jan": time.January, "february": time.February, "feb": time.February,
	"march": time.March, "mar": time.March, "april": time.April, "apr": time.April, "may": time.May,
	"june": time.June, "jun": time.June, "july": time.July, "jul": time.July, "august": time.August,
	"aug": time.August, "september": time.September, "sep": time.September, "sept": time.September,
	"october": time.October, "oct": time.October, "november": time.November, "nov": time.November,
	"december": time.December, "dec": time.December,
}

const (
	monthRE = `(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)`
	yearRE  = `((?:19|20)\d\d)`
	dayRE   = `([0-3]?\d)(?:st|nd|rd|th)?`
)

// The English date expressions understood, most specific first; a span of
// the query matched by one is not matched again by a later one.
var (
	reDayMonth = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b` + dayRE + `\s+(?:of\s+)?` + monthRE + `\b\.?(?:,?\s*` + yearRE + `\b)?`)
	})
	reMonthDay = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b` + monthRE + `\.?\s+` + dayRE + `\b(?:,?\s*` + yearRE + `\b)?`)
	})
	rePartMonth = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(early|beginning of|start of|mid|middle of|late|end of)[\s-]+` + monthRE + `\b(?:,?\s*(?:of\s+)?` + yearRE + `\b)?`)
	})
	reSeason = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(spring|summer|autumn|fall|winter)\s+(?:of\s+)?` + yearRE + `\b`)
	})
	reMonthYear = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b` + monthRE + `,?\s+(?:of\s+)?` + yearRE + `\b`)
	})
	// A bare month name; "may" only after a preposition, where it cannot
	// be the verb.
	reMonth = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:(?:in|during|since|of|from|until|last|this|early|late|mid)\s+(may)|(january|february|march|april|june|july|august|september|october|november|december))\b`)
	})
	reYear = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:in|during|since|of|from|year)\s+` + yearRE + `\b|\b` + yearRE + `\b`)
	})
	// A span back from today: "the past two months", "in the last few
	// weeks", "over the past month".
	rePast = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:(?:last|past)\s+(?:` + numberRE + `\s+(day|week|month|year)s?|` + vagueRE + `\s+(day|week|month)s)|past\s+(day|week|month|year))\b`)
	})
	// One day of the past week: "last Saturday", "this past Tuesday".
	reWeekday = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(?:last|this past)\s+(monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b`)
	})
	reRelative = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(?i)\b(yesterday|today|tonight|this morning|this afternoon|this evening|last night|(?:last|this)\s+(?:week(?:end)?|month|year)|` + numberRE + `\s+(day|week|month|year)s?\s+ago|` + vagueRE + `\s+(day|week|month)s\s+ago)\b`)
	})
)

// How a relative expression counts units (smallNumbers): a number in
// digits or in words up to six, or a vague count, "a couple (of)", "a
// few", "several". A vague count of years is no window: it spans years, in
// which a page said about the thing could fall anywhere.
const (
	numberRE = `(a|an|one|two|three|four|five|six|\d+)`
	vagueRE  = `((?:a\s+)?couple(?:\s+of)?|a\s+few|few|several)`
)

// smallNumbers reads a count numberRE or vagueRE matched as the least and
// the most units it can mean: "two" is 2 to 2, "a couple" 2, "a few" 2 to
// 4, "several" 3 to 7; ok is false for anything else, and for more than a
// thousand.
func smallNumbers(s string) (least, most int, ok bool) {
	switch w := strings.Join(strings.Fields(s), " "); {
	case strings.Contains(w, "couple"):
		return 2, 2, true
	case strings.HasSuffix(w, "few"):
		return 2, 4, true
	case w == "several":
		return 3, 7, true
	default:
		// A count past a thousand units is no span a memory holds.
		n := smallNumber(w)
		return n, n, n > 0 && n <= 1000
	}
}

// firstSet returns the first of its arguments that is not empty.
func firstSet(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

var weekdays = map[string]time.Weekday{"sunday": time.Sunday, "monday": time.Monday, "tuesday": time.Tuesday,
	"wednesday": time.Wednesday, "thursday": time.Thursday, "friday": time.Friday, "saturday": time.Saturday}

// dateHints are the words one of which every English date expression
// above holds in its lowercased text: a month's first three letters, the
// day, night or unit of a relative one ("today" and "yesterday" hold
// "day"). Digits and CJK take the other expressions.
var dateHints = []string{"jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
	"day", "night", "morning", "afternoon", "evening", "week", "month", "year"}

// mayNameDate reports whether the lowercased query could hold a date
// expression: when not, none of the expressions is run over it (they
// were a tenth of a short retrieval's time).
func mayNameDate(lower string) bool {
	for i := 0; i < len(lower); i++ {
		if c := lower[i]; c >= '0' && c <= '9' || c >= utf8.RuneSelf {
			return true
		}
	}
	return slices.ContainsFunc(dateHints, func(h string) bool { return strings.Contains(lower, h) })
}

// Chinese date expressions.
var (
	reZhYMD      = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d{4})年(\d{1,2})月(?:(\d{1,2})[日号])?`) })
	reZhYear     = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(\d{4})年`) })
	reZhMonthDay = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(\d{1,2}|[一二三四五六七八九十]{1,3})月(?:(\d{1,2})[日号])?`)
	})
	reZhAgo = sync.OnceValue(func() *regexp.Regexp {
		return regexp.MustCompile(`(\d+|[一两二三四五六七八九十]{1,3})(天|周|个星期|星期|个月)前`)
	})
	zhRelative = []string{"昨天", "昨晚", "前天", "今天", "今晚", "上周", "上星期", "上个星期", "上礼拜", "这周", "本周", "上个月", "上月", "这个月", "本月", "去年", "今年", "前年"}
)

// queryWindows returns the time windows that query names, relative
// expressions ("yesterday", "last week", "上周") resolved against now.
func queryWindows(query string, now time.Time) []timeWindow {
	now = now.UTC()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	var out []timeWindow
	lower := strings.ToLower(query)
	if !mayNameDate(lower) {
		return nil
	}
	used := make([]bool, len(lower))
	// scan runs re over the parts of the query no earlier expression
	// claimed and calls fn with each match's submatches.
	scan := func(re *regexp.Regexp, fn func(m []string)) {
		for _, loc := range re.FindAllStringSubmatchIndex(lower, -1) {
			if used[loc[0]] || used[loc[1]-1] {
				continue
			}
			for i := loc[0]; i < loc[1]; i++ {
				used[i] = true
			}
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = lower[loc[2*i]:loc[2*i+1]]
				}
			}
			fn(m)
		}
	}
	day := func(y int, mo time.Month, d int) {
		if d < 1 || d > 31 {
			return
		}
		if y == 0 {
			y = latestYear(now, mo, d)
		}
		from := time.Date(y, mo, d, 0, 0, 0, 0, time.UTC)
		out = append(out, timeWindow{from: from, to: from.AddDate(0, 0, 1)})
	}
	month := func(y int, mo time.Month) {
		if y == 0 {
			out = append(out, timeWindow{month: mo})
			return
		}
		from := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
		out = append(out, timeWindow{from: from, to: from.AddDate(0, 1, 0)})
	}

	scan(reZhYMD(), func(m []string) {
		if m[3] != "" {
			day(atoi(m[1]), time.Month(atoi(m[2])), atoi(m[3]))
		} else if mo := atoi(m[2]); mo >= 1 && mo <= 12 {
			month(atoi(m[1]), time.Month(mo))
		}
	})
	scan(reZhYear(), func(m []string) {
		from := time.Date(atoi(m[1]), time.January, 1, 0, 0, 0, 0, time.UTC)
		out = append(out, timeWindow{from: from, to: from.AddDate(1, 0, 0)})
	})
	scan(reDayMonth(), func(m []string) { day(atoi(m[3]), monthNames[m[2]], atoi(m[1])) })
	scan(reMonthDay(), func(m []string) { day(atoi(m[3]), monthNames[m[1]], atoi(m[2])) })
	scan(rePartMonth(), func(m []string) {
		mo, y := monthNames[m[2]], atoi(m[3])
		if y == 0 {
			y = latestYear(now, mo, 1)
		}
		from := time.Date(y, mo, 1, 0, 0, 0, 0, time.UTC)
		switch m[1] {
		case "early", "beginning of", "start of":
			out = append(out, timeWindow{from: from, to: from.AddDate(0, 0, 11)})
		case "mid", "middle of":
			out = append(out, timeWindow{from: from.AddDate(0, 0, 9), to: from.AddDate(0, 0, 21)})
		default:
			out = append(out, timeWindow{from: from.AddDate(0, 0, 19), to: from.AddDate(0, 1, 0)})
		}
	})
	scan(reSeason(), func(m []string) {
		y := atoi(m[2])
		start := map[string]time.Month{"spring": time.March, "summer": time.June, "autumn": time.September, "fall": time.September, "winter": time.December}[m[1]]
		from := time.Date(y, start, 1, 0, 0, 0, 0, time.UTC)
		out = append(out, timeWindow{from: from, to: from.AddDate(0, 3, 0)})
	})
	scan(reMonthYear(), func(m []string) { month(atoi(m[2]), monthNames[m[1]]) })
	scan(reMonth(), func(m []string) { month(0, monthNames[m[1]+m[2]]) })
	scan(reYear(), func(m []string) {
		y := atoi(m[1] + m[2])
		from := time.Date(y, time.January, 1, 0, 0, 0, 0, time.UTC)
		out = append(out, timeWindow{from: from, to: from.AddDate(1, 0, 0)})
	})
	scan(reWeekday(), func(m []string) {
		// The latest such day before today: "last Saturday" said on a
		// Tuesday is three days ago.
		back := (int(today.Weekday()) - int(weekdays[m[1]]) + 7) % 7
		if back == 0 {
			back = 7
		}
		from := today.AddDate(0, 0, -back)
		out = append(out, timeWindow{from: from, to: from.AddDate(0, 0, 1)})
	})
	scan(rePast(), func(m []string) {
		// "the past month" is the month up to today, not the calendar
		// month before ("last month" is that); "the last two weeks" the
		// fourteen days up to today.
		count, unit := firstSet(m[1], m[3]), firstSet(m[2], m[4], m[5])
		most := 1
		if count != "" {
			_, n, ok := smallNumbers(count)
			if !ok {
				return
			}
			most = n
		}
		out = append(out, pastWindow(today, most, unit))
	})
	scan(reRelative(), func(m []string) {
		switch w := strings.Join(strings.Fields(m[1]), " "); {
		case w == "today" || w == "tonight" || strings.HasPrefix(w, "this ") && !strings.HasSuffix(w, "week") && !strings.HasSuffix(w, "month") && !strings.HasSuffix(w, "year"):
			out = append(out, timeWindow{from: today, to: today.AddDate(0, 0, 1)})
		case w == "yesterday" || w == "last night":
			out = append(out, timeWindow{from: today.AddDate(0, 0, -1), to: today})
		case strings.HasSuffix(w, "ago"):
			least, most, ok := smallNumbers(firstSet(m[2], m[4]))
			if !ok {
				return
			}
			unit := firstSet(m[3], m[5])
			early, late := agoWindow(today, most, unit), agoWindow(today, least, unit)
			out = append(out, timeWindow{from: early.from, to: late.to})
		default:
			out = append(out, recentWindow(today, w[strings.Index(w, " ")+1:], strings.HasPrefix(w, "this")))
		}
	})

	scan(reZhMonthDay(), func(m []string) {
		mo := smallNumber(m[1])
		if mo < 1 || mo > 12 {
			return
		}
		if m[2] != "" {
			day(0, time.Month(mo), atoi(m[2]))
		} else {
			month(0, time.Month(mo))
		}
	})
	scan(reZhAgo(), func(m []string) {
		unit := map[string]string{"天": "day", "周": "week", "个星期": "week", "星期": "week", "个月": "month"}[m[2]]
		out = append(out, agoWindow(today, smallNumber(m[1]), unit))
	})
	for _, w := range zhRelative {
		if !strings.Contains(query, w) {
			continue
		}
		switch w {
		case "昨天", "昨晚":
			out = append(out, timeWindow{from: today.AddDate(0, 0, -1), to: today})
		case "前天":
			out = append(out, timeWindow{from: today.AddDate(0, 0, -2), to: today.AddDate(0, 0, -1)})
		case "今天", "今晚":
			out = append(out, timeWindow{from: today, to: today.AddDate(0, 0, 1)})
		case "上周", "上星期", "上个星期", "上礼拜":
			out = append(out, recentWindow(today, "week", false))
		case "这周", "本周":
			out = append(out, recentWindow(today, "week", true))
		case "上个月", "上月":
			out = append(out, recentWindow(today, "month", false))
		case "这个月", "本月":
			out = append(out, recentWindow(today, "month", true))
		case "去年":
			out = append(out, recentWindow(today, "year", false))
		case "今年":
			out = append(out, recentWindow(today, "year", true))
		case "前年":
			from := time.Date(today.Year()-2, time.January, 1, 0, 0, 0, 0, time.UTC)
			out = append(out, timeWindow{from: from, to: from.AddDate(1, 0, 0)})
		}
	}
	return out
}

// recentWindow is "this" (current) or "last" (the one before) week,
// weekend, month or year, as seen from today. Weeks are taken loosely (the
// seven days before, or the fourteen before for "last week") because people
// say "last week" of anything in the past fortnight.
func recentWindow(today time.Time, unit string, this bool) timeWindow {
	switch unit {
	case "week", "weekend":
		if this {
			return timeWindow{from: today.AddDate(0, 0, -7), to: today.AddDate(0, 0, 1)}
		}
		return timeWindow{from: today.AddDate(0, 0, -14), to: today}
	case "month":
		first := time.Date(today.Year(), today.Month(), 1, 0, 0, 0, 0, time.UTC)
		if this {
			return timeWindow{from: first, to: first.AddDate(0, 1, 0)}
		}
		return timeWindow{from: first.AddDate(0, -1, 0), to: first}
	default:
		first := time.Date(today.Year(), time.January, 1, 0, 0, 0, 0, time.UTC)
		if this {
			return timeWindow{from: first, to: first.AddDate(1, 0, 0)}
		}
		return timeWindow{from: first.AddDate(-1, 0, 0), to: first}
	}
}

// pastWindow is "the past n units": from n units before today to the end
// of today.
func pastWindow(today time.Time, n int, unit string) timeWindow {
	return timeWindow{from: unitsBefore(today, n, unit), to: today.AddDate(0, 0, 1)}
}

// agoWindow is "n units ago": the unit-long span centred on that time.
func agoWindow(today time.Time, n int, unit string) timeWindow {
	if n <= 0 {
		n = 1
	}
	half := 183 * 24 * time.Hour
	switch unit {
	case "day":
		half = 24 * time.Hour
	case "week":
		half = 4 * 24 * time.Hour
	case "month":
		half = 15 * 24 * time.Hour
	}
	at := unitsBefore(today, n, unit)
	return timeWindow{from: at.Add(-half), to: at.Add(half)}
}

// unitsBefore is n days, weeks, months or years (any other unit) before
// today.
func unitsBefore(today time.Time, n int, unit string) time.Time {
	switch unit {
	case "day":
		return today.AddDate(0, 0, -n)
	case "week":
		return today.AddDate(0, 0, -7*n)
	case "month":
		return today.AddDate(0, -n, 0)
	default:
		return today.AddDate(-n, 0, 0)
	}
}

// latestYear is the year of the latest month/day on or before now.
func latestYear(now time.Time, mo time.Month, d int) int {
	if time.Date(now.Year(), mo, d, 0, 0, 0, 0, time.UTC).After(now) {
		return now.Year() - 1
	}
	return now.Year()
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

// smallNumber reads a count written in digits, in English words up to six
// or in Chinese numerals up to 99.
func smallNumber(s string) int {
	if n, err := strconv.Atoi(s); err == nil {
		return n
	}
	if n, ok := map[string]int{"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}[s]; ok {
		return n
	}
	digits := map[rune]int{'一': 1, '二': 2, '两': 2, '三': 3, '四': 4, '五': 5, '六': 6, '七': 7, '八': 8, '九': 9}
	n, cur := 0, 0
	for _, r := range s {
		if r == '十' {
			n += max(cur, 1) * 10
			cur = 0
			continue
		}
		d, ok := digits[r]
		if !ok {
			return 0
		}
		cur = d
	}
	return n + cur
}
