package reexec

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/silas-ai/silas/sandbox/internal/layout"
)

// InitName is argv[0] of the sandbox's init: /proc/self/exe started with it
// runs initMain instead of the program's main.
const InitName = "silas-sandbox-init"

// InitConfig is what the init builds, passed as "key=value" arguments before
// "--"; the helper's argv (HelperArgs) follows "--".
type InitConfig struct {
	// Entries are the host paths the sandbox sees (layout.For).
	Entries []layout.Entry
	// Network keeps the host's network namespace (network_access).
	Network bool
	// Trees says the required entries (Read, Write, Work) arrive as detached
	// mount trees (open_tree(2) by Silas, which as root can reach any path)
	// on descriptors FirstTreeFD, FirstTreeFD+1, ..., in their order.
	// Otherwise the init opens them itself, with Silas's own (unprivileged)
	// rights.
	Trees bool
	// TmpBytes is the size of /tmp and /dev/shm.
	TmpBytes uint64
}

// FirstTreeFD is the descriptor of the first mount tree (InitConfig.Trees),
// right after StatusFD.
const FirstTreeFD = StatusFD + 1

var kindKeys = map[layout.Kind]string{
	layout.System: "sys", layout.Etc: "etc", layout.Read: "ro", layout.Write: "rw", layout.Work: "work",
}

// InitArgs returns the argv that starts the init through /proc/self/exe:
// InitName, c, "--", then the helper's argv (HelperArgs).
func InitArgs(c InitConfig, helper []string) []string {
	out := []string{InitName}
	for _, e := range c.Entries {
		out = append(out, kindKeys[e.Kind]+"="+e.Path)
	}
	if c.Network {
		out = append(out, "net=1")
	}
	if c.Trees {
		out = append(out, "trees=1")
	}
	out = append(out, "tmpsize="+strconv.FormatUint(c.TmpBytes, 10), "--")
	return append(out, helper...)
}

// parseInitArgs decodes InitArgs(...)[1:].
func parseInitArgs(args []string) (InitConfig, []string, error) {
	var c InitConfig
	for i, a := range args {
		if a == "--" {
			if i+1 >= len(args) {
				return c, nil, fmt.Errorf("init: no program after --")
			}
			if c.workDir() == "" {
				return c, nil, fmt.Errorf("init: no work dir")
			}
			return c, args[i+1:], nil
		}
		if err := c.set(a); err != nil {
			return c, nil, err
		}
	}
	return c, nil, fmt.Errorf("init: missing -- before the program")
}

func (c *InitConfig) set(kv string) error {
	key, val, ok := strings.Cut(kv, "=")
	if !ok {
		return fmt.Errorf("init argument %q: want key=value", kv)
	}
	for kind, k := range kindKeys {
		if k == key {
			if !strings.HasPrefix(val, "/") {
				return fmt.Errorf("init argument %q: want an absolute path", kv)
			}
			c.Entries = append(c.Entries, layout.Entry{Kind: kind, Path: val})
			return nil
		}
	}
	switch key {
	case "net", "trees":
		if val != "1" {
			return fmt.Errorf("init argument %q: want %s=1", kv, key)
		}
		if key == "net" {
			c.Network = true
		} else {
			c.Trees = true
		}
	case "tmpsize":
		n, err := strconv.ParseUint(val, 10, 64)
		if err != nil || n == 0 {
			return fmt.Errorf("init argument %q: want a positive size", kv)
		}
		c.TmpBytes = n
	default:
		return fmt.Errorf("init argument %q: unknown key", kv)
	}
	return nil
}

// workDir returns the work dir entry's path ("" if none).
func (c InitConfig) workDir() string {
	for _, e := range c.Entries {
		if e.Kind == layout.Work {
			return e.Path
		}
	}
	return ""
}
