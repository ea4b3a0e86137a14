package main

import (
	"runtime/debug"
	"testing"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
)

// TestApplyProcessSetsTheSoftMemoryLimit: the key sets the runtime's soft
// limit, 0 leaves it alone, and restore puts the previous one back.
func TestApplyProcessSetsTheSoftMemoryLimit(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	restore := applyProcess(config.Process{MemorySoftLimitMB: 300}, zerolog.Nop())
	if got := debug.SetMemoryLimit(-1); got != 300<<20 {
		t.Errorf("limit %d after memory_soft_limit_mb: 300, want %d", got, 300<<20)
	}
	restore()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d after restore, want %d", got, before)
	}
	applyProcess(config.Process{}, zerolog.Nop())()
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("limit %d with memory_soft_limit_mb: 0, want the runtime's %d", got, before)
	}
}
