package server

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// guardRun feeds input through a guard and returns what reached the
// server and what the guard answered.
func guardRun(t *testing.T, input string, limit int) (passed string, answers []map[string]any) {
	t.Helper()
	var out bytes.Buffer
	g := newStdioGuard(strings.NewReader(input), &lockedWriter{w: &out}, limit)
	data, err := readAllPassed(g)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("guard answer %q is not JSON: %v", line, err)
		}
		answers = append(answers, m)
	}
	return string(data), answers
}

// readAllPassed returns every message g passes on, each with a newline.
func readAllPassed(g *stdioGuard) ([]byte, error) {
	var passed []byte
	for {
		msg, _, err := g.next()
		if msg != nil {
			passed = append(append(passed, msg...), '\n')
		}
		if err == io.EOF {
			return passed, nil
		}
		if err != nil {
			return passed, err
		}
	}
}

const initLine = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}` + "\n"

func TestStdioGuard(t *testing.T) {
	big := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 5000) + `"}}` + "\n"
	tests := []struct {
		name       string
		input      string
		wantPassed []string // substrings of what reaches the server, in order
		wantNot    []string
		wantIDs    []any // ids of the guard's error answers
		wantMsg    string
	}{
		{"initialize then call", initLine + `{"jsonrpc":"2.0","id":2,"method":"tools/call"}` + "\n",
			[]string{`"initialize"`, `"id":2`}, nil, nil, ""},
		{"call before initialize", `{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}}` + "\n" + initLine,
			[]string{`"initialize"`}, []string{"tools/call"}, []any{"a"}, "not initialized"},
		{"ping before initialize", `{"jsonrpc":"2.0","id":3,"method":"ping"}` + "\n", []string{"ping"}, nil, nil, ""},
		{"2026-07-28 request without initialize", `{"jsonrpc":"2.0","id":4,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}` + "\n",
			[]string{"server/discover"}, nil, nil, ""},
		{"older revision in _meta before initialize", `{"jsonrpc":"2.0","id":"b","method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}}}` + "\n",
			nil, []string{"tools/list"}, []any{"b"}, "not initialized"},
		{"notification before initialize", `{"jsonrpc":"2.0","method":"notifications/cancelled"}` + "\n", nil, []string{"cancelled"}, nil, ""},
		{"object id", initLine + `{"jsonrpc":"2.0","id":{"a":1},"method":"ping"}` + "\n", []string{`"initialize"`}, []string{`"a":1`}, []any{nil}, "id must be"},
		{"array id", initLine + `{"jsonrpc":"2.0","id":[1],"method":"ping"}` + "\n", nil, []string{`[1]`}, []any{nil}, "id must be"},
		{"huge id", initLine + `{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"ping"}` + "\n", nil, []string{"1234567890123"}, []any{nil}, "between"},
		{"fraction id", initLine + `{"jsonrpc":"2.0","id":1.5,"method":"ping"}` + "\n", nil, []string{"1.5"}, []any{nil}, "between"},
		{"largest exact id", initLine + `{"jsonrpc":"2.0","id":9007199254740991,"method":"ping"}` + "\n", []string{"9007199254740991"}, nil, nil, ""},
		{"too long line", initLine + big + `{"jsonrpc":"2.0","id":8,"method":"ping"}` + "\n",
			[]string{`"initialize"`, `"id":8`}, []string{"aaaa"}, []any{float64(7)}, "request too large"},
		{"not JSON goes to the server", "garbage\n", []string{"garbage"}, nil, nil, ""},
		{"blank lines dropped", "\n\n" + initLine, []string{`"initialize"`}, nil, nil, ""},
		{"last line without newline", initLine + `{"jsonrpc":"2.0","id":9,"method":"ping"}`, []string{`"id":9`}, nil, nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			passed, answers := guardRun(t, tt.input, 4096)
			rest := passed
			for _, w := range tt.wantPassed {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("server got %q, want it to contain %q (in order)", passed, w)
				}
				rest = rest[i+len(w):]
			}
			for _, w := range tt.wantNot {
				if strings.Contains(passed, w) {
					t.Errorf("server got %q, which must not contain %q", passed, w)
				}
			}
			if len(answers) != len(tt.wantIDs) {
				t.Fatalf("guard answered %v, want %d answers", answers, len(tt.wantIDs))
			}
			for i, a := range answers {
				if a["id"] != tt.wantIDs[i] {
					t.Errorf("answer %d id = %v, want %v", i, a["id"], tt.wantIDs[i])
				}
				e, _ := a["error"].(map[string]any)
				if e == nil || e["code"] != float64(rpcInvalidRequest) || !strings.Contains(e["message"].(string), tt.wantMsg) {
					t.Errorf("answer %d = %v, want code %d and %q", i, a, rpcInvalidRequest, tt.wantMsg)
				}
			}
		})
	}
}

// TestStdioGuardHugeLineBounded checks that a line far over the limit is
// skipped without being held: the guard reads it in buffer-sized pieces.
func TestStdioGuardHugeLineBounded(t *testing.T) {
	const size = 64 << 20
	r := io.MultiReader(strings.NewReader(initLine+`{"id":5,"method":"x","p":"`), io.LimitReader(zeros{}, size), strings.NewReader("\"}\n"+`{"jsonrpc":"2.0","id":6,"method":"ping"}`+"\n"))
	var out bytes.Buffer
	g := newStdioGuard(r, &lockedWriter{w: &out}, 1<<20)
	data, err := readAllPassed(g)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"id":6`) || len(data) > 1<<10 {
		t.Errorf("server got %d bytes, want the initialize and the ping only", len(data))
	}
	if !strings.Contains(out.String(), `"id":5`) || !strings.Contains(out.String(), "request too large") {
		t.Errorf("guard answered %q, want a too-large error for id 5", out.String())
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'z'
	}
	return len(p), nil
}

func FuzzStdioGuard(f *testing.F) {
	f.Add([]byte(initLine + `{"jsonrpc":"2.0","id":2,"method":"tools/call"}` + "\n"))
	f.Add([]byte(`{"id":{"a":[1,2]},"method":"initialize"}` + "\n"))
	f.Add([]byte(`{"id":1e400,"method":"ping"}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		g := newStdioGuard(bytes.NewReader(data), &lockedWriter{w: &out}, 512)
		passed, err := readAllPassed(g)
		if err != nil {
			t.Fatal(err)
		}
		if len(passed) > len(data)+1 { // +1: the newline after a last line that had none
			t.Fatalf("guard passed %d bytes of %d", len(passed), len(data))
		}
		for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
			if line != "" && !json.Valid([]byte(line)) {
				t.Fatalf("guard answer %q is not JSON", line)
			}
		}
	})
}
