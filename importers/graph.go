package importers

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// The official MCP memory server (@modelcontextprotocol/server-memory)
// keeps its knowledge graph in memory.jsonl, one JSON object a line:
//
//	{"type":"entity","name":"Ana","entityType":"person","observations":["Sails on weekends"]}
//	{"type":"relation","from":"Ana","to":"Acme","relationType":"works_at"}

// Entity is a node of the knowledge graph with what was observed of it.
type Entity struct {
	Name         string
	EntityType   string
	Observations []string
	Line         int
}

// Relation is a directed edge of the knowledge graph, in active voice
// ("works_at").
type Relation struct {
	From, To, RelationType string
	Line                   int
}

// Graph is a knowledge graph as memory.jsonl holds it.
type Graph struct {
	Entities  []Entity
	Relations []Relation
}

// MaxGraphLine bounds one line of memory.jsonl.
const MaxGraphLine = 4 << 20

type graphLine struct {
	Type         string    `json:"type"`
	Name         *string   `json:"name"`
	EntityType   string    `json:"entityType"`
	Observations []*string `json:"observations"`
	From         *string   `json:"from"`
	To           *string   `json:"to"`
	RelationType *string   `json:"relationType"`
}

// ParseGraph reads memory.jsonl. Blank lines are skipped; any other line
// must be an entity with a name or a relation with from, to and
// relationType, else the error names the line.
func ParseGraph(data []byte) (*Graph, error) {
	g := &Graph{}
	sc := bufio.NewScanner(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	sc.Buffer(make([]byte, 0, 64<<10), MaxGraphLine)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		if err := g.add(line, n); err != nil {
			return nil, &RecordError{What: "line", Index: n, Line: n, Err: err}
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &RecordError{What: "line", Index: n + 1, Err: fmt.Errorf("is over %d bytes", MaxGraphLine)}
		}
		return nil, fmt.Errorf("read: %w", err)
	}
	return g, nil
}

func (g *Graph) add(line []byte, n int) error {
	var l graphLine
	if err := json.Unmarshal(line, &l); err != nil {
		if !json.Valid(line) {
			return fmt.Errorf("not a JSON object (cut short?): %w", err)
		}
		return fmt.Errorf("not an entity or a relation: %w", err)
	}
	switch l.Type {
	case "entity":
		if l.Name == nil || strings.TrimSpace(*l.Name) == "" {
			return errors.New("entity without a name")
		}
		e := Entity{Name: *l.Name, EntityType: l.EntityType, Line: n}
		for i, o := range l.Observations {
			if o == nil {
				return fmt.Errorf("entity %q: observation %d is null", *l.Name, i+1)
			}
			e.Observations = append(e.Observations, *o)
		}
		g.Entities = append(g.Entities, e)
	case "relation":
		for _, f := range []struct {
			name string
			v    *string
		}{{"from", l.From}, {"to", l.To}, {"relationType", l.RelationType}} {
			if f.v == nil || strings.TrimSpace(*f.v) == "" {
				return fmt.Errorf("relation without %s", f.name)
			}
		}
		g.Relations = append(g.Relations, Relation{From: *l.From, To: *l.To, RelationType: *l.RelationType, Line: n})
	default:
		return fmt.Errorf("type %q is not entity or relation", l.Type)
	}
	return nil
}
