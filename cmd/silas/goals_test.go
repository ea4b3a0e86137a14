package main

import (
	"errors"
	"strings"
	"testing"
)

// `silas goals` refuses malformed commands before it looks for a daemon.
func TestGoalsCLIUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"goals", "frob"}, `unknown goals subcommand "frob"`},
		{[]string{"goals", "pause"}, "usage: silas goals pause <id>"},
		{[]string{"goals", "remove", "a", "b"}, "usage: silas goals remove <id>"},
		{[]string{"goals", "list", "extra"}, "goals list takes no arguments"},
	} {
		out, err := runCLI(t, tc.args...)
		var ee *exitError
		if !errors.As(err, &ee) || ee.code != 2 || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("silas %s: %v (%s), want exit 2 with %q", strings.Join(tc.args, " "), err, out, tc.want)
		}
	}
	if out, err := runCLI(t, "goals", "--help"); err != nil || !strings.Contains(out, "silas goals pause <id>") {
		t.Errorf("silas goals --help: %v\n%s", err, out)
	}
}
