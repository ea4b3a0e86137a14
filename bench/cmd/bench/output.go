package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"

	"github.com/silas-ai/silas/bench/load"
)

// writeReports writes latest.json and latest.md into dir (latest-chaos.*
// and latest-soak.* for those modes, so that a chaos or soak run does not
// replace the matrix the README quotes), and copies named after the
// report's start time.
func writeReports(dir string, r *load.Report) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("make report directory: %w", err)
	}
	js, err := r.JSON()
	if err != nil {
		return err
	}
	md := []byte(r.Markdown())
	stamp := r.Started.Format("2006-01-02T150405Z")
	latest := "latest"
	switch {
	case r.Chaos != nil:
		latest = "latest-chaos"
	case r.Soak != nil:
		latest = "latest-soak"
	}
	for name, b := range map[string][]byte{
		latest + ".json": js, latest + ".md": md,
		stamp + ".json": js, stamp + ".md": md,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return fmt.Errorf("write report: %w", err)
		}
	}
	fmt.Fprintf(os.Stderr, "bench: reports written to %s (%s.json, %s.md, %s.*)\n", dir, latest, latest, stamp)
	return nil
}

// startCPUProfile profiles the driver into path until the returned function
// is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create CPU profile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("start CPU profile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: close CPU profile:", err)
		}
	}, nil
}

// progressPrinter renders progress: one line rewritten in place on a
// terminal, else a line every fifth report and at the end of each phase.
type progressPrinter struct {
	mu       sync.Mutex
	w        io.Writer
	terminal bool
	calls    int
}

func newProgressPrinter(f *os.File) *progressPrinter {
	fi, err := f.Stat()
	return &progressPrinter{w: f, terminal: err == nil && fi.Mode()&os.ModeCharDevice != 0}
}

// note prints a line that must always be shown (a kill, a soak sample),
// clearing a progress line being rewritten in place first.
func (p *progressPrinter) note(line string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.terminal {
		fmt.Fprintf(p.w, "\r\033[K%s\n", line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *progressPrinter) print(pr load.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	line := fmt.Sprintf("%-30s %6d/%-6d done  %5d failed  %7.0f/s  %5.1fs",
		pr.Scenario, pr.Completed, pr.Total, pr.Failed, pr.Rate, pr.Elapsed.Seconds())
	switch {
	case p.terminal && pr.Final:
		fmt.Fprintf(p.w, "\r%s\n", line)
	case p.terminal:
		fmt.Fprintf(p.w, "\r%s", line)
	case pr.Final || p.calls%5 == 0:
		fmt.Fprintln(p.w, line)
	}
}
