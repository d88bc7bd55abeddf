package cli

import (
	"encoding/json"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

func TestSearchCommand(t *testing.T) {
	dir := t.TempDir()
	seedRich(t, dir)
	code, out, errOut := runEnv(t, dataEnv(dir), "search", "--user", "ana", "--limit", "2", "--injection", "goroutine", "leak")
	if code != exitOK {
		t.Fatalf("search = %d\n%s", code, errOut)
	}
	checkGolden(t, "search", out)

	code, out, errOut = runEnv(t, dataEnv(dir), "search", "--user", "ana", "--json", "Azores sailing")
	var res memory.RetrieveResult
	if err := json.Unmarshal([]byte(out), &res); code != exitOK || err != nil {
		t.Fatalf("search --json = %d, %v\n%s%s", code, err, out, errOut)
	}
	if len(res.Pages) == 0 || res.Pages[0].ThreadID != "trip" || res.Injection == "" {
		t.Errorf("search --json: pages %+v, injection %q; want the trip thread first and an injection", res.Pages, res.Injection)
	}
	for _, args := range [][]string{{"search"}, {"search", "--limit", "0x", "q"}, {"search", "--limit", "500", "q"}} {
		if code, _, errOut := runEnv(t, dataEnv(dir), args...); code != exitUsage || errOut == "" {
			t.Errorf("%v = %d %q, want a usage error", args, code, errOut)
		}
	}
}
