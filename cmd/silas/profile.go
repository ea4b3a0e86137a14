package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
)

// profiling holds the serve flags that help chase a performance regression.
type profiling struct {
	cpu, mem string
	pprof    bool
	cpuFile  *os.File
}

func (p *profiling) register(fs *flag.FlagSet) {
	fs.StringVar(&p.cpu, "cpuprofile", "", "write a CPU profile of the whole run to this file")
	fs.StringVar(&p.mem, "memprofile", "", "write a heap profile to this file at shutdown")
	fs.BoolVar(&p.pprof, "pprof", false, "serve /debug/pprof/ on the web listener (owner or metrics token only)")
}

// start begins CPU profiling; the returned stop ends it and writes the heap
// profile.
func (p *profiling) start() (stop func() error, err error) {
	if p.cpu != "" {
		if p.cpuFile, err = os.Create(p.cpu); err != nil {
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
		if err := pprof.StartCPUProfile(p.cpuFile); err != nil {
			p.cpuFile.Close()
			return nil, fmt.Errorf("cpu profile: %w", err)
		}
	}
	return p.stop, nil
}

func (p *profiling) stop() error {
	var errs []error
	if p.cpuFile != nil {
		pprof.StopCPUProfile()
		errs = append(errs, p.cpuFile.Close())
	}
	if p.mem != "" {
		f, err := os.Create(p.mem)
		if err != nil {
			return errors.Join(append(errs, fmt.Errorf("heap profile: %w", err))...)
		}
		runtime.GC()
		errs = append(errs, pprof.WriteHeapProfile(f), f.Close())
	}
	return errors.Join(errs...)
}
