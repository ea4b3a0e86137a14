package load

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/<pid>/stat. It
// is 100 on every Linux architecture Go supports (the kernel fixes the
// user-visible value regardless of CONFIG_HZ).
const clockTicks = 100

// CPUTime returns the user plus system CPU time process pid has used, from
// /proc/<pid>/stat.
func CPUTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("read cpu time of pid %d: %w", pid, err)
	}
	return parseStatCPU(b)
}

// parseStatCPU reads utime and stime (fields 14 and 15) of a /proc/<pid>/stat
// line. The command name (field 2) is in parentheses and may hold spaces, so
// fields are counted from the last ')'.
func parseStatCPU(b []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, fmt.Errorf("parse /proc stat: no ')' in %q", b)
	}
	f := strings.Fields(string(b[i+1:]))
	// f[0] is field 3 (state), so field n is f[n-3].
	if len(f) < 13 {
		return 0, fmt.Errorf("parse /proc stat: %d fields after the name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse /proc stat cpu field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}

// Memory is the resident memory of a process, in bytes.
type Memory struct {
	// RSS is the resident set now (VmRSS).
	RSS int64
	// Peak is the highest resident set so far (VmHWM).
	Peak int64
	// Threads is the number of OS threads.
	Threads int
	// Anon and File split RSS (RssAnon, RssFile): the process's own memory
	// (Go heap, stacks) and resident pages of mapped files (Badger maps its
	// tables). Zero when the kernel does not report them.
	Anon, File int64
}

// ReadMemory reads VmRSS, VmHWM, RssAnon, RssFile and Threads from
// /proc/<pid>/status.
func ReadMemory(pid int) (Memory, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Memory{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	return parseStatus(b)
}

func parseStatus(b []byte) (Memory, error) {
	var m Memory
	var seen int
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch key {
		case "VmRSS", "VmHWM":
			n, err := parseKB(val)
			if err != nil {
				return Memory{}, fmt.Errorf("parse /proc status %s: %w", key, err)
			}
			if key == "VmRSS" {
				m.RSS = n
			} else {
				m.Peak = n
			}
			seen++
		case "RssAnon", "RssFile":
			n, err := parseKB(val)
			if err != nil {
				return Memory{}, fmt.Errorf("parse /proc status %s: %w", key, err)
			}
			if key == "RssAnon" {
				m.Anon = n
			} else {
				m.File = n
			}
		case "Threads":
			n, err := strconv.Atoi(strings.TrimSpace(val))
			if err != nil {
				return Memory{}, fmt.Errorf("parse /proc status Threads: %w", err)
			}
			m.Threads = n
		}
	}
	if seen != 2 {
		return Memory{}, fmt.Errorf("parse /proc status: VmRSS or VmHWM missing (is the process a zombie?)")
	}
	return m, nil
}

// parseKB parses "   1234 kB" into bytes.
func parseKB(s string) (int64, error) {
	s = strings.TrimSpace(s)
	num, unit, _ := strings.Cut(s, " ")
	if unit != "kB" {
		return 0, fmt.Errorf("unit %q, want kB", unit)
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parse %q: %w", num, err)
	}
	return n * 1024, nil
}

// MachineBusy returns the CPU time all processes of the machine have used
// (user, nice, system, irq, softirq and steal of /proc/stat, summed over the
// cores), so that CPU spent by processes outside the bench can be told.
func MachineBusy() (time.Duration, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, fmt.Errorf("read machine cpu time: %w", err)
	}
	return parseMachineBusy(b)
}

func parseMachineBusy(b []byte) (time.Duration, error) {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return 0, fmt.Errorf("parse /proc/stat: first line %q is not the cpu total", line)
	}
	var ticks int64
	// user nice system idle iowait irq softirq steal: skip idle and iowait.
	for _, i := range []int{1, 2, 3, 6, 7, 8} {
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("parse /proc/stat field %q: %w", f[i], err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
