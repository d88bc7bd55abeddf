package memory

import (
	"reflect"
	"testing"
)

func TestFilter(t *testing.T) {
	call := []ToolCall{{ID: "c1", Type: "function"}}
	tests := []struct {
		name string
		in   []Message
		want []Exchange
		rep  FilterReport
	}{
		{
			name: "pair",
			in:   []Message{{Role: RoleUser, Content: "hi"}, {Role: RoleAssistant, Content: "hello"}},
			want: []Exchange{{User: "hi", Reply: "hello"}},
			rep:  FilterReport{Kept: 2},
		},
		{
			name: "tool traffic and system dropped",
			in: []Message{
				{Role: RoleSystem, Content: "be nice"},
				{Role: RoleDeveloper, Content: "answer in French"},
				{Role: RoleUser, Content: "weather?"},
				{Role: RoleAssistant, Content: "", ToolCalls: call},
				{Role: RoleTool, Content: "sunny", ToolCallID: "c1"},
				{Role: RoleAssistant, Content: "It is sunny."},
			},
			want: []Exchange{{User: "weather?", Reply: "It is sunny."}},
			rep:  FilterReport{Kept: 2, DroppedSystem: 2, DroppedTool: 1, DroppedToolCalls: 1},
		},
		{
			name: "upload-only input drops its reply",
			in: []Message{
				{Role: RoleUser, Content: "<uploaded_files>a.pdf</uploaded_files>"},
				{Role: RoleAssistant, Content: "got the file"},
				{Role: RoleUser, Content: "thanks"},
				{Role: RoleAssistant, Content: "welcome"},
			},
			want: []Exchange{{User: "thanks", Reply: "welcome"}},
			rep:  FilterReport{Kept: 2, DroppedUploadOnly: 1, DroppedUploadAnswer: 1, StrippedUploads: 1},
		},
		{
			name: "upload block stripped, text kept",
			in: []Message{
				{Role: RoleUser, Content: "<UPLOADED_FILES>\n/x/y.csv\n</uploaded_files> 我想问一下这个数据"},
				{Role: RoleAssistant, Content: "好的"},
			},
			want: []Exchange{{User: "我想问一下这个数据", Reply: "好的"}},
			rep:  FilterReport{Kept: 2, StrippedUploads: 1},
		},
		{
			name: "two exchanges and joined replies",
			in: []Message{
				{Role: RoleUser, Content: "a"}, {Role: RoleAssistant, Content: "b"}, {Role: RoleAssistant, Content: "c"},
				{Role: RoleUser, Content: "d"},
			},
			want: []Exchange{{User: "a", Reply: "b\nc"}, {User: "d"}},
			rep:  FilterReport{Kept: 4},
		},
		{
			name: "empty messages",
			in:   []Message{{Role: RoleUser, Content: "  "}, {Role: RoleAssistant, Content: ""}},
			want: nil,
			rep:  FilterReport{DroppedEmpty: 2},
		},
		{
			name: "leading assistant text",
			in:   []Message{{Role: RoleAssistant, Content: "Welcome back"}},
			want: []Exchange{{Reply: "Welcome back"}},
			rep:  FilterReport{Kept: 1},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rep := Filter(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Filter() = %#v, want %#v", got, tt.want)
			}
			if rep != tt.rep {
				t.Errorf("Filter() report = %+v, want %+v", rep, tt.rep)
			}
		})
	}
}

func TestDetectSignals(t *testing.T) {
	tests := []struct {
		text string
		want Signals
	}{
		{"That's wrong, I use Go", Signals{Correction: true}},
		{"you misunderstood me", Signals{Correction: true}},
		{"Please try again with tabs", Signals{Correction: true}},
		{"不对，我说的是用 Go", Signals{Correction: true}},
		{"你理解错了", Signals{Correction: true}},
		{"换一种写法", Signals{Correction: true}},
		// The short forms of issue 18: the README's own example first.
		{"No, I use Go not Python.", Signals{Correction: true}},
		{"no, it's PostgreSQL now", Signals{Correction: true}},
		{"No, the deadline is Friday.", Signals{Correction: true}},
		{"Actually, I prefer tabs.", Signals{Correction: true}},
		{"Actually it's the staging cluster.", Signals{Correction: true}},
		{"I use Go, not Python", Signals{Correction: true}},
		{"We deploy on Fly.io, not Heroku.", Signals{}}, // a statement, not a correction of the assistant
		{"It should be not Python but Go.", Signals{Correction: true}},
		{"what I meant was the other file", Signals{Correction: true}},
		{"不是 MySQL，是 PostgreSQL", Signals{Correction: true}},
		{"不是MySQL而是PostgreSQL", Signals{Correction: true}},
		{"我说的是 Go", Signals{Correction: true}},
		{"我的意思是用 tabs", Signals{Correction: true}},
		{"not only fast but also cheap", Signals{}},
		{"It's not about money but about time.", Signals{}},
		{"No worries, what I said was helpful?", Signals{}},
		{"No, I haven't seen it yet.", Signals{}},
		{"这个是不是很好？", Signals{}},
		{"Perfect.", Signals{Reinforcement: true}},
		{"yes, exactly", Signals{Reinforcement: true}},
		{"That's exactly what I wanted", Signals{Reinforcement: true}},
		{"keep doing that", Signals{Reinforcement: true}},
		{"完全正确！", Signals{Reinforcement: true}},
		{"正是我想要的", Signals{Reinforcement: true}},
		{"继续保持", Signals{Reinforcement: true}},
		{"The perfectionist in me wants more tests", Signals{}},
		{"how do I redirect output?", Signals{}},
		{"that's wrong... actually perfect.", Signals{Correction: true, Reinforcement: true}},
		{"", Signals{}},
	}
	for _, tt := range tests {
		t.Run(tt.text, func(t *testing.T) {
			got := DetectSignals([]Message{{Role: RoleUser, Content: tt.text}})
			if got != tt.want {
				t.Errorf("DetectSignals(%q) = %+v, want %+v", tt.text, got, tt.want)
			}
		})
	}
	t.Run("assistant text ignored", func(t *testing.T) {
		got := DetectSignals([]Message{{Role: RoleAssistant, Content: "that's wrong"}})
		if got != (Signals{}) {
			t.Errorf("DetectSignals(assistant) = %+v, want none", got)
		}
	})
	t.Run("only the last six messages", func(t *testing.T) {
		msgs := []Message{{Role: RoleUser, Content: "that's wrong"}}
		for range 6 {
			msgs = append(msgs, Message{Role: RoleUser, Content: "ok"})
		}
		if got := DetectSignals(msgs); got.Correction {
			t.Errorf("DetectSignals() found a correction outside the window")
		}
	})
}

func TestParseSignalPatternsRejectsBadRegex(t *testing.T) {
	if _, err := ParseSignalPatterns([]byte(`{"correction": ["("]}`)); err == nil {
		t.Fatal("ParseSignalPatterns() accepted an invalid pattern")
	}
}
