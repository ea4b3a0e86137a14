package subprocess_test

import (
	"testing"

	"github.com/silas-ai/silas/sandbox"
	"github.com/silas-ai/silas/sandbox/internal/sandboxtest"
	"github.com/silas-ai/silas/sandbox/subprocess"
)

// TestConformance runs the baseline only: the subprocess backend does not
// isolate the filesystem, PIDs or capabilities (see the package doc).
func TestConformance(t *testing.T) {
	sandboxtest.Run(t, func(t *testing.T, root string) sandbox.Manager {
		b, err := subprocess.New(subprocess.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}, sandboxtest.Capabilities{})
}
