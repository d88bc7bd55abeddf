package lexical

import (
	"bytes"
	"math"
	"runtime"
	"testing"
)

// fieldDocs are documents of two fields from the bench corpus: each
// document's first third (at a space) its first field, some with no first
// or no second field.
func fieldDocs(n int) (texts []string, heads []int) {
	for i, text := range benchCorpus(n) {
		head := len(text) / 3
		for head < len(text) && text[head] != ' ' {
			head++
		}
		switch i % 7 {
		case 3:
			head = 0 // the second field alone
		case 5:
			head = len(text) // the first field alone
		default:
			text = text[:head] + "\n" + text[min(head+1, len(text)):]
		}
		texts, heads = append(texts, text), append(heads, head)
	}
	return texts, heads
}

// refFieldScore is a document's score computed from the texts alone:
// BM25F for a document of two fields (a first field, heads[i] > 0), BM25
// for one of one.
func refFieldScore(texts []string, heads []int, terms []Term, id int) float64 {
	const k1, b = 1.2, 0.75
	type fields struct{ first, second []string }
	docs := make([]fields, len(texts))
	var sum [2]float64
	for i, text := range texts {
		docs[i] = fields{indexTerms(text[:heads[i]]), indexTerms(text[heads[i]:])}
		sum[0] += float64(len(docs[i].first))
		sum[1] += float64(len(docs[i].second))
	}
	n := float64(len(texts))
	count := func(ts []string, term string) float64 {
		c := 0.0
		for _, t := range ts {
			if t == term {
				c++
			}
		}
		return c
	}
	d := docs[id]
	f0, f1 := float64(len(d.first)), float64(len(d.second))
	score := func(term string) float64 {
		df := 0.0
		for _, o := range docs {
			if count(o.first, term)+count(o.second, term) > 0 {
				df++
			}
		}
		c0, c1 := count(d.first, term), count(d.second, term)
		if c0+c1 == 0 {
			return 0
		}
		i := math.Log1p((n-df+0.5)/(df+0.5)) * (k1 + 1)
		if heads[id] == 0 {
			return i * c1 / (c1 + k1*(1-b+b*f1*n/(sum[0]+sum[1])))
		}
		tf := c0 / (1 - b + b*f0*n/sum[0])
		if c1 > 0 {
			tf += c1 / (1 - b + b*f1*n/sum[1])
		}
		return i * tf / (tf + k1)
	}
	total := 0.0
	for _, t := range terms {
		s := score(t.Text)
		if p, ok := appendPrefix(nil, t.Text); ok {
			s = max(s, prefixWeight*score(string(p)))
		}
		total += t.Weight * s
	}
	return total
}

// TestFieldScores: the search scores a document of two fields by BM25F
// and one of one field by BM25, as computed from the texts alone, whether
// indexed in a batch, one by one, or read from a snapshot.
func TestFieldScores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(3))
	texts, heads := fieldDocs(300)
	ids := make([]int, len(texts))
	for i := range ids {
		ids[i] = i
	}
	batch := New(Options{})
	batch.addBatch(ids, texts, heads, 64) // in parallel
	one := New(Options{})
	for i, text := range texts {
		one.add(i, text, heads[i])
	}
	sameIndex(t, batch, one)
	checkInvariants(t, batch)
	var snap bytes.Buffer
	if _, err := batch.WriteTo(&snap); err != nil {
		t.Fatal(err)
	}
	read, err := Decode(snap.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameIndex(t, batch, read)
	checkInvariants(t, read)

	queries := [][]Term{
		{{Text: Tokenize("deploy")[0], Weight: 1}, {Text: Tokenize("server")[0], Weight: 1}},
		{{Text: Tokenize("release")[0], Weight: 2}, {Text: Tokenize("database")[0], Weight: 0.5}, {Text: "nosuchterm", Weight: 1}},
		{{Text: Tokenize("people")[0], Weight: 1}, {Text: Tokenize("people")[0], Weight: 1}, {Text: Tokenize("kubernetes")[0], Weight: 1}},
	}
	for qi, q := range queries {
		for _, ix := range []*Index{batch, one, read} {
			hits := ix.SearchTerms(q, len(texts), nil)
			if len(hits) == 0 {
				t.Fatalf("query %d matches nothing", qi)
			}
			kinds := map[string]bool{}
			for _, h := range hits {
				if ref := refFieldScore(texts, heads, q, h.ID); math.Abs(h.Score-ref) > 1e-9 {
					t.Fatalf("query %d doc %d (first field %d of %d bytes): search %v, reference %v", qi, h.ID, heads[h.ID], len(texts[h.ID]), h.Score, ref)
				}
				switch heads[h.ID] {
				case 0:
					kinds["second alone"] = true
				case len(texts[h.ID]):
					kinds["first alone"] = true
				default:
					kinds["both"] = true
				}
			}
			if len(kinds) != 3 {
				t.Errorf("query %d: the hits are of kinds %v, want all three", qi, kinds)
			}
		}
	}
}

// TestFieldScoresRemoved: a removed document scores nothing, and the
// first fields' total follows removals.
func TestFieldScoresRemoved(t *testing.T) {
	texts, heads := fieldDocs(40)
	ix := New(Options{})
	ids := make([]int, len(texts))
	for i := range ids {
		ids[i] = i
	}
	ix.AddFields(ids, texts, heads)
	removed := map[int]bool{1: true, 2: true, 3: true, 17: true}
	for id := range removed {
		ix.Remove(id)
	}
	checkInvariants(t, ix)
	var keptTexts []string
	var keptHeads []int
	for i := range texts {
		if !removed[i] {
			keptTexts, keptHeads = append(keptTexts, texts[i]), append(keptHeads, heads[i])
		}
	}
	fresh := New(Options{})
	for i := range keptTexts {
		fresh.add(i, keptTexts[i], keptHeads[i])
	}
	q := []Term{{Text: Tokenize("deploy")[0], Weight: 1}, {Text: Tokenize("server")[0], Weight: 1}}
	hits := ix.SearchTerms(q, len(texts), nil)
	if len(hits) == 0 {
		t.Fatal("no document holds the terms")
	}
	// The same documents indexed afresh, renumbered, score the same.
	want := map[float64]int{}
	for _, h := range fresh.SearchTerms(q, len(texts), nil) {
		want[math.Round(h.Score*1e9)]++
	}
	for _, h := range hits {
		if removed[h.ID] {
			t.Errorf("removed document %d found", h.ID)
		}
		want[math.Round(h.Score*1e9)]--
	}
	for sc, n := range want {
		if n != 0 {
			t.Errorf("score %v: %d more in the fresh index than after removals", sc/1e9, n)
		}
	}
}
