package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/mnemo-mcp/mnemo/memory"
)

// longReply is an assistant's reply of some 300 words about running in
// general.
var longReply = strings.Repeat("Recovery after a long race matters as much as the training before it. "+
	"Sleep well, drink water through the day, eat enough protein and carbohydrates, and take a few easy days "+
	"with gentle walks or a short swim before you run hard again. ", 8)

// TestRetrieveShortStatementBesideLongReply: a person says a fact in a
// short message and the assistant answers at length; another exchange
// holds the same words of the question in a longer message beside a
// short reply. Asked for the fact, the exchange where the person said it
// comes first: the user's words are not divided by the length of the
// reply beside them (BM25F over the two sides). Scored as one text, the
// other exchange comes first. (With two user messages of the same
// length, BM25F ties them, and the feedback terms of whichever comes
// first on the tie decide.)
func TestRetrieveShortStatementBesideLongReply(t *testing.T) {
	e := newEnv(t)
	var added memory.AddResult
	add := func(user, reply string) {
		t.Helper()
		args, _ := json.Marshal(map[string]string{"user_input": user, "agent_response": reply})
		e.mustOK(t, "add_memory", string(args), &added)
	}
	add("My first marathon was yesterday.", "Congratulations! "+longReply)
	add("What should I eat the evening before my first marathon next month?", "Pasta or rice, and plenty of water.")
	for _, ex := range [][2]string{
		{"Can you suggest a recipe for dinner with lentils?", "Try a lentil soup with cumin, carrots and lemon."},
		{"How do I renew my passport?", "Fill in the renewal form online and send your old passport with a photo."},
		{"My sister's birthday is next week, any gift ideas?", "A book by her favourite author, or a cooking class together."},
	} {
		add(ex[0], ex[1])
	}
	var res memory.RetrieveResult
	e.mustOK(t, "retrieve_memory", `{"query": "When was my first marathon?"}`, &res)
	if len(res.Pages) == 0 || !strings.Contains(res.Pages[0].User, "yesterday") {
		var first []string
		for _, p := range res.Pages {
			first = append(first, p.User)
		}
		t.Errorf("pages = %q, want the exchange where the user said when first", first)
	}
}
