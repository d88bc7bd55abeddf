// Package engine is mnemo's memory Service: the per-scope state and its
// lock, the scope cache, the update queue, syncing with the store, the
// embedding lane, and the verbs (Add, Retrieve, Flush, Forget, List,
// Profile, SaveFact, Import, …) that tools and the command line call. It builds on
// the leaf packages: memory/update (what the language model's reply does
// to a Document), memory/tiers (the mid-term session index) and
// memory/recall (ranking and the injection text); none of them imports it.
//
// # Locks
//
// One rule, stated here rather than at each function:
//
//   - scopeState.mu guards everything in a scopeState (its recall.Pages,
//     document, mid-term index, pending counts). Verbs that change the
//     state take it through loadedState, which returns it synced and
//     locked for writing. Retrieve takes it through readState, locked
//     for reading, so that one scope's retrievals rank in parallel: what
//     ranking would fill in on the way (mid-term sessions caught up,
//     page links, pending counts) is filled in under the write lock
//     first, and only when missing or when the store holds something
//     new (prepareToRank). Background readers that copy data out (page
//     index snapshot, embedding batches) take the read lock too.
//     Functions that take a *scopeState or a *recall.Pages expect the
//     caller to hold it.
//   - What a retrieval still writes under the read lock has a lock of
//     its own, taken for a few lines: scopeState.tokenMu the token
//     cache, scopeState.visitMu the visit counts of the mid-term
//     sessions (visits and their heat; every other change to the
//     sessions is made under the write lock).
//   - An add writes its turns and applies them under the write lock, in
//     log order; with a store that commits in groups
//     (memory.GroupCommitter) it waits for their flush after releasing
//     it, so one user's concurrent adds share flushes, and it is
//     acknowledged only after its flush.
//   - Service.mu guards the scope map and the cache accounting, and is
//     held only for those few lines. It may be taken while holding a
//     scopeState.mu (liveState, evict), never the other way round: a
//     cache trim only TryLocks the states it evicts.
//   - scopeState.saveMu is held while one of the scope's caches (mid-term
//     sessions, page index, vectors) is written to the store; retired, set
//     under it, stops a dropped state from ever saving again.
//   - The per-scope update lock of the queue (queue.lockScopes, and the
//     store's ScopeLocker across processes) serialises changes to a
//     scope's Document by the updater, consolidation and forget; it is
//     taken before, never while holding, scopeState.mu.
//
// # Files
//
//	service.go, onchange.go     the Service, its options, Start and Close
//	scopestate.go, scopecache.go per-scope state, sync with the store, the cache
//	readstate.go                the state for parallel retrievals (read lock)
//	queue.go, updater.go        the update queue and the LLM update of a thread
//	add.go, host_facts.go       Add; facts handed in by the host
//	retrieve.go, rank_sessions.go, retrieve_tiers.go
//	                            Retrieve: ranking with sessions, facts, knowledge
//	profile.go, profile_edit.go Profile, UpdateProfile
//	facts_edit.go, history.go   SaveFact, UpdateFact, FactHistory
//	corrected.go                corrected facts: found by their old words, superseding exchanges
//	forget.go, list.go          Forget, ForgetScope, List
//	mentions.go, forget_topic.go what still mentions a forgotten thing; FindTopic, a topic forget
//	maintain.go, consolidate_llm.go, longterm.go
//	                            maintenance, consolidation, tier work
//	midterm*.go                 keeping the mid-term index in step with the pages
//	embed.go, embed_query.go    the embedding lane and query vectors
//	import.go, import_chat.go, import_facts.go
//	                            Import: the one write path of imports (chats,
//	                            facts, whole scopes)
//	import_check.go             CheckImport: the tools' rules on imported memory
//	pageindex.go, pending.go, usage.go, validate.go
package engine
