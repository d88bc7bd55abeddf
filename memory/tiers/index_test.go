package tiers

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/update"
)

func TestSessionHeat(t *testing.T) {
	base := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	def := memory.HeatWeights{Alpha: 1, Beta: 1, Gamma: 1, Tau: 24 * time.Hour}
	tests := []struct {
		name                 string
		visits, interactions int
		since                time.Duration
		w                    memory.HeatWeights
		want                 float64
	}{
		{"new session", 0, 1, 0, def, 2},
		{"visits and pages", 3, 4, 0, def, 8},
		{"one tau later", 0, 0, 24 * time.Hour, def, math.Exp(-1)},
		{"two tau later", 2, 0, 48 * time.Hour, def, 2 + math.Exp(-2)},
		{"weights", 2, 3, 12 * time.Hour, memory.HeatWeights{Alpha: 0.5, Beta: 2, Gamma: 4, Tau: 24 * time.Hour}, 1 + 6 + 4*math.Exp(-0.5)},
		{"clock behind last visit", 1, 1, -time.Hour, def, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ses := &memory.MidTermSession{Visits: tt.visits, Interactions: tt.interactions, LastVisit: base}
			if got := ses.Heat(base.Add(tt.since), tt.w); math.Abs(got-tt.want) > 1e-12 {
				t.Errorf("Heat() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRecencyDecaysMonotonically(t *testing.T) {
	base := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	ses := &memory.MidTermSession{LastVisit: base}
	w := memory.HeatWeights{Alpha: 1, Beta: 1, Gamma: 1, Tau: time.Hour}
	prev := math.Inf(1)
	for h := range 10 {
		got := ses.Heat(base.Add(time.Duration(h)*30*time.Minute), w)
		if got >= prev || got <= 0 {
			t.Fatalf("Heat() after %d half hours = %v, previous %v: want strictly decreasing and positive", h, got, prev)
		}
		prev = got
	}
}

func TestLFUEvictionOrder(t *testing.T) {
	base := time.Date(2026, 7, 1, 0, 0, 0, 0, time.UTC)
	m := NewMidTerm()
	sessions := []struct {
		uses int
		last time.Duration
	}{
		{5, 0},         // session_1
		{1, time.Hour}, // session_2
		{1, 0},         // session_3: same uses as 2, visited earlier
		{3, 0},         // session_4
		{1, 0},         // session_5: ties with 3, numbered later
	}
	for i, sp := range sessions {
		m.AddSession(&memory.MidTermSession{Uses: sp.uses, LastVisit: base.Add(sp.last), Pages: []memory.MidTermPage{{TurnID: fmt.Sprintf("turn_%d", i)}}})
	}
	tests := []struct {
		capacity int
		want     []string
	}{
		{5, nil},
		{4, []string{"session_3"}},
		{2, []string{"session_5", "session_2"}},
		{1, []string{"session_4"}},
	}
	for _, tt := range tests {
		got := m.Evict(tt.capacity)
		if !slices.Equal(got, tt.want) {
			t.Errorf("evict(%d) = %v, want %v", tt.capacity, got, tt.want)
		}
	}
	if len(m.Sessions) != 1 || m.Sessions[1] == nil || len(m.ByPage) != 1 {
		t.Errorf("left %d sessions, %d indexed pages; want session_1 with its page", len(m.Sessions), len(m.ByPage))
	}
}

func TestParseAnalysis(t *testing.T) {
	reply := "Sure:\n```json\n" + `{"user":{"workContext":{"summary":"Backend engineer.","shouldUpdate":true}},"userKnowledge":["Lives in Lisbon",{"content":"Uses Go 1.26, not 1.22","correction":true},"None",""],"assistantKnowledge":[{"content":"Recommended Alfama"}],"newFacts":[{"content":"x","category":"context","confidence":1}]}` + "\n```"
	upd, err := ParseAnalysis(reply)
	if err != nil {
		t.Fatalf("parseAnalysis() = %v", err)
	}
	if len(upd.Sections) != 1 || upd.Sections[0].Name != "workContext" {
		t.Errorf("Sections = %+v", upd.Sections)
	}
	want := []update.NewFact{{Content: "Lives in Lisbon", Category: memory.CategoryKnowledge, Confidence: 1}, {Content: "Uses Go 1.26, not 1.22", Category: memory.CategoryCorrection, Confidence: 1}}
	if !slices.Equal(upd.UserKnowledge, want) {
		t.Errorf("UserKnowledge = %+v, want %+v", upd.UserKnowledge, want)
	}
	if len(upd.AssistantKnowledge) != 1 || len(upd.NewFacts) != 0 {
		t.Errorf("AssistantKnowledge = %+v NewFacts = %+v, want one entry and no facts", upd.AssistantKnowledge, upd.NewFacts)
	}
	if _, err := ParseAnalysis("no json here"); err == nil {
		t.Error("parseAnalysis(prose) = nil error, want ErrBadReply")
	}
}
