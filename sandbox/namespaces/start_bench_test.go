package namespaces_test

import (
	"testing"

	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox/internal/sandboxtest"
	"github.com/silas-ai/silas/sandbox/namespaces"
)

// BenchmarkStart measures starting `true` in a fully isolated sandbox and
// waiting for it, as one tool call does; it reports the median and the 99th
// percentile in milliseconds.
func BenchmarkStart(b *testing.B) {
	if err := namespaces.Probe(b.Context()); err != nil {
		b.Skipf("the namespaces backend refuses to run on this host: %v", err)
	}
	bk, err := namespaces.New(namespaces.Options{Root: b.TempDir()})
	if err != nil {
		b.Fatal(err)
	}
	in, err := bk.Create(b.Context(), messages.DefaultSandboxConfig())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = in.Destroy(b.Context()) }()
	sandboxtest.BenchmarkStart(b, in)
}
