package engine_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/testutil"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// The words forgotten texts hold and nothing kept does: in one turn of
// thread "home", in the turns of thread "secret" and the fact extracted
// from it, and in a saved fact. Lower case and their own stems, so that
// the page index and the mid-term keywords store them as written.
const (
	turnSecret   = "zanzibar"
	threadSecret = "kilimanjaro"
	factSecret   = "serengeti"
)

var allSecrets = []string{turnSecret, threadSecret, factSecret}

// forgetProc is one server process over a data directory: its own Store
// and Service, and what it logs.
type forgetProc struct {
	svc   *engine.Service
	store *files.Store
	log   *testutil.LockedBuffer
}

func openForgetProc(t *testing.T, dir string) *forgetProc {
	t.Helper()
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	counter, err := tiktoken.New("cl100k_base")
	if err != nil {
		t.Fatal(err)
	}
	p := &forgetProc{store: store, log: &testutil.LockedBuffer{}}
	n := 0
	p.svc, err = engine.NewService(memory.DefaultConfig(), store, counter,
		engine.WithLogger(slog.New(slog.NewTextHandler(p.log, &slog.HandlerOptions{Level: slog.LevelInfo}))),
		engine.WithFactIDs(func() string { n++; return fmt.Sprintf("fact_%08x", n) }))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// close shuts the process down as a server does and checks it logged no
// warning: a refused stale save is expected and handled quietly.
func (p *forgetProc) close(t *testing.T, name string) {
	t.Helper()
	p.svc.Close(t.Context())
	if strings.Contains(p.log.String(), "level=WARN") || strings.Contains(p.log.String(), "level=ERROR") {
		t.Errorf("%s logged warnings:\n%s", name, p.log.String())
	}
}

// TestForgetLeavesNoTrace: after each kind of forget, made by one process
// while another has the scope loaded, no file of the data directory holds
// the forgotten text — not after the forget, not after the other process
// shuts down (or uses the scope again first), not after a restart.
func TestForgetLeavesNoTrace(t *testing.T) {
	user := memory.Scope{UserID: "bob"}
	agent := memory.Scope{UserID: "bob", AgentName: "coder"}
	tests := []struct {
		name  string
		scope memory.Scope // where the secret is
		words []string     // what is forgotten
		// forget forgets the secret through svc.
		forget func(t *testing.T, svc *engine.Service, secretTurn string) *memory.ForgetResult
		// gone is the scope whose directory must not come back.
		gone string
	}{
		{name: "fact", scope: user, words: []string{factSecret}, forget: func(t *testing.T, svc *engine.Service, _ string) *memory.ForgetResult {
			list, err := svc.List(t.Context(), memory.ListRequest{UserID: "bob", Kind: memory.ListFacts})
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, f := range list.Facts {
				if strings.Contains(f.Content, factSecret) {
					ids = append(ids, f.ID)
				}
			}
			return mustForget(t, svc, memory.ForgetRequest{UserID: "bob", FactIDs: ids})
		}},
		{name: "turn", scope: user, words: []string{turnSecret}, forget: func(t *testing.T, svc *engine.Service, id string) *memory.ForgetResult {
			return mustForget(t, svc, memory.ForgetRequest{UserID: "bob", TurnIDs: []string{id}})
		}},
		{name: "thread", scope: agent, words: []string{threadSecret}, forget: func(t *testing.T, svc *engine.Service, _ string) *memory.ForgetResult {
			return mustForget(t, svc, memory.ForgetRequest{UserID: "bob", AgentName: "coder", ThreadID: "secret"})
		}},
		{name: "agent", scope: agent, words: allSecrets, gone: "users/bob/agents/coder", forget: func(t *testing.T, svc *engine.Service, _ string) *memory.ForgetResult {
			return mustForget(t, svc, memory.ForgetRequest{UserID: "bob", AgentName: "coder", AllOfScope: true, Confirm: memory.ForgetEverything})
		}},
		{name: "user", scope: agent, words: allSecrets, gone: "users/bob", forget: func(t *testing.T, svc *engine.Service, _ string) *memory.ForgetResult {
			return mustForget(t, svc, memory.ForgetRequest{UserID: "bob", AllOfScope: true, Confirm: memory.ForgetEverything})
		}},
	}
	for _, tc := range tests {
		for _, touch := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/other_uses_it_again=%v", tc.name, touch), func(t *testing.T) {
				ctx := t.Context()
				dir := t.TempDir()
				secretTurn := seedForget(t, dir, tc.scope)
				for _, w := range tc.words {
					hits := testutil.GrepFiles(t, dir, w)
					if w == factSecret && !slices.ContainsFunc(hits, func(h string) bool { return strings.Contains(h, "versions/") }) ||
						w != factSecret && !slices.ContainsFunc(hits, func(h string) bool { return strings.HasSuffix(h, "pages.idx") }) {
						t.Fatalf("before the forget %q is in %v; the test needs it in a kept version (facts) or pages.idx (turns)", w, hits)
					}
				}

				// The other process had the scope loaded, and indexed enough
				// new turns since its snapshot to save one at shutdown.
				other := openForgetProc(t, dir)
				storetest.MustAppendTurns(t, other.store, tc.scope, storetest.NewTurns("more", 1, 520)...)
				for _, sc := range []memory.Scope{user, tc.scope} {
					if _, err := other.svc.Retrieve(ctx, memory.RetrieveRequest{UserID: sc.UserID, AgentName: sc.AgentName, Query: strings.Join(allSecrets, " ")}); err != nil {
						t.Fatal(err)
					}
				}
				forgetting := openForgetProc(t, dir)
				tc.forget(t, forgetting.svc, secretTurn)
				if hits := testutil.GrepFiles(t, dir, tc.words...); len(hits) > 0 {
					t.Errorf("right after the forget, %q is in %v", tc.words, hits)
				}
				if touch {
					got, err := other.svc.Retrieve(ctx, memory.RetrieveRequest{UserID: tc.scope.UserID, AgentName: tc.scope.AgentName, Query: strings.Join(tc.words, " ") + " key"})
					if err != nil {
						t.Fatal(err)
					}
					if w := holds(got, tc.words); w != "" {
						t.Errorf("the other process still retrieves %q: %+v", w, got)
					}
				}
				other.close(t, "the other process")
				forgetting.close(t, "the forgetting process")
				if hits := testutil.GrepFiles(t, dir, tc.words...); len(hits) > 0 {
					t.Errorf("after both processes shut down, %q is in %v", tc.words, hits)
				}
				if tc.gone != "" {
					if _, err := os.Lstat(filepath.Join(dir, tc.gone)); err == nil {
						t.Errorf("%s was written again after it was forgotten", tc.gone)
					}
				}

				restarted := openForgetProc(t, dir)
				for _, sc := range []memory.Scope{user, agent} {
					if err := restarted.svc.Preload(ctx, sc.UserID, sc.AgentName); err != nil {
						t.Fatal(err)
					}
					got, err := restarted.svc.Retrieve(ctx, memory.RetrieveRequest{UserID: sc.UserID, AgentName: sc.AgentName, Query: strings.Join(tc.words, " ")})
					if err != nil {
						t.Fatal(err)
					}
					if w := holds(got, tc.words); w != "" {
						t.Errorf("after a restart %s retrieves %q: %+v", sc.Key(), w, got)
					}
				}
				restarted.close(t, "the restarted process")
				if hits := testutil.GrepFiles(t, dir, tc.words...); len(hits) > 0 {
					t.Errorf("after a restart, %q is in %v", tc.words, hits)
				}
			})
		}
	}
}

// holds returns the first of words that v, printed, holds; "" if none.
func holds(v any, words []string) string {
	text := strings.ToLower(fmt.Sprintf("%+v", v))
	for _, w := range words {
		if strings.Contains(text, w) {
			return w
		}
	}
	return ""
}

func mustForget(t *testing.T, svc *engine.Service, req memory.ForgetRequest) *memory.ForgetResult {
	t.Helper()
	res, err := svc.Forget(t.Context(), req)
	if err != nil {
		t.Fatalf("Forget(%+v) error = %v", req, err)
	}
	return res
}

// seedForget fills dir as a server would have: in scope, the secret in a
// turn of thread "home" (the returned id) and in both turns of thread
// "secret", in a saved fact (corrected once, so its history and a kept
// version hold two wordings) and in a fact extracted from thread
// "secret"; around them 600 turns that do not hold it, so that a shutdown
// writes the page index snapshot. The user's own memory holds facts and
// turns without the secret. It shuts the process down, so pages.idx and
// midterm.json are written.
func seedForget(t *testing.T, dir string, scope memory.Scope) string {
	t.Helper()
	ctx := t.Context()
	p := openForgetProc(t, dir)
	add := func(sc memory.Scope, thread, in, out string) string {
		res, err := p.svc.Add(ctx, memory.AddRequest{UserID: sc.UserID, AgentName: sc.AgentName, ThreadID: thread, UserInput: in, AgentResponse: out})
		if err != nil {
			t.Fatal(err)
		}
		return res.TurnIDs[0]
	}
	user := memory.Scope{UserID: scope.UserID}
	add(user, "home", "I water the plants on Sundays", "Noted.")
	storetest.MustAppendTurns(t, p.store, scope, storetest.NewTurns("filler", 1, 600)...)
	add(scope, "home", "My cat is called Pixel", "Nice name.")
	secretTurn := add(scope, "home", "I keep the spare key under the "+turnSecret+" doormat", "I will remember that.")
	add(scope, "home", "Pixel likes tuna", "Good to know.")
	add(scope, "secret", "The "+threadSecret+" account number is 4471", "Noted.")
	add(scope, "secret", "Its "+threadSecret+" password hint is blue", "Noted.")
	save := func(sc memory.Scope, content string) string {
		res, err := p.svc.SaveFact(ctx, memory.SaveFactRequest{UserID: sc.UserID, AgentName: sc.AgentName, Content: content})
		if err != nil {
			t.Fatal(err)
		}
		return res.Fact.ID
	}
	save(user, "Waters the plants on Sundays")
	id := save(scope, "Keeps a spare key under the "+factSecret+" doormat")
	corrected := "Keeps the spare key under the " + factSecret + " mat by the back door"
	if _, err := p.svc.UpdateFact(ctx, memory.UpdateFactRequest{UserID: scope.UserID, AgentName: scope.AgentName, ID: id, Content: &corrected}); err != nil {
		t.Fatal(err)
	}
	// What the updater would have extracted from the two threads.
	storetest.MustUpdateDocument(t, p.store, scope, func(d *memory.Document) error {
		d.Facts = append(d.Facts,
			memory.Fact{ID: "fact_5ec00001", Content: "Has a " + threadSecret + " account", Category: memory.CategoryContext, Confidence: 0.8, Source: "secret"},
			memory.Fact{ID: "fact_40e00001", Content: "Has a cat called Pixel", Category: memory.CategoryContext, Confidence: 0.8, Source: "home"})
		d.AddFactEvent(memory.FactEvent{FactID: "fact_5ec00001", Event: memory.FactCreated, Source: "secret", Content: "Has a " + threadSecret + " account"})
		return nil
	})
	save(scope, "Likes tuna for the cat") // one more version after those
	for _, sc := range []memory.Scope{user, scope} {
		if err := p.svc.Preload(ctx, sc.UserID, sc.AgentName); err != nil {
			t.Fatal(err)
		}
	}
	p.close(t, "the seeding process")
	return secretTurn
}

// TestForgetDerivedFacts: forgetting exchanges forgets the facts extracted
// from a thread left without turns, lists those it keeps (the thread still
// has turns, or keep_facts), and names the profile sections rewritten
// since a forgotten turn the updater had processed was stored, or that
// hold the words of what went.
func TestForgetDerivedFacts(t *testing.T) {
	fromSecret := memory.Fact{ID: "fact_5ec00001", Content: "Has an account at the corner bank", Category: memory.CategoryContext, Confidence: 0.8, Source: "secret"}
	knowSecret := memory.Fact{ID: "fact_5ec00002", Content: "Banks at the corner", Category: memory.CategoryKnowledge, Confidence: 0.8, Source: "secret"}
	fromHome := memory.Fact{ID: "fact_40e00001", Content: "Has a cat called Pixel", Category: memory.CategoryContext, Confidence: 0.8, Source: "home"}
	tests := []struct {
		name string
		req  func(secretTurns []string) memory.ForgetRequest
		// processed says the updater had processed the secret thread.
		processed   bool
		wantRemoved []string
		wantKept    []string
		wantSecs    []string
	}{
		{"thread", func([]string) memory.ForgetRequest { return memory.ForgetRequest{ThreadID: "secret"} },
			true, []string{fromSecret.ID, knowSecret.ID}, nil, []string{"work_context"}},
		{"thread, keep facts", func([]string) memory.ForgetRequest { return memory.ForgetRequest{ThreadID: "secret", KeepFacts: true} },
			true, nil, []string{fromSecret.ID, knowSecret.ID}, []string{"work_context"}},
		{"one turn of two", func(ids []string) memory.ForgetRequest { return memory.ForgetRequest{TurnIDs: ids[:1]} },
			true, nil, []string{fromSecret.ID, knowSecret.ID}, []string{"work_context"}},
		{"both turns by id", func(ids []string) memory.ForgetRequest { return memory.ForgetRequest{TurnIDs: ids} },
			true, []string{fromSecret.ID, knowSecret.ID}, nil, []string{"work_context"}},
		// Never processed, the section was not rewritten from the
		// thread, but it says what a forgotten fact said (its words).
		{"thread never processed", func([]string) memory.ForgetRequest { return memory.ForgetRequest{ThreadID: "secret"} },
			false, []string{fromSecret.ID, knowSecret.ID}, nil, []string{"work_context"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			svc := newManageService(t, dir)
			store, err := files.Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer store.Close()
			mustAdd(t, svc, "", "home", "My cat is called Pixel", "Nice.")
			var secretTurns []string
			for _, in := range []string{"I bank at the corner", "The corner bank opens at nine"} {
				res, err := svc.Add(ctx, memory.AddRequest{ThreadID: "secret", UserInput: in, AgentResponse: "ok"})
				if err != nil {
					t.Fatal(err)
				}
				secretTurns = append(secretTurns, res.TurnIDs[0])
			}
			scope := memory.Scope{UserID: memory.DefaultUserID}
			storetest.MustUpdateDocument(t, store, scope, func(d *memory.Document) error {
				d.Facts = append(d.Facts, fromSecret, fromHome)
				d.Knowledge = append(d.Knowledge, knowSecret)
				if tc.processed {
					d.Watermarks = map[string]int64{"secret": 3, "home": 1}
				}
				// Rewritten after the turns were stored (the fixed clock
				// of newManageService) and long before.
				d.User.WorkContext = memory.Section{Summary: "Banks at the corner.", UpdatedAt: manageNow}
				d.User.PersonalContext = memory.Section{Summary: "Lives with a cat.", UpdatedAt: manageNow.AddDate(-1, 0, 0)}
				return nil
			})
			res, err := svc.Forget(ctx, tc.req(secretTurns))
			if err != nil {
				t.Fatalf("Forget() error = %v", err)
			}
			ids := func(fs []memory.Fact) []string {
				var out []string
				for _, f := range fs {
					out = append(out, f.ID)
				}
				return out
			}
			if got := ids(res.DerivedFactsRemoved); !slices.Equal(got, tc.wantRemoved) {
				t.Errorf("derived_facts_removed = %v, want %v", got, tc.wantRemoved)
			}
			if got := ids(res.DerivedFactsKept); !slices.Equal(got, tc.wantKept) {
				t.Errorf("derived_facts_kept = %v, want %v", got, tc.wantKept)
			}
			if !slices.Equal(res.SectionsMayMention, tc.wantSecs) {
				t.Errorf("sections_may_mention = %v, want %v", res.SectionsMayMention, tc.wantSecs)
			}
			prof, err := svc.Profile(ctx, memory.ProfileRequest{IncludeKnowledge: true})
			if err != nil {
				t.Fatal(err)
			}
			left := ids(append(prof.Facts, prof.Knowledge...))
			for _, id := range tc.wantRemoved {
				if slices.Contains(left, id) {
					t.Errorf("fact %s is still in the profile after it was forgotten", id)
				}
			}
			if !slices.Contains(left, fromHome.ID) {
				t.Errorf("fact %s of another thread was forgotten", fromHome.ID)
			}
			hist, err := svc.FactHistory(ctx, memory.HistoryRequest{FactID: fromSecret.ID})
			if len(tc.wantRemoved) > 0 && (err != nil || len(hist.Events) == 0 || hist.Events[len(hist.Events)-1].Event != memory.FactRemoved) {
				t.Errorf("history of %s = %+v, %v; want its removal recorded", fromSecret.ID, hist, err)
			}
		})
	}
}

// TestUpdateProfile: one section is replaced or cleared by hand, the
// document it replaces is kept as a version, and bad input is refused.
func TestUpdateProfile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	svc := newManageService(t, dir)
	set := func(section, text string) *memory.UpdateProfileResult {
		t.Helper()
		res, err := svc.UpdateProfile(ctx, memory.UpdateProfileRequest{Section: section, Text: text})
		if err != nil {
			t.Fatalf("UpdateProfile(%s, %q) error = %v", section, text, err)
		}
		return res
	}
	if res := set("work_context", "  Writes Go at a bank.  "); !res.Changed || res.Text != "Writes Go at a bank." || res.Previous != "" {
		t.Errorf("set = %+v", res)
	}
	if res := set("work_context", "Writes Go at a bank."); res.Changed {
		t.Errorf("setting the same text again = %+v, want no change", res)
	}
	if res := set("top_of_mind", "Token ghp_"+strings.Repeat("a1B2", 9)); len(res.Redacted) == 0 || strings.Contains(res.Text, "a1B2a1B2") {
		t.Errorf("set with a secret = %+v, want it redacted", res)
	}
	set("top_of_mind", "")
	prof, _ := svc.Profile(ctx, memory.ProfileRequest{})
	if prof.User.WorkContext.Summary != "Writes Go at a bank." || !strings.Contains(prof.Injection, "Writes Go at a bank.") {
		t.Errorf("profile after set = %+v", prof.User)
	}
	if res := set("work_context", ""); !res.Changed || res.Previous != "Writes Go at a bank." {
		t.Errorf("clear = %+v", res)
	}
	prof, _ = svc.Profile(ctx, memory.ProfileRequest{})
	if prof.User.WorkContext.Summary != "" || !prof.Empty {
		t.Errorf("profile after clear = %+v, want empty", prof.User)
	}
	store, err := files.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	vers, err := store.ListVersions(ctx, memory.Scope{UserID: memory.DefaultUserID})
	if err != nil || len(vers) != 3 {
		t.Errorf("versions after four changes = %v, %v; want the three replaced documents kept", vers, err)
	}
	for _, tc := range []struct{ section, text string }{
		{"workContext", "x"}, {"", "x"}, {"top_of_mind", "bell \a"}, {"top_of_mind", strings.Repeat("é", memory.MaxSectionRunes+1)},
	} {
		if _, err := svc.UpdateProfile(ctx, memory.UpdateProfileRequest{Section: tc.section, Text: tc.text}); !errors.Is(err, memory.ErrInvalidInput) {
			t.Errorf("UpdateProfile(%q, %.20q) error = %v, want ErrInvalidInput", tc.section, tc.text, err)
		}
	}
}
