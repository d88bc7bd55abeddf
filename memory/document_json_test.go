package memory

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"
)

// TestDiskDocumentFields checks that diskDocument has Document's fields,
// in order and with the same JSON names, so that a field added to
// Document cannot be dropped from memory.json unnoticed.
func TestDiskDocumentFields(t *testing.T) {
	doc, disk := reflect.TypeFor[Document](), reflect.TypeFor[diskDocument]()
	if doc.NumField() != disk.NumField() {
		t.Fatalf("Document has %d fields, diskDocument %d", doc.NumField(), disk.NumField())
	}
	for i := range doc.NumField() {
		a, b := doc.Field(i), disk.Field(i)
		if a.Name != b.Name || a.Tag.Get("json") != b.Tag.Get("json") {
			t.Errorf("field %d: Document.%s %q, diskDocument.%s %q", i, a.Name, a.Tag.Get("json"), b.Name, b.Tag.Get("json"))
		}
	}
}

// fullDocument sets every field of a document.
func fullDocument() *Document {
	at := time.Date(2026, 4, 11, 9, 0, 0, 0, time.UTC)
	sec := func(s string) Section { return Section{Summary: s, UpdatedAt: at} }
	fact := func(id string) Fact {
		return Fact{ID: id, Content: "Uses <b> & Go", Category: CategoryCorrection, Confidence: 0.9, CreatedAt: at, Source: "t1", SourceError: "said Rust"}
	}
	return &Document{
		Version: SchemaVersion, LastUpdated: at,
		User:               UserSections{WorkContext: sec("w"), PersonalContext: sec("p"), TopOfMind: sec("t")},
		History:            HistorySections{RecentMonths: sec("r"), EarlierContext: sec("e"), LongTermBackground: sec("l")},
		Facts:              []Fact{fact("fact_1")},
		Knowledge:          []Fact{fact("know_1")},
		AssistantKnowledge: []Fact{fact("asst_1")},
		Watermarks:         map[string]int64{"t1": 3},
		Revision:           7,
		TurnLogEpoch:       2,
		FactEvents:         []FactEvent{{FactID: "fact_1", Event: FactCreated, At: at, Source: "t1", Reason: "new", Content: "Uses Go"}},
	}
}

// diskJSON is fullDocument in the memory.json format (DeerFlow's names).
const diskJSON = `{"version":"1.0","lastUpdated":"2026-04-11T09:00:00Z",` +
	`"user":{"workContext":{"summary":"w","updatedAt":"2026-04-11T09:00:00Z"},"personalContext":{"summary":"p","updatedAt":"2026-04-11T09:00:00Z"},"topOfMind":{"summary":"t","updatedAt":"2026-04-11T09:00:00Z"}},` +
	`"history":{"recentMonths":{"summary":"r","updatedAt":"2026-04-11T09:00:00Z"},"earlierContext":{"summary":"e","updatedAt":"2026-04-11T09:00:00Z"},"longTermBackground":{"summary":"l","updatedAt":"2026-04-11T09:00:00Z"}},` +
	`"facts":[{"id":"fact_1","content":"Uses <b> & Go","category":"correction","confidence":0.9,"createdAt":"2026-04-11T09:00:00Z","source":"t1","sourceError":"said Rust"}],` +
	`"knowledge":[{"id":"know_1","content":"Uses <b> & Go","category":"correction","confidence":0.9,"createdAt":"2026-04-11T09:00:00Z","source":"t1","sourceError":"said Rust"}],` +
	`"assistantKnowledge":[{"id":"asst_1","content":"Uses <b> & Go","category":"correction","confidence":0.9,"createdAt":"2026-04-11T09:00:00Z","source":"t1","sourceError":"said Rust"}],` +
	`"watermarks":{"t1":3},"revision":7,"turnLogEpoch":2,` +
	`"factEvents":[{"factId":"fact_1","event":"created","at":"2026-04-11T09:00:00Z","source":"t1","reason":"new","content":"Uses Go"}]}`

func TestDocumentJSON(t *testing.T) {
	t.Run("memory.json keeps DeerFlow's names", func(t *testing.T) {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf) // as the stores write it
		enc.SetEscapeHTML(false)
		if err := enc.Encode(fullDocument()); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimSuffix(buf.String(), "\n"); got != diskJSON {
			t.Errorf("Encode(document) =\n%s\nwant\n%s", got, diskJSON)
		}
	})
	t.Run("json.Marshal escapes HTML as before", func(t *testing.T) {
		got, err := json.Marshal(*fullDocument()) // by value, as an export field would be
		if err != nil {
			t.Fatal(err)
		}
		want := strings.NewReplacer("<", `\u003c`, ">", `\u003e`, "&", `\u0026`).Replace(diskJSON)
		if string(got) != want {
			t.Errorf("Marshal(document) =\n%s\nwant\n%s", got, want)
		}
	})
	t.Run("a memory.json file loads", func(t *testing.T) {
		var got Document
		if err := json.Unmarshal([]byte(diskJSON), &got); err != nil {
			t.Fatal(err)
		}
		if want := fullDocument(); !reflect.DeepEqual(&got, want) {
			t.Errorf("Unmarshal(memory.json) =\n%+v\nwant\n%+v", got, *want)
		}
	})
	t.Run("empty facts stay a list", func(t *testing.T) {
		got, err := json.Marshal(NewDocument())
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"version":"1.0","user":{"workContext":{"summary":""},"personalContext":{"summary":""},"topOfMind":{"summary":""}},"history":{"recentMonths":{"summary":""},"earlierContext":{"summary":""},"longTermBackground":{"summary":""}},"facts":[],"revision":0}`; string(got) != want {
			t.Errorf("Marshal(NewDocument()) = %s, want %s", got, want)
		}
	})
	t.Run("tool results are snake_case", func(t *testing.T) {
		d := fullDocument()
		got, err := json.Marshal(struct {
			User  UserSections    `json:"user"`
			Fact  Fact            `json:"fact"`
			Event FactEvent       `json:"event"`
			Hist  HistorySections `json:"history"`
		}{d.User, d.Facts[0], d.FactEvents[0], d.History})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{`"work_context"`, `"personal_context"`, `"top_of_mind"`, `"updated_at"`, `"created_at"`,
			`"source_error"`, `"fact_id"`, `"recent_months"`, `"earlier_context"`, `"long_term_background"`} {
			if !strings.Contains(string(got), key) {
				t.Errorf("result JSON lacks %s: %s", key, got)
			}
		}
	})
}
