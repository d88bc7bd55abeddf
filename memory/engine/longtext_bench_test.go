package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

// lmeInstance is the part of a LongMemEval instance a retrieval reads: its
// question, the question's date and the dated sessions of user–assistant
// turns.
type lmeInstance struct {
	Question     string `json:"question"`
	QuestionDate string `json:"question_date"`
	Sessions     [][]struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"haystack_sessions"`
	RawDates []string `json:"haystack_dates"`
}

// lmeTime parses LongMemEval's "2023/05/20 (Sat) 00:29".
func lmeTime(s string) (time.Time, error) {
	date, hm, ok := strings.Cut(s, " (")
	if !ok {
		return time.Time{}, fmt.Errorf("date %q", s)
	}
	if _, after, ok := strings.Cut(hm, ") "); ok {
		hm = after
	}
	return time.Parse("2006/01/02 15:04", date+" "+hm)
}

// loadLongMemEval stores the instance named by MNEMO_BENCH_LONGMEMEVAL (one
// LongMemEval instance's JSON) as longmemeval_recall.py does: each user
// turn and the assistant's reply that follows it is one exchange, dated at
// its session, one thread per session. It skips when the variable is
// unset. For example:
//
//	MNEMO_BENCH_LONGMEMEVAL=…/longmemeval_dev/41_b86304ba.json go test -bench RetrieveLongMemEval ./memory/engine
func loadLongMemEval(b *testing.B, svc *engine.Service) memory.RetrieveRequest {
	b.Helper()
	path := os.Getenv("MNEMO_BENCH_LONGMEMEVAL")
	if path == "" {
		b.Skip("MNEMO_BENCH_LONGMEMEVAL names no LongMemEval instance JSON")
	}
	data, err := os.ReadFile(path)
	if err != nil {
		b.Fatal(err)
	}
	var inst lmeInstance
	if err := json.Unmarshal(data, &inst); err != nil {
		b.Fatalf("parse %s: %v", path, err)
	}
	for si, sess := range inst.Sessions {
		ts, err := lmeTime(inst.RawDates[si])
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(sess); i++ {
			req := memory.AddRequest{ThreadID: fmt.Sprintf("s%d", si), Timestamp: ts.Format(time.RFC3339)}
			switch t := sess[i]; {
			case t.Role == "user" && i+1 < len(sess) && sess[i+1].Role == "assistant":
				req.UserInput, req.AgentResponse = t.Content, sess[i+1].Content
				i++
			default:
				req.Messages = []memory.Message{{Role: memory.Role(t.Role), Content: t.Content}}
			}
			// An exchange the service refuses (a control character) is
			// left out, as the harness's add_memory call is answered
			// with an error and goes on.
			if _, err := svc.Add(context.Background(), req); err != nil && !errors.Is(err, memory.ErrInvalidInput) {
				b.Fatal(err)
			}
		}
	}
	if _, err := svc.Flush(context.Background(), memory.FlushRequest{}); err != nil {
		b.Fatal(err)
	}
	req := memory.RetrieveRequest{Query: inst.Question, MaxResults: 50}
	if now, err := lmeTime(inst.QuestionDate); err == nil {
		req.Now = now
	}
	return req
}

// BenchmarkRetrieveLongMemEval measures one retrieve_memory over a
// LongMemEval history (~500 exchanges with long assistant replies), the
// instance named by MNEMO_BENCH_LONGMEMEVAL, with the harness's 50 results:
// warm repeats the retrieval, cold forgets the token counts of the lines
// first, as the first retrieval of a process finds them. Compare with
// BenchmarkRetrieve/stored=1000 (short exchanges).
func BenchmarkRetrieveLongMemEval(b *testing.B) {
	svc := newBenchService(b, b.TempDir())
	req := loadLongMemEval(b, svc)
	if _, err := svc.Retrieve(context.Background(), req); err != nil {
		b.Fatal(err)
	}
	for _, cold := range []bool{false, true} {
		name := "warm"
		if cold {
			name = "cold"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if cold {
					b.StopTimer()
					engine.ForgetTokenCounts(svc)
					b.StartTimer()
				}
				if _, err := svc.Retrieve(context.Background(), req); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
