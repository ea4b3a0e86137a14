package proc

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// Cgroup asks Run to start the process directly inside (clone3
// CLONE_INTO_CGROUP) a fresh child of a delegated cgroup v2 directory, with
// limits that hold for all its processes together; the child is removed after
// the run. Only for a Spec with Init.
type Cgroup struct {
	// Parent is the delegated cgroup v2 directory, writable by Silas, with
	// the memory and pids controllers enabled for its children.
	Parent string
	// MemoryBytes is memory.max (swap is off); zero leaves it unlimited.
	MemoryBytes uint64
	// Pids is pids.max; zero leaves it unlimited.
	Pids uint64
}

// requiredControllers must be enabled in the parent's cgroup.subtree_control.
func requiredControllers() []string { return []string{"memory", "pids"} }

// ProbeCgroup checks that parent can hold sandbox cgroups: a cgroup v2
// directory whose children get the memory and pids controllers, where Silas
// can create and remove a child. It enables the controllers when it may.
func ProbeCgroup(parent string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(parent, &st); err != nil {
		return fmt.Errorf("cgroup %s: %w", parent, err)
	}
	if st.Type != unix.CGROUP2_SUPER_MAGIC {
		return fmt.Errorf("cgroup %s is not on a cgroup v2 file system; delegate a cgroup v2 directory "+
			"(systemd: Delegate=yes) or leave the cgroup option empty to use rlimits", parent)
	}
	enabled, err := os.ReadFile(filepath.Join(parent, "cgroup.subtree_control"))
	if err != nil {
		return fmt.Errorf("cgroup %s: %w", parent, err)
	}
	var missing []string
	for _, c := range requiredControllers() {
		if !hasWord(string(enabled), c) {
			missing = append(missing, "+"+c)
		}
	}
	if len(missing) > 0 {
		ctl := filepath.Join(parent, "cgroup.subtree_control")
		if err := os.WriteFile(ctl, []byte(strings.Join(missing, " ")), 0); err != nil {
			return fmt.Errorf("cgroup %s: cannot enable %s (%w); enable them in %s (the cgroup must have no "+
				"processes of its own and its parent must delegate them)", parent, strings.Join(missing, " "), err, ctl)
		}
	}
	dir, err := os.MkdirTemp(parent, "probe-")
	if err != nil {
		return fmt.Errorf("cgroup %s is not writable: %w", parent, err)
	}
	if err := os.Remove(dir); err != nil {
		return fmt.Errorf("cgroup %s: remove %s: %w", parent, dir, err)
	}
	return nil
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// create makes the run's cgroup and returns its path and an open descriptor
// of it for clone3.
func (c Cgroup) create() (string, *os.File, error) {
	dir, err := os.MkdirTemp(c.Parent, "run-")
	if err != nil {
		return "", nil, fmt.Errorf("sandbox cgroup under %s: %w", c.Parent, err)
	}
	if err := c.writeLimits(dir); err != nil {
		_ = os.Remove(dir)
		return "", nil, err
	}
	f, err := os.Open(dir)
	if err != nil {
		_ = os.Remove(dir)
		return "", nil, fmt.Errorf("sandbox cgroup %s: %w", dir, err)
	}
	return dir, f, nil
}

// writeLimits writes the limit files of a run's cgroup.
func (c Cgroup) writeLimits(dir string) error {
	files := []struct{ name, value string }{
		{"memory.oom.group", "1"}, // an out-of-memory kill takes the whole run
	}
	if c.MemoryBytes > 0 {
		files = append(files,
			struct{ name, value string }{"memory.max", strconv.FormatUint(c.MemoryBytes, 10)},
			struct{ name, value string }{"memory.swap.max", "0"})
	}
	if c.Pids > 0 {
		files = append(files, struct{ name, value string }{"pids.max", strconv.FormatUint(c.Pids, 10)})
	}
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.WriteFile(p, []byte(f.value), 0o644); err != nil {
			if f.name == "memory.swap.max" && errors.Is(err, os.ErrNotExist) {
				continue // no swap accounting on this kernel: nothing to turn off
			}
			return fmt.Errorf("sandbox cgroup %s: %w", p, err)
		}
	}
	return nil
}

// removeCgroup removes a run's cgroup once its last process is gone; the
// kernel may need a moment after the init's exit to release it.
func removeCgroup(dir string) error {
	deadline := time.Now().Add(drainGrace)
	for {
		err := os.Remove(dir)
		if err == nil || errors.Is(err, os.ErrNotExist) {
			return nil
		}
		if !errors.Is(err, unix.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("remove sandbox cgroup %s: %w", dir, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
