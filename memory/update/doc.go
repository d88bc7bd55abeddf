// Package update holds the language model updater's rules: a Document
// goes in, a Document and a report come out. It has no Service, no store
// and no lock; memory/engine calls it while holding what it needs.
package update
