package engine

import (
	"context"
	"fmt"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory"
)

// factKey is how imported facts are compared for repeats.
func factKey(content string) string {
	return strings.ToLower(strings.Join(strings.Fields(content), " "))
}

// importFacts checks req's facts one by one against the rules of the
// tools, leaves out those the scope knows (or the import repeats), and
// adds the rest to the document with a created event each.
func (s *Service) importFacts(ctx context.Context, req memory.ImportRequest, res *memory.ImportResult) error {
	doc, err := s.store.LoadDocument(ctx, req.Scope)
	if err != nil {
		return err
	}
	now := s.now().UTC()
	known := map[string]bool{}
	for _, f := range doc.Facts {
		known[factKey(f.Content)] = true
	}
	var planned []memory.Fact
	var reasons []string
	for i, in := range req.Facts {
		content := strings.TrimSpace(in.Content)
		k := factKey(content)
		if content != "" && known[k] {
			res.Already++
			continue
		}
		known[k] = true
		one := memory.NewDocument()
		one.Facts = []memory.Fact{{ID: "fact_00000000", Content: content, Category: in.Category, Confidence: in.Confidence,
			CreatedAt: now, Source: in.Source}}
		red, err := CheckImport(s.cfg, req.Scope, one, nil)
		if err != nil {
			why := fmt.Sprintf("fact %d", i+1)
			if in.Reason != "" {
				why = in.Reason
			}
			refuse(res, fmt.Sprintf("%s: %v", why, err))
			continue
		}
		res.Redacted = append(res.Redacted, red...)
		planned = append(planned, one.Facts[0])
		reasons = append(reasons, in.Reason)
	}
	if n := len(doc.Facts) + len(planned); n > s.cfg.MaxFacts {
		return memory.Invalid("", "would hold %d facts (%d now and %d from the import); max_facts is %d: raise max_facts, or forget facts first (mnemo forget)",
			n, len(doc.Facts), len(planned), s.cfg.MaxFacts)
	}
	if req.DryRun || len(planned) == 0 {
		res.Facts = planned
		return nil
	}
	ctx = context.WithoutCancel(ctx)
	defer s.invalidate(req.Scope)
	_, err = s.store.UpdateDocument(ctx, req.Scope, func(d *memory.Document) error {
		res.Facts = res.Facts[:0]
		known := map[string]bool{}
		ids := map[string]bool{}
		for _, f := range d.Facts {
			known[factKey(f.Content)] = true
			ids[f.ID] = true
		}
		for i, f := range planned {
			if known[factKey(f.Content)] {
				continue // learnt meanwhile
			}
			f.ID = s.uniqueFactID(ids)
			ids[f.ID] = true
			d.Facts = append(d.Facts, f)
			d.AddFactEvent(memory.FactEvent{FactID: f.ID, Event: memory.FactCreated, At: now, Source: f.Source,
				Reason: reasons[i], Content: f.Content, Actor: memory.ActorImport})
			res.Facts = append(res.Facts, f)
		}
		if len(d.Facts) > s.cfg.MaxFacts {
			return memory.Invalid("", "would hold %d facts; max_facts is %d: raise max_facts, or forget facts first (mnemo forget)", len(d.Facts), s.cfg.MaxFacts)
		}
		return nil
	})
	if err != nil {
		res.Facts = nil
		return err
	}
	return nil
}

// uniqueFactID draws fact ids until one is not in taken.
func (s *Service) uniqueFactID(taken map[string]bool) string {
	for {
		if id := s.newFactID(); !taken[id] {
			return id
		}
	}
}
