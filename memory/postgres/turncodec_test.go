package postgres

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/mnemo-mcp/mnemo/memory"
)

// fromJSON is t as a schema version 1 body reads back: the reference the
// compact form must match.
func fromJSON(tb testing.TB, t memory.Turn) memory.Turn {
	tb.Helper()
	b, err := encodeTurnJSON(&t)
	if err != nil {
		tb.Fatalf("encodeTurnJSON() error: %v", err)
	}
	var out memory.Turn
	if err := json.Unmarshal(b, &out); err != nil {
		tb.Fatalf("json.Unmarshal(%s) error: %v", b, err)
	}
	return out
}

func TestTurnCodecMatchesJSON(t *testing.T) {
	berlin := time.FixedZone("", 2*3600)
	base := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	tests := []struct {
		name    string
		turn    memory.Turn
		compact bool
	}{
		{"minimal", memory.Turn{ID: "turn_1", ThreadID: "t", Time: base, Stored: base}, true},
		{"full", memory.Turn{ID: "turn_2", ThreadID: "thread-é", Time: base, Stored: base.Add(time.Second),
			User: "I <prefer> tabs & \"spaces\"\n", Reply: "noted ✓", Signals: memory.Signals{Correction: true, Reinforcement: true},
			MetaData: json.RawMessage(`{ "a" : [1, 2],  "b":"x" }`), IdempotencyKey: "key-1"}, true},
		{"offset time", memory.Turn{ID: "turn_3", ThreadID: "t", Time: base.In(berlin), Stored: base, Reply: "r"}, true},
		{"local time", memory.Turn{ID: "turn_4", ThreadID: "t", Time: base.Local(), Stored: base.Local()}, true},
		{"zero times", memory.Turn{ID: "turn_5", ThreadID: "t"}, true},
		{"before 1970", memory.Turn{ID: "turn_6", ThreadID: "t", Time: time.Date(1901, 1, 1, 0, 0, 0, 1, time.UTC), Stored: base}, true},
		{"null meta data", memory.Turn{ID: "turn_7", ThreadID: "t", Time: base, Stored: base, MetaData: json.RawMessage(`null`)}, true},
		{"bad UTF-8 kept as JSON", memory.Turn{ID: "turn_8", ThreadID: "t", Time: base, Stored: base, User: "a\xffb"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := encodeTurn(&tt.turn)
			if err != nil {
				t.Fatalf("encodeTurn() error: %v", err)
			}
			if got := len(b) > 0 && b[0] == bodyCompact; got != tt.compact {
				t.Errorf("encodeTurn() compact = %v, want %v (%q)", got, tt.compact, b)
			}
			var got memory.Turn
			if err := decodeTurn(b, &got); err != nil {
				t.Fatalf("decodeTurn() error: %v", err)
			}
			if want := fromJSON(t, tt.turn); !reflect.DeepEqual(got, want) {
				t.Errorf("decodeTurn(encodeTurn()) = %#v, want %#v (as JSON reads back)", got, want)
			}
		})
	}
}

// TestTurnCodecReadsJSON: bodies written by schema version 1 still read.
func TestTurnCodecReadsJSON(t *testing.T) {
	body := []byte(`{"id":"turn_1","seq":0,"thread_id":"t","time":"2024-05-06T07:08:09+02:00","stored":"2024-05-06T05:08:10Z","user":"u","reply":"r","signals":{"correction":true},"meta_data":{"k":1}}`)
	var got memory.Turn
	if err := decodeTurn(body, &got); err != nil {
		t.Fatalf("decodeTurn() error: %v", err)
	}
	if got.ID != "turn_1" || got.User != "u" || !got.Signals.Correction || string(got.MetaData) != `{"k":1}` ||
		!got.Time.Equal(time.Date(2024, 5, 6, 5, 8, 9, 0, time.UTC)) {
		t.Errorf("decodeTurn(JSON) = %#v", got)
	}
}

// TestTurnCodecCoversTurn fails when memory.Turn gains a field: the
// compact form must then learn it (with a new leading byte), or the field
// would be lost on PostgreSQL.
func TestTurnCodecCoversTurn(t *testing.T) {
	if n := reflect.TypeFor[memory.Turn]().NumField(); n != 10 {
		t.Errorf("memory.Turn has %d fields, the compact turn body knows 10: extend encodeTurn and decodeTurn", n)
	}
}

func TestTurnCodecCorrupt(t *testing.T) {
	base := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	good, err := encodeTurn(&memory.Turn{ID: "turn_1", ThreadID: "t", Time: base, Stored: base, User: "hello", MetaData: json.RawMessage(`{}`)})
	if err != nil {
		t.Fatalf("encodeTurn() error: %v", err)
	}
	for n := range len(good) {
		var got memory.Turn
		if err := decodeTurn(good[:n], &got); err == nil {
			t.Errorf("decodeTurn(first %d of %d bytes) = nil error, want one", n, len(good))
		}
	}
	if err := decodeTurn(append(good, 0), new(memory.Turn)); err == nil {
		t.Error("decodeTurn(trailing byte) = nil error, want one")
	}
}

// FuzzDecodeTurn: no body, however damaged, panics the decoder, and what
// it accepts in the compact form encodes back to a body that decodes the
// same.
func FuzzDecodeTurn(f *testing.F) {
	base := time.Date(2024, 5, 6, 7, 8, 9, 0, time.UTC)
	for _, tr := range []memory.Turn{
		{ID: "turn_1", ThreadID: "t", Time: base, Stored: base, User: "u", Reply: "r", MetaData: json.RawMessage(`{"a":1}`), IdempotencyKey: "k"},
		{ID: "turn_2", ThreadID: "t", Time: base.In(time.FixedZone("", -3600)), Stored: base},
	} {
		b, err := encodeTurn(&tr)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(`{"id":"turn_1"}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		var got memory.Turn
		if decodeTurn(body, &got) != nil || len(body) == 0 || body[0] != bodyCompact || !compactable(&got) || !json.Valid(got.MetaData) && got.MetaData != nil {
			return
		}
		again, err := encodeTurn(&got)
		if err != nil {
			return
		}
		var back memory.Turn
		if err := decodeTurn(again, &back); err != nil {
			t.Fatalf("decodeTurn(encodeTurn(%#v)) error: %v", got, err)
		}
		if !back.Time.Equal(got.Time) || back.User != got.User || back.ID != got.ID || back.IdempotencyKey != got.IdempotencyKey {
			t.Errorf("round trip = %#v, want %#v", back, got)
		}
	})
}
