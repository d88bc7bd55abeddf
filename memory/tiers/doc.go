// Package tiers is the mid-term index of MemoryOS-style topic sessions. It
// holds no lock and no store; memory/engine keeps one index per scope
// under the scope's lock, places pages into it and saves it.
//
//	index.go           MidTerm: sessions, heat, LFU eviction, visits, the hottest
//	text.go            extractive keywords and summary, the similarity measures
//	analysis_parse.go  the model's session summary and analysis replies
package tiers
