package prompts

import (
	"strings"
	"testing"
)

var testTools = ToolNames{
	AddMemory:      "add_memory",
	RetrieveMemory: "retrieve_memory",
	GetUserProfile: "get_user_profile",
	FlushMemory:    "flush_memory",
}

func TestInstructions(t *testing.T) {
	tests := []struct {
		name string
		data InstructionsData
	}{
		{"instructions_llm", InstructionsData{LLMConfigured: true, DefaultUser: "default", Tools: testTools}},
		{"instructions_no_llm", InstructionsData{LLMConfigured: false, DefaultUser: "alice", Tools: testTools}},
		{"instructions_no_user", InstructionsData{Tools: testTools}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Instructions(tt.data)
			if err != nil {
				t.Fatalf("Instructions() error = %v", err)
			}
			for _, name := range []string{testTools.AddMemory, testTools.RetrieveMemory, testTools.GetUserProfile, testTools.FlushMemory} {
				if !strings.Contains(got, name) {
					t.Errorf("Instructions() does not mention tool %s", name)
				}
			}
			if strings.Contains(got, "<no value>") {
				t.Errorf("Instructions() contains <no value>:\n%s", got)
			}
			golden(t, tt.name, got)
		})
	}
}

func TestInstructionsMissingToolName(t *testing.T) {
	tools := testTools
	tools.FlushMemory = ""
	if got, err := Instructions(InstructionsData{Tools: tools}); err == nil {
		t.Errorf("Instructions() = %q, want an error for a missing tool name", got)
	}
}

func TestRenderUnknownTemplate(t *testing.T) {
	if _, err := render("nope.tmpl", nil); err == nil {
		t.Error("render(nope.tmpl) error = nil, want an error")
	}
}
