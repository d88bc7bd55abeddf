package importers

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// A MemoryOS data directory (its data_storage_path) holds, per user and per
// assistant:
//
//	users/<user_id>/short_term.json          [{user_input, agent_response, timestamp, meta_data?}]
//	users/<user_id>/mid_term.json            {"sessions": {<id>: {id, summary, details: [page]}}, "access_frequency": {...}}
//	                                         page: {page_id, user_input, agent_response, timestamp, analyzed, meta_info, ...}
//	users/<user_id>/long_term_user.json      {"user_profiles": {<user_id>: {data, last_updated}},
//	                                          "knowledge_base": [{knowledge, timestamp}], "assistant_knowledge": [...]}
//	assistants/<assistant_id>/long_term_assistant.json
//	                                         the same shape; its assistant_knowledge is the assistant's
//
// Timestamps are "YYYY-MM-DD HH:MM:SS". Embeddings are not imported.

// memoryOSThread is the thread of imported MemoryOS exchanges, which have
// no conversation ids.
const memoryOSThread = "memoryos"

// memoryOSKnowledgeConfidence is the confidence given to MemoryOS knowledge
// entries, which carry none: above the extraction threshold, below what an
// explicit statement gets.
const memoryOSKnowledgeConfidence = 0.8

type memoryOSPage struct {
	PageID        string          `json:"page_id"`
	UserInput     string          `json:"user_input"`
	AgentResponse string          `json:"agent_response"`
	Timestamp     string          `json:"timestamp"`
	MetaData      json.RawMessage `json:"meta_data"`
}

type memoryOSSession struct {
	ID      string         `json:"id"`
	Details []memoryOSPage `json:"details"`
}

type memoryOSKnowledge struct {
	Knowledge string `json:"knowledge"`
	Timestamp string `json:"timestamp"`
}

type memoryOSLongTerm struct {
	UserProfiles map[string]struct {
		Data        any    `json:"data"`
		LastUpdated string `json:"last_updated"`
	} `json:"user_profiles"`
	KnowledgeBase      []memoryOSKnowledge `json:"knowledge_base"`
	AssistantKnowledge []memoryOSKnowledge `json:"assistant_knowledge"`
}

// memoryOS is the format of a MemoryOS data directory.
type memoryOS struct{}

func (memoryOS) Name() string  { return "memoryos" }
func (memoryOS) Title() string { return "MemoryOS data directory" }

// Detect takes any directory for a MemoryOS data directory (Parse says
// when it is not one).
func (memoryOS) Detect(src Source) bool { return src.Dir }

// Parse converts one MemoryOS user (src is the data directory or its
// users/<id> directory) into one scope: --user (default the MemoryOS
// user id) and --agent. Exchanges become turns of one thread (--thread,
// default "memoryos") in time order, marked as already reflected in memory
// unless --pending; the profile becomes personalContext; user knowledge
// becomes Knowledge and the assistants' knowledge AssistantKnowledge.
func (memoryOS) Parse(src Source, opt *Options) (*Parsed, error) {
	if !src.Dir {
		return nil, fmt.Errorf("%s is a file; a MemoryOS memory is its data directory (the one with users/ and assistants/) or its users/<id> directory", src.Path)
	}
	path := src.Path
	p := &Parsed{}
	userDir, root, err := findMemoryOSUser(path)
	if err != nil {
		return nil, err
	}
	userID := filepath.Base(userDir)
	if err := memory.ValidateID("user_id", userID); err != nil && opt.User == "" {
		return nil, fmt.Errorf("MemoryOS user %q cannot be a mnemo user id (%v); name the target user with --user", userID, err)
	}
	scope, err := opt.targetScope(userID)
	if err != nil {
		return nil, err
	}

	var pages []memoryOSPage
	var mid struct {
		Sessions map[string]memoryOSSession `json:"sessions"`
	}
	if err := readJSONIfExists(filepath.Join(userDir, "mid_term.json"), &mid); err != nil {
		return nil, err
	}
	for _, id := range slices.Sorted(maps.Keys(mid.Sessions)) {
		pages = append(pages, mid.Sessions[id].Details...)
	}
	var short []memoryOSPage
	if err := readJSONIfExists(filepath.Join(userDir, "short_term.json"), &short); err != nil {
		return nil, err
	}
	pages = append(pages, short...)

	thread := cmp.Or(opt.Thread, memoryOSThread)
	turns, err := memoryOSTurns(pages, thread, opt, p)
	if err != nil {
		return nil, err
	}

	doc := memory.NewDocument()
	doc.Revision = 1
	doc.LastUpdated = opt.Now
	var lt memoryOSLongTerm
	if err := readJSONIfExists(filepath.Join(userDir, "long_term_user.json"), &lt); err != nil {
		return nil, err
	}
	profile, ok := lt.UserProfiles[userID]
	if !ok && len(lt.UserProfiles) == 1 {
		for _, p := range lt.UserProfiles {
			profile = p
		}
	}
	if text, _ := profile.Data.(string); strings.TrimSpace(text) != "" && !isNone(text) {
		doc.User.PersonalContext.Summary = strings.TrimSpace(text)
		if doc.User.PersonalContext.UpdatedAt, err = parseLooseTime(profile.LastUpdated); err != nil {
			return nil, fmt.Errorf("long_term_user.json user profile last_updated: %w", err)
		}
	}
	ids := map[string]bool{}
	if doc.Knowledge, err = memoryOSFacts(lt.KnowledgeBase, ids, opt); err != nil {
		return nil, fmt.Errorf("long_term_user.json knowledge_base: %w", err)
	}
	assistant := lt.AssistantKnowledge
	if root != "" {
		files, _ := filepath.Glob(filepath.Join(root, "assistants", "*", "long_term_assistant.json"))
		slices.Sort(files)
		for _, f := range files {
			var a memoryOSLongTerm
			if err := readJSONIfExists(f, &a); err != nil {
				return nil, err
			}
			assistant = append(assistant, a.AssistantKnowledge...)
		}
		if len(files) > 1 {
			p.note("merged the knowledge of %d MemoryOS assistants", len(files))
		}
	}
	if doc.AssistantKnowledge, err = memoryOSFacts(assistant, ids, opt); err != nil {
		return nil, fmt.Errorf("assistant knowledge: %w", err)
	}
	if len(turns) > 0 && !opt.Pending {
		doc.Watermarks = map[string]int64{thread: turns[len(turns)-1].Seq}
	}
	if len(turns) > 0 && opt.Pending {
		p.note("the %d imported turns are pending: a server with an LLM sends them to the memory updater when it starts", len(turns))
	}
	creditImport(doc, opt.Now)
	p.Scopes = []memory.ImportedScope{{Scope: scope, Doc: doc, Turns: turns}}
	return p, nil
}

// findMemoryOSUser returns the user directory of path and the data
// directory it belongs to ("" when path is a lone user directory).
func findMemoryOSUser(path string) (userDir, root string, err error) {
	if isMemoryOSUserDir(path) {
		parent := filepath.Dir(filepath.Clean(path))
		if filepath.Base(parent) == "users" {
			root = filepath.Dir(parent)
		}
		return path, root, nil
	}
	entries, err := os.ReadDir(filepath.Join(path, "users"))
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("not a MemoryOS data directory: it has no users/ directory and no short_term.json, mid_term.json or long_term_user.json")
	}
	if err != nil {
		return "", "", err
	}
	var users []string
	for _, e := range entries {
		if e.IsDir() && isMemoryOSUserDir(filepath.Join(path, "users", e.Name())) {
			users = append(users, e.Name())
		}
	}
	switch len(users) {
	case 0:
		return "", "", errors.New("its users/ directory holds no MemoryOS user")
	case 1:
		return filepath.Join(path, "users", users[0]), path, nil
	}
	return "", "", fmt.Errorf("it holds %d MemoryOS users (%s); import one at a time by naming its directory, e.g. %s",
		len(users), strings.Join(users, ", "), filepath.Join(path, "users", users[0]))
}

func isMemoryOSUserDir(dir string) bool {
	for _, name := range []string{"short_term.json", "mid_term.json", "long_term_user.json"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return true
		}
	}
	return false
}

// memoryOSTurns turns MemoryOS pages into turns of thread in time order
// (stable, so pages with the same time keep their order), dropping pages
// repeated between short- and mid-term.
func memoryOSTurns(pages []memoryOSPage, thread string, opt *Options, p *Parsed) ([]memory.Turn, error) {
	type key struct{ user, reply, ts string }
	seen := map[key]bool{}
	var turns []memory.Turn
	undated := 0
	for i, pg := range pages {
		k := key{pg.UserInput, pg.AgentResponse, pg.Timestamp}
		if seen[k] || strings.TrimSpace(pg.UserInput) == "" && strings.TrimSpace(pg.AgentResponse) == "" {
			continue
		}
		seen[k] = true
		at, err := parseLooseTime(pg.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("page %d (%s): timestamp %w", i+1, pg.PageID, err)
		}
		if at.IsZero() {
			at = opt.Now
			undated++
		}
		t := memory.Turn{
			ID:       opt.NewTurnID(),
			ThreadID: thread,
			Time:     at,
			Stored:   opt.Now,
			User:     pg.UserInput,
			Reply:    pg.AgentResponse,
		}
		if m := strings.TrimSpace(string(pg.MetaData)); strings.HasPrefix(m, "{") {
			t.MetaData = json.RawMessage(m)
		}
		turns = append(turns, t)
	}
	slices.SortStableFunc(turns, func(a, b memory.Turn) int { return a.Time.Compare(b.Time) })
	for i := range turns {
		turns[i].Seq = int64(i + 1)
	}
	if undated > 0 {
		p.note("%d MemoryOS pages had no timestamp; they are dated at the import", undated)
	}
	return turns, nil
}

// memoryOSFacts turns MemoryOS knowledge entries into facts of the
// knowledge category, skipping empty and "none" entries.
func memoryOSFacts(entries []memoryOSKnowledge, ids map[string]bool, opt *Options) ([]memory.Fact, error) {
	var out []memory.Fact
	for i, k := range entries {
		text := strings.TrimSpace(k.Knowledge)
		if text == "" || isNone(text) {
			continue
		}
		at, err := parseLooseTime(k.Timestamp)
		if err != nil {
			return nil, fmt.Errorf("entry %d: timestamp %w", i+1, err)
		}
		id := newUniqueFactID(opt.NewFactID, ids)
		ids[id] = true
		out = append(out, memory.Fact{
			ID:         id,
			Content:    text,
			Category:   memory.CategoryKnowledge,
			Confidence: memoryOSKnowledgeConfidence,
			CreatedAt:  at,
			Source:     "memoryos",
		})
	}
	return out, nil
}

// isNone reports whether MemoryOS wrote "none" for "nothing".
func isNone(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "none", "- none", "- none.":
		return true
	}
	return false
}

// readJSONIfExists decodes the JSON file at path into v; a missing file
// leaves v as it is.
func readJSONIfExists(path string, v any) error {
	data, err := ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", filepath.Base(path), err)
	}
	return nil
}
