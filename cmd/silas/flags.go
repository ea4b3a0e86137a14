package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/silas-ai/silas/config"
)

// common are the flags every command that reads the config takes.
type common struct {
	configPath string
	dataDir    string
}

func newFlagSet(name, summary string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: silas %s [flags]\n\n%s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.configPath, "config", "", "config file (default config/silas.yaml when it exists)")
	fs.StringVar(&c.dataDir, "data-dir", "", "data directory (overrides silas.data_dir)")
}

// load reads the configuration with the flags as the top layer.
func (c *common) load(overrides map[string]any) (*config.Config, error) {
	if overrides == nil {
		overrides = map[string]any{}
	}
	if c.dataDir != "" {
		overrides["silas.data_dir"] = c.dataDir
	}
	return config.Load(config.LoadOptions{Path: c.configPath, Overrides: overrides})
}

// parseInterspersed parses args with fs and returns the positional
// arguments, which may stand before, between or after the flags
// ("revoke <id> --url ..."): the flag package stops at the first
// positional argument, so what follows it is parsed again.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}
