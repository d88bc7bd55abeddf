package cli

import (
	"fmt"
	"strings"
	"time"

	"github.com/mnemo-mcp/mnemo/cli/importers"
	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
)

// The memory server's knowledge graph becomes facts: each observation of
// an entity and each relation one fact, with the entity named in it. The
// user is the entity named user, default_user (the name the server's
// suggested prompt uses), me, myself, the_user or current_user (any case,
// spaces or dashes for underscores), or the one --graph-user names; it is
// written "User" in the facts, whose category is context. Facts about
// other entities are knowledge: "Acme_Corp (organization): Makes
// anvils". Relations read "User works at Acme_Corp". An entity of type
// person is not taken for the user unless named so: a graph holds many
// people.

// graphSource is the Source of facts imported from a knowledge graph.
const graphSource = "memory-graph"

// graphConfidence is the confidence of imported graph facts, which carry
// none: what a MemoryOS knowledge entry gets.
const graphConfidence = memoryOSKnowledgeConfidence

// graphUserNames are the names of the entity taken for the user, in the
// form userEntityKey gives.
var graphUserNames = map[string]bool{"user": true, "default_user": true, "me": true, "myself": true, "the_user": true, "current_user": true}

func userEntityKey(name string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(name)))
}

// graphPlan is what importing a knowledge graph will add.
type graphPlan struct {
	entities, relations, observations int
	user                              string // the entity taken for the user; "" when none
	facts                             []graphFact
	already                           int // known facts, or repeated in the graph
	empty                             int
	refused                           int
	refusedWhy                        string
	notes                             []string
	redacted                          []memory.Redaction
}

// graphFact is a fact to add and the line of memory.jsonl it came from.
type graphFact struct {
	fact memory.Fact
	line int
}

// factKey is how facts are compared for repeats.
func factKey(content string) string {
	return strings.ToLower(strings.Join(strings.Fields(content), " "))
}

// planGraph converts g into the facts to add to a document holding
// existing; userName (--graph-user) names the user's entity.
func planGraph(cfg memory.Config, scope memory.Scope, g *importers.Graph, userName string, existing []memory.Fact, now time.Time) (*graphPlan, error) {
	p := &graphPlan{entities: len(g.Entities), relations: len(g.Relations)}
	if userName != "" {
		found := false
		for _, e := range g.Entities {
			found = found || e.Name == userName
		}
		for _, r := range g.Relations {
			found = found || r.From == userName || r.To == userName
		}
		if !found {
			return nil, fmt.Errorf("--graph-user %q names no entity of the graph", userName)
		}
		p.user = userName
	} else {
		for _, e := range g.Entities {
			if graphUserNames[userEntityKey(e.Name)] {
				if p.user != "" && p.user != e.Name {
					p.notes = append(p.notes, fmt.Sprintf("entities %q and %q both look like the user; %q is taken (name the other with --graph-user)", p.user, e.Name, p.user))
					continue
				}
				p.user = e.Name
			}
		}
		if p.user == "" {
			p.notes = append(p.notes, "no entity is named like the user (user, default_user, me): every fact names its entity; if one of them is the user, import again with --graph-user NAME")
		}
	}
	known := map[string]bool{}
	for _, f := range existing {
		known[factKey(f.Content)] = true
	}
	who := func(name string) string {
		if name == p.user {
			return "User"
		}
		return name
	}
	add := func(content, category string, line int) {
		content = strings.TrimSpace(content)
		if content == "" {
			p.empty++
			return
		}
		k := factKey(content)
		if known[k] {
			p.already++
			return
		}
		known[k] = true
		doc := memory.NewDocument()
		doc.Facts = []memory.Fact{{ID: "fact_00000000", Content: content, Category: category, Confidence: graphConfidence,
			CreatedAt: now, Source: graphSource}}
		red, err := engine.CheckImport(cfg, scope, doc, nil)
		if err != nil {
			p.refused++
			if p.refusedWhy == "" {
				p.refusedWhy = fmt.Sprintf("line %d: %v", line, err)
			}
			return
		}
		p.redacted = append(p.redacted, red...)
		p.facts = append(p.facts, graphFact{fact: doc.Facts[0], line: line})
	}
	for _, e := range g.Entities {
		for _, o := range e.Observations {
			p.observations++
			if strings.TrimSpace(o) == "" {
				p.empty++
				continue
			}
			if e.Name == p.user {
				add("User: "+o, memory.CategoryContext, e.Line)
				continue
			}
			name := e.Name
			if t := strings.TrimSpace(e.EntityType); t != "" {
				name += " (" + t + ")"
			}
			add(name+": "+o, memory.CategoryKnowledge, e.Line)
		}
	}
	for _, r := range g.Relations {
		category := memory.CategoryKnowledge
		if r.From == p.user || r.To == p.user {
			category = memory.CategoryContext
		}
		verb := strings.Join(strings.Fields(strings.ReplaceAll(r.RelationType, "_", " ")), " ")
		add(who(r.From)+" "+verb+" "+who(r.To), category, r.Line)
	}
	if n := len(existing) + len(p.facts); n > cfg.MaxFacts {
		return nil, fmt.Errorf("would hold %d facts (%d now and %d from the graph); max_facts is %d: raise max_facts, or forget facts first (mnemo forget)",
			n, len(existing), len(p.facts), cfg.MaxFacts)
	}
	return p, nil
}

// apply adds the plan's facts to d, skipping those d learnt meanwhile,
// with a created event each; it returns the ids added.
func (p *graphPlan) apply(d *memory.Document, maxFacts int, now time.Time, newID func() string) ([]string, error) {
	known := map[string]bool{}
	ids := map[string]bool{}
	for _, f := range d.Facts {
		known[factKey(f.Content)] = true
		ids[f.ID] = true
	}
	var added []string
	for _, gf := range p.facts {
		if known[factKey(gf.fact.Content)] {
			continue
		}
		f := gf.fact
		f.ID = newUniqueFactID(newID, ids)
		ids[f.ID] = true
		d.Facts = append(d.Facts, f)
		d.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactCreated, At: now, Source: graphSource,
			Reason: fmt.Sprintf("imported from the memory server's knowledge graph, line %d", gf.line), Content: f.Content})
		added = append(added, f.ID)
	}
	if len(d.Facts) > maxFacts {
		return nil, fmt.Errorf("would hold %d facts; max_facts is %d: raise max_facts, or forget facts first (mnemo forget)", len(d.Facts), maxFacts)
	}
	return added, nil
}
