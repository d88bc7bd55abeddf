// Package update holds the language model updater's rules: a Document
// goes in, a Document and a report come out. It has no Service, no store
// and no lock; memory/engine calls it while holding what it needs.
//
//	reply.go            finding the JSON object in a model reply (untrusted input)
//	parse.go            ParseUpdate: the reply as an Update
//	apply.go            ApplyUpdate: an Update applied to a Document
//	knowledge.go        user and assistant knowledge lists and their eviction
//	scrub.go            dropping upload chatter from model text
//	consolidate.go      Consolidate: rule-based merging of near-duplicate facts
//	consolidate_llm.go  clusters for, and the parse and apply of, the model's merges
//	maintain.go         Maintain: decay, retirement and history bounds
//	prompts.go          the document and conversation as prompt text
package update
