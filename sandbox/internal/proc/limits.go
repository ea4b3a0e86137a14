package proc

import (
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/sandbox/internal/reexec"
)

// LimitsFor maps a SandboxConfig and a backend's file-size and process limits
// to rlimits.
func LimitsFor(cfg messages.SandboxConfig, maxFileSizeMB, maxProcesses int) reexec.Limits {
	return reexec.Limits{
		MemoryBytes:   uint64(max(cfg.MaxMemoryMB, 0)) << 20,
		CPUSeconds:    uint64(max(cfg.MaxCPUSeconds, 0)),
		FileSizeBytes: uint64(max(maxFileSizeMB, 0)) << 20,
		Processes:     uint64(max(maxProcesses, 0)),
	}
}
