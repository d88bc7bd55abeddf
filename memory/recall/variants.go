package recall

import (
	"strings"
	"sync"

	"github.com/mnemo-mcp/mnemo/memory/lexical"
)

// Lexical normalisation beyond the stemmer, on the query's side: a query
// term also searches the other forms of its word that the stemmer does
// not join (irregular verbs and plurals, British and American spelling),
// with variantWeight of its weight, and its synonyms in a small table of
// everyday words, with half that. The tables are written for this project
// (not derived from a thesaurus). Measured through the binary on LoCoMo
// dev and REALTALK (docs/retrieval.md): forms and synonyms each
// raised R@5 and nDCG@5 on both sets; synonyms at the forms' weight cost
// LoCoMo multi-hop 0.013, at half of it they gained on both. Joining and
// splitting compounds changed nothing measurable and was left out.
const variantWeight = 0.5

// wordForms are groups of forms of one word that the stemmer keeps apart.
var wordForms = []string{
	// irregular verbs
	"go went gone", "buy bought", "bring brought", "think thought", "teach taught", "catch caught",
	"fight fought", "seek sought", "eat ate eaten", "run ran", "swim swam swum", "sing sang sung",
	"begin began begun", "drink drank drunk", "ride rode ridden", "write wrote written", "drive drove driven",
	"take took taken", "give gave given", "see saw seen", "fall fell fallen", "fly flew flown",
	"grow grew grown", "know knew known", "throw threw thrown", "draw drew drawn", "wear wore worn",
	"tear tore torn", "break broke broken", "choose chose chosen", "speak spoke spoken", "steal stole stolen",
	"wake woke woken", "forget forgot forgotten", "win won", "make made", "find found",
	"meet met", "feel felt", "keep kept", "leave left", "lose lost", "sleep slept", "spend spent",
	"send sent", "build built", "lend lent", "hold held", "sell sold", "tell told", "hear heard",
	"pay paid", "lay laid", "say said", "stand stood", "understand understood", "sit sat",
	"hang hung", "dig dug", "stick stuck", "lead led", "feed fed", "bleed bled", "flee fled",
	"come came", "become became", "shoot shot", "light lit",
	"rise rose risen", "hide hid hidden", "bite bit bitten", "shake shook shaken", "beat beaten",
	"blow blew blown", "freeze froze frozen", "bear bore born", "learn learnt learned", "dream dreamt dreamed",
	"burn burnt burned", "spell spelt spelled", "spill spilt spilled",
	// irregular plurals
	"child children", "person people", "man men", "woman women", "mouse mice", "foot feet",
	"tooth teeth", "goose geese", "life lives", "wife wives", "knife knives", "leaf leaves",
	"wolf wolves", "half halves", "shelf shelves", "loaf loaves", "thief thieves", "calf calves",
	"cactus cacti", "fungus fungi", "analysis analyses", "crisis crises", "thesis theses",
	// British and American spelling
	"colour color", "favourite favorite", "favour favor", "honour honor", "humour humor",
	"neighbour neighbor", "behaviour behavior", "flavour flavor", "labour labor", "harbour harbor",
	"centre center", "theatre theater", "metre meter", "litre liter", "fibre fiber",
	"travelled traveled", "travelling traveling", "traveller traveler", "cancelled canceled",
	"jewellery jewelry", "organise organize", "organised organized", "realise realize", "realised realized",
	"recognise recognize", "apologise apologize", "practise practice", "licence license", "defence defense",
	"offence offense", "programme program", "catalogue catalog", "dialogue dialog", "grey gray",
	"mum mom", "pyjamas pajamas", "aeroplane airplane", "tyre tire", "cheque check", "paediatric pediatric",
	"mould mold", "plough plow", "yoghurt yogurt", "doughnut donut", "enrol enroll", "fulfil fulfill",
}

// synonyms are groups of everyday words that name the same thing in
// conversation.
var synonyms = []string{
	"movie film", "kid child", "mom mother", "dad father", "grandma grandmother", "grandpa grandfather",
	"car vehicle", "job work career", "house home", "buddy friend pal", "doctor physician",
	"exam test", "trip travel vacation holiday journey", "sneakers trainers", "apartment flat",
	"cellphone phone mobile", "fall autumn", "soccer football", "candy sweets", "cookie biscuit",
	"store shop", "sick ill", "scared afraid", "happy glad", "big large", "small little",
	"begin start", "finish end", "gift present", "hobby pastime", "picture photo", "pet dog cat",
	"sport sports", "book novel", "song music", "paint painting art", "boyfriend partner", "girlfriend partner",
	"wedding marriage married", "baby newborn", "puppy dog", "kitten cat", "workout exercise gym",
	"run jog", "hike hiking trail", "concert gig show", "restaurant diner cafe", "meal dinner lunch breakfast",
}

// formTable and synonymTable map an analysed term to the analysed terms
// of its other forms (wordForms) and of its synonyms (synonyms); built on
// first use, not at start-up.
var (
	formTable    = sync.OnceValue(func() map[string][]string { return buildVariants(wordForms) })
	synonymTable = sync.OnceValue(func() map[string][]string { return buildVariants(synonyms) })
)

func buildVariants(groups []string) map[string][]string {
	m := make(map[string][]string)
	for _, g := range groups {
		var terms []string
		for _, w := range strings.Fields(g) {
			if toks := lexical.Tokenize(w); len(toks) == 1 {
				terms = append(terms, toks[0])
			}
		}
		for _, a := range terms {
			for _, b := range terms {
				if a != b && !contains(m[a], b) {
					m[a] = append(m[a], b)
				}
			}
		}
	}
	return m
}

// withVariants returns terms followed by the other forms of each
// (wordForms, weight variantWeight times the term's), its synonyms
// (synonyms, half that) and, for a category noun, its members
// (categories, categoryWeight times the term's) that the index holds and
// terms do not.
func withVariants(st *Pages, terms []lexical.Term) []lexical.Term {
	return withVariantsAt(st, terms, categoryWeight)
}

// withVariantsAt is withVariants with the members of a category at
// memberWeight times the category term's weight.
func withVariantsAt(st *Pages, terms []lexical.Term, memberWeight float64) []lexical.Term {
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		seen[t.Text] = true
	}
	out := terms
	add := func(text string, w float64) {
		if !seen[text] && st.Index.IDF(text) > 0 {
			seen[text] = true
			out = append(out, lexical.Term{Text: text, Weight: w})
		}
	}
	for _, t := range terms {
		for _, v := range formTable()[t.Text] {
			add(v, variantWeight*t.Weight)
		}
		for _, v := range synonymTable()[t.Text] {
			add(v, variantWeight/2*t.Weight)
		}
	}
	for _, t := range terms {
		for _, v := range categoryTable()[t.Text] {
			add(v, memberWeight*t.Weight)
		}
	}
	return out
}
