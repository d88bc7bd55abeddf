package lexical

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/internal/chatwords"
)

// benchVocab is a word list ranked by frequency: English function words,
// then everyday conversational content words, then synthetic rare words
// (names, jargon, typos) for a long tail.
var benchVocab = func() []string {
	head := strings.Fields(`
		the i to and a you of it is that in my for this was me on have with be
		but so not what can do are just like we at if your about an or all as
		they from there would one will get know think really he she how when
		good time want yeah make need work going people now use day go also`)
	content := strings.Fields(`
		project team meeting code user data coffee week today morning help
		problem question idea plan email call thanks book music movie trip
		travel weekend family friend home office computer phone server
		database python golang api bug test deploy release feature design
		review deadline budget client customer report issue manager school
		class exam study paper research health doctor sleep exercise running
		gym food dinner lunch breakfast recipe restaurant kitchen garden dog
		cat weather rain summer winter birthday party gift money bank rent
		apartment city car train flight hotel vacation beach mountain hiking
		camera photo video game language french spanish japanese chinese
		english guitar piano song concert museum art painting novel story
		history science math physics chemistry biology interview job salary
		career startup company product market strategy launch sprint ticket
		backlog frontend backend mobile app website browser cloud container
		kubernetes docker linux windows laptop keyboard monitor network
		wifi password account login security privacy error crash memory cpu
		performance latency cache index query search ranking model training
		dataset evaluation benchmark prompt token embedding vector storage
		backup migration schema table column row user's preference favorite
		allergy medicine appointment dentist insurance tax invoice contract
		lawyer meeting notes summary agenda decision decide action follow
		tomorrow yesterday monday tuesday wednesday thursday friday saturday
		sunday january february march april may june july august september
		october november december paris london tokyo berlin lyon kyoto
		seattle boston chicago toronto sydney remember forgot prefer likes
		dislike love hate enjoy tried started finished planning moving
		learning reading writing cooking cleaning shopping driving walking`)
	syll := strings.Fields("ka lo mi ne su ta ri po ve zu an el or ix um")
	rng := rand.New(rand.NewPCG(3, 5))
	tail := make([]string, 20000)
	for i := range tail {
		var b strings.Builder
		for range 2 + rng.IntN(3) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		tail[i] = b.String()
	}
	return append(append(head, content...), tail...)
}()

// benchCorpus returns n documents of 40–80 words drawn from benchVocab with
// a Zipf distribution, in sentences, deterministically.
func benchCorpus(n int) []string {
	rng := rand.New(rand.NewPCG(1, 2))
	zipf := rand.NewZipf(rng, 1.07, 2, uint64(len(benchVocab)-1))
	docs := make([]string, n)
	var b strings.Builder
	for i := range docs {
		b.Reset()
		words := 40 + rng.IntN(41)
		for w := range words {
			word := benchVocab[zipf.Uint64()]
			if w%12 == 0 {
				word = strings.ToUpper(word[:1]) + word[1:]
			}
			b.WriteString(word)
			if w%12 == 11 || w == words-1 {
				b.WriteString(". ")
			} else {
				b.WriteByte(' ')
			}
		}
		docs[i] = b.String()
	}
	return docs
}

// benchQuery is a natural question as a user would ask it.
const benchQuery = "What did we decide about the database migration deadline?"

func BenchmarkAdd(b *testing.B) {
	docs := benchCorpus(10000)
	ix := New(Options{})
	i := 0
	for b.Loop() {
		ix.Add(i, docs[i%len(docs)])
		i++
	}
}

func BenchmarkSearch(b *testing.B) {
	for _, n := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("docs=%d", n), func(b *testing.B) {
			docs := benchCorpus(n)
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			ix := New(Options{})
			for i, d := range docs {
				ix.Add(i, d)
			}
			runtime.GC()
			runtime.ReadMemStats(&after)
			hits := len(ix.Search(benchQuery, 10, nil))
			for b.Loop() {
				ix.Search(benchQuery, 10, nil)
			}
			b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/(1<<20), "index-MiB")
			b.ReportMetric(float64(hits), "hits")
			runtime.KeepAlive(docs)
		})
	}
}

func BenchmarkSearchKeep(b *testing.B) {
	ix := New(Options{})
	for i, d := range benchCorpus(100000) {
		ix.Add(i, d)
	}
	keep := func(id int) bool { return id%3 != 0 }
	for b.Loop() {
		ix.Search(benchQuery, 10, keep)
	}
}

func BenchmarkSimilarity(b *testing.B) {
	ix := New(Options{})
	docs := benchCorpus(1000)
	for i, d := range docs {
		ix.Add(i, d)
	}
	for b.Loop() {
		ix.Similarity(benchQuery, docs[7])
	}
}

func BenchmarkTokenize(b *testing.B) {
	doc := benchCorpus(1)[0]
	b.SetBytes(int64(len(doc)))
	for b.Loop() {
		Tokenize(doc)
	}
}

// BenchmarkAddBatch indexes 10,000 documents in one AddBatch, against
// BenchmarkAddSequential's 10,000 calls to Add.
func BenchmarkAddBatch(b *testing.B) {
	docs := benchCorpus(10000)
	ids := make([]int, len(docs))
	for i := range ids {
		ids[i] = i
	}
	for b.Loop() {
		New(Options{}).AddBatch(ids, docs)
	}
}

// BenchmarkAddSequential is BenchmarkAddBatch's baseline.
func BenchmarkAddSequential(b *testing.B) {
	docs := benchCorpus(10000)
	for b.Loop() {
		ix := New(Options{})
		for i, d := range docs {
			ix.Add(i, d)
		}
	}
}

// BenchmarkDocTerms reads one document's term counts back from an index of
// 10,000, against BenchmarkTokenizeCount's tokenizing and counting.
func BenchmarkDocTerms(b *testing.B) {
	docs := benchCorpus(10000)
	ix := New(Options{})
	for i, d := range docs {
		ix.Add(i, d)
	}
	i := 0
	for b.Loop() {
		tf := make(map[string]int)
		ix.DocTerms(i%len(docs), func(term string, n int) { tf[term] = n })
		i++
	}
}

// BenchmarkTokenizeCount is BenchmarkDocTerms' baseline.
func BenchmarkTokenizeCount(b *testing.B) {
	docs := benchCorpus(10000)
	i := 0
	for b.Loop() {
		tf := make(map[string]int)
		for _, tok := range Tokenize(docs[i%len(docs)]) {
			tf[tok]++
		}
		i++
	}
}

// benchSnapshot returns the snapshot of an index of 100,000 generated
// exchanges, having set b's bytes per op to its size.
func benchSnapshot(b *testing.B) *bytes.Buffer {
	ix := New(Options{})
	corpus := benchCorpus(100_000)
	ids := make([]int, len(corpus))
	for i := range ids {
		ids[i] = i
	}
	ix.AddBatch(ids, corpus)
	var buf bytes.Buffer
	if _, err := ix.WriteTo(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	return &buf
}

// BenchmarkSnapshotRead reads back a snapshot of an index of 100,000
// generated exchanges.
func BenchmarkSnapshotRead(b *testing.B) {
	buf := benchSnapshot(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := Read(bytes.NewReader(buf.Bytes()), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearchTermsFeedback measures the page search of a retrieval
// (recall's lexicalPages) in 100,000 documents: the 100 best for a
// question's terms, then for them times 0.7 and ten feedback terms, the
// first hits' most telling ones, sharing 0.3 of the question's weight.
// corpus=zipf draws from benchVocab's long tail, corpus=chat from
// chatwords as mnemo bench's exchanges do; the loop cycles through 64
// questions.
func BenchmarkSearchTermsFeedback(b *testing.B) {
	for _, corpus := range []string{"zipf", "chat"} {
		b.Run("corpus="+corpus+"/docs=100000", func(b *testing.B) {
			ix, queries := feedbackBench(corpus, 100_000)
			i := 0
			for b.Loop() {
				q := queries[i%len(queries)]
				i++
				ix.SearchTermsFeedback(q, 100, benchExpand(ix, q))
			}
		})
	}
}

// feedbackBench returns an index of n documents of corpus (see
// BenchmarkSearchTermsFeedback) and 64 questions' terms.
func feedbackBench(corpus string, n int) (*Index, [][]Term) {
	rng := rand.New(rand.NewPCG(5, 8))
	var docs []string
	if corpus == "zipf" {
		docs = benchCorpus(n)
	} else {
		for range n {
			docs = append(docs, chatwords.Text(rng, 45+rng.IntN(20))+"\n"+chatwords.Text(rng, 25+rng.IntN(30)))
		}
	}
	ids := make([]int, len(docs))
	for i := range ids {
		ids[i] = i
	}
	ix := New(Options{})
	ix.AddBatch(ids, docs)
	queries := make([][]Term, 64)
	for i := range queries {
		var words []string
		if corpus == "zipf" {
			for range 4 + i%5 {
				words = append(words, benchVocab[rng.IntN(len(benchVocab)/50)])
			}
		} else {
			words = strings.Fields(chatwords.Text(rng, 4+i%5))
		}
		for _, t := range Tokenize(strings.Join(words, " ")) {
			queries[i] = append(queries[i], Term{t, 1})
		}
	}
	return ix, queries
}

// benchExpand returns an expand for SearchTermsFeedback that names as
// feedback does the ten terms of the first five hits with the most
// counts times IDF, sharing 0.3 of the weight of query q.
func benchExpand(ix *Index, q []Term) func(first []Hit) (float64, []Term) {
	return func(first []Hit) (float64, []Term) {
		w := make(map[string]float64)
		for _, h := range first[:min(5, len(first))] {
			ix.DocTerms(h.ID, func(t string, tf int) { w[t] += float64(tf) * ix.IDF(t) })
		}
		var extra []Term
		for t, x := range w {
			extra = append(extra, Term{t, x})
		}
		slices.SortFunc(extra, func(a, b Term) int { return cmp.Or(cmp.Compare(b.Weight, a.Weight), cmp.Compare(a.Text, b.Text)) })
		extra = extra[:min(10, len(extra))]
		sum := 0.0
		for _, t := range extra {
			sum += t.Weight
		}
		for i := range extra {
			extra[i].Weight *= 0.3 * float64(len(q)) / sum
		}
		return 0.7, extra
	}
}

// BenchmarkSnapshotReadSized reads the snapshot of BenchmarkSnapshotRead
// with ReadSized, a window at a time, as a restart reads a file.
func BenchmarkSnapshotReadSized(b *testing.B) {
	buf := benchSnapshot(b)
	b.ResetTimer()
	for b.Loop() {
		if _, err := ReadSized(bytes.NewReader(buf.Bytes()), int64(buf.Len()), Options{}); err != nil {
			b.Fatal(err)
		}
	}
}
