package memory

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
)

//go:embed signals.json
var signalsJSON []byte

// signalWindow is how many trailing messages are searched for cues.
const signalWindow = 6

// SignalPatterns holds the compiled correction and reinforcement cues.
type SignalPatterns struct {
	Correction []*regexp.Regexp
	// CorrectionIgnore blanks out phrases that look like a correction
	// cue but are not ("not only … but also …", "是不是") before the
	// correction cues are matched.
	CorrectionIgnore []*regexp.Regexp
	Reinforcement    []*regexp.Regexp
}

// defaultSignals is compiled once from the embedded signals.json.
var defaultSignals = sync.OnceValue(func() *SignalPatterns { return MustParseSignalPatterns(signalsJSON) })

// ParseSignalPatterns compiles a signals.json document.
func ParseSignalPatterns(data []byte) (*SignalPatterns, error) {
	var raw struct {
		Correction       []string `json:"correction"`
		CorrectionIgnore []string `json:"correction_ignore"`
		Reinforcement    []string `json:"reinforcement"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("parse signal patterns: %w", err)
	}
	compile := func(list []string) ([]*regexp.Regexp, error) {
		out := make([]*regexp.Regexp, 0, len(list))
		for _, p := range list {
			re, err := regexp.Compile(p)
			if err != nil {
				return nil, fmt.Errorf("compile signal pattern %q: %w", p, err)
			}
			out = append(out, re)
		}
		return out, nil
	}
	var sp SignalPatterns
	var err error
	if sp.Correction, err = compile(raw.Correction); err != nil {
		return nil, err
	}
	if sp.CorrectionIgnore, err = compile(raw.CorrectionIgnore); err != nil {
		return nil, err
	}
	if sp.Reinforcement, err = compile(raw.Reinforcement); err != nil {
		return nil, err
	}
	return &sp, nil
}

// MustParseSignalPatterns is ParseSignalPatterns that panics on error, for
// the embedded list.
func MustParseSignalPatterns(data []byte) *SignalPatterns {
	sp, err := ParseSignalPatterns(data)
	if err != nil {
		panic(err)
	}
	return sp
}

// DetectSignals looks for correction and reinforcement cues in the user
// messages among the last six messages of msgs, using the built-in list.
func DetectSignals(msgs []Message) Signals { return defaultSignals().Detect(msgs) }

// Detect looks for cues in the user messages among the last six of msgs.
func (sp *SignalPatterns) Detect(msgs []Message) Signals {
	if len(msgs) > signalWindow {
		msgs = msgs[len(msgs)-signalWindow:]
	}
	var s Signals
	for _, m := range msgs {
		if m.Role != RoleUser {
			continue
		}
		s.Correction = s.Correction || anyMatch(sp.Correction, sp.blankIgnored(m.Content))
		s.Reinforcement = s.Reinforcement || anyMatch(sp.Reinforcement, m.Content)
	}
	return s
}

func anyMatch(res []*regexp.Regexp, text string) bool {
	for _, re := range res {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// blankIgnored replaces what the ignore patterns match with spaces, so
// that a correction cue cannot match across it.
func (sp *SignalPatterns) blankIgnored(text string) string {
	for _, re := range sp.CorrectionIgnore {
		text = re.ReplaceAllStringFunc(text, func(m string) string { return strings.Repeat(" ", len(m)) })
	}
	return text
}
