// Command baseline serves the load bench's bare daemon (package
// bench/baseline): the WebSocket protocol subset the bench driver uses, one
// call to the mock model per turn, no persistence and no gates. The bench
// runs it next to silas and reports silas as a ratio of it:
//
//	baseline -addr 127.0.0.1:0 -model-url http://127.0.0.1:8421/v1
//
// The model's API key is read from the environment variable named by
// -api-key-env (BENCH_MODEL_KEY, as the bench sets it for silas). Once
// listening it prints "baseline: ready on http://<addr>"; it stops on
// SIGINT or SIGTERM.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/silas-ai/silas/bench/baseline"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "baseline:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("baseline", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8422", "listen address")
	modelURL := fs.String("model-url", "http://127.0.0.1:8421/v1", "the mock model's OpenAI-compatible base URL")
	keyEnv := fs.String("api-key-env", "BENCH_MODEL_KEY", "environment variable holding the model API key")
	ownerEnv := fs.String("owner-token-env", "BASELINE_OWNER_TOKEN", "environment variable holding the owner's /ws token (unset: /ws refuses everyone)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	key := os.Getenv(*keyEnv)
	if key == "" {
		return fmt.Errorf("no model API key: set %s (the mock accepts any non-empty key)", *keyEnv)
	}
	srv, err := baseline.New(baseline.Options{ModelURL: *modelURL, APIKey: key, OwnerToken: os.Getenv(*ownerEnv)})
	if err != nil {
		return err
	}
	if err := srv.Start(*addr); err != nil {
		return err
	}
	fmt.Printf("baseline: ready on http://%s\n", srv.Addr())

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	<-ctx.Done()
	return srv.Close()
}
