package prompts

import (
	"strings"
	"testing"
)

var allTools = ToolNames{
	AddMemory:      "add_memory",
	RetrieveMemory: "retrieve_memory",
	GetUserProfile: "get_user_profile",
	FlushMemory:    "flush_memory",
	SaveMemory:     "save_memory",
	UpdateMemory:   "update_memory",
	ForgetMemory:   "forget_memory",
	ListMemories:   "list_memories",
	MemoryHistory:  "memory_history",
	UpdateProfile:  "update_profile",
	RestoreMemory:  "restore_memory",
}

func TestMemoryGuide(t *testing.T) {
	tests := []struct {
		name string
		data InstructionsData
	}{
		{"memory_guide_llm", InstructionsData{LLMConfigured: true, DefaultUser: "alice", Tools: allTools}},
		{"memory_guide_no_llm", InstructionsData{Tools: allTools}},
		{"instructions_manage", InstructionsData{LLMConfigured: true, DefaultUser: "alice", Tools: allTools}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			render := MemoryGuide
			if strings.HasPrefix(tt.name, "instructions") {
				render = Instructions
			}
			got, err := render(tt.data)
			if err != nil {
				t.Fatalf("render error = %v", err)
			}
			for _, name := range []string{allTools.AddMemory, allTools.RetrieveMemory, allTools.GetUserProfile, allTools.FlushMemory,
				allTools.SaveMemory, allTools.UpdateMemory, allTools.ForgetMemory, allTools.ListMemories, allTools.MemoryHistory, allTools.RestoreMemory} {
				if !strings.Contains(got, name) {
					t.Errorf("%s does not mention tool %s", tt.name, name)
				}
			}
			golden(t, tt.name, got)
		})
	}
	if got, err := MemoryGuide(InstructionsData{Tools: testTools}); err == nil {
		t.Errorf("MemoryGuide(without the manage tools) = %q, want an error", got)
	}
}

// TestKeylessVoice checks that without an extraction model the
// instructions and the memory_guide prompt describe a complete mode: the
// host's model passes the facts, and nothing waits for a model that never
// comes.
func TestKeylessVoice(t *testing.T) {
	forbidden := []string{"pending", "waits for", "API key to", "no profile or facts", "nothing can be distilled", "exist only when"}
	for _, tt := range []struct {
		name   string
		render func(InstructionsData) (string, error)
		llm    bool
		want   []string
	}{
		{"instructions keyless", Instructions, false, []string{"you are the extraction model", "Pass in facts", "category correction"}},
		{"memory_guide keyless", MemoryGuide, false, []string{"you are the extraction model", "pass in `facts`", "category `correction`"}},
		{"instructions model", Instructions, true, []string{"a language model distils", "not extracted twice"}},
		{"memory_guide model", MemoryGuide, true, []string{"a language model distils", "not extracted twice"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := tt.render(InstructionsData{LLMConfigured: tt.llm, Tools: allTools})
			if err != nil {
				t.Fatalf("render error = %v", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("%s does not say %q", tt.name, w)
				}
			}
			for _, f := range forbidden {
				if strings.Contains(got, f) {
					t.Errorf("%s says %q", tt.name, f)
				}
			}
			if !tt.llm && strings.Contains(got, "extraction model is configured") && !strings.Contains(got, "none is needed") {
				t.Errorf("%s presents the keyless mode as incomplete", tt.name)
			}
		})
	}
}
