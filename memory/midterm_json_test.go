package memory

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"
)

// midTermStates returns states of the shapes a scope saves: empty, with
// nil and empty lists, escapes, non-ASCII, LLM summaries.
func midTermStates() []*MidTermState {
	at := time.Date(2024, 3, 1, 9, 30, 0, 123456789, time.UTC)
	return []*MidTermState{
		{},
		{Version: MidTermVersion, Moved: map[string]int64{}, Sessions: []*MidTermSession{}},
		{Version: MidTermVersion, Moved: map[string]int64{"t1": 40, "a \"q\" <b>": -3}, NextID: 7, Sessions: []*MidTermSession{
			{ID: "session_1", Summary: "deploys & <rollbacks> — café \u2028", Keywords: []string{"deploy", "rollback"},
				Pages: []MidTermPage{{TurnID: "turn_01a2", Analyzed: true, Seq: 4}, {TurnID: "turn_01a3"}}, Visits: 2, Interactions: 3,
				LastVisit: at, Created: at.Add(-time.Hour), Uses: 5},
			nil,
			{ID: "session_3", LLMSummary: true, SummarizedPages: 4, Keywords: []string{}, Pages: []MidTermPage{},
				LastVisit: at.In(time.FixedZone("x", 3600))},
		}},
	}
}

// TestDecodeMidTermState checks the direct parse against json.Unmarshal
// on what json.Marshal writes and on inputs it must hand over to json.
func TestDecodeMidTermState(t *testing.T) {
	var inputs [][]byte
	for _, st := range midTermStates() {
		b, err := json.Marshal(st)
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, b)
	}
	inputs = append(inputs, midTermOddInputs()...)
	for _, in := range inputs {
		checkDecodeMidTermState(t, in)
	}
	// The states json.Marshal writes are parsed directly, not by the
	// fallback.
	for _, st := range midTermStates() {
		b, _ := json.Marshal(st)
		var got MidTermState
		if p := (midTermParser{b: b}); !p.state(&got) {
			t.Errorf("direct parse refused %s", b)
		}
	}
}

func midTermOddInputs() [][]byte {
	return [][]byte{
		[]byte(`null`), []byte(` {}`), []byte(`{"version":1} `), []byte(`{"Version":2}`), []byte(`{"version":1,"version":2}`),
		[]byte(`{"version":1.0}`), []byte(`{"version":01}`), []byte(`{"version":-0}`), []byte(`{"version":99999999999999999999}`),
		[]byte(`{"moved":null,"sessions":null}`), []byte(`{"sessions":[null,{}]}`), []byte(`{"sessions":[{"pages":[{"turnId":"a","turnId":"b"}]}]}`),
		[]byte(`{"sessions":[{"pages":[{"turnId":"\u00e9\n","analyzed":false}]}]}`), []byte("{\"sessions\":[{\"id\":\"\xff\"}]}"),
		[]byte(`{"sessions":[{"lastVisit":"2024-13-01T00:00:00Z"}]}`), []byte(`{"sessions":[{"lastVisit":null}]}`),
		[]byte(`{"sessions":[{"keywords":["a",1]}]}`), []byte(`{"extra":1}`), []byte(`{"moved":{"a":1,"a":2}}`), []byte(`{"sessions":[{"id":"a\"}]}`),
		[]byte(`{"sessions":[{"pages":[{"turnId":"a","seq":3,"seq":4}]}]}`), []byte(`{"sessions":[{"pages":[{"seq":-9223372036854775809}]}]}`),
		[]byte(`[`), []byte(``),
	}
}

// checkDecodeMidTermState fails unless DecodeMidTermState(in) is
// json.Unmarshal's result, or an error where json has one.
func checkDecodeMidTermState(t *testing.T, in []byte) {
	t.Helper()
	var want MidTermState
	wantErr := json.Unmarshal(in, &want)
	got, err := DecodeMidTermState(in)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("DecodeMidTermState(%q) error = %v, json.Unmarshal's = %v", in, err, wantErr)
	}
	if err != nil {
		return
	}
	if !reflect.DeepEqual(*got, want) {
		t.Fatalf("DecodeMidTermState(%q) = %+v, json.Unmarshal gives %+v", in, *got, want)
	}
}

// FuzzDecodeMidTermState checks the direct parse of a saved mid-term state
// (a file of the data directory: untrusted) against json.Unmarshal.
func FuzzDecodeMidTermState(f *testing.F) {
	for _, st := range midTermStates() {
		b, _ := json.Marshal(st)
		f.Add(b)
	}
	for _, in := range midTermOddInputs() {
		f.Add(in)
	}
	f.Fuzz(func(t *testing.T, in []byte) { checkDecodeMidTermState(t, in) })
}
