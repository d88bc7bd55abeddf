package cli

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/openai/openaitest"
)

// The MemoryOS tiers through the real binary: exchanges that leave the
// short-term window form a mid-term session, the model summarises it, a
// retrieval that makes it hot gets it analysed into user and assistant
// knowledge, and that knowledge comes back from get_user_profile and
// retrieve_memory.

// Prompt kinds the server sends, told apart by fixed text of their
// templates (prompts/*.tmpl). The data blocks of every prompt are
// neutralised, so exchanges cannot forge these markers.
const (
	promptUpdate   = "update"   // prompts/update.tmpl
	promptSummary  = "summary"  // prompts/session_summary.tmpl
	promptAnalysis = "analysis" // prompts/session_analysis.tmpl
)

// The fake model's replies.
const (
	tiersFact        = "The user is building a Dobsonian telescope called Quokka"
	tiersSummary     = "The user is making the Quokka telescope mirror: grits, turned edge, Foucault test and coating."
	tiersTopOfMind   = "Finishing the Quokka telescope mirror before the star party."
	tiersUserKnow    = "The user grinds the Quokka telescope mirror by hand on a barrel"
	tiersCorrection  = "The Quokka telescope mirror is 8 inch, not 10 inch as the assistant assumed"
	tiersAssistKnow  = "The assistant recommended 120 grit after 80 carbide for the Quokka telescope mirror"
	tiersHeatDefault = 5.0 // mid_term_heat_threshold's default; the test leaves it unset
)

// tiersPromptKinds maps each prompt kind to its distinctive text and to
// the fake model's reply.
var tiersPromptKinds = []struct {
	kind, marker string
	reply        any
}{
	{promptUpdate, "<current_memory>", map[string]any{
		"user": map[string]any{}, "history": map[string]any{},
		"newFacts":      []any{map[string]any{"content": tiersFact, "category": "context", "confidence": 0.95}},
		"factsToRemove": []any{},
	}},
	{promptSummary, `{"summary":"","keywords":[]}`, map[string]any{
		"summary":  tiersSummary,
		"keywords": []string{"Quokka telescope", "mirror grinding", "Foucault test"},
	}},
	{promptAnalysis, "<current_profile>", map[string]any{
		"user": map[string]any{"topOfMind": map[string]any{"summary": tiersTopOfMind, "shouldUpdate": true}},
		"userKnowledge": []any{
			tiersUserKnow,
			map[string]any{"content": tiersCorrection, "correction": true},
		},
		"assistantKnowledge": []any{map[string]any{"content": tiersAssistKnow, "correction": false}},
	}},
}

// newTiersLLM is a fake model that answers each prompt kind with its fixed
// reply, and a prompt of no single known kind with a 400.
func newTiersLLM(t *testing.T) *openaitest.Server {
	llm := openaitest.NewServer(t)
	llm.ChatFunc = func(r openaitest.ChatRequest) openaitest.Reply {
		prompt := r.Prompt()
		kinds := promptKinds(prompt)
		if len(kinds) != 1 {
			return openaitest.Reply{Status: http.StatusBadRequest, Body: fmt.Sprintf("prompt matches %d known kinds", len(kinds))}
		}
		content := openaitest.MustJSON(t, tiersPromptKinds[kinds[0]].reply)
		return openaitest.Chat(t, content, openaitest.Usage{PromptTokens: len(prompt) / 4, CompletionTokens: len(content) / 4})
	}
	return llm
}

// promptKinds returns the kinds whose marker is in the prompt.
func promptKinds(prompt string) []int {
	var kinds []int
	for i, k := range tiersPromptKinds {
		if strings.Contains(prompt, k.marker) {
			kinds = append(kinds, i)
		}
	}
	return kinds
}

// receivedPrompts returns the chat prompts of a kind among reqs, in
// arrival order; the kind "" selects the prompts of no single known kind.
func receivedPrompts(reqs []openaitest.Request, kind string) []string {
	var out []string
	for _, r := range reqs {
		if r.Path != openaitest.ChatPath {
			continue
		}
		prompt := r.Chat.Prompt()
		got := ""
		if kinds := promptKinds(prompt); len(kinds) == 1 {
			got = tiersPromptKinds[kinds[0]].kind
		}
		if got == kind {
			out = append(out, prompt)
		}
	}
	return out
}

// waitPrompts waits until n prompts of the kind have arrived and returns
// them; the test's time-out is the only bound.
func waitPrompts(t *testing.T, llm *openaitest.Server, kind string, n int) []string {
	t.Helper()
	reqs := llm.Await(t, func(reqs []openaitest.Request) bool { return len(receivedPrompts(reqs, kind)) >= n })
	return receivedPrompts(reqs, kind)
}

// conversationBlock returns the data block of a prompt: the text between
// the last "<conversation>" line and "</conversation>".
func conversationBlock(prompt string) string {
	i := strings.LastIndex(prompt, "<conversation>\n")
	if i < 0 {
		return ""
	}
	block, _, _ := strings.Cut(prompt[i+len("<conversation>\n"):], "\n</conversation>")
	return block
}

// Result shapes of this test (subsets of the tools' outputs).
type (
	tiersKnowledge struct {
		Content  string `json:"content"`
		Category string `json:"category"`
	}
	tiersRetrieveResult struct {
		Pages []struct {
			ID string `json:"id"`
		} `json:"pages"`
		Sessions []struct {
			ID        string   `json:"id"`
			Summary   string   `json:"summary"`
			Keywords  []string `json:"keywords"`
			Heat      float64  `json:"heat"`
			PageCount int      `json:"page_count"`
			PageIDs   []string `json:"page_ids"`
		} `json:"sessions"`
		UserKnowledge      []tiersKnowledge `json:"user_knowledge"`
		AssistantKnowledge []tiersKnowledge `json:"assistant_knowledge"`
		Injection          string           `json:"injection"`
	}
	tiersProfileResult struct {
		User struct {
			TopOfMind struct {
				Summary string `json:"summary"`
			} `json:"top_of_mind"`
		} `json:"user"`
		Facts              []tiersKnowledge `json:"facts"`
		Knowledge          []tiersKnowledge `json:"knowledge"`
		AssistantKnowledge []tiersKnowledge `json:"assistant_knowledge"`
	}
)

func TestE2ETiers(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("end-to-end test")
	}
	ctx := t.Context()
	llm := newTiersLLM(t)
	srv := startServer(t, t.TempDir(),
		"MNEMO_LLM_BASE_URL="+llm.URL, "MNEMO_LLM_API_KEY=sk-tiers-e2e", "MNEMO_LLM_MODEL=fake",
		// One exchange stays short-term; the others move to mid-term.
		"MNEMO_SHORT_TERM_CAPACITY=1",
		// No update runs on its own: flush_memory starts the only one.
		"MNEMO_DEBOUNCE_SECONDS=300",
	)
	srv.initialize(ctx)

	// 1. Five exchanges on one topic in one thread, three minutes apart:
	// the first four leave the short-term window and, sharing their words
	// and their sitting, form one session of four pages.
	const thread = "quokka-build"
	exchanges := [][2]string{
		{"I am grinding the primary mirror of my Quokka telescope; which grit follows 80 carbide on the Quokka telescope mirror?",
			"After 80 carbide, grind the Quokka telescope mirror with 120 grit, then 220 and 400."},
		{"The Quokka telescope mirror shows a turned edge after the 220 grit. How do I fix the mirror?",
			"Use shorter strokes with the Quokka telescope mirror on top to fix the turned edge of the mirror."},
		{"The Foucault test of the Quokka telescope mirror shows 70 percent parabola correction on the mirror.",
			"Keep figuring the Quokka telescope mirror with W strokes until the mirror reaches about 100 percent."},
		{"Should the Quokka telescope mirror get its aluminium coating from a lab, or can I coat the mirror myself?",
			"Send the Quokka telescope mirror to a coating lab; home aluminising of a telescope mirror is not practical."},
		{"Which eyepiece suits the Quokka telescope mirror at f/5 for planets?",
			"For planets with the f/5 Quokka telescope mirror, start with a 6 mm eyepiece."},
	}
	base := time.Date(2025, 3, 10, 9, 0, 0, 0, time.UTC)
	var turnIDs []string
	for i, ex := range exchanges {
		var added addResult
		err := srv.tool(ctx, "add_memory", map[string]any{
			"user_input": ex[0], "agent_response": ex[1], "thread_id": thread,
			"timestamp": base.Add(time.Duration(i) * 3 * time.Minute).Format(time.RFC3339),
		}, &added)
		if err != nil || len(added.TurnIDs) != 1 {
			t.Fatalf("add_memory #%d = %+v, %v; want one turn id", i, added, err)
		}
		turnIDs = append(turnIDs, added.TurnIDs[0])
	}
	sessionTurns, shortTerm := turnIDs[:4], turnIDs[4]
	if n := len(llm.ChatRequests()); n != 0 {
		t.Fatalf("the model was asked %d times before flush_memory, want 0 (debounce 300 s)", n)
	}

	// 2. flush_memory runs the thread's update and then the tier work: the
	// new session has four pages, so the model is asked for its summary.
	// Its heat (4 exchanges + recency below 1) is under the threshold, so
	// it is not analysed yet.
	var flush struct {
		TurnsProcessed int `json:"turns_processed"`
	}
	if err := srv.tool(ctx, "flush_memory", map[string]any{}, &flush); err != nil || flush.TurnsProcessed != len(exchanges) {
		t.Fatalf("flush_memory = %+v, %v; want %d turns processed", flush, err, len(exchanges))
	}
	updates := waitPrompts(t, llm, promptUpdate, 1)
	summaries := waitPrompts(t, llm, promptSummary, 1)
	if got := receivedPrompts(llm.Requests(), promptAnalysis); len(got) != 0 {
		t.Fatalf("a session was analysed before any retrieval (%d analysis prompts); its heat is under the threshold", len(got))
	}

	// What each prompt's conversation block must carry and leave out: the
	// update reads every new exchange; the summary only the session's
	// pages, not the exchange still in the short-term window.
	for _, c := range []struct {
		kind      string
		prompt    string
		in, notIn []int // indexes into exchanges
	}{
		{promptUpdate, updates[0], []int{0, 1, 2, 3, 4}, nil},
		{promptSummary, summaries[0], []int{0, 1, 2, 3}, []int{4}},
	} {
		checkConversation(t, c.kind, c.prompt, exchanges, c.in, c.notIn)
	}

	// 3. A retrieval shows the session with the model's summary, as the
	// topic line of its pages in the injection text. The visit makes the
	// session hot (1 visit + 4 exchanges + recency 1 = 6 ≥ 5), which starts
	// its analysis right away.
	var got tiersRetrieveResult
	query := "Quokka telescope mirror"
	if err := srv.tool(ctx, "retrieve_memory", map[string]any{"query": query, "thread_id": thread, "max_results": 10}, &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Sessions) != 1 {
		t.Fatalf("retrieve_memory sessions = %+v, want the one session of the four exchanges", got.Sessions)
	}
	ses := got.Sessions[0]
	switch {
	case ses.Summary != tiersSummary:
		t.Errorf("session summary = %q, want the model's %q", ses.Summary, tiersSummary)
	case !slices.Contains(ses.Keywords, "Quokka telescope"):
		t.Errorf("session keywords = %q, want the model's", ses.Keywords)
	case ses.PageCount != len(sessionTurns) || !sameSet(ses.PageIDs, sessionTurns):
		t.Errorf("session pages = %d %v, want %v", ses.PageCount, ses.PageIDs, sessionTurns)
	case slices.Contains(ses.PageIDs, shortTerm):
		t.Errorf("the short-term exchange %s is a page of session %s", shortTerm, ses.ID)
	case ses.Heat < tiersHeatDefault:
		t.Errorf("session heat after the visit = %v, want at least %v", ses.Heat, tiersHeatDefault)
	}
	// The model's summary is the topic on the date line of the session's
	// exchanges (without a model there is none).
	if topic := "[2025-03-10 Mon] Topic: " + tiersSummary; !injectionHasLine(got.Injection, "## Relevant past exchanges", topic) {
		t.Errorf("injection lacks the session's date line with its topic %q among the past exchanges:\n%s", topic, got.Injection)
	}
	if len(got.UserKnowledge)+len(got.AssistantKnowledge) != 0 {
		t.Errorf("knowledge before any analysis: user %+v, assistant %+v", got.UserKnowledge, got.AssistantKnowledge)
	}

	// 4. The analysis prompt carries the session's exchanges; its reply
	// becomes the profile's knowledge lists and top-of-mind section.
	analyses := waitPrompts(t, llm, promptAnalysis, 1)
	checkConversation(t, promptAnalysis, analyses[0], exchanges, []int{0, 1, 2, 3}, []int{4})

	wantUser := []tiersKnowledge{{tiersUserKnow, "knowledge"}, {tiersCorrection, "correction"}}
	wantAssistant := []tiersKnowledge{{tiersAssistKnow, "knowledge"}}
	var prof tiersProfileResult
	// The analysis's reply is applied after the request: poll the
	// profile until it shows, with the test's time-out as the only bound.
	for {
		prof = tiersProfileResult{}
		if err := srv.tool(ctx, "get_user_profile", map[string]any{"include_knowledge": true, "include_assistant_knowledge": true}, &prof); err != nil {
			t.Fatal(err)
		}
		if len(prof.Knowledge)+len(prof.AssistantKnowledge) > 0 {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatal("the analysis's knowledge never reached the profile")
		case <-time.After(20 * time.Millisecond): // polling interval, not a deadline
		}
	}
	for _, c := range []struct {
		name      string
		got, want []tiersKnowledge
	}{
		{"user knowledge", prof.Knowledge, wantUser},
		{"assistant knowledge", prof.AssistantKnowledge, wantAssistant},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("get_user_profile %s = %+v, want %+v", c.name, c.got, c.want)
		}
	}
	if prof.User.TopOfMind.Summary != tiersTopOfMind {
		t.Errorf("profile top_of_mind = %q, want the analysis's %q", prof.User.TopOfMind.Summary, tiersTopOfMind)
	}
	if !slices.ContainsFunc(prof.Facts, func(f tiersKnowledge) bool { return f.Content == tiersFact }) {
		t.Errorf("profile facts = %+v, want the update's fact %q", prof.Facts, tiersFact)
	}

	// 5. A retrieval now returns the matching knowledge, and the injection
	// text has its two sections.
	got = tiersRetrieveResult{}
	if err := srv.tool(ctx, "retrieve_memory", map[string]any{"query": query, "thread_id": thread}, &got); err != nil {
		t.Fatal(err)
	}
	if !sameSet(knowledgeContents(got.UserKnowledge), knowledgeContents(wantUser)) {
		t.Errorf("retrieve_memory user_knowledge = %+v, want %+v", got.UserKnowledge, wantUser)
	}
	if !sameSet(knowledgeContents(got.AssistantKnowledge), knowledgeContents(wantAssistant)) {
		t.Errorf("retrieve_memory assistant_knowledge = %+v, want %+v", got.AssistantKnowledge, wantAssistant)
	}
	for _, c := range []struct{ heading, line string }{
		{"## Known about the user", "- " + tiersUserKnow},
		{"## Known about the user", "- (correction) " + tiersCorrection},
		{"## What the assistant said or committed to before", "- " + tiersAssistKnow},
	} {
		if !injectionHasLine(got.Injection, c.heading, c.line) {
			t.Errorf("injection lacks %q under %q:\n%s", c.line, c.heading, got.Injection)
		}
	}

	// 6. The host goes away; once the server has drained, each prompt was
	// sent exactly once: the analysed session's heat was reset and its
	// summary is current, so nothing was asked again.
	if code := srv.stop(); code != 0 {
		t.Errorf("exit code = %d, want 0", code)
	}
	for _, k := range tiersPromptKinds {
		if n := len(receivedPrompts(llm.Requests(), k.kind)); n != 1 {
			t.Errorf("%s prompts = %d, want 1", k.kind, n)
		}
	}
	for _, p := range receivedPrompts(llm.Requests(), "") {
		t.Errorf("prompt of no single known kind:\n%s", p)
	}
}

// checkConversation asserts that the prompt's conversation block holds the
// user input and the reply of exchanges[in...] and of none of
// exchanges[notIn...].
func checkConversation(t *testing.T, kind, prompt string, exchanges [][2]string, in, notIn []int) {
	t.Helper()
	conv := conversationBlock(prompt)
	if conv == "" {
		t.Errorf("%s prompt has no conversation block:\n%s", kind, prompt)
		return
	}
	for _, i := range in {
		if !strings.Contains(conv, "User: "+exchanges[i][0]) || !strings.Contains(conv, "Assistant: "+exchanges[i][1]) {
			t.Errorf("%s prompt's conversation lacks exchange #%d:\n%s", kind, i, conv)
		}
	}
	for _, i := range notIn {
		if strings.Contains(conv, exchanges[i][0]) {
			t.Errorf("%s prompt's conversation holds exchange #%d, which is not in the session:\n%s", kind, i, conv)
		}
	}
}

// injectionHasLine reports whether line is in the section of the
// injection text that starts with heading.
func injectionHasLine(injection, heading, line string) bool {
	_, section, ok := strings.Cut(injection, "\n"+heading+"\n")
	if !ok {
		return false
	}
	for l := range strings.Lines(section) {
		l = strings.TrimSuffix(l, "\n")
		if strings.HasPrefix(l, "## ") || l == "</memory>" {
			return false
		}
		if l == line {
			return true
		}
	}
	return false
}

func knowledgeContents(list []tiersKnowledge) []string {
	out := make([]string, len(list))
	for i, k := range list {
		out[i] = k.Content
	}
	return out
}

// sameSet reports whether a and b hold the same strings, in any order.
func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(s string) bool { return !slices.Contains(b, s) })
}
