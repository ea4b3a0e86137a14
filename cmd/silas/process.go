package main

import (
	"runtime/debug"

	"github.com/rs/zerolog"

	"github.com/silas-ai/silas/config"
)

// applyProcess applies silas.process to this process and returns what
// undoes it. It belongs to serve, not to startDaemon: the memory limit is
// the whole process's, and tests run several daemons in one.
func applyProcess(p config.Process, log zerolog.Logger) (restore func()) {
	limit := p.MemorySoftLimitBytes()
	if limit <= 0 {
		return func() {}
	}
	prev := debug.SetMemoryLimit(limit)
	log.Info().Int("memory_soft_limit_mb", p.MemorySoftLimitMB).Msg("soft memory limit set (silas.process.memory_soft_limit_mb)")
	return func() { debug.SetMemoryLimit(prev) }
}
