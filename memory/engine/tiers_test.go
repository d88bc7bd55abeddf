package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// tierLLM is a fake model: complete answers each request; every prompt is
// recorded.
type tierLLM struct {
	complete func(prompt string) (string, error)

	mu      sync.Mutex
	prompts []string
}

func (f *tierLLM) Complete(_ context.Context, req memory.CompletionRequest) (memory.Completion, error) {
	f.mu.Lock()
	f.prompts = append(f.prompts, req.Prompt)
	f.mu.Unlock()
	text, err := f.complete(req.Prompt)
	return memory.Completion{Text: text}, err
}

func (f *tierLLM) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.prompts)
}

// Prompt kinds, told apart by their data blocks.
func isUpdatePrompt(p string) bool { return strings.Contains(p, "<current_memory>") }

func isSummaryPrompt(p string) bool { return strings.Contains(p, "mid-term memory of an AI assistant") }

func isAnalysisPrompt(p string) bool { return strings.Contains(p, "<current_profile>") }

// updatePrompts keeps the memory updater's prompts.
func updatePrompts(prompts []string) []string {
	var out []string
	for _, p := range prompts {
		if isUpdatePrompt(p) {
			out = append(out, p)
		}
	}
	return out
}

// fakeClock is a settable clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func newTierService(tb testing.TB, cfg memory.Config, opts ...Option) (*Service, *fakeClock) {
	tb.Helper()
	clock := &fakeClock{t: time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)}
	n := 0
	opts = append([]Option{WithClock(clock.now), WithFactIDs(func() string { n++; return fmt.Sprintf("fact_%08x", n) })}, opts...)
	s := newTestService(tb, newMemStore(), cfg, opts...)
	tb.Cleanup(func() { s.Close(context.Background()) })
	return s, clock
}

// tierTopics are distinct vocabularies, so exchanges group by topic.
var tierTopics = [][]string{
	strings.Fields("kyoto trip april cherry blossom hotel train temple ryokan"),
	strings.Fields("postgres index vacuum query planner replica migration schema"),
	strings.Fields("marathon training pace tempo run interval shoes mileage"),
	strings.Fields("sourdough starter flour hydration oven crust proofing loaf"),
}

func topicText(r *rand.Rand, topic, n int) string {
	w := tierTopics[topic%len(tierTopics)]
	out := make([]string, n)
	for i := range out {
		out[i] = w[r.IntN(len(w))]
	}
	return strings.Join(out, " ")
}

// TestShortToMidBoundaryLosesNothing sends 1,000 exchanges through a
// capacity-10 window: afterwards each is in exactly one place, its
// thread's short-term window or one mid-term session.
func TestShortToMidBoundaryLosesNothing(t *testing.T) {
	tests := []struct {
		name    string
		threads int
		batch   int // exchanges per add_memory call
	}{
		{"one thread", 1, 1},
		{"three threads interleaved", 3, 1},
		{"batches of seven", 2, 7},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memory.DefaultConfig()
			cfg.ShortTermCapacity = 10
			s, clock := newTierService(t, cfg)
			r := rand.New(rand.NewPCG(1, 4))
			var ids []string
			for i := 0; i < 1000; i += tt.batch {
				var msgs []memory.Message
				for j := i; j < min(1000, i+tt.batch); j++ {
					msgs = append(msgs, memory.Message{Role: memory.RoleUser, Content: fmt.Sprintf("%s (%d)", topicText(r, j/7, 8), j)}, memory.Message{Role: memory.RoleAssistant, Content: topicText(r, j/7, 6)})
				}
				res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: fmt.Sprintf("t%d", (i/tt.batch)%tt.threads), Messages: msgs})
				if err != nil {
					t.Fatal(err)
				}
				ids = append(ids, res.TurnIDs...)
				clock.add(time.Minute)
			}
			place := map[string]int{}
			for th := range tt.threads {
				got, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: fmt.Sprintf("t%d", th), Query: "postgres vacuum"})
				if err != nil {
					t.Fatal(err)
				}
				if len(got.Recent) != 10 {
					t.Fatalf("thread t%d: short-term window holds %d exchanges, want 10", th, len(got.Recent))
				}
				for _, e := range got.Recent {
					place[e.ID]++
				}
			}
			view := countSessionPages(t, s, place)
			if len(ids) != 1000 {
				t.Fatalf("%d exchanges stored, want 1000", len(ids))
			}
			for i, id := range ids {
				if place[id] != 1 {
					t.Errorf("exchange %d is in %d places, want exactly 1", i, place[id])
				}
			}
			if len(place) != len(ids) {
				t.Errorf("%d exchanges placed, %d added", len(place), len(ids))
			}
			if n := len(view.Sessions); n < 2 || n > 990 {
				t.Errorf("%d sessions, want topics grouped into several sessions", n)
			}
			t.Logf("1,000 exchanges: %d mid-term sessions", len(view.Sessions))
		})
	}
}

func TestExtractiveSessionsWithoutLLM(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 2
	s, _ := newTierService(t, cfg)
	r := rand.New(rand.NewPCG(2, 2))
	for i := range 24 {
		addPair(t, s, "t", "Tell me about "+topicText(r, i/6, 10), topicText(r, i/6, 8))
	}
	view, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Sessions) < 3 {
		t.Fatalf("%d sessions from four topics, want at least 3", len(view.Sessions))
	}
	vocabulary := map[string]bool{"tell": true}
	for _, topic := range tierTopics {
		for _, w := range topic {
			vocabulary[w] = true
		}
	}
	for _, ses := range view.Sessions {
		if ses.Summary == "" || len(ses.Keywords) == 0 {
			t.Errorf("session %s has summary %q keywords %v, want both", ses.ID, ses.Summary, ses.Keywords)
		}
		// Keywords are words of the exchanges ("cherry"), not index
		// terms ("cherri").
		for _, k := range ses.Keywords {
			if !vocabulary[k] {
				t.Errorf("session %s keyword %q is not a word of its exchanges", ses.ID, k)
			}
		}
	}
	res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "sourdough hydration"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Pages) == 0 || !strings.Contains(res.Pages[0].User+res.Pages[0].Reply, "sourdough") && !strings.Contains(res.Pages[0].User+res.Pages[0].Reply, "hydration") {
		t.Errorf("Retrieve() pages = %+v, want a sourdough exchange first", res.Pages)
	}
}

func TestSimilarPagesJoinOneSession(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 1
	s, _ := newTierService(t, cfg)
	for i := range 5 {
		addPair(t, s, "t", fmt.Sprintf("kyoto trip cherry blossom temple day %d", i), "kyoto temple cherry blossom")
	}
	addPair(t, s, "t", "postgres vacuum replica planner", "postgres vacuum schema")
	addPair(t, s, "t", "last", "one")
	view, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	sizes := map[int]int{}
	for _, ses := range view.Sessions {
		sizes[len(ses.Pages)]++
	}
	if len(view.Sessions) != 2 || sizes[5] != 1 || sizes[1] != 1 {
		t.Errorf("sessions = %+v, want the five Kyoto exchanges together and the Postgres one apart", view.Sessions)
	}
}

// hotSession builds a service whose one mid-term session holds three
// pages (heat 0 + 3 + 1 = 4 at the default weights).
func hotSession(t *testing.T, llm memory.LLM) (*Service, *fakeClock) {
	t.Helper()
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 1
	cfg.LongTermKnowledgeCapacity = 2
	s, clock := newTierService(t, cfg, WithLLM(llm))
	for i := range 4 {
		addPair(t, s, "t", fmt.Sprintf("kyoto trip cherry blossom temple plan %d", i), "kyoto temple cherry blossom")
	}
	return s, clock
}

func sessionView(t *testing.T, s *Service) memory.MidTermSessionView {
	t.Helper()
	view, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(view.Sessions) != 1 {
		t.Fatalf("%d sessions, want 1", len(view.Sessions))
	}
	return view.Sessions[0]
}

func TestPromotionAtThresholdAndHeatReset(t *testing.T) {
	llm := &tierLLM{complete: func(p string) (string, error) {
		switch {
		case isAnalysisPrompt(p):
			return `{"user":{"topOfMind":{"summary":"Planning a Kyoto trip in April.","shouldUpdate":true}},"userKnowledge":["Is planning a Kyoto trip","Likes temples",{"content":"Travels in April, not May","correction":true}],"assistantKnowledge":["The assistant suggested booking early"]}`, nil
		case isSummaryPrompt(p):
			return `{"summary":"Kyoto trip planning.","keywords":["Kyoto","cherry blossom"]}`, nil
		}
		return `{"newFacts":[]}`, nil
	}}
	s, clock := hotSession(t, llm)
	ctx := t.Context()
	scope := memory.Scope{UserID: memory.DefaultUserID}

	if v := sessionView(t, s); v.Heat != 4 || v.Interactions != 3 {
		t.Fatalf("session = %+v, want heat 4 from three pages", v)
	}
	if done, err := s.promoteHot(ctx, scope); done || err != nil {
		t.Fatalf("promoteHot() below threshold = %v, %v; want nothing done", done, err)
	}
	if n := len(llm.sent()); n != 0 {
		t.Fatalf("%d prompts sent below the threshold, want 0", n)
	}

	// A retrieval hit is a visit: heat 1 + 3 + 1 = 5 reaches the threshold.
	st, err := s.loadedState(ctx, scope)
	if err != nil {
		t.Fatal(err)
	}
	s.prepareToRank(ctx, st)
	hits, _ := s.visitPages(st, []string{st.Turns[0].ID, st.Turns[1].ID})
	st.mu.Unlock()
	if len(hits) != 1 || hits[0].Heat != 5 || len(hits[0].PageIDs) != 2 {
		t.Fatalf("visitPages() = %+v, want one session at heat 5 with both pages", hits)
	}
	// The analysis runs a little later, when recency has decayed the heat
	// just under the threshold: the visit made the session due, so it is
	// analysed all the same.
	clock.add(time.Minute)
	done, err := s.promoteHot(ctx, scope)
	if !done || err != nil {
		t.Fatalf("promoteHot() at threshold = %v, %v; want the session analysed", done, err)
	}
	sent := llm.sent()
	if len(sent) != 1 || !isAnalysisPrompt(sent[0]) {
		t.Fatalf("prompts = %d, want one analysis prompt", len(sent))
	}
	for i := range 3 {
		if !strings.Contains(sent[0], fmt.Sprintf("plan %d", i)) {
			t.Errorf("analysis prompt lacks page %d", i)
		}
	}
	if strings.Contains(sent[0], "plan 3") {
		t.Error("analysis prompt holds the exchange still in short-term memory")
	}

	prof, err := s.Profile(ctx, memory.ProfileRequest{IncludeKnowledge: true, IncludeAssistantKnowledge: true})
	if err != nil {
		t.Fatal(err)
	}
	var know []string
	for _, f := range prof.Knowledge {
		know = append(know, f.Content)
	}
	// Capacity 2: the oldest plain entry goes, the correction stays.
	if want := []string{"Likes temples", "Travels in April, not May"}; !slices.Equal(know, want) {
		t.Errorf("Knowledge = %v, want %v", know, want)
	}
	if len(prof.AssistantKnowledge) != 1 || prof.User.TopOfMind.Summary != "Planning a Kyoto trip in April." {
		t.Errorf("profile = %+v, want the analysis applied", prof)
	}
	if p, _ := s.Profile(ctx, memory.ProfileRequest{}); len(p.Knowledge) != 0 || len(p.AssistantKnowledge) != 0 {
		t.Error("Profile() without include_knowledge lists knowledge")
	}

	v := sessionView(t, s)
	if v.Visits != 0 || v.Interactions != 0 || v.Heat != 1 || v.Analyzed != 3 {
		t.Errorf("after analysis session = %+v, want visits and interactions reset, heat 1, three pages analysed", v)
	}
	if done, _ := s.promoteHot(ctx, scope); done {
		t.Error("promoteHot() analysed the session again with nothing new")
	}
	clock.add(24 * time.Hour)
	if v := sessionView(t, s); math.Abs(v.Heat-math.Exp(-1)) > 1e-9 {
		t.Errorf("heat a day later = %v, want e^-1", v.Heat)
	}
}

func TestTierWorkRunsAfterFlush(t *testing.T) {
	llm := &tierLLM{complete: func(p string) (string, error) {
		switch {
		case isAnalysisPrompt(p):
			return `{"userKnowledge":["Is planning a Kyoto trip"],"assistantKnowledge":[]}`, nil
		case isSummaryPrompt(p):
			return `{"summary":"Kyoto trip planning in spring.","keywords":["Kyoto","cherry blossom","temples"]}`, nil
		}
		return `{"newFacts":[{"content":"Plans a trip","category":"goal","confidence":0.9}],"factsToRemove":[]}`, nil
	}}
	s, _ := hotSession(t, llm)
	addPair(t, s, "t", "kyoto trip cherry blossom temple plan 4", "kyoto temple cherry blossom")
	if _, err := s.Flush(t.Context(), memory.FlushRequest{}); err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, p := range llm.sent() {
		switch {
		case isUpdatePrompt(p):
			kinds = append(kinds, "update")
		case isSummaryPrompt(p):
			kinds = append(kinds, "summary")
			if !strings.Contains(p, "User: kyoto trip cherry blossom temple plan 0") {
				t.Errorf("summary prompt lacks the session's first exchange:\n%s", p)
			}
		case isAnalysisPrompt(p):
			kinds = append(kinds, "analysis")
		}
	}
	if want := []string{"update", "summary", "analysis"}; !slices.Equal(kinds, want) {
		t.Errorf("prompts sent = %v, want %v", kinds, want)
	}
	v := sessionView(t, s)
	if v.Summary != "Kyoto trip planning in spring." || !slices.Equal(v.Keywords, []string{"Kyoto", "cherry blossom", "temples"}) {
		t.Errorf("session = %+v, want the model's summary and keywords", v)
	}
	prof, err := s.Profile(t.Context(), memory.ProfileRequest{IncludeKnowledge: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(prof.Knowledge) != 1 || prof.Knowledge[0].Content != "Is planning a Kyoto trip" {
		t.Errorf("Knowledge = %+v, want the analysed entry", prof.Knowledge)
	}
}

// TestOneSittingStaysInOneSession checks the continuity rule: exchanges
// of one sitting join the session of the one before even when their
// words differ, and the same exchanges hours apart each start a session.
func TestOneSittingStaysInOneSession(t *testing.T) {
	// The second exchange shares one word in four with the first (a
	// similarity of about 0.4, under the 0.6 threshold); the third shares
	// two with the second, enough on its own.
	chat := [][2]string{
		{"kayak river paddle helmet", "kayak river paddle helmet"},
		{"kayak tent stove lantern", "kayak tent stove lantern"},
		{"kayak lantern boots compass", "kayak lantern boots compass"},
	}
	tests := []struct {
		name string
		gap  time.Duration
		want int // sessions
	}{
		{"minutes apart", 5 * time.Minute, 1},
		{"hours apart", 3 * time.Hour, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := memory.DefaultConfig()
			cfg.ShortTermCapacity = 1
			s, clock := newTierService(t, cfg)
			for _, c := range chat {
				addPair(t, s, "t", c[0], c[1])
				clock.add(tt.gap)
			}
			addPair(t, s, "t", "later", "ok")
			view, err := s.MidTerm(t.Context(), "", "")
			if err != nil {
				t.Fatal(err)
			}
			if len(view.Sessions) != tt.want {
				t.Errorf("%d sessions, want %d: %+v", len(view.Sessions), tt.want, view.Sessions)
			}
		})
	}
}

// TestForgettingLatestExchangesReturnsPagesToWindow checks that after the
// latest exchanges of a thread are forgotten, the window reaching back
// over exchanges that had moved to mid-term takes them out of their
// sessions: each exchange is still in exactly one place, also after a
// restart from the saved mid-term state.
func TestForgettingLatestExchangesReturnsPagesToWindow(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 3
	store, mid := newMemStore(), &memMidTerm{}
	s, err := NewService(cfg, storeWithMidTerm{store, mid}, mustCounter(t), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	r := rand.New(rand.NewPCG(3, 3))
	var ids []string
	for i := range 10 {
		res, err := s.Add(t.Context(), memory.AddRequest{ThreadID: "t", UserInput: fmt.Sprintf("%s (%d)", topicText(r, i/5, 6), i), AgentResponse: topicText(r, i/5, 4)})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.TurnIDs...)
	}
	places := func(s *Service) (map[string]int, []string) {
		t.Helper()
		res, err := s.Retrieve(t.Context(), memory.RetrieveRequest{ThreadID: "t", Query: "kyoto"})
		if err != nil {
			t.Fatal(err)
		}
		place := map[string]int{}
		var recent []string
		for _, e := range res.Recent {
			place[e.ID]++
			recent = append(recent, e.ID)
		}
		countSessionPages(t, s, place)
		return place, recent
	}
	places(s) // seven exchanges move to mid-term
	if _, err := s.Forget(t.Context(), memory.ForgetRequest{TurnIDs: ids[6:]}); err != nil {
		t.Fatal(err)
	}
	for _, restart := range []bool{false, true} {
		if restart {
			s.Close(context.Background())
			if s, err = NewService(cfg, storeWithMidTerm{store, mid}, mustCounter(t), WithLogger(slog.New(slog.DiscardHandler))); err != nil {
				t.Fatal(err)
			}
		}
		place, recent := places(s)
		if !slices.Equal(recent, ids[3:6]) {
			t.Errorf("restart %v: window = %v, want the last three kept exchanges %v", restart, recent, ids[3:6])
		}
		for i, id := range ids[:6] {
			if place[id] != 1 {
				t.Errorf("restart %v: exchange %d is in %d places, want 1", restart, i, place[id])
			}
		}
		if len(place) != 6 {
			t.Errorf("restart %v: %d exchanges placed, want the 6 kept", restart, len(place))
		}
	}
	s.Close(context.Background())
}

// savedSessions stores 40 exchanges on five topics in two threads, with
// a short-term window of 3, and retrieves once. It returns that Service,
// still open, a function that starts another on the same memory, and
// the mid-term state the first one saves.
func savedSessions(t *testing.T) (first *Service, start func() *Service, mid *memMidTerm) {
	t.Helper()
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 3
	store := newMemStore()
	mid = &memMidTerm{}
	start = func() *Service {
		s, err := NewService(cfg, storeWithMidTerm{store, mid}, mustCounter(t), WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	first = start()
	r := rand.New(rand.NewPCG(9, 9))
	for i := range 40 {
		addPair(t, first, fmt.Sprint("t", i%2), topicText(r, i/8, 8), topicText(r, i/8, 5))
	}
	if _, err := first.Retrieve(t.Context(), memory.RetrieveRequest{Query: "kyoto"}); err != nil {
		t.Fatal(err)
	}
	return first, start, mid
}

// TestPreloadReadsSavedSessions checks that Preload, which reads the saved
// mid-term state while the turn log is read, ends with the same sessions
// as a first retrieval would build.
func TestPreloadReadsSavedSessions(t *testing.T) {
	s, start, _ := savedSessions(t)
	want, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	s.Close(context.Background())

	s = start()
	defer s.Close(context.Background())
	if err := s.Preload(t.Context(), "", ""); err != nil {
		t.Fatal(err)
	}
	got, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != len(want.Sessions) || len(got.Sessions) == 0 {
		t.Fatalf("%d sessions after Preload, want %d", len(got.Sessions), len(want.Sessions))
	}
	for i := range got.Sessions {
		g, w := got.Sessions[i], want.Sessions[i]
		if g.ID != w.ID || g.Visits != w.Visits || len(g.Pages) != len(w.Pages) || g.Summary != w.Summary {
			t.Errorf("session %d after Preload = %s visits %d pages %d, want %s visits %d pages %d", i, g.ID, g.Visits, len(g.Pages), w.ID, w.Visits, len(w.Pages))
		}
	}
}

// TestPreloadRefitsSessionsThatLostPages starts from a saved mid-term
// state with a session holding an exchange the turn log no longer has (as
// after a forget in another process) and a summary quoting it: Preload,
// which fits the state to the turns before the page index is loaded,
// makes the session's summary and keywords again from what is left, as
// a first retrieval without Preload does.
func TestPreloadRefitsSessionsThatLostPages(t *testing.T) {
	s, start, mid := savedSessions(t)
	s.Close(context.Background())

	const gone = "what the forgotten exchange said"
	var saved []byte
	for key, b := range mid.saved {
		var st memory.MidTermState
		if err := json.Unmarshal(b, &st); err != nil || len(st.Sessions) == 0 {
			t.Fatalf("saved mid-term state: %v, %d sessions; want some", err, len(st.Sessions))
		}
		ses := st.Sessions[0]
		ses.Pages = append(ses.Pages, memory.MidTermPage{TurnID: "turn_forgotten", Seq: 9999})
		ses.Summary, ses.Keywords, ses.LLMSummary = gone, []string{"forgotten"}, true
		var err error
		if saved, err = json.Marshal(&st); err != nil {
			t.Fatal(err)
		}
		mid.saved[key] = saved
	}
	view := func(preload bool) *memory.MidTermView {
		for key := range mid.saved {
			mid.saved[key] = saved
		}
		s := start()
		defer s.Close(context.Background())
		if preload {
			if err := s.Preload(t.Context(), "", ""); err != nil {
				t.Fatal(err)
			}
		} else if _, err := s.Retrieve(t.Context(), memory.RetrieveRequest{Query: "kyoto"}); err != nil {
			t.Fatal(err)
		}
		v, err := s.MidTerm(t.Context(), "", "")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	got, want := view(true), view(false)
	if len(got.Sessions) == 0 || len(got.Sessions) != len(want.Sessions) {
		t.Fatalf("%d sessions after Preload, %d after a first retrieval; want the same, some", len(got.Sessions), len(want.Sessions))
	}
	for i, g := range got.Sessions {
		w := want.Sessions[i]
		if g.Summary == gone || slices.Contains(g.Keywords, "forgotten") {
			t.Errorf("session %s after Preload still says %q, keywords %q", g.ID, g.Summary, g.Keywords)
		}
		if g.ID != w.ID || g.Summary != w.Summary || !slices.Equal(g.Keywords, w.Keywords) || len(g.Pages) != len(w.Pages) {
			t.Errorf("session %d after Preload = %s %q %q (%d pages), after a first retrieval %s %q %q (%d pages)",
				i, g.ID, g.Summary, g.Keywords, len(g.Pages), w.ID, w.Summary, w.Keywords, len(w.Pages))
		}
	}
}

// countSessionPages adds one to place[id] for every page of every
// mid-term session, and returns the view it counted.
func countSessionPages(t *testing.T, s *Service, place map[string]int) *memory.MidTermView {
	t.Helper()
	view, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	for _, ses := range view.Sessions {
		for _, p := range ses.Pages {
			place[p.ID]++
		}
	}
	return view
}

// gatedMidTerm is a MidTermStore whose saves wait for gate.
type gatedMidTerm struct {
	memMidTerm
	gate  chan struct{}
	saves atomic.Int32
}

func (g *gatedMidTerm) SaveMidTerm(ctx context.Context, sc memory.Scope, st *memory.MidTermState) error {
	<-g.gate
	g.saves.Add(1)
	return g.memMidTerm.SaveMidTerm(ctx, sc, st)
}

// TestMidTermSaveDoesNotBlockAdds checks that saving the mid-term state
// happens off the add path: adds go on while a save is stuck, and Close
// writes the newest state once it is not.
func TestMidTermSaveDoesNotBlockAdds(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 1
	store := &gatedMidTerm{gate: make(chan struct{})}
	s, err := NewService(cfg, storeWithMidTerm{newMemStore(), store}, mustCounter(t), WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.MidTerm(t.Context(), "", ""); err != nil { // builds the tier: saves from now on
		t.Fatal(err)
	}
	for i := range 20 {
		addPair(t, s, "t", fmt.Sprintf("kyoto temple visit %d", i), "ok")
	}
	if n := store.saves.Load(); n != 0 {
		t.Fatalf("%d saves finished while the store was stuck", n)
	}
	close(store.gate)
	s.Close(context.Background())
	saved, err := store.LoadMidTerm(t.Context(), memory.Scope{UserID: memory.DefaultUserID})
	if err != nil || saved == nil {
		t.Fatalf("LoadMidTerm() = %v, %v; want the state saved at close", saved, err)
	}
	pages := 0
	for _, ses := range saved.Sessions {
		pages += len(ses.Pages)
	}
	if pages != 19 {
		t.Errorf("saved state holds %d pages, want the 19 that left the window", pages)
	}
}

// TestSavedPagesFoundBySeqOrID checks that a restart finds each saved
// page's turn whatever its saved Seq says: right, missing (a state saved
// before pages kept it) or pointing at another turn, and that a page saved
// twice or whose turn is gone is dropped.
func TestSavedPagesFoundBySeqOrID(t *testing.T) {
	cfg := memory.DefaultConfig()
	cfg.ShortTermCapacity = 3
	edits := map[string]func(st *memory.MidTermState){
		"as saved": func(*memory.MidTermState) {},
		"no seq": func(st *memory.MidTermState) {
			for _, ses := range st.Sessions {
				for i := range ses.Pages {
					ses.Pages[i].Seq = 0
				}
			}
		},
		"seq of another turn": func(st *memory.MidTermState) {
			for _, ses := range st.Sessions {
				for i := range ses.Pages {
					ses.Pages[i].Seq++
				}
			}
		},
		"twice and gone": func(st *memory.MidTermState) {
			ses := st.Sessions[0]
			ses.Pages = append(ses.Pages, ses.Pages[0], memory.MidTermPage{TurnID: "turn_gone", Seq: ses.Pages[0].Seq})
		},
	}
	for name, edit := range edits {
		t.Run(name, func(t *testing.T) {
			store, mid := newMemStore(), &memMidTerm{}
			start := func() *Service {
				s, err := NewService(cfg, storeWithMidTerm{store, mid}, mustCounter(t), WithLogger(slog.New(slog.DiscardHandler)))
				if err != nil {
					t.Fatal(err)
				}
				return s
			}
			s := start()
			r := rand.New(rand.NewPCG(9, 9))
			for i := range 40 {
				addPair(t, s, fmt.Sprint("t", i%2), topicText(r, i/8, 8), topicText(r, i/8, 5))
			}
			want := sessionPages(t, s)
			s.Close(context.Background())

			saved, err := mid.LoadMidTerm(t.Context(), memory.Scope{UserID: cfg.UserID})
			if err != nil || saved == nil || len(saved.Sessions) == 0 {
				t.Fatalf("saved state = %v, %v; want sessions", saved, err)
			}
			for _, ses := range saved.Sessions {
				for _, pg := range ses.Pages {
					if pg.Seq == 0 {
						t.Fatalf("page %s saved without its Seq", pg.TurnID)
					}
				}
			}
			edit(saved)
			if err := mid.SaveMidTerm(t.Context(), memory.Scope{UserID: cfg.UserID}, saved); err != nil {
				t.Fatal(err)
			}
			s = start()
			defer s.Close(context.Background())
			if got := sessionPages(t, s); !reflect.DeepEqual(got, want) {
				t.Errorf("sessions after restart = %v, want %v", got, want)
			}
		})
	}
}

// sessionPages returns the turn ids of each mid-term session's pages, by
// session id.
func sessionPages(t *testing.T, s *Service) map[string][]string {
	t.Helper()
	view, err := s.MidTerm(t.Context(), "", "")
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string][]string)
	for _, ses := range view.Sessions {
		for _, p := range ses.Pages {
			out[ses.ID] = append(out[ses.ID], p.ID)
		}
	}
	return out
}
