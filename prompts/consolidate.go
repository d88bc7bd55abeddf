package prompts

import (
	"errors"
	"regexp"
	"strings"
	"sync"
)

// ConsolidateData is what the consolidation prompt depends on.
type ConsolidateData struct {
	// Clusters are the groups of similar facts to judge; at least one,
	// each of at least two facts.
	Clusters []ConsolidateCluster
}

// ConsolidateCluster is one group of similar facts. Number is set by
// Consolidate (1, 2, …).
type ConsolidateCluster struct {
	Number int
	Facts  []ConsolidateFact
}

// ConsolidateFact is one fact as the model sees it.
type ConsolidateFact struct {
	ID         string
	Content    string
	Category   string
	Confidence float64
}

// consolidateDelimiter matches an opening or closing tag of the prompt's
// data block.
var consolidateDelimiter = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`(?i)<\s*/?\s*fact_groups\b[^>]*>`) })

// Consolidate renders the prompt that asks the language model which facts
// of each group of similar facts are one fact, and for the wording of each
// merged fact, as one JSON object {"merges":[{"factIds","content"}]}.
// Fact contents are put on one line and tags that would close the data
// block are escaped. It fails when no group has two facts.
func Consolidate(d ConsolidateData) (string, error) {
	var clusters []ConsolidateCluster
	for _, c := range d.Clusters {
		if len(c.Facts) < 2 {
			continue
		}
		c.Number = len(clusters) + 1
		facts := make([]ConsolidateFact, len(c.Facts))
		for i, f := range c.Facts {
			f.Content = consolidateDelimiter().ReplaceAllStringFunc(strings.Join(strings.Fields(f.Content), " "), func(tag string) string {
				return "&lt;" + tag[1:]
			})
			f.ID = strings.Join(strings.Fields(f.ID), "")
			f.Category = strings.Join(strings.Fields(f.Category), "")
			facts[i] = f
		}
		c.Facts = facts
		clusters = append(clusters, c)
	}
	if len(clusters) == 0 {
		return "", errors.New("render consolidate prompt: no group of at least two facts")
	}
	return render("consolidate.tmpl", ConsolidateData{Clusters: clusters})
}
