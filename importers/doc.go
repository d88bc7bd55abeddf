// Package importers reads the memories and chat histories of other
// assistants, so that mnemo import and the viewer can bring them in: a
// ChatGPT or Claude data export (conversations.json), the knowledge
// graph of the official MCP memory server (memory.jsonl), a mnemo
// export, a DeerFlow memory.json and a MemoryOS data directory.
//
// Every format is one Format (Name, Title, Detect, Parse) in a file of
// its own, listed in Formats. A format converts and never stores: Parse
// returns conversations (chat histories), facts (a knowledge graph) or
// whole scopes (the memories of other tools), and the caller hands them
// to the engine's Import, the one write path, which applies the rules
// of the tools to every record. A new format is a new file here and a
// row in Formats; nothing else changes.
//
// The parsers read untrusted files. They mark what is not conversation
// (system prompts, hidden context, tool calls and results, uploaded
// files) so that the engine's filter drops it, and refuse a file that
// does not follow its format with the record (and line) that is wrong.
// Whether a text, id or time may be kept is not theirs to say: that is
// the engine's rule, the same for every way in.
//
// Map of the package:
//
//	format.go      Format, Formats, Lookup, Source, Options, Parsed, Detect
//	files.go       Open and ReadFile: regular files of at most MaxFileBytes, unpacked exports
//	importers.go   Conversation, Message, RecordError, the JSON array walker, export times
//	chatgpt.go     ParseChatGPT: the mapping tree, the branch ending at current_node
//	claude.go      ParseClaude: chat_messages with human/assistant senders and content blocks
//	graph.go       ParseGraph: entity and relation lines of memory.jsonl
//	graph_facts.go GraphFacts: a graph's observations and relations as facts, the user's entity
//	mnemo.go       ExportFile (the format mnemo export writes) and its reader
//	deerflow.go    a DeerFlow memory.json as one scope's document
//	memoryos.go    a MemoryOS user's pages and knowledge as one scope
//	scopes.go      what the scope formats share: target scope, loose times, import credit
package importers
