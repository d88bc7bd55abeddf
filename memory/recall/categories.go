package recall

import (
	_ "embed" // the WordNet category table
	"strings"
	"sync"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// categoryWeight is the weight, against the query term's, of a member
// word of a category the query names: "what outdoor activities…" also
// searches hiking, surfing, camping… Members are one-way: a query about
// surfing does not search "activity". Measured through the binary on
// LoCoMo dev and REALTALK (docs/retrieval.md), at 0.15, 0.25, 0.3,
// 0.4 and 0.6: every weight raised LoCoMo multi-hop R@10 (+0.008 to
// +0.014) and REALTALK turn R@10 and nDCG@5; at 0.4 and above REALTALK
// session all@10 fell (0.786 to 0.782), at 0.25 nothing fell on either set.
const categoryWeight = variantWeight / 2

// listCategoryWeight replaces categoryWeight for a question asking for
// several items (asksForList): the items of a list are the category's
// members, each said in its own page, often in a sitting of its own, where
// a member at a quarter of the category word's weight ranked below the
// pages that hold the question's other words. With the asked-about
// speaker's members in coverage (listCoverMembers) it was measured on
// LoCoMo dev and REALTALK (eval/README.md, fourth session): multi-hop R@10
// +0.012 and +0.006, R@10 +0.003 on both; alone +0.003 and +0.001; at 0.5
// less, at 1 REALTALK lost.
const listCategoryWeight = 0.75

// categories map a category noun, first in each line, to common words
// for its members, written by hand for this project (not derived from
// WordNet or another thesaurus).
var categories = []string{
	"activity hiking camping surfing swimming fishing running cycling biking skiing snowboarding kayaking climbing yoga dancing painting reading cooking baking gardening photography volunteering skating sailing hunting",
	"hobby painting drawing reading writing cooking baking gardening photography knitting sewing pottery dancing singing fishing hiking camping gaming chess puzzles collecting woodworking",
	"sport soccer football basketball baseball tennis golf hockey volleyball swimming running surfing skiing snowboarding cycling boxing wrestling rugby cricket climbing martial karate",
	"pet dog puppy cat kitten hamster rabbit bunny parrot bird fish turtle snake lizard guinea",
	"animal dog cat horse bird fish rabbit turtle snake lion tiger elephant bear deer wolf fox dolphin whale monkey owl",
	"food pizza pasta burger sushi tacos salad soup steak chicken rice noodles sandwich bread cake cookies pie curry cheese chocolate ice",
	"instrument guitar piano violin drums flute saxophone trumpet cello ukulele bass harp clarinet keyboard",
	"book novel series author fiction fantasy mystery memoir biography poetry",
	"music song album band concert singer jazz rock pop classical hiphop rap guitar piano",
	"game chess soccer basketball poker cards videogame boardgame puzzle monopoly xbox playstation nintendo",
	"place park beach museum city town mountains lake restaurant cafe library",
	"country france italy spain germany japan china canada mexico brazil india england australia greece",
	"city paris london rome tokyo berlin madrid york chicago boston seattle barcelona amsterdam",
	"job teacher nurse doctor engineer developer designer manager chef lawyer writer artist accountant",
	"family mom dad mother father sister brother son daughter wife husband kids children parents grandma grandpa",
	"vehicle car truck bike bicycle motorcycle van suv boat",
	"art painting drawing sculpture pottery photography sketch mural canvas",
	"movie film comedy horror thriller documentary",
	"show series tv netflix sitcom episode",
	"trip travel vacation journey visit",
	"event concert festival party wedding parade conference",
	"exercise running yoga gym workout swimming cycling hiking lifting",
}

// wordnetCategories are more categories, for nouns the hand-written table
// lacks (dessert, drink, genre, gift, …): one line per category, the noun
// first, then its members, derived from WordNet 3.0 by
// eval/wordnet/categories.py (the file keeps WordNet's notice). Measured
// through the binary on LoCoMo dev and REALTALK (README, retrieval
// section): REALTALK R@10 +0.003 and multi-hop +0.005, LoCoMo within
// ±0.001. WordNet's members for the hand table's categories lost on LoCoMo
// and are not generated.
//
//go:embed categories_wordnet.txt
var wordnetCategories string

// categoryLines returns the hand-written categories followed by the
// WordNet ones for category nouns the hand-written table lacks.
func categoryLines() []string {
	lines := append([]string(nil), categories...)
	have := make(map[string]bool, len(categories))
	for _, l := range categories {
		have[strings.Fields(l)[0]] = true
	}
	for _, l := range strings.Split(wordnetCategories, "\n") {
		if f := strings.Fields(l); len(f) > 1 && !strings.HasPrefix(l, "#") && !have[f[0]] {
			lines = append(lines, l)
		}
	}
	return lines
}

// categoryTable maps an analysed category term to its members' analysed
// terms; built on first use.
var categoryTable = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string)
	for _, line := range categoryLines() {
		terms := analysedWords(line)
		if len(terms) < 2 {
			continue
		}
		for _, t := range terms[1:] {
			if !contains(m[terms[0]], t) {
				m[terms[0]] = append(m[terms[0]], t)
			}
		}
	}
	return m
})

// analysedWords returns the single-term analyses of line's words, in
// order, once each.
func analysedWords(line string) []string {
	var out []string
	for _, w := range strings.Fields(line) {
		if toks := lexical.Tokenize(w); len(toks) == 1 && !contains(out, toks[0]) {
			out = append(out, toks[0])
		}
	}
	return out
}
