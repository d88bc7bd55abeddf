// Package tiers is the mid-term index of MemoryOS-style topic sessions:
// session heat, LFU eviction, visits, the extractive summary text and the
// parse of the language model's session analysis. It holds no lock and no
// store; memory/engine keeps one index per scope under the scope's lock.
package tiers
