package update

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

var applyNow = time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)

// testDoc returns a document with n facts fact_00000000, fact_00000001, …
// with contents "known fact i", confidence 0.8 and increasing CreatedAt.
func testDoc(n int) *memory.Document {
	d := memory.NewDocument()
	for i := range n {
		d.Facts = append(d.Facts, memory.Fact{
			ID: fmt.Sprintf("fact_%08x", i), Content: fmt.Sprintf("known fact %d", i), Category: memory.CategoryContext,
			Confidence: 0.8, CreatedAt: applyNow.Add(time.Duration(i-n) * time.Hour), Source: "t0",
		})
	}
	return d
}

// seqIDs returns an id source that yields ids in order, then random ones.
func seqIDs(ids ...string) func() string {
	return func() string {
		if len(ids) == 0 {
			return NewFactID()
		}
		id := ids[0]
		ids = ids[1:]
		return id
	}
}

func reversed(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

func factIDs(d *memory.Document) []string {
	var ids []string
	for _, f := range d.Facts {
		ids = append(ids, f.ID)
	}
	return ids
}

func factContents(d *memory.Document) []string {
	var cs []string
	for _, f := range d.Facts {
		cs = append(cs, f.Content)
	}
	return cs
}

func goal(content string, conf float64) NewFact {
	return NewFact{Content: content, Category: memory.CategoryGoal, Confidence: conf}
}

func TestApplyUpdate(t *testing.T) {
	opts := ApplyOptions{Source: "thread-1", Now: applyNow, ConfidenceThreshold: 0.7, MaxFacts: 100, MaxRemoveShare: 0.25}
	tests := []struct {
		name    string
		doc     *memory.Document
		u       *Update
		opt     func(*ApplyOptions)
		check   func(t *testing.T, d *memory.Document, r ApplyReport)
		ignored []string // substrings, one per expected Ignored entry, in order
	}{
		{
			name: "sections",
			doc:  testDoc(0),
			u:    &Update{Sections: []SectionUpdate{{"workContext", "Engineer."}, {"longTermBackground", "Since 2010."}, {"mood", "Happy."}, {"workContext", "Staff engineer."}}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if got := d.User.WorkContext; got.Summary != "Staff engineer." || !got.UpdatedAt.Equal(applyNow) {
					t.Errorf("workContext = %+v", got)
				}
				if got := d.History.LongTermBackground; got.Summary != "Since 2010." || !got.UpdatedAt.Equal(applyNow) {
					t.Errorf("longTermBackground = %+v", got)
				}
				if !d.User.TopOfMind.UpdatedAt.IsZero() {
					t.Errorf("topOfMind was touched: %+v", d.User.TopOfMind)
				}
				if want := []string{"workContext", "longTermBackground"}; !slices.Equal(r.SectionsUpdated, want) {
					t.Errorf("SectionsUpdated = %q, want %q", r.SectionsUpdated, want)
				}
			},
			ignored: []string{`section "mood": unknown`},
		},
		{
			name: "threshold",
			doc:  testDoc(0),
			u:    &Update{NewFacts: []NewFact{goal("low", 0.69), goal("at threshold", 0.7), goal("high", 0.95)}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"at threshold", "high"}; !slices.Equal(factContents(d), want) {
					t.Errorf("facts = %q, want %q", factContents(d), want)
				}
			},
			ignored: []string{`new fact "low": confidence 0.69 is below the threshold 0.7`},
		},
		{
			name: "dedupe by folded content",
			doc:  testDoc(2),
			u: &Update{NewFacts: []NewFact{
				goal("  KNOWN   fact\t1 ", 0.9), goal("Drinks tea", 0.9), goal("drinks  TEA", 0.95), goal("Drinks tea daily", 0.9),
			}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"known fact 0", "known fact 1", "Drinks tea", "Drinks tea daily"}; !slices.Equal(factContents(d), want) {
					t.Errorf("facts = %q, want %q", factContents(d), want)
				}
			},
			ignored: []string{"already known", `"drinks  TEA": already known`},
		},
		{
			name: "new facts: ids, source, time, trimmed content",
			doc:  testDoc(2),
			u:    &Update{NewFacts: []NewFact{goal(" a ", 0.9), goal("b", 0.9), goal("c", 0.9)}},
			opt: func(o *ApplyOptions) {
				// Taken, malformed, upper case, a good one, a repeat of it, another good one.
				o.NewID = seqIDs("fact_00000001", "fact_xyz", "FACT_0000000A", "fact_0000000a", "fact_0000000a", "fact_deadbeef", "fact_cafef00d")
				o.Source = ""
			},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"fact_00000000", "fact_00000001", "fact_0000000a", "fact_deadbeef", "fact_cafef00d"}; !slices.Equal(factIDs(d), want) {
					t.Errorf("ids = %q, want %q", factIDs(d), want)
				}
				if want := []string{"fact_0000000a", "fact_deadbeef", "fact_cafef00d"}; !slices.Equal(r.FactsAdded, want) {
					t.Errorf("FactsAdded = %q, want %q", r.FactsAdded, want)
				}
				want := memory.Fact{ID: "fact_0000000a", Content: "a", Category: memory.CategoryGoal, Confidence: 0.9, CreatedAt: applyNow, Source: "unknown"}
				if !reflect.DeepEqual(d.Facts[2], want) {
					t.Errorf("new fact = %+v, want %+v", d.Facts[2], want)
				}
			},
		},
		{
			name: "random ids",
			doc:  &memory.Document{},
			u:    &Update{NewFacts: []NewFact{goal("a", 0.9), goal("b", 0.9), goal("c", 0.9)}},
			opt:  func(o *ApplyOptions) { o.NewID = nil },
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if len(d.Facts) != 3 {
					t.Fatalf("facts = %+v, want 3", d.Facts)
				}
				for _, f := range d.Facts {
					if !isFactID(f.ID) || f.Source != "thread-1" {
						t.Errorf("fact = %+v, want a well-formed id and source thread-1", f)
					}
				}
			},
		},
		{
			name: "sourceError only on corrections",
			doc:  testDoc(0),
			u: &Update{NewFacts: []NewFact{
				{Content: "Use errors, not panics", Category: "correction", Confidence: 0.96, SourceError: " Used panic "},
				{Content: "Likes Go", Category: "preference", Confidence: 0.9, SourceError: "none"},
			}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if d.Facts[0].SourceError != "Used panic" || d.Facts[1].SourceError != "" {
					t.Errorf("facts = %+v", d.Facts)
				}
			},
			ignored: []string{`"Likes Go": sourceError dropped`},
		},
		{
			name: "invalid new facts",
			doc:  testDoc(0),
			u: &Update{NewFacts: []NewFact{
				{Content: "a", Category: "mood", Confidence: 0.9}, {Content: "b", Category: " Goal ", Confidence: math.NaN()},
				{Content: "c", Category: "goal", Confidence: 1.5}, {Content: "  ", Category: "goal", Confidence: 0.9},
				{Content: strings.Repeat("x", memory.UpdateMaxContentRunes+1), Category: "goal", Confidence: 0.9}, {Content: "d", Category: " Goal ", Confidence: 0.9},
			}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if len(d.Facts) != 1 || d.Facts[0].Category != memory.CategoryGoal {
					t.Errorf("facts = %+v, want only d as a goal", d.Facts)
				}
			},
			ignored: []string{`unknown category "mood"`, "confidence NaN", "confidence 1.5", "empty content", "over 2000 characters"},
		},
		{
			name: "max facts keeps the highest confidence, older on ties",
			doc: func() *memory.Document {
				d := testDoc(5)
				for i, c := range []float64{0.8, 0.9, 0.7, 0.9, 0.75} {
					d.Facts[i].Confidence = c
				}
				return d
			}(),
			u:   &Update{NewFacts: []NewFact{goal("new high", 0.95), goal("new tie", 0.9)}},
			opt: func(o *ApplyOptions) { o.MaxFacts = 4 },
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"fact_00000001", "fact_00000003", "new high", "new tie"}; !reflect.DeepEqual(append(factIDs(d)[:2], factContents(d)[2:]...), want) {
					t.Errorf("facts = %q %q, want %q", factIDs(d), factContents(d), want)
				}
				if want := []string{"fact_00000000", "fact_00000002", "fact_00000004"}; !slices.Equal(r.FactsEvicted, want) {
					t.Errorf("FactsEvicted = %q, want %q", r.FactsEvicted, want)
				}
				if len(r.FactsAdded) != 2 {
					t.Errorf("FactsAdded = %q, want 2 ids", r.FactsAdded)
				}
			},
			ignored: []string{"fact fact_00000000: over the limit of 4", "fact fact_00000002: over", "fact fact_00000004: over"},
		},
		{
			name: "max facts: a new fact tied with old ones goes first",
			doc:  testDoc(3),
			u:    &Update{NewFacts: []NewFact{goal("newcomer", 0.8)}},
			opt:  func(o *ApplyOptions) { o.MaxFacts = 3 },
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"fact_00000000", "fact_00000001", "fact_00000002"}; !slices.Equal(factIDs(d), want) || len(r.FactsAdded) != 0 || len(r.FactsEvicted) != 0 {
					t.Errorf("facts = %q, report %+v; want the old facts only", factIDs(d), r)
				}
			},
			ignored: []string{`new fact "newcomer": over the limit of 3 facts`},
		},
		{
			name: "remove existing, note unknown",
			doc:  testDoc(4),
			u:    &Update{FactsToRemove: []string{"fact_00000002", "fact_99999999", "fact_00000002"}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"fact_00000000", "fact_00000001", "fact_00000003"}; !slices.Equal(factIDs(d), want) {
					t.Errorf("ids = %q, want %q", factIDs(d), want)
				}
				if want := []string{"fact_00000002"}; !slices.Equal(r.FactsRemoved, want) {
					t.Errorf("FactsRemoved = %q, want %q", r.FactsRemoved, want)
				}
			},
			ignored: []string{`factsToRemove: no fact "fact_99999999"`},
		},
		{
			name: "a pinned fact is not removed by the model",
			doc: func() *memory.Document {
				d := testDoc(3)
				d.Facts[1].Pinned = true
				return d
			}(),
			u: &Update{FactsToRemove: []string{"fact_00000001"}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"fact_00000000", "fact_00000001", "fact_00000002"}; !slices.Equal(factIDs(d), want) || len(r.FactsRemoved) != 0 {
					t.Errorf("ids = %q, removed %q; want the pinned fact kept", factIDs(d), r.FactsRemoved)
				}
			},
			ignored: []string{"factsToRemove: fact fact_00000001 is pinned and stays"},
		},
		{
			name: "removal is bounded",
			doc:  testDoc(40),
			u:    &Update{FactsToRemove: reversed(factIDs(testDoc(40)))},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				want := reversed(factIDs(testDoc(40))[30:])
				if !slices.Equal(r.FactsRemoved, want) || len(d.Facts) != 30 {
					t.Errorf("FactsRemoved = %q, %d facts left; want %q and 30 left", r.FactsRemoved, len(d.Facts), want)
				}
			},
			ignored: []string{"not removed, since one update may remove at most 10 of 40 facts: fact_0000001d, fact_0000001c,"},
		},
		{
			name: "one removal is always allowed",
			doc:  testDoc(3),
			u:    &Update{FactsToRemove: []string{"fact_00000001", "fact_00000000"}},
			opt:  func(o *ApplyOptions) { o.MaxRemoveShare = 0 },
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"fact_00000001"}; !slices.Equal(r.FactsRemoved, want) {
					t.Errorf("FactsRemoved = %q, want %q", r.FactsRemoved, want)
				}
			},
			ignored: []string{"not removed, since one update may remove at most 1 of 3 facts: fact_00000000"},
		},
		{
			name: "removed id is not reused and content can come back",
			doc:  testDoc(2),
			u:    &Update{FactsToRemove: []string{"fact_00000001"}, NewFacts: []NewFact{goal("known fact 1", 0.95)}},
			opt:  func(o *ApplyOptions) { o.NewID = seqIDs("fact_00000001", "fact_00000abc") },
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"fact_00000000", "fact_00000abc"}; !slices.Equal(factIDs(d), want) || d.Facts[1].Confidence != 0.95 {
					t.Errorf("facts = %+v, want ids %q", d.Facts, want)
				}
			},
		},
		{
			name: "upload scrub, English",
			doc: func() *memory.Document {
				d := testDoc(2)
				d.Facts[1].Content = "The user uploaded report.pdf for review."
				d.History.RecentMonths.Summary = "Worked on billing. Uploaded three CSV files to the chat. Shipped v2."
				return d
			}(),
			u: &Update{
				Sections: []SectionUpdate{{"topOfMind", "Reviewing the Q3 report the user uploaded as a PDF. Planning the Go 1.26 upgrade."}, {"personalContext", "The user uploaded a document."}},
				NewFacts: []NewFact{goal("Uploading files via <uploaded_files> tags", 0.9), goal("Wants faster CI. Shared an attachment upload earlier!", 0.9), goal("Builds an upload service", 0.9)},
			},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if got, want := d.User.TopOfMind.Summary, "Planning the Go 1.26 upgrade."; got != want {
					t.Errorf("topOfMind = %q, want %q", got, want)
				}
				if got, want := d.History.RecentMonths.Summary, "Worked on billing. Shipped v2."; got != want {
					t.Errorf("recentMonths = %q, want %q", got, want)
				}
				if want := []string{"known fact 0", "Wants faster CI.", "Builds an upload service"}; !slices.Equal(factContents(d), want) {
					t.Errorf("facts = %q, want %q", factContents(d), want)
				}
				if want := []string{"fact_00000001"}; !slices.Equal(r.FactsEvicted, want) {
					t.Errorf("FactsEvicted = %q, want %q", r.FactsEvicted, want)
				}
				if want := []string{"topOfMind"}; !slices.Equal(r.SectionsUpdated, want) {
					t.Errorf("SectionsUpdated = %q, want %q", r.SectionsUpdated, want)
				}
			},
			ignored: []string{"section topOfMind: sentences about uploaded files removed", "section personalContext: the new summary is empty or only about uploaded files",
				`new fact "Uploading files via <uploaded_files> tag…": about an uploaded file`, `new fact "Wants faster CI. Shared an attachment up…": sentences about uploaded files removed`,
				"section recentMonths: sentences about uploaded files removed", "fact fact_00000001: about an uploaded file"},
		},
		{
			name: "upload scrub, Chinese",
			doc: func() *memory.Document {
				d := testDoc(1)
				d.Facts[0].Content = "用户上传了一个PDF文件。"
				return d
			}(),
			u: &Update{
				Sections: []SectionUpdate{{"workContext", "张三是阿里巴巴的后端工程师。他上传了项目文档供参考。主要使用 FastAPI。"}},
				NewFacts: []NewFact{goal("用户上传了需求文档", 0.9), goal("用户想学习 LangGraph。上传的截图显示报错！", 0.9), goal("上海", 0.9)},
			},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if got, want := d.User.WorkContext.Summary, "张三是阿里巴巴的后端工程师。主要使用 FastAPI。"; got != want {
					t.Errorf("workContext = %q, want %q", got, want)
				}
				if want := []string{"用户想学习 LangGraph。", "上海"}; !slices.Equal(factContents(d), want) {
					t.Errorf("facts = %q, want %q", factContents(d), want)
				}
			},
			ignored: []string{"section workContext: sentences about uploaded files removed", `new fact "用户上传了需求文档": about an uploaded file`,
				`new fact "用户想学习 LangGraph。上传的截图显示报错！": sentences about uploaded files removed`, "fact fact_00000000: about an uploaded file"},
		},
		{
			name: "scrub leaves a duplicate",
			doc:  testDoc(1),
			u:    &Update{NewFacts: []NewFact{goal("known fact 0. Uploaded a file.", 0.9)}},
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if want := []string{"known fact 0"}; !slices.Equal(factContents(d), want) {
					t.Errorf("facts = %q, want %q", factContents(d), want)
				}
			},
			ignored: []string{"sentences about uploaded files removed", "already known"},
		},
		{
			name: "nil facts and nil update",
			doc:  &memory.Document{},
			u:    nil,
			check: func(t *testing.T, d *memory.Document, r ApplyReport) {
				if len(d.Facts) != 0 || !reflect.DeepEqual(r, ApplyReport{}) {
					t.Errorf("doc = %+v, report = %+v; want nothing changed", d, r)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opt := opts
			opt.NewID = seqIDs()
			if tt.opt != nil {
				tt.opt(&opt)
			}
			r := ApplyUpdate(tt.doc, tt.u, opt)
			if tt.check != nil {
				tt.check(t, tt.doc, r)
			}
			if len(r.Ignored) != len(tt.ignored) {
				t.Fatalf("Ignored = %q, want %d entries like %q", r.Ignored, len(tt.ignored), tt.ignored)
			}
			for i, want := range tt.ignored {
				if !strings.Contains(r.Ignored[i], want) {
					t.Errorf("Ignored[%d] = %q, want it to contain %q", i, r.Ignored[i], want)
				}
			}
		})
	}
}

func TestApplyUpdateNilDocument(t *testing.T) {
	r := ApplyUpdate(nil, &Update{NewFacts: []NewFact{goal("a", 1)}}, ApplyOptions{})
	if len(r.Ignored) != 1 || len(r.FactsAdded) != 0 {
		t.Errorf("ApplyUpdate(nil) = %+v, want one ignored entry", r)
	}
}

func TestRemovalBound(t *testing.T) {
	tests := []struct {
		n     int
		share float64
		want  int
	}{
		{0, 0.5, 0}, {1, 0, 1}, {40, 0.25, 10}, {100, 0.29, 29}, {3, 0.1, 1}, {10, 1, 10}, {10, 7, 10}, {10, -1, 1}, {10, math.NaN(), 1}, {10, math.Inf(1), 10},
	}
	for _, tt := range tests {
		if got := removalBound(tt.n, tt.share); got != tt.want {
			t.Errorf("removalBound(%d, %v) = %d, want %d", tt.n, tt.share, got, tt.want)
		}
	}
}

func TestScrubUploads(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Likes Go.", "Likes Go."},
		{"Builds  an upload service.", "Builds  an upload service."}, // untouched: no file word
		{"Uploaded the file. Likes Go.", "Likes Go."},
		{"Likes Go!  The user uploaded notes.txt.\nUses Vim?", "Likes Go! Uses Vim?"},
		{"Uses PostgreSQL.\nSee /mnt/user-data/uploads/a.csv\nLikes tea.", "Uses PostgreSQL.\nLikes tea."},
		{"File uploads: docs. x", "x"},
		{"They are UPLOADING Images now", ""},
		{"用户上传了文件。", ""},
		{"喜欢喝茶。用户上传了两张图片！使用 Go。", "喜欢喝茶。使用 Go。"},
		{"上传速度很快。", "上传速度很快。"},
		{"Uploaded a PDF. ...", ""},
	}
	for _, tt := range tests {
		if got := ScrubUploads(tt.in); got != tt.want {
			t.Errorf("scrubUploads(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSplitSentences(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"", nil},
		{"One. Two!  Three?", []string{"One. ", "Two!  ", "Three?"}},
		{"See report.pdf now. Done", []string{"See report.pdf now. ", "Done"}},
		{"Wait... what?! Ok", []string{"Wait... ", "what?! ", "Ok"}},
		{"你好。世界！\n好", []string{"你好。", "世界！\n", "好"}},
		{"line one\nline two", []string{"line one\n", "line two"}},
	}
	for _, tt := range tests {
		got := splitSentences(tt.in)
		if !slices.Equal(got, tt.want) {
			t.Errorf("splitSentences(%q) = %q, want %q", tt.in, got, tt.want)
		}
		if strings.Join(got, "") != tt.in {
			t.Errorf("splitSentences(%q) loses bytes: %q", tt.in, got)
		}
	}
}

func TestNewFactID(t *testing.T) {
	seen := map[string]bool{}
	for range 100 {
		id := NewFactID()
		if !isFactID(id) || seen[id] {
			t.Fatalf("NewFactID() = %q, malformed or repeated", id)
		}
		seen[id] = true
	}
	for _, id := range []string{"", "fact_", "fact_1234567", "fact_123456789", "fact_ABCDEF01", "fact_g0000000", "fakt_00000000"} {
		if isFactID(id) {
			t.Errorf("isFactID(%q) = true, want false", id)
		}
	}
}

// fuzzDoc is the document FuzzApplyUpdate applies to: 20 facts with ids
// fact_00000000…fact_00000013, mixed categories and confidences.
func fuzzDoc() *memory.Document {
	d := testDoc(20)
	for i := range d.Facts {
		d.Facts[i].Category = memory.Categories[i%len(memory.Categories)]
		d.Facts[i].Confidence = 0.5 + float64(i%6)/10
	}
	d.User.WorkContext.Summary = "Backend engineer."
	return d
}

func FuzzApplyUpdate(f *testing.F) {
	all := `"` + strings.Join(factIDs(testDoc(20)), `","`) + `"`
	for _, s := range []string{
		cleanReply,
		`{"factsToRemove":[` + all + `]}`,
		`{"factsToRemove":["fact_00000003","fact_00000003","nope"],"newFacts":[{"content":"KNOWN fact 3","category":"goal","confidence":0.9}]}`,
		factsReply(`{"content":"known  FACT 1","category":"goal","confidence":0.99},{"content":"a","category":"goal","confidence":1},{"content":"b","category":"habit","confidence":0.7}`),
		factsReply(`{"content":"Uploaded a file. Likes Go","category":"preference","confidence":0.9},{"content":"用户上传了文件","category":"context","confidence":0.9}`),
		`{"user":{"topOfMind":{"summary":"Reviewing the uploaded PDF.","shouldUpdate":true}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		u, err := ParseUpdate(reply)
		if err != nil {
			return
		}
		before := fuzzDoc()
		doc := before.Clone()
		next := 0
		opt := ApplyOptions{
			Source: "fuzz", Now: applyNow, ConfidenceThreshold: 0.7, MaxFacts: 24, MaxRemoveShare: 0.25,
			// Ids that often collide with existing ones.
			NewID: func() string { next++; return fmt.Sprintf("fact_%08x", next%40) },
		}
		r := ApplyUpdate(doc, u, opt)

		if len(doc.Facts) > opt.MaxFacts {
			t.Errorf("%d facts, over MaxFacts %d", len(doc.Facts), opt.MaxFacts)
		}
		ids, keys := map[string]bool{}, map[string]bool{}
		for _, fact := range doc.Facts {
			if !isFactID(fact.ID) || ids[fact.ID] {
				t.Errorf("fact id %q is malformed or repeated", fact.ID)
			}
			ids[fact.ID] = true
			k := FoldFactContent(fact.Content)
			if k == "" || keys[k] {
				t.Errorf("fact content %q is empty or a duplicate", fact.Content)
			}
			keys[k] = true
			if math.IsNaN(fact.Confidence) || fact.Confidence < 0 || fact.Confidence > 1 || !memory.ValidCategory(fact.Category) {
				t.Errorf("fact %+v has a bad confidence or category", fact)
			}
			if fact.SourceError != "" && fact.Category != memory.CategoryCorrection {
				t.Errorf("fact %+v has a sourceError but is no correction", fact)
			}
		}
		if bound := removalBound(len(before.Facts), opt.MaxRemoveShare); len(r.FactsRemoved) > bound {
			t.Errorf("removed %d facts, over the bound %d", len(r.FactsRemoved), bound)
		}
		// Every old fact is kept, removed or evicted: exactly one of them.
		for _, old := range before.Facts {
			n := 0
			for _, in := range [][]string{factIDs(doc), r.FactsRemoved, r.FactsEvicted} {
				if slices.Contains(in, old.ID) {
					n++
				}
			}
			if n != 1 {
				t.Errorf("old fact %s is in %d of kept/removed/evicted, want 1", old.ID, n)
			}
		}
		for _, id := range r.FactsAdded {
			if !ids[id] || slices.Contains(factIDs(before), id) {
				t.Errorf("added fact %s is missing or was there before", id)
			}
		}
		if want := len(before.Facts) - len(r.FactsRemoved) - len(r.FactsEvicted) + len(r.FactsAdded); len(doc.Facts) != want {
			t.Errorf("%d facts, want %d from the report", len(doc.Facts), want)
		}
	})
}
