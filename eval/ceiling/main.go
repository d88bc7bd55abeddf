// Command ceiling measures how much of a LoCoMo-format set's evidence a
// ranking by words can reach at all: the share of evidence turns whose
// exchange holds a word the ranking searches for the question (its terms
// with their other forms, synonyms and category members, as
// recall.MatchTerms gives them), the speakers' names left out since they
// are in nearly every exchange. Evidence outside that share can come
// first only by its neighbours' words, its sitting or by chance, or
// through a bridge of meaning: vectors, or the keywords a host's model
// passes. Exchanges are paired as ../shared/eval/locomo_recall.py pairs
// them.
//
//	go run ./eval/ceiling --data ../shared/eval/data/locomo
//	go run ./eval/ceiling --data DIR --details run.details.jsonl  # also: how much of the ceiling a run reached
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
	"github.com/mnemo-mcp/mnemo/memory/recall"
)

type turn struct {
	Speaker string `json:"speaker"`
	DiaID   string `json:"dia_id"`
	Text    string `json:"text"`
}

type question struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

var categories = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}

// tally sums per-question shares.
type tally struct{ n, own, prev, reached, reachedOwn float64 }

func main() {
	data := flag.String("data", "", "folder of LoCoMo-format conversations (*.json)")
	details := flag.String("details", "", "a locomo_recall.py --details file: also report how much of the ceiling its R@10 reached")
	flag.Parse()
	if *data == "" {
		fmt.Fprintln(os.Stderr, "ceiling: give --data DIR")
		os.Exit(2)
	}
	top, err := readDetails(*details)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
	files, _ := filepath.Glob(filepath.Join(*data, "*.json"))
	sort.Strings(files)
	by := map[string]*tally{"overall": {}}
	for _, f := range files {
		if err := conversation(f, top, by); err != nil {
			fmt.Fprintf(os.Stderr, "ceiling: %s: %v\n", f, err)
			os.Exit(1)
		}
	}
	out := bufio.NewWriter(os.Stdout)
	report(out, by, top != nil)
	if err := out.Flush(); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}

// report writes the table to w: per category, the reachable shares and,
// with a run (withRun), its R@10 and the share of the reachable evidence
// it ranked first ten.
func report(w io.Writer, by map[string]*tally, withRun bool) {
	names := []string{"overall"}
	for _, c := range []int{1, 2, 3, 4} {
		if by[categories[c]] != nil {
			names = append(names, categories[c])
		}
	}
	fmt.Fprintf(w, "%-12s %5s %9s %14s", "category", "n", "own page", "own or before")
	if withRun {
		fmt.Fprintf(w, " %8s %14s", "run R@10", "of own ceiling")
	}
	fmt.Fprintln(w)
	for _, name := range names {
		t := by[name]
		fmt.Fprintf(w, "%-12s %5.0f %9.3f %14.3f", name, t.n, t.own/t.n, t.prev/t.n)
		if withRun {
			fmt.Fprintf(w, " %8.3f %14.3f", t.reached/t.n, t.reachedOwn/t.own)
		}
		fmt.Fprintln(w)
	}
}

// readDetails returns, per conversation and question, the dialogue ids of
// the run's first ten pages; nil without a file.
func readDetails(path string) (map[string][]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := make(map[string][]string)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var d struct {
			Conv      string               `json:"conv"`
			Question  string               `json:"question"`
			Retrieved map[string][]string  `json:"retrieved"`
			Top       [][2]json.RawMessage `json:"top"` // bm25_reference.py: [ids, score], best first
		}
		if err := json.Unmarshal(sc.Bytes(), &d); err != nil {
			return nil, fmt.Errorf("read %s: %w", path, err)
		}
		ids := d.Retrieved["10"]
		for i, page := range d.Top {
			var pids []string
			if i < 10 && json.Unmarshal(page[0], &pids) == nil {
				ids = append(ids, pids...)
			}
		}
		out[d.Conv+"\x00"+d.Question] = ids
	}
	return out, sc.Err()
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

func conversation(path string, top map[string][]string, by map[string]*tally) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var conv map[string]json.RawMessage
	if err := json.Unmarshal(raw, &conv); err != nil {
		return err
	}
	var sessions []int
	for k := range conv {
		if m := sessionKey.FindStringSubmatch(k); m != nil {
			n, _ := strconv.Atoi(m[1])
			sessions = append(sessions, n)
		}
	}
	sort.Ints(sessions)
	// Pages as the harness pairs turns: (0,1), (2,3), … within a session.
	idx := lexical.New(lexical.Options{})
	pageOf := make(map[string]int)
	prevOf := make(map[int]int)
	speakers := make(map[string]bool)
	np := 0
	for _, s := range sessions {
		var turns []turn
		if json.Unmarshal(conv["session_"+strconv.Itoa(s)], &turns) != nil {
			continue
		}
		for i := 0; i < len(turns); i += 2 {
			text := turns[i].Speaker + ": " + turns[i].Text
			pageOf[turns[i].DiaID] = np
			speakers[recall.SpeakerOf(turns[i].Speaker+":")] = true
			if i+1 < len(turns) {
				text += "\n" + turns[i+1].Speaker + ": " + turns[i+1].Text
				pageOf[turns[i+1].DiaID] = np
			}
			idx.Add(np, text)
			prevOf[np] = -1
			if i > 0 {
				prevOf[np] = np - 1
			}
			np++
		}
	}
	st := &recall.Pages{Index: idx}
	var qa []question
	if err := json.Unmarshal(conv["qa"], &qa); err != nil {
		return fmt.Errorf("qa: %w", err)
	}
	conv_ := strings.TrimSuffix(filepath.Base(path), ".json")
	for _, q := range qa {
		cat, ok := categories[q.Category]
		if !ok {
			continue
		}
		searched := make(map[string]bool)
		for _, t := range recall.MatchTerms(st, recall.QueryTerms(q.Question)) {
			if !speakers[t.Text] {
				searched[t.Text] = true
			}
		}
		holds := func(p int) bool {
			found := false
			if p >= 0 {
				idx.DocWords(p, func(term string) { found = found || searched[term] })
			}
			return found
		}
		var ev []string
		for _, e := range q.Evidence {
			for _, id := range strings.Split(e, ";") {
				if _, ok := pageOf[strings.TrimSpace(id)]; ok {
					ev = append(ev, strings.TrimSpace(id))
				}
			}
		}
		if len(ev) == 0 {
			continue
		}
		first := top[conv_+"\x00"+q.Question]
		var own, prev, reached, reachedOwn float64
		for _, e := range ev {
			p := pageOf[e]
			o := holds(p)
			if o {
				own++
			}
			if o || holds(prevOf[p]) {
				prev++
			}
			for _, id := range first {
				if id == e {
					reached++
					if o {
						reachedOwn++
					}
					break
				}
			}
		}
		m := float64(len(ev))
		for _, name := range []string{"overall", cat} {
			t := by[name]
			if t == nil {
				t = &tally{}
				by[name] = t
			}
			t.n++
			t.own += own / m
			t.prev += prev / m
			t.reached += reached / m
			t.reachedOwn += reachedOwn / m
		}
	}
	return nil
}
