package importers

import (
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
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

// graph is the format of the memory server's memory.jsonl.
type graph struct{}

// nameGraph is the --format name of a knowledge graph.
const nameGraph = "memory-graph"

func (graph) Name() string           { return nameGraph }
func (graph) Title() string          { return "memory server knowledge graph" }
func (graph) Detect(src Source) bool { return detectHistory(src.Data) == nameGraph }

func (graph) Parse(src Source, opt *Options) (*Parsed, error) {
	if err := historyOnly(src); err != nil {
		return nil, err
	}
	g, err := ParseGraph(src.Data)
	if err != nil {
		return nil, err
	}
	return GraphFacts(g, opt.GraphUser)
}

// graphSource is the Source of facts imported from a knowledge graph.
const graphSource = "memory-graph"

// GraphConfidence is the confidence of imported graph facts, which carry
// none: what a MemoryOS knowledge entry gets.
const GraphConfidence = memoryOSKnowledgeConfidence

// graphUserNames are the names of the entity taken for the user, in the
// form userEntityKey gives.
var graphUserNames = map[string]bool{"user": true, "default_user": true, "me": true, "myself": true, "the_user": true, "current_user": true}

func userEntityKey(name string) string {
	return strings.NewReplacer(" ", "_", "-", "_").Replace(strings.ToLower(strings.TrimSpace(name)))
}

// GraphSummary says what a knowledge graph held.
type GraphSummary struct {
	Entities, Relations, Observations int
	// User is the entity taken for the user; "" when none.
	User string
	// Empty counts the observations without text.
	Empty int
}

// GraphFacts converts g into facts; userName (--graph-user) names the
// user's entity.
func GraphFacts(g *Graph, userName string) (*Parsed, error) {
	p := &Parsed{}
	sum := &GraphSummary{Entities: len(g.Entities), Relations: len(g.Relations)}
	p.Graph = sum
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
		sum.User = userName
	} else {
		for _, e := range g.Entities {
			if graphUserNames[userEntityKey(e.Name)] {
				if sum.User != "" && sum.User != e.Name {
					p.note("entities %q and %q both look like the user; %q is taken (name the other with --graph-user)", sum.User, e.Name, sum.User)
					continue
				}
				sum.User = e.Name
			}
		}
		if sum.User == "" {
			p.note("no entity is named like the user (user, default_user, me): every fact names its entity; if one of them is the user, import again with --graph-user NAME")
		}
	}
	who := func(name string) string {
		if name == sum.User {
			return "User"
		}
		return name
	}
	add := func(content, category string, line int) {
		content = strings.TrimSpace(content)
		if content == "" {
			sum.Empty++
			return
		}
		p.Facts = append(p.Facts, memory.ImportedFact{Content: content, Category: category, Confidence: GraphConfidence, Source: graphSource,
			Reason: fmt.Sprintf("imported from the memory server's knowledge graph, line %d", line)})
	}
	for _, e := range g.Entities {
		for _, o := range e.Observations {
			sum.Observations++
			if strings.TrimSpace(o) == "" {
				sum.Empty++
				continue
			}
			if e.Name == sum.User {
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
		if r.From == sum.User || r.To == sum.User {
			category = memory.CategoryContext
		}
		verb := strings.Join(strings.Fields(strings.ReplaceAll(r.RelationType, "_", " ")), " ")
		add(who(r.From)+" "+verb+" "+who(r.To), category, r.Line)
	}
	return p, nil
}
