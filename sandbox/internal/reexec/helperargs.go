package reexec

import (
	"fmt"
	"strconv"
	"strings"
)

// HelperOptions are what the helper does besides setting rlimits, right
// before it execs the program.
type HelperOptions struct {
	// Seccomp installs the sandbox's seccomp filter (internal/seccomp) as the
	// last step before execve, after no_new_privs.
	Seccomp bool
	// Drop, when set, makes the helper (which must then run as root) give the
	// program an unprivileged host identity; see Drop.
	Drop *Drop
}

// Drop is the host identity a program started by a root helper runs as, and
// the paths it must still reach. The helper opens each Stage path while it is
// root, binds it at StagePath(i) in a private mount namespace (a tmpfs over
// StageDir owned by UID, so the unprivileged program reaches the path there
// even if a parent directory is root-only), clears its supplementary groups,
// switches to UID and GID, and sets its parent-death signal again (a change
// of credentials clears it). Used to run bubblewrap unprivileged when Silas
// runs as root.
type Drop struct {
	UID, GID int
	Stage    []string
}

// StageDir is where the helper mounts the staging tmpfs in its private mount
// namespace (the program sees its own /tmp no more, only the staged paths).
const StageDir = "/tmp"

// StagePath is where Drop.Stage[i] is reachable for the program.
func StagePath(i int) string { return StageDir + "/silas-stage-" + strconv.Itoa(i) }

// HelperArgs returns the argv that starts the helper through /proc/self/exe:
// HelperName, the limits and options, "--", then the program's argv.
func HelperArgs(l Limits, o HelperOptions, argv []string) []string {
	out := append([]string{HelperName}, l.args()...)
	if o.Seccomp {
		out = append(out, "seccomp=1")
	}
	if d := o.Drop; d != nil {
		out = append(out, "uid="+strconv.Itoa(d.UID), "gid="+strconv.Itoa(d.GID))
		for _, p := range d.Stage {
			out = append(out, "stage="+p)
		}
	}
	return append(append(out, "--"), argv...)
}

// helperConfig is the decoded helper argv.
type helperConfig struct {
	lims    []rlimit
	seccomp bool
	drop    *Drop
}

// parseHelperArgs decodes the helper arguments before "--" and returns them
// with the program's argv after "--".
func parseHelperArgs(args []string) (helperConfig, []string, error) {
	var c helperConfig
	for i, a := range args {
		if a != "--" {
			continue
		}
		if i+1 >= len(args) {
			return c, nil, fmt.Errorf("no program after --")
		}
		for _, kv := range args[:i] {
			if err := c.set(kv); err != nil {
				return c, nil, err
			}
		}
		if d := c.drop; d != nil && (d.UID <= 0 || d.GID <= 0) {
			return c, nil, fmt.Errorf("drop needs uid and gid above 0, got %d and %d", d.UID, d.GID)
		}
		return c, args[i+1:], nil
	}
	return c, nil, fmt.Errorf("missing -- before the program")
}

func (c *helperConfig) set(kv string) error {
	key, val, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("helper argument %q: want key=value", kv)
	}
	if r, known, err := parseLimit(key, val); known {
		if err != nil {
			return err
		}
		c.lims = append(c.lims, r)
		return nil
	}
	switch key {
	case "seccomp":
		if val != "1" {
			return fmt.Errorf("helper argument %q: want seccomp=1", kv)
		}
		c.seccomp = true
	case "uid", "gid":
		n, err := strconv.Atoi(val)
		if err != nil {
			return fmt.Errorf("helper argument %q: %w", kv, err)
		}
		if c.drop == nil {
			c.drop = &Drop{}
		}
		if key == "uid" {
			c.drop.UID = n
		} else {
			c.drop.GID = n
		}
	case "stage":
		if !strings.HasPrefix(val, "/") {
			return fmt.Errorf("helper argument %q: want an absolute path", kv)
		}
		if c.drop == nil {
			return fmt.Errorf("helper argument %q: stage needs uid and gid first", kv)
		}
		c.drop.Stage = append(c.drop.Stage, val)
	default:
		return fmt.Errorf("helper argument %q: unknown key", kv)
	}
	return nil
}
