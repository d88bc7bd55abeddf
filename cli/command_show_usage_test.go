package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/storetest"
)

// seedUsage stores a memory whose usage counts today, yesterday and a
// day ten days ago (UTC), and returns those days.
func seedUsage(t *testing.T, dir string) (today, yesterday, older string) {
	t.Helper()
	s, err := files.Open(dir, files.WithClock(func() time.Time { return richTime }))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	now := time.Now().UTC()
	today, yesterday, older = now.Format(time.DateOnly), now.AddDate(0, 0, -1).Format(time.DateOnly), now.AddDate(0, 0, -10).Format(time.DateOnly)
	storetest.MustUpdateDocument(t, s, memory.Scope{UserID: "ana"}, func(d *memory.Document) error {
		d.Facts = []memory.Fact{{ID: "fact_1", Content: "Keeps bees", Category: memory.CategoryContext, Confidence: 0.9, CreatedAt: now}}
		d.Usage = []memory.UsageDay{
			{Day: older, LLMCalls: 2, PromptTokens: 2400, CompletionTokens: 300, EmbeddingCalls: 5, EmbeddingTokens: 210},
			{Day: yesterday, LLMCalls: 4, PromptTokens: 5100, CompletionTokens: 620, LLMFailures: 1},
			{Day: today, LLMCalls: 3, PromptTokens: 4200, CompletionTokens: 900, Deferred: 2, EmbeddingCalls: 1, EmbeddingTokens: 12, EmbeddingFailures: 1},
		}
		return nil
	})
	return today, yesterday, older
}

func TestShowUsage(t *testing.T) {
	dir := t.TempDir()
	today, yesterday, older := seedUsage(t, dir)
	// Placeholders as wide as a date keep the columns aligned.
	dates := strings.NewReplacer(today, "D-00000000", yesterday, "D-00000001", older, "D-00000010")
	for _, tc := range []struct {
		name   string
		budget string
	}{
		{"show_usage", ""},
		{"show_usage_deferred", "5000"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := dataEnv(dir)
			if tc.budget != "" {
				ev = env{"MNEMO_DATA_DIR": dir, "MNEMO_DAILY_TOKEN_BUDGET": tc.budget}
			}
			code, out, errOut := runEnv(t, ev, "show", "--user", "ana", "--usage")
			if code != exitOK {
				t.Fatalf("show --usage = %d\n%s", code, errOut)
			}
			checkGolden(t, tc.name, dates.Replace(out))
		})
	}
	code, out, errOut := runEnv(t, env{"MNEMO_DATA_DIR": dir, "MNEMO_DAILY_TOKEN_BUDGET": "5000"}, "show", "--user", "ana", "--usage", "--json")
	if code != exitOK {
		t.Fatalf("show --usage --json = %d\n%s", code, errOut)
	}
	var got showOutput
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Usage == nil || len(got.Usage.Days) != 3 || got.Usage.Today.Day != today || got.Usage.Today.Tokens() != 5100 ||
		got.Usage.DailyTokenBudget != 5000 || !strings.Contains(got.Usage.Deferred, "deferred") || got.Facts != nil || got.Threads != nil {
		t.Errorf("show --usage --json = %s, want the usage only, deferred", out)
	}
	code, out, _ = runEnv(t, dataEnv(dir), "show", "--user", "nobody", "--usage", "--json")
	if code != exitOK || !strings.Contains(out, `"usage"`) || !strings.Contains(out, `"days": []`) {
		t.Errorf("show --usage --json of an empty scope = %d %s, want empty usage", code, out)
	}
}

// TestDoctorUsage: doctor reports the default user's usage today and says
// when the budget defers extraction.
func TestDoctorUsage(t *testing.T) {
	dir := t.TempDir()
	seedUsage(t, dir)
	_, out, _ := runEnv(t, env{"MNEMO_DATA_DIR": dir, "MNEMO_USER_ID": "ana", "MNEMO_DAILY_TOKEN_BUDGET": "5000"}, "doctor")
	for _, want := range []string{
		"ana today (UTC): 3 model calls, 5100 tokens (4200 prompt + 900 completion), 1 failed; 1 embedding call, 12 tokens",
		"daily token budget: 5000 model tokens a day per scope, 0 left today",
		"extraction is deferred until tomorrow",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("doctor output lacks %q:\n%s", want, out)
		}
	}
}
