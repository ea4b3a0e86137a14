package load

import (
	"fmt"
	"strings"
)

// Daemon is a server a load scenario drives.
type Daemon string

const (
	// DaemonSilas is `silas serve`, the daemon under test.
	DaemonSilas Daemon = "silas"
	// DaemonBaseline is bench/cmd/baseline: the same protocol subset and
	// the same mock model, with no persistence and no gates. It is what
	// this machine, the mock and the driver allow, so silas is reported as
	// a ratio of it.
	DaemonBaseline Daemon = "baseline"
)

// ParseDaemons reads a comma-separated list of daemons, e.g.
// "silas,baseline", in the order given, without duplicates.
func ParseDaemons(s string) ([]Daemon, error) {
	var ds []Daemon
	seen := map[Daemon]bool{}
	for _, f := range strings.Split(s, ",") {
		d := Daemon(strings.TrimSpace(f))
		switch d {
		case DaemonSilas, DaemonBaseline:
		default:
			return nil, fmt.Errorf("daemon %q: want %s or %s, comma-separated", d, DaemonSilas, DaemonBaseline)
		}
		if !seen[d] {
			seen[d] = true
			ds = append(ds, d)
		}
	}
	return ds, nil
}
