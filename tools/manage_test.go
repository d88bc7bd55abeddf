package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/files"
)

// mustErr calls tool and fails the test unless the result is an isError
// result whose text contains every want.
func (e *testEnv) mustErr(tb testing.TB, tool, args string, want ...string) string {
	tb.Helper()
	res := e.call(tb, tool, args)
	text := resultText(tb, res)
	if !res.IsError {
		tb.Fatalf("%s(%s) succeeded: %.300s; want an error", tool, args, text)
	}
	for _, w := range want {
		if !strings.Contains(text, w) {
			tb.Errorf("%s(%s) error = %q, want it to contain %q", tool, args, text, w)
		}
	}
	if strings.Contains(text, "internal error") {
		tb.Errorf("%s(%s) error = %q, want a message the model can act on", tool, args, text)
	}
	return text
}

func TestSaveMemoryTool(t *testing.T) {
	e := newEnv(t)
	var res memory.SaveFactResult
	text := e.mustOK(t, "save_memory", `{"content": "Prefers Go over Python", "category": "preference", "confidence": 0.95}`, &res)
	f := res.Fact
	if res.Duplicate || f.Content != "Prefers Go over Python" || f.Category != "preference" || f.Confidence != 0.95 || f.Source != "manual" || res.Scope.UserID != "default" {
		t.Errorf("save_memory = %+v", res)
	}
	if !strings.HasPrefix(text, "Saved "+f.ID+" (preference, confidence 0.95) for user default") {
		t.Errorf("text = %q", text)
	}
	var dup memory.SaveFactResult
	text = e.mustOK(t, "save_memory", `{"content": "prefers go over python."}`, &dup)
	if !dup.Duplicate || dup.Fact.ID != f.ID || !strings.HasPrefix(text, "Already remembered as "+f.ID) {
		t.Errorf("duplicate save = %+v, %q", dup, text)
	}
	var prof memory.ProfileResult
	e.mustOK(t, "get_user_profile", `{}`, &prof)
	if len(prof.Facts) != 1 || prof.Facts[0].ID != f.ID {
		t.Errorf("profile facts = %+v, want the saved fact once", prof.Facts)
	}
	// Another user's memory is separate.
	var bob memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Prefers Go over Python", "user_id": "bob"}`, &bob)
	if bob.Duplicate || bob.Scope.UserID != "bob" {
		t.Errorf("save for bob = %+v, want a new fact in bob's memory", bob)
	}

	for _, tt := range []struct{ args, want string }{
		{`{}`, "content"},
		{`{"content": ""}`, "content"},
		{`{"content": "   "}`, "content"},
		{`{"content": "x", "category": "hobby"}`, "category"},
		{`{"content": "x", "confidence": 1.5}`, "confidence"},
		{`{"content": "x", "confidence": 0}`, "confidence"},
		{`{"content": "x", "user_id": "../etc"}`, "user_id"},
		{`{"content": "The user uploaded a file report.pdf."}`, "uploaded file"},
		{`{"content": "x", "source": "cli"}`, "source"},
	} {
		before := snapshot(t, e.dir)
		e.mustErr(t, "save_memory", tt.args, tt.want)
		if d := diffSnapshots(before, snapshot(t, e.dir)); d != "" {
			t.Errorf("save_memory(%s) changed the data directory: %s", tt.args, d)
		}
	}
}

func TestUpdateMemoryTool(t *testing.T) {
	e := newEnv(t)
	var saved memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Lives in Paris"}`, &saved)
	id := saved.Fact.ID
	var res memory.UpdateFactResult
	text := e.mustOK(t, "update_memory", `{"id": "`+id+`", "content": "Lives in Lyon", "confidence": 0.8}`, &res)
	if res.Fact.ID != id || res.Fact.Content != "Lives in Lyon" || res.Fact.Confidence != 0.8 || res.Previous.Content != "Lives in Paris" ||
		strings.Join(res.Changed, ",") != "content,confidence" {
		t.Errorf("update_memory = %+v", res)
	}
	if !strings.Contains(text, "Updated "+id+" (content, confidence)") {
		t.Errorf("text = %q", text)
	}
	text = e.mustOK(t, "update_memory", `{"id": "`+id+`", "content": "Lives in Lyon"}`, &res)
	if len(res.Changed) != 0 || !strings.HasPrefix(text, "Nothing changed") {
		t.Errorf("repeated update = %+v, %q; want nothing changed", res, text)
	}
	e.mustErr(t, "update_memory", `{"id": "fact_00000000", "content": "x"}`, "no fact", "list_memories")
	e.mustErr(t, "update_memory", `{"id": "`+id+`", "content": "x", "user_id": "bob"}`, "no fact", "bob")
	e.mustErr(t, "update_memory", `{"id": "`+id+`"}`, "nothing to change")
	e.mustErr(t, "update_memory", `{"content": "x"}`, "id")
	e.mustErr(t, "update_memory", `{"id": "`+id+`", "category": "nope"}`, "category")
	e.mustErr(t, "update_memory", `{"id": "`+id+`", "confidence": -1}`, "confidence")
}

func TestForgetMemoryTool(t *testing.T) {
	e := newEnv(t)
	var a, b, bobs memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Likes tea"}`, &a)
	e.mustOK(t, "save_memory", `{"content": "Has a dog"}`, &b)
	e.mustOK(t, "save_memory", `{"content": "Likes tea", "user_id": "bob"}`, &bobs)
	var added memory.AddResult
	e.mustOK(t, "add_memory", `{"user_input": "My PIN is 1234", "agent_response": "I will not store that.", "thread_id": "oops"}`, &added)
	e.mustOK(t, "add_memory", `{"user_input": "PIN reminder for bob", "agent_response": "ok", "thread_id": "oops", "user_id": "bob"}`, &added)

	var res memory.ForgetResult
	text := e.mustOK(t, "forget_memory", `{"fact_ids": ["`+a.Fact.ID+`", "fact_deadbeef"], "thread_id": "oops"}`, &res)
	if len(res.FactsRemoved) != 1 || len(res.TurnsRemoved) != 1 || strings.Join(res.NotFound, ",") != "fact_deadbeef" {
		t.Errorf("forget_memory = %+v", res)
	}
	if !strings.Contains(text, "Forgot 1 fact ("+a.Fact.ID+") and 1 stored exchange from user default; not found: fact_deadbeef") {
		t.Errorf("text = %q", text)
	}
	var got memory.RetrieveResult
	e.mustOK(t, "retrieve_memory", `{"query": "PIN"}`, &got)
	if len(got.Pages) != 0 || strings.Contains(got.Injection, "1234") {
		t.Errorf("retrieve after forget = %+v, want the forgotten exchange gone", got.Pages)
	}
	e.mustOK(t, "retrieve_memory", `{"query": "PIN", "user_id": "bob"}`, &got)
	if len(got.Pages) != 1 {
		t.Errorf("bob's exchanges = %d, want his one untouched", len(got.Pages))
	}
	var prof memory.ProfileResult
	e.mustOK(t, "get_user_profile", `{"user_id": "bob"}`, &prof)
	if len(prof.Facts) != 1 {
		t.Errorf("bob's facts = %+v, want his one untouched", prof.Facts)
	}

	e.mustErr(t, "forget_memory", `{"fact_ids": ["`+a.Fact.ID+`"]}`, "nothing to forget")
	e.mustErr(t, "forget_memory", `{}`, "nothing to forget")
	e.mustErr(t, "forget_memory", `{"all": true}`, "forget everything")
	e.mustErr(t, "forget_memory", `{"all": true, "confirm": "yes"}`, "confirm")
	e.mustErr(t, "forget_memory", `{"thread_id": "../x"}`, "thread_id")
	e.mustErr(t, "forget_memory", `{"fact_ids": "fact_1"}`, "fact_ids")

	text = e.mustOK(t, "forget_memory", `{"all": true, "confirm": "forget everything"}`, &res)
	if !res.ScopeForgotten || !strings.Contains(text, "Forgot everything remembered about user default") {
		t.Errorf("forget all = %+v, %q", res, text)
	}
	e.mustOK(t, "get_user_profile", `{}`, &prof)
	if !prof.Empty {
		t.Errorf("default user's profile after forget all = %+v, want empty", prof)
	}
	e.mustOK(t, "get_user_profile", `{"user_id": "bob"}`, &prof)
	if len(prof.Facts) != 1 {
		t.Errorf("forgetting everything of the default user touched bob: %+v", prof.Facts)
	}
}

func TestListMemoriesTool(t *testing.T) {
	e := newEnv(t)
	var saved memory.SaveFactResult
	for _, c := range []string{"Likes tea", "Likes coffee", "Wants to run a marathon"} {
		e.mustOK(t, "save_memory", `{"content": "`+c+`"}`, &saved)
	}
	var added memory.AddResult
	e.mustOK(t, "add_memory", `{"user_input": "hello", "agent_response": "hi", "thread_id": "t1"}`, &added)
	var res memory.ListResult
	text := e.mustOK(t, "list_memories", `{"text": "likes", "limit": 1}`, &res)
	if res.Total != 2 || len(res.Facts) != 1 || res.NextOffset != 1 {
		t.Errorf("list_memories = %+v, want 2 matches, 1 shown, next 1", res)
	}
	if !strings.Contains(text, "2 facts of user default match; 1 to 1:") || !strings.Contains(text, "offset 1") {
		t.Errorf("text = %q", text)
	}
	e.mustOK(t, "list_memories", `{"kind": "turns"}`, &res)
	if res.Total != 1 || res.Turns[0].ThreadID != "t1" {
		t.Errorf("turns = %+v", res)
	}
	e.mustOK(t, "list_memories", `{"kind": "threads"}`, &res)
	if res.Total != 1 || res.Threads[0].ID != "t1" || res.Threads[0].Turns != 1 {
		t.Errorf("threads = %+v", res)
	}
	e.mustOK(t, "list_memories", `{"user_id": "bob"}`, &res)
	if res.Total != 0 {
		t.Errorf("bob's facts = %+v, want none", res)
	}
	e.mustErr(t, "list_memories", `{"kind": "pages"}`, "kind")
	e.mustErr(t, "list_memories", `{"limit": 0}`, "limit")
	e.mustErr(t, "list_memories", `{"limit": 500}`, "limit")
	e.mustErr(t, "list_memories", `{"since": "last week"}`, "since")
	e.mustErr(t, "list_memories", `{"kind": "turns", "category": "goal"}`, "facts only")
}

func TestMemoryHistoryTool(t *testing.T) {
	e := newEnv(t)
	var saved memory.SaveFactResult
	e.mustOK(t, "save_memory", `{"content": "Lives in Paris"}`, &saved)
	id := saved.Fact.ID
	var upd memory.UpdateFactResult
	e.mustOK(t, "update_memory", `{"id": "`+id+`", "content": "Lives in Lyon"}`, &upd)
	var res memory.HistoryResult
	text := e.mustOK(t, "memory_history", `{"fact_id": "`+id+`"}`, &res)
	if len(res.Events) != 2 || res.Events[0].Event != "created" || res.Events[1].Event != "updated" || res.Current == nil {
		t.Errorf("memory_history = %+v", res)
	}
	if !strings.Contains(text, id+" created (source manual)") || !strings.Contains(text, "Now (context, confidence 0.9): Lives in Lyon") {
		t.Errorf("text = %q", text)
	}
	var forgot memory.ForgetResult
	e.mustOK(t, "forget_memory", `{"fact_ids": ["`+id+`"]}`, &forgot)
	res = memory.HistoryResult{}
	text = e.mustOK(t, "memory_history", `{"fact_id": "`+id+`"}`, &res)
	if len(res.Events) != 3 || res.Current != nil || !strings.Contains(text, "no longer in memory") {
		t.Errorf("history after forget = %+v, %q", res, text)
	}
	e.mustOK(t, "memory_history", `{"limit": 2}`, &res)
	if len(res.Events) != 2 || res.Total != 3 || res.Events[0].Event != "removed" {
		t.Errorf("latest history = %+v", res)
	}
	e.mustErr(t, "memory_history", `{"fact_id": "fact_00000000"}`, "no fact")
	e.mustErr(t, "memory_history", `{"fact_id": "`+id+`", "user_id": "bob"}`, "no fact", "bob")
	e.mustErr(t, "memory_history", `{"limit": 1000}`, "limit")
}

// TestForgetMemoryDerivedFacts: forgetting a thread through the tool
// forgets the facts extracted from it, unless keep_facts, and says so.
func TestForgetMemoryDerivedFacts(t *testing.T) {
	for _, keep := range []bool{false, true} {
		e := newEnv(t)
		e.mustOK(t, "add_memory", `{"thread_id": "bank", "user_input": "I bank at the corner", "agent_response": "ok"}`, &memory.AddResult{})
		store, err := files.Open(e.dir) // as the updater of another process
		if err != nil {
			t.Fatal(err)
		}
		_, err = store.UpdateDocument(t.Context(), memory.Scope{UserID: memory.DefaultUserID}, func(d *memory.Document) error {
			d.Facts = append(d.Facts, memory.Fact{ID: "fact_0000ba01", Content: "Banks at the corner", Category: "context", Confidence: 0.8, Source: "bank"})
			return nil
		})
		store.Close()
		if err != nil {
			t.Fatal(err)
		}
		var res memory.ForgetResult
		text := e.mustOK(t, "forget_memory", fmt.Sprintf(`{"thread_id": "bank", "keep_facts": %v}`, keep), &res)
		var prof memory.ProfileResult
		e.mustOK(t, "get_user_profile", `{}`, &prof)
		if keep {
			if len(res.DerivedFactsKept) != 1 || len(res.DerivedFactsRemoved) != 0 || len(prof.Facts) != 1 || !strings.Contains(text, "kept facts extracted from the same conversation") {
				t.Errorf("keep_facts: result %+v, text %q, facts left %v", res, text, prof.Facts)
			}
			continue
		}
		if len(res.DerivedFactsRemoved) != 1 || len(prof.Facts) != 0 || !strings.Contains(text, "1 fact extracted from them (fact_0000ba01)") {
			t.Errorf("forget thread: result %+v, text %q, facts left %v", res, text, prof.Facts)
		}
	}
}

func TestUpdateProfileTool(t *testing.T) {
	e := newEnv(t)
	var res memory.UpdateProfileResult
	text := e.mustOK(t, "update_profile", `{"section": "work_context", "text": "Writes Go at a bank."}`, &res)
	if !res.Changed || res.Text != "Writes Go at a bank." || text != "Updated work_context of user default; it now reads: Writes Go at a bank." {
		t.Errorf("update_profile = %+v, %q", res, text)
	}
	var prof memory.ProfileResult
	e.mustOK(t, "get_user_profile", `{}`, &prof)
	if prof.User.WorkContext.Summary != "Writes Go at a bank." {
		t.Errorf("profile = %+v", prof.User)
	}
	text = e.mustOK(t, "update_profile", `{"section": "work_context", "text": ""}`, &res)
	if !res.Changed || res.Previous != "Writes Go at a bank." || !strings.HasPrefix(text, "Cleared work_context") {
		t.Errorf("clear = %+v, %q", res, text)
	}
	e.mustErr(t, "update_profile", `{"section": "workContext", "text": "x"}`, "section")
	e.mustErr(t, "update_profile", `{"section": "top_of_mind"}`, "text")
	e.mustErr(t, "update_profile", `{"section": "top_of_mind", "text": "ring \u0007"}`, "text", "control character")
}

// TestForgetEmptyIDs checks that an empty or blank id in forget_memory is
// an error that changes nothing, never a wider forget: an unset variable
// in a script must not turn "forget this agent" into "forget everything".
func TestForgetEmptyIDs(t *testing.T) {
	e := newEnv(t)
	e.mustOK(t, "add_memory", `{"user_input":"I sail.","agent_response":"Noted.","user_id":"bob","agent_name":"coder","thread_id":"t1"}`, &struct{}{})
	e.mustOK(t, "add_memory", `{"user_input":"I row.","agent_response":"Noted.","user_id":"bob","thread_id":"t2"}`, &struct{}{})
	before := snapshot(t, e.dir)
	for _, args := range []string{
		`{"user_id":"bob","agent_name":"","all":true,"confirm":"forget everything"}`,
		`{"user_id":"bob","agent_name":"  ","all":true,"confirm":"forget everything"}`,
		`{"user_id":"","all":true,"confirm":"forget everything"}`,
		`{"user_id":"bob","thread_id":""}`,
		`{"user_id":"bob","thread_id":"","all":true,"confirm":"forget everything"}`,
	} {
		res := e.call(t, "forget_memory", args)
		if !res.IsError {
			t.Errorf("forget_memory %s succeeded: %s", args, resultText(t, res))
		}
	}
	if d := diffSnapshots(before, snapshot(t, e.dir)); d != "" {
		t.Errorf("refused forgets changed the data directory:\n%s", d)
	}
}
