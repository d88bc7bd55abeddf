package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// Mentions: what in a scope's memory holds the words and names of a topic
// or of something forgotten. A topic's search (FindTopic) is the preview
// of a topic forget; after every forget the rest of memory is searched
// for the words and names of what went (Forget fills MayMention), so that
// the result never says that nothing else mentions it unless it checked.

// mentionKey is one thing searched for: an item mentions it when it holds
// one of names, or need of words. Both map a term (lexical.Tokenize's) to
// the word as written.
type mentionKey struct {
	names map[string]string
	words map[string]string
	need  int
}

// topicKey is the key of a topic: every one of its words.
func topicKey(topic string) mentionKey {
	k := mentionKey{words: termsOf(topic)}
	k.need = len(k.words)
	return k
}

// forgottenFactKey is the key of a forgotten fact: its names, or at least half of
// its other words (two at most), so that an exchange saying the same
// thing in other words around it is found.
func forgottenFactKey(content string) mentionKey {
	k := mentionKey{names: namesIn([]string{content}), words: termsOf(content)}
	for t := range k.names {
		delete(k.words, t)
	}
	k.need = min(2, (len(k.words)+1)/2)
	return k
}

// termsOf maps the terms of text to the words they were read from.
func termsOf(text string) map[string]string {
	out := map[string]string{}
	for _, w := range strings.FieldsFunc(text, notWordRune) {
		for _, t := range lexical.Tokenize(w) {
			if _, ok := out[t]; !ok {
				out[t] = w
			}
		}
	}
	return out
}

func notWordRune(r rune) bool {
	return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '\'' && r != '’' && r != '-'
}

// calendarWords are capitalised words that name no one and nothing in
// particular.
var calendarWords = strings.Fields(`january february march april may june july august september october november december
	monday tuesday wednesday thursday friday saturday sunday today tomorrow yesterday ok okay yes no thanks hi hello`)

// namesIn returns the names texts hold: capitalised words that are not
// stop words, months or days, written capitalised somewhere other than at
// the start of a sentence (where every word is).
func namesIn(texts []string) map[string]string {
	inner := map[string]string{}
	for _, text := range texts {
		start := true
		for i, w := range strings.FieldsFunc(text, unicode.IsSpace) {
			word := strings.TrimFunc(w, notWordRune)
			atStart := start || i == 0
			start = strings.ContainsAny(w[len(w)-1:], ".!?:;")
			r := []rune(word)
			if len(r) < 2 || !unicode.IsUpper(r[0]) || slices.Contains(calendarWords, strings.ToLower(word)) {
				continue
			}
			toks := lexical.Tokenize(word)
			if len(toks) != 1 {
				continue
			}
			if _, ok := inner[toks[0]]; !ok && !atStart {
				inner[toks[0]] = word
			}
		}
	}
	return inner
}

// match returns the words and names of the keys that text holds, or nil
// when it mentions none of them.
func matchKeys(keys []mentionKey, text string) []string {
	if len(keys) == 0 {
		return nil
	}
	toks := lexical.Tokenize(text)
	has := make(map[string]bool, len(toks))
	for _, t := range toks {
		has[t] = true
	}
	var out []string
	add := func(w string) {
		if !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	for _, k := range keys {
		for t, w := range k.names {
			if has[t] {
				add(w)
			}
		}
		var words []string
		for t, w := range k.words {
			if has[t] {
				words = append(words, w)
			}
		}
		if k.need > 0 && len(words) >= k.need {
			for _, w := range words {
				add(w)
			}
		}
	}
	slices.Sort(out)
	return out
}

// keyWords lists the words and names the keys search for.
func keyWords(keys []mentionKey) []string {
	out := []string{}
	for _, k := range keys {
		for _, m := range []map[string]string{k.names, k.words} {
			for _, w := range m {
				if !slices.Contains(out, w) {
					out = append(out, w)
				}
			}
		}
	}
	slices.Sort(out)
	return out
}

// maxMentionRunes bounds the text of one mention.
const maxMentionRunes = 300

func mentionText(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > maxMentionRunes {
		s = string(r[:maxMentionRunes]) + "…"
	}
	return s
}

// findMentions lists what in scope's memory mentions one of keys: the
// profile sections (whoever wrote them), the facts and knowledge entries,
// then the stored exchanges in the order they were stored; at most limit,
// the number left out in more.
func (s *Service) findMentions(ctx context.Context, scope memory.Scope, keys []mentionKey, limit int) (found []memory.Mention, more int, err error) {
	found = []memory.Mention{}
	if len(keys) == 0 {
		return found, 0, nil
	}
	doc, err := s.store.LoadDocument(ctx, scope)
	if err != nil {
		return nil, 0, fmt.Errorf("search the memory of %s: %w", scope.Key(), err)
	}
	turns, err := s.store.ReadTurns(ctx, scope, 0)
	if err != nil {
		return nil, 0, fmt.Errorf("search the exchanges of %s: %w", scope.Key(), err)
	}
	add := func(m memory.Mention) {
		if len(found) < limit {
			found = append(found, m)
		} else {
			more++
		}
	}
	for i, sec := range doc.Sections() {
		if w := matchKeys(keys, sec.Section.Summary); w != nil {
			add(memory.Mention{Kind: memory.MentionSection, Section: memory.ProfileSections[i], Time: sec.Section.UpdatedAt,
				Text: mentionText(sec.Section.Summary), Words: w, Action: memory.ActionEdit})
		}
	}
	for _, list := range [][]memory.Fact{doc.Facts, doc.Knowledge, doc.AssistantKnowledge} {
		for _, f := range list {
			if w := matchKeys(keys, f.Content+"\n"+f.Replaced+"\n"+f.SourceError); w != nil {
				add(memory.Mention{Kind: memory.MentionFact, ID: f.ID, Time: f.Since(), Text: mentionText(f.Content), Words: w, Action: memory.ActionForget})
			}
		}
	}
	for _, t := range turns {
		if w := matchKeys(keys, t.User+"\n"+t.Reply); w != nil {
			add(memory.Mention{Kind: memory.MentionTurn, ID: t.ID, ThreadID: t.ThreadID, Time: t.Time,
				Text: mentionText(t.User + " — " + t.Reply), Words: w, Action: memory.ActionForget})
		}
	}
	return found, more, nil
}

// FindTopic lists everything in a scope's memory that mentions a topic:
// profile sections, facts and stored exchanges that hold every word of
// it. It is the preview of a topic forget (ForgetRequest.Topic) and
// changes nothing. An empty topic, or one of only stop words, is an
// error wrapping ErrInvalidInput.
func (s *Service) FindTopic(ctx context.Context, req memory.TopicRequest) (*memory.TopicResult, error) {
	scope, err := s.resolveScope(req.UserID, req.AgentName)
	if err != nil {
		return nil, err
	}
	topic, key, err := checkTopic(req.Topic)
	if err != nil {
		return nil, err
	}
	found, more, err := s.findMentions(ctx, scope, []mentionKey{key}, memory.MaxMentions)
	if err != nil {
		return nil, err
	}
	return &memory.TopicResult{Scope: scope, Topic: topic, Words: keyWords([]mentionKey{key}), Mentions: found, More: more,
		Confirm: memory.ForgetTopicConfirm(topic)}, nil
}

// checkTopic checks a topic and returns it with single spaces and its key.
func checkTopic(topic string) (string, mentionKey, error) {
	topic = strings.Join(strings.Fields(topic), " ")
	if err := memory.CheckText("topic", topic, 200); err != nil {
		return "", mentionKey{}, err
	}
	key := topicKey(topic)
	if topic == "" || key.need == 0 {
		return "", mentionKey{}, memory.Invalid("topic", "names nothing to search for; give a word or a name, such as Lisbon")
	}
	return topic, key, nil
}

// forgottenKeys are the keys of what a forget removed: each fact's
// (forgottenFactKey), and the names its exchanges hold.
func forgottenKeys(facts []memory.Fact, turns []memory.Turn) []mentionKey {
	var keys []mentionKey
	for _, f := range facts {
		if k := forgottenFactKey(f.Content); len(k.names) > 0 || k.need > 0 {
			keys = append(keys, k)
		}
	}
	if len(turns) > 0 {
		texts := make([]string, 0, 2*len(turns))
		for _, t := range turns {
			texts = append(texts, t.User, t.Reply)
		}
		if names := namesIn(texts); len(names) > 0 {
			keys = append(keys, mentionKey{names: names})
		}
	}
	return keys
}
