package lexical

import (
	"bytes"
	"math"
	"runtime"
	"slices"
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

// refFieldScores is BM25F on terms computed from the texts alone.
func refFieldScores(texts []string, heads []int, terms []Term, id int, weight [2]float64) (whole, split float64) {
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
	score := func(term string) (w, s float64) {
		df := 0.0
		for _, o := range docs {
			if count(o.first, term)+count(o.second, term) > 0 {
				df++
			}
		}
		c0, c1 := count(d.first, term), count(d.second, term)
		if c0+c1 == 0 {
			return 0, 0
		}
		i := math.Log1p((n-df+0.5)/(df+0.5)) * (k1 + 1)
		tw := c0 + c1
		tf := weight[0]*c0/(1-b+b*f0*n/sum[0]) + weight[1]*c1/(1-b+b*f1*n/sum[1])
		return i * tw / (tw + k1*(1-b+b*(f0+f1)*n/(sum[0]+sum[1]))), i * tf / (tf + k1)
	}
	for _, t := range terms {
		w, s := score(t.Text)
		if p, ok := appendPrefix(nil, t.Text); ok {
			pw, ps := score(string(p))
			w, s = max(w, prefixWeight*pw), max(s, prefixWeight*ps)
		}
		whole += t.Weight * w
		split += t.Weight * s
	}
	return whole, split
}

func TestFieldScorer(t *testing.T) {
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
	var snap bytes.Buffer
	if _, err := batch.WriteTo(&snap); err != nil {
		t.Fatal(err)
	}
	read, err := Decode(snap.Bytes(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sameIndex(t, batch, read)

	queries := [][]Term{
		{{Text: Tokenize("deploy")[0], Weight: 1}, {Text: Tokenize("server")[0], Weight: 1}},
		{{Text: Tokenize("release")[0], Weight: 2}, {Text: Tokenize("database")[0], Weight: 0.5}, {Text: "nosuchterm", Weight: 1}},
		{{Text: Tokenize("people")[0], Weight: 1}, {Text: Tokenize("people")[0], Weight: 1}, {Text: Tokenize("kubernetes")[0], Weight: 1}},
	}
	for qi, q := range queries {
		for _, weight := range [][2]float64{{1, 1}, {1, 0.5}} {
			fs := read.NewFieldScorer(q, weight)
			hits := read.SearchTerms(q, len(texts), nil)
			if len(hits) == 0 {
				t.Fatalf("query %d matches nothing", qi)
			}
			splits := 0
			for _, h := range hits {
				whole, split := fs.Scores(h.ID)
				rw, rs := refFieldScores(texts, heads, q, h.ID, weight)
				if math.Abs(whole-h.Score) > 1e-9 || math.Abs(whole-rw) > 1e-9 {
					t.Fatalf("query %d doc %d: whole %v, search %v, reference %v", qi, h.ID, whole, h.Score, rw)
				}
				if math.Abs(split-rs) > 1e-9 {
					t.Fatalf("query %d doc %d weight %v: split %v, reference %v", qi, h.ID, weight, split, rs)
				}
				if math.Abs(split-whole) > 1e-6 {
					splits++
				}
			}
			if splits == 0 {
				t.Errorf("query %d: BM25F equals BM25 on every document", qi)
			}
			// All at once, with ids not in the index and unsorted.
			ids := []int{len(texts) + 5}
			for _, h := range hits {
				ids = append(ids, h.ID)
			}
			slices.Reverse(ids)
			got := 0
			fs.ScoresOf(ids, func(id int, whole, split float64) {
				if id >= len(texts) {
					if whole != 0 || split != 0 {
						t.Errorf("document %d not in the index scores %v, %v", id, whole, split)
					}
					return
				}
				got++
				if w, s := fs.Scores(id); w != whole || s != split {
					t.Errorf("query %d doc %d: ScoresOf %v, %v; Scores %v, %v", qi, id, whole, split, w, s)
				}
			})
			if got != len(hits) {
				t.Errorf("ScoresOf scored %d of %d documents", got, len(hits))
			}
		}
	}
}

// TestFieldScorerRemoved: a removed document scores nothing, and the
// first fields' total follows removals.
func TestFieldScorerRemoved(t *testing.T) {
	texts, heads := fieldDocs(40)
	ix := New(Options{})
	ids := make([]int, len(texts))
	for i := range ids {
		ids[i] = i
	}
	ix.AddFields(ids, texts, heads)
	for _, id := range []int{1, 2, 3, 17} {
		ix.Remove(id)
	}
	checkInvariants(t, ix)
	q := []Term{{Text: Tokenize("deploy")[0], Weight: 1}}
	fs := ix.NewFieldScorer(q, [2]float64{1, 1})
	if w, s := fs.Scores(2); w != 0 || s != 0 {
		t.Errorf("removed document scores %v, %v", w, s)
	}
	hits := ix.SearchTerms(q, len(texts), nil)
	if len(hits) == 0 {
		t.Fatal("no document holds the term")
	}
	for _, h := range hits {
		if w, _ := fs.Scores(h.ID); math.Abs(w-h.Score) > 1e-9 {
			t.Errorf("document %d scores %v, search %v", h.ID, w, h.Score)
		}
	}
}
