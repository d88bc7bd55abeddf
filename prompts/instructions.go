package prompts

import "errors"

// ToolNames are the names of the MCP tools the instructions refer to. The
// tools package declares the names and passes them in, so each name is
// written in one place only.
type ToolNames struct {
	AddMemory      string
	RetrieveMemory string
	GetUserProfile string
	FlushMemory    string
	// The tools that manage memory directly; empty when not offered.
	SaveMemory    string
	UpdateMemory  string
	ForgetMemory  string
	ListMemories  string
	MemoryHistory string
	UpdateProfile string
	RestoreMemory string
}

// InstructionsData is what the server instructions depend on.
type InstructionsData struct {
	// LLMConfigured says whether a language model extracts a profile and
	// facts from the stored exchanges.
	LLMConfigured bool
	// DefaultUser is the user whose memory is used when a call names none;
	// empty leaves it unnamed.
	DefaultUser string
	// Tools names the tools to call.
	Tools ToolNames
}

// Instructions renders the MCP server instructions: when the host's model
// should call which tool, and how to treat what memory returns. It fails
// when a tool name is missing.
func Instructions(data InstructionsData) (string, error) {
	t := data.Tools
	if t.AddMemory == "" || t.RetrieveMemory == "" || t.GetUserProfile == "" || t.FlushMemory == "" {
		return "", errors.New("render instructions: every tool name must be set")
	}
	return render("instructions.tmpl", data)
}
