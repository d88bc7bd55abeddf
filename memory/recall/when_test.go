package recall

import (
	"testing"
	"time"
)

func TestQueryWindows(t *testing.T) {
	now := time.Date(2025, 3, 12, 15, 0, 0, 0, time.UTC) // a Wednesday
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	tests := []struct {
		query   string
		in, out []time.Time
	}{
		{"What did Nate do on 9 November, 2022?", []time.Time{day(2022, 11, 9).Add(20 * time.Hour)}, []time.Time{day(2022, 11, 11), day(2023, 11, 9)}},
		{"Who did Maria have dinner with on May 3, 2023?", []time.Time{day(2023, 5, 3)}, []time.Time{day(2023, 5, 6)}},
		{"What happened in April 2022?", []time.Time{day(2022, 4, 1), day(2022, 4, 30)}, []time.Time{day(2022, 3, 31), day(2022, 5, 3), day(2023, 4, 10)}},
		{"Which tournament did Nate win in the beginning of November 2022?", []time.Time{day(2022, 11, 3)}, []time.Time{day(2022, 11, 25)}},
		{"When did Melanie go camping in June?", []time.Time{day(2023, 6, 10), day(2019, 6, 30)}, []time.Time{day(2023, 7, 5)}},
		{"May I ask something?", nil, []time.Time{day(2024, 5, 10)}},
		{"What state did Joanna visit in summer 2021?", []time.Time{day(2021, 7, 4)}, []time.Time{day(2021, 10, 1)}},
		{"How many times has Melanie gone to the beach in 2023?", []time.Time{day(2023, 1, 1), day(2023, 12, 31)}, []time.Time{day(2022, 12, 30)}},
		{"what did I say yesterday?", []time.Time{day(2025, 3, 11).Add(9 * time.Hour)}, []time.Time{day(2025, 3, 9), day(2025, 3, 12).Add(25 * time.Hour)}},
		{"what did we decide last week?", []time.Time{day(2025, 3, 3)}, []time.Time{day(2025, 2, 1)}},
		{"the plan from two weeks ago", []time.Time{day(2025, 2, 26)}, []time.Time{day(2025, 3, 11)}},
		{"我昨天说了什么？", []time.Time{day(2025, 3, 11)}, []time.Time{day(2025, 3, 9)}},
		{"上周的会议", []time.Time{day(2025, 3, 3)}, []time.Time{day(2025, 2, 1)}},
		{"2023年5月的旅行", []time.Time{day(2023, 5, 20)}, []time.Time{day(2023, 6, 20)}},
		{"五月份去了哪里", []time.Time{day(2024, 5, 20)}, []time.Time{day(2024, 7, 20)}},
		{"3天前的讨论", []time.Time{day(2025, 3, 9)}, []time.Time{day(2025, 3, 1)}},
		{"which database do we use?", nil, []time.Time{now}},
		// The span up to today, not the calendar month before.
		{"How many dinner parties have I attended in the past month?", []time.Time{day(2025, 2, 13), day(2025, 3, 10)}, []time.Time{day(2025, 2, 10), day(2025, 1, 20)}},
		{"the concerts I went to in the past two months", []time.Time{day(2025, 1, 13), day(2025, 3, 12)}, []time.Time{day(2025, 1, 10)}},
		{"How many weddings in the last four months?", []time.Time{day(2024, 11, 13)}, []time.Time{day(2024, 11, 10)}},
		{"videos I watched in the past few weeks", []time.Time{day(2025, 2, 13)}, []time.Time{day(2025, 2, 10)}},
		{"what we said over the past week", []time.Time{day(2025, 3, 6)}, []time.Time{day(2025, 3, 3)}},
		{"what did we decide last month?", []time.Time{day(2025, 2, 3)}, []time.Time{day(2025, 3, 3)}},
		{"what I cooked a couple of days ago", []time.Time{day(2025, 3, 10)}, []time.Time{day(2025, 3, 7), day(2025, 3, 12)}},
		{"my car a few months ago", []time.Time{day(2024, 12, 1), day(2025, 1, 15)}, []time.Time{day(2025, 2, 28), day(2024, 10, 15)}},
		{"several weeks ago", []time.Time{day(2025, 2, 5), day(2025, 1, 20)}, []time.Time{day(2025, 3, 5)}},
		{"I received a piece of jewelry last Saturday from whom?", []time.Time{day(2025, 3, 8).Add(10 * time.Hour)}, []time.Time{day(2025, 3, 1), day(2025, 3, 11)}},
		{"Who did I meet this past Wednesday?", []time.Time{day(2025, 3, 5)}, []time.Time{day(2025, 3, 12).Add(2 * time.Hour)}},
		{"What do I have on Tuesday?", nil, []time.Time{day(2025, 3, 11)}},
		{"How many sports have I played competitively in the past?", nil, []time.Time{now}},
		{"How many days ago did I attend a networking event?", nil, []time.Time{now}},
		{"In which country did Elise ski a few years ago?", nil, []time.Time{day(2023, 3, 1)}},
		{"my plans for the past few years", nil, []time.Time{now}},
		{"two years ago", []time.Time{day(2023, 3, 1)}, []time.Time{day(2025, 3, 1)}},
	}
	for _, tt := range tests {
		ws := queryWindows(tt.query, now)
		if len(tt.in) == 0 && len(ws) != 0 {
			t.Errorf("queryWindows(%q) = %v, want none", tt.query, ws)
		}
		for _, at := range tt.in {
			if !inWindows(ws, at) {
				t.Errorf("queryWindows(%q) = %v: %s not in it", tt.query, ws, at)
			}
		}
		for _, at := range tt.out {
			if inWindows(ws, at) {
				t.Errorf("queryWindows(%q) = %v: %s in it", tt.query, ws, at)
			}
		}
	}
}

func FuzzQueryWindows(f *testing.F) {
	for _, s := range []string{"in May 2023", "on 31 February, 2023", "3天前", "十二月", "99 days ago", "early dec", "2023年13月",
		"the past 999999999999 months", "a couple of weeks ago", "last few days", "last sunday"} {
		f.Add(s)
	}
	now := time.Date(2025, 3, 12, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, q string) {
		for _, w := range queryWindows(q, now) {
			if w.month == 0 && !w.from.Before(w.to) {
				t.Errorf("queryWindows(%q): empty window %v", q, w)
			}
		}
	})
}
