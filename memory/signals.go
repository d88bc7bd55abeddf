package memory

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"

	"github.com/mnemo-mcp/mnemo/internal/relit"
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

	// gates holds the literal tests of the patterns above (relit), made
	// on first use: a pattern whose literals a message lacks is not run.
	gatesOnce sync.Once
	gates     [3]*relit.Set
}

// patternGates returns the gates of Correction, CorrectionIgnore and
// Reinforcement.
func (sp *SignalPatterns) patternGates() *[3]*relit.Set {
	sp.gatesOnce.Do(func() {
		for i, res := range [3][]*regexp.Regexp{sp.Correction, sp.CorrectionIgnore, sp.Reinforcement} {
			gates := make([]relit.Gate, len(res))
			for j, re := range res {
				gates[j] = relit.Required(re)
			}
			sp.gates[i] = relit.NewSet(gates)
		}
	})
	return &sp.gates
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
	return sp.detect(msgs, true)
}

// detect is Detect; gated says a pattern whose literals the message
// lacks is not run (one scan of the message, relit.Prepare, decides for
// every pattern), which never changes the result: the tests compare it
// with every pattern run.
func (sp *SignalPatterns) detect(msgs []Message, gated bool) Signals {
	if len(msgs) > signalWindow {
		msgs = msgs[len(msgs)-signalWindow:]
	}
	g := sp.patternGates()
	var s Signals
	for _, m := range msgs {
		if m.Role != RoleUser {
			continue
		}
		pt := relit.Prepare(m.Content)
		if !s.Correction {
			text, tpt := sp.blankIgnored(m.Content, pt, gated)
			s.Correction = anyMatch(sp.Correction, g[0], text, tpt, gated)
		}
		if !s.Reinforcement {
			s.Reinforcement = anyMatch(sp.Reinforcement, g[2], m.Content, pt, gated)
		}
	}
	return s
}

func anyMatch(res []*regexp.Regexp, gates *relit.Set, text string, pt relit.Text, gated bool) bool {
	var open relit.Open
	if gated {
		open = gates.Scan(pt)
	}
	for i, re := range res {
		if gated && !open.Has(i) {
			continue
		}
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// blankIgnored replaces what the ignore patterns match with spaces, so
// that a correction cue cannot match across it. pt is text prepared for
// the gates; so is the Text returned with the result.
func (sp *SignalPatterns) blankIgnored(text string, pt relit.Text, gated bool) (string, relit.Text) {
	g := sp.patternGates()
	var open relit.Open
	if gated {
		open = g[1].Scan(pt)
	}
	for i, re := range sp.CorrectionIgnore {
		if gated && !open.Has(i) {
			continue
		}
		out := re.ReplaceAllStringFunc(text, func(m string) string { return strings.Repeat(" ", len(m)) })
		if out != text {
			// Blanks can join words into a new literal: prepare and
			// scan again.
			text, pt = out, relit.Prepare(out)
			if gated {
				open = g[1].Scan(pt)
			}
		}
	}
	return text, pt
}
