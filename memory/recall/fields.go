package recall

// PageFields returns the byte length of a page's first field in the page
// index (lexical.AddFields), for a page of these sides whose text puts
// the user's words first: the user's words for an exchange a host stores,
// which the index then scores by BM25F, each side's counts normalised by
// that side's own length against its average, the two weighed alike and
// saturated once. Scored as one text, as BM25 scores it, the user's short
// message is divided by the long reply beside it: "My first marathon was
// yesterday" under a reply of 300 words came after "What should I eat
// before my first marathon next month?" under a short one. A slice of a
// dialogue between named people (DialogueSlice) has no first field and is
// scored by BM25: each side is one person's turn, neither of them the one
// a question asks about as a host's user is.
//
// On the LongMemEval development half, BM25F (round 4, session 13, then
// rescoring the 100 best pages) moved, with the host's keywords, turn
// recall_all@10 0.874 → 0.884 and nDCG@5 0.738 → 0.745; without them
// nDCG@5 0.688 → 0.691 and recall_all@10 0.823 → 0.828. Half weight for
// the assistant's words gained more with keywords and lost recall_any@5
// and @10 without them. The search now scores BM25F itself, with the same
// rankings: docs/retrieval.md.
func PageFields(user, reply string) int {
	if DialogueSlice(user, reply) {
		return 0
	}
	return len(user)
}
