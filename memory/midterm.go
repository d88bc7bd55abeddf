package memory

import (
	"math"
	"slices"
	"time"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// MidTermState is the persisted form of a scope's mid-term memory.
type MidTermState struct {
	// Version is the format version, midTermVersion.
	Version int `json:"version"`
	// Moved maps a thread to the highest turn Seq that has left its
	// short-term window (placed in a session, or evicted since).
	Moved map[string]int64 `json:"moved"`
	// NextID numbers the next session.
	NextID   int               `json:"nextId"`
	Sessions []*MidTermSession `json:"sessions"`
}

const MidTermVersion = 1

// MidTermSession is a mid-term topic session: pages that left the
// short-term window, grouped by topic (MemoryOS).
type MidTermSession struct {
	ID       string   `json:"id"`
	Summary  string   `json:"summary"`
	Keywords []string `json:"keywords"`
	// LLMSummary says Summary and Keywords came from the language model;
	// otherwise they are extractive and are refreshed as pages join.
	LLMSummary bool          `json:"llmSummary,omitempty"`
	Pages      []MidTermPage `json:"pages"`
	// Visits is N_visit: retrieval hits since the last analysis.
	Visits int `json:"visits"`
	// Interactions is L_interaction: pages joined since the last analysis.
	Interactions int       `json:"interactions"`
	LastVisit    time.Time `json:"lastVisit"`
	Created      time.Time `json:"created"`
	// Uses counts visits and joins over the session's life and is never
	// reset; the least used session is evicted first (LFU).
	Uses int `json:"uses"`

	// SummarizedPages is how many pages the session had when the
	// language model last summarised it.
	SummarizedPages int `json:"summarizedPages,omitempty"`

	Num      int            `json:"-"` // id in the session index
	Terms    map[string]int `json:"-"` // token counts over the pages
	TermsSq  float64        `json:"-"` // sum of the squared counts, for the cosine
	KwToks   []string       `json:"-"` // Keywords as index terms, for the Jaccard index
	Centroid []float32      `json:"-"` // sum of the pages' unit vectors, when embedded
	// centroidOK says centroid reflects the vectors known for the pages.
	CentroidOK bool `json:"-"`
	// due says a retrieval found the session at or over the heat
	// threshold: it is analysed even if its heat has decayed a little by
	// the time the analysis runs.
	Due     bool `json:"-"`
	DirtyKW int  `json:"-"` // pages joined since keywords were refreshed
}

// AddTerm adds n occurrences of term to the session's terms.
func (m *MidTermSession) AddTerm(term string, n int) {
	c := m.Terms[term]
	m.Terms[term] = c + n
	m.TermsSq += float64((c+n)*(c+n) - c*c)
}

// SetKeywords sets the keywords and their index terms.
func (m *MidTermSession) SetKeywords(kw []string) {
	m.Keywords = kw
	m.KwToks = m.KwToks[:0]
	for _, k := range kw {
		for _, t := range lexical.Tokenize(k) {
			if !slices.Contains(m.KwToks, t) {
				m.KwToks = append(m.KwToks, t)
			}
		}
	}
}

// MidTermPage is one page (turn) of a session.
type MidTermPage struct {
	TurnID   string `json:"turnId"`
	Analyzed bool   `json:"analyzed,omitempty"`
	// Seq is the turn's Seq, where it was known when saved: a restart
	// finds the turn by it (and checks its id) rather than hashing every
	// turn's id. A saved state without it is read as before.
	Seq int64 `json:"seq,omitempty"`

	Pos int `json:"-"` // position of the turn in the scope's turns
}

// HeatWeights are the coefficients of a session's heat.
type HeatWeights struct {
	Alpha, Beta, Gamma float64
	Tau                time.Duration
}

// Heat is α·visits + β·interactions + γ·exp(−Δt/τ), Δt being the time
// since the session's last visit (MemoryOS H_segment).
func (m *MidTermSession) Heat(now time.Time, w HeatWeights) float64 {
	dt := now.Sub(m.LastVisit)
	if dt < 0 {
		dt = 0
	}
	recency := 1.0
	if w.Tau > 0 {
		recency = math.Exp(-dt.Seconds() / w.Tau.Seconds())
	}
	return w.Alpha*float64(m.Visits) + w.Beta*float64(m.Interactions) + w.Gamma*recency
}

// AddVector adds a page's unit vector to the session's centroid; nil (a
// page not embedded) adds nothing.
func (m *MidTermSession) AddVector(vec []float32) {
	if vec == nil {
		return
	}
	if m.Centroid == nil {
		m.Centroid = make([]float32, len(vec))
	}
	if len(m.Centroid) == len(vec) {
		for i, x := range vec {
			m.Centroid[i] += x
		}
	}
}
