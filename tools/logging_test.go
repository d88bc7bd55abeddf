package tools

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// TestClientLog logs through a ClientLog in front of a stderr handler at
// warn and checks what an in-process client at each level gets, in order:
// the level filters, attributes that may quote memory come only at debug,
// WithAttrs and WithGroup carry over, and stderr keeps its own level.
func TestClientLog(t *testing.T) {
	var stderr bytes.Buffer
	cl := NewClientLog(slog.NewTextHandler(&stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	// A client of 2025-11-25: it sets its level with logging/setLevel.
	c, err := client.NewInProcessClient(NewServer(nil, "test", WithClientLog(cl)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Initialize(t.Context(), mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion20251125, ClientInfo: mcp.Implementation{Name: "tools-test", Version: "1"}}}); err != nil {
		t.Fatal(err)
	}
	notes := make(chan map[string]any, 64)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationMessage) {
			notes <- n.Params.AdditionalFields
		}
	})
	log := slog.New(cl)
	// next logs a sentinel after the records and returns what the client
	// got before it: one stream, so anything filtered never comes.
	next := func() []map[string]any {
		t.Helper()
		log.Error("sentinel")
		var got []map[string]any
		for {
			select {
			case n := <-notes:
				if data, _ := n["data"].(map[string]any); data["message"] == "sentinel" {
					return got
				}
				got = append(got, n)
			case <-t.Context().Done():
				t.Fatal("the sentinel never arrived")
			}
		}
	}
	setLevel := func(level mcp.LoggingLevel) {
		t.Helper()
		//lint:ignore SA1019 deprecated from 2026-07-28 on; this client is of 2025-11-25
		if err := c.SetLevel(t.Context(), mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: level}}); err != nil {
			t.Fatal(err)
		}
	}

	tests := []struct {
		name  string
		level mcp.LoggingLevel
		log   func()
		want  []string // JSON of each notification's data, in order
	}{
		{"default is warning", "", func() {
			log.Info("fact saved", "scope", "ana", "fact", "fact_1")
			log.Warn("memory update failed; will retry", "scope", "ana", "attempt", 2)
		}, []string{`{"attempt":2,"message":"memory update failed; will retry","scope":"ana"}`}},
		{"info leaves out what may quote memory", mcp.LoggingLevelInfo, func() {
			log.Info("memory update ignored parts of the model reply", "scope", "ana", "notes", []string{"the user said X"})
			log.Debug("detail", "k", "v")
		}, []string{`{"message":"memory update ignored parts of the model reply","scope":"ana"}`}},
		{"debug has everything", mcp.LoggingLevelDebug, func() {
			log.Debug("detail", "notes", []string{"the user said X"}, "ok", true)
		}, []string{`{"message":"detail","notes":["the user said X"],"ok":true}`}},
		{"attrs and groups carry over", mcp.LoggingLevelInfo, func() {
			log.With("scope", "ana").WithGroup("llm").Info("answers again", "model", "m1")
		}, []string{`{"llm.model":"m1","message":"answers again","scope":"ana"}`}},
		{"error only", mcp.LoggingLevelError, func() {
			log.Warn("skipped")
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.level != "" {
				setLevel(tt.level)
			}
			tt.log()
			got := next()
			var data []string
			for _, n := range got {
				b, _ := json.Marshal(n["data"])
				data = append(data, string(b))
				if n["logger"] != "mnemo" {
					t.Errorf("logger = %v, want mnemo", n["logger"])
				}
			}
			if strings.Join(data, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("notifications/message data =\n%s\nwant\n%s", strings.Join(data, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
	if strings.Contains(stderr.String(), "fact saved") || !strings.Contains(stderr.String(), "memory update failed") {
		t.Errorf("stderr =\n%s\nwant warnings and up only (its own level)", stderr.String())
	}
}

// TestClientLogData checks what a record's data becomes for the clients
// of a shared (authenticated) server: no path of the data directory, the
// scope it names, and the memory-quoting attributes only at debug.
func TestClientLogData(t *testing.T) {
	cl := NewClientLog(slog.DiscardHandler)
	cl.hub.authenticated.Store(true)
	tests := []struct {
		name      string
		debug     bool
		attrs     []any
		want      string
		wantScope string
	}{
		{"path dropped, paths in errors cut", false,
			[]any{"scope", "ana/cli", "path", "/srv/mnemo/ana/memory.json", "err", "open /srv/mnemo/bob/turns.jsonl: permission denied"},
			`{"err":"open …: permission denied","message":"m","scope":"ana/cli"}`, "ana/cli"},
		{"notes only at debug", false, []any{"notes", "quoted", "n", 3}, `{"message":"m","n":3}`, ""},
		{"debug", true, []any{"notes", "quoted"}, `{"message":"m","notes":"quoted"}`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := slog.NewRecord(time.Time{}, slog.LevelWarn, "m", 0)
			r.Add(tt.attrs...)
			data, scope := cl.data(r, tt.debug)
			b, _ := json.Marshal(data)
			if string(b) != tt.want {
				t.Errorf("data = %s, want %s", b, tt.want)
			}
			got := ""
			if scope != nil {
				got = scope.Key()
			}
			if got != tt.wantScope {
				t.Errorf("scope = %q, want %q", got, tt.wantScope)
			}
		})
	}
}
