// Package recall ranks a scope's pages for a query and renders the
// injection text, over one Pages value (turns, page index, threads,
// sitting links, vectors). It holds no store and no lock of the scope's:
// memory/engine ranks under the scope's read lock, several retrievals at
// once, after Pages.Link under its write lock; ranking then only reads
// Pages.
//
//	pages.go     Pages, what ranking reads
//	rank.go      RankPages: lexical ranking, keywords, sitting neighbours, feedback terms
//	fields.go    which pages the index scores by BM25F over their two sides
//	keywords.go  which of the host's keywords a page or a fact holds
//	standing.go  standing facts: what enters every retrieval
//	variants.go  other forms and synonyms of the query's words
//	categories.go  members of a category the query names (activities → surfing)
//	refine.go    Refine: time windows, query coverage, named speaker, list spread
//	match.go     which query terms each of a set of pages holds, from the postings
//	lists.go     questions asking for several items, spread over sittings
//	speaker.go   weighing the pages of a speaker the query names
//	when.go      the time windows a query speaks of ("last May", "2 weeks ago")
//	vectors.go   page vectors, nearest pages, fusion with the lexical ranking
//	notes.go     per-page notes for the injection, relevant knowledge
//	relevance.go the share of the query's weight a fact, knowledge entry or
//	             profile sentence holds: what lets it into the injection
//	inject.go    BuildInjection: the token-budgeted <memory> block, exchanges
//	             grouped by thread and day, facts dated
//	excerpt.go   the sentences of a long reply quoted: those holding the query's words
//	sides.go     which sides of a page after the best one are quoted: the
//	             speaker the query names, else the sides holding its words
//	phatic.go    the small talk cut from a quoted side
//	escape.go    neutralising tags and quoting remembered text
//	timeline.go  facts that were true before, for "used to" questions
//	corrected.go corrected facts: their mark, the exchanges they supersede
package recall
