package prompts

import "errors"

// MemoryGuide renders the memory_guide MCP prompt: when the host's model
// should call each tool, including the tools that manage memory. It fails
// when any tool name is missing.
func MemoryGuide(data InstructionsData) (string, error) {
	t := data.Tools
	for _, name := range []string{t.AddMemory, t.RetrieveMemory, t.GetUserProfile, t.FlushMemory,
		t.SaveMemory, t.UpdateMemory, t.ForgetMemory, t.ListMemories, t.MemoryHistory, t.UpdateProfile, t.RestoreMemory} {
		if name == "" {
			return "", errors.New("render memory guide: every tool name must be set")
		}
	}
	return render("memory_guide.tmpl", data)
}
