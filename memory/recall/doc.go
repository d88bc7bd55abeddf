// Package recall ranks a scope's pages for a query and renders the
// injection text, over one Pages value (turns, page index, threads,
// sitting links, vectors): lexical ranking with feedback, refinement by
// time windows, coverage and named speaker, fusion with vector ranking,
// the relevance of facts, knowledge and profile sentences to the query
// (relevance.go: the share of the query's weight a text holds), and the
// token-budgeted, escaped <memory> block (inject.go: exchanges grouped
// by thread and day, dated facts) with its timeline. It
// holds no lock and no store; memory/engine calls it under the scope's
// lock.
package recall
