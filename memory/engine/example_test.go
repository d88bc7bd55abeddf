package engine_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/mnemo-mcp/mnemo/memory"
	"github.com/mnemo-mcp/mnemo/memory/engine"
	"github.com/mnemo-mcp/mnemo/memory/files"
	"github.com/mnemo-mcp/mnemo/memory/tiktoken"
)

// A Service over the file store: store two exchanges, then ask about one
// of them. Without a language model the exchanges are stored and
// searchable; facts and the profile wait for one (WithLLM).
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "mnemo-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	store, err := files.Open(dir)
	if err != nil {
		panic(err)
	}
	defer store.Close()
	tokens, err := tiktoken.New("cl100k_base")
	if err != nil {
		panic(err)
	}
	svc, err := engine.NewService(memory.DefaultConfig(), store, tokens,
		engine.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		panic(err)
	}
	defer svc.Close(ctx)

	for _, ex := range [][2]string{
		{"I adopted a cat called Miso last spring", "Congratulations on Miso!"},
		{"My team ships the billing service on Fridays", "Noted: Friday releases."},
	} {
		if _, err := svc.Add(ctx, memory.AddRequest{UserInput: ex[0], AgentResponse: ex[1]}); err != nil {
			panic(err)
		}
	}
	res, err := svc.Retrieve(ctx, memory.RetrieveRequest{Query: "What is my cat's name?", MaxResults: 1})
	if err != nil {
		panic(err)
	}
	for _, p := range res.Pages {
		fmt.Println(p.User)
	}
	// Output: I adopted a cat called Miso last spring
}
