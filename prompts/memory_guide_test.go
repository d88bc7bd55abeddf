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
