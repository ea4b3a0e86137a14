package config

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// validatePaths checks the sandbox directories against data_dir: the verification and
// customer-context directories are distinct and not nested, and customer context lives
// inside data_dir and is not world-writable. Paths are compared as cleaned absolute
// paths with symbolic links of existing parts resolved.
func (c *Config) validatePaths(p *problems) {
	sb := c.Sandbox
	p.required("sandbox.verify_dir", sb.VerifyDir, `set it to a directory such as "./data/verify"`)
	p.required("sandbox.customer_context_dir", sb.CustomerContextDir, `set it to a directory inside silas.data_dir such as "./data/customer_context"`)
	if c.DataDir == "" || sb.VerifyDir == "" || sb.CustomerContextDir == "" {
		return
	}
	var resolved [3]string
	failed := false
	for i, d := range []struct{ key, path string }{
		{"data_dir", c.DataDir}, {"sandbox.verify_dir", sb.VerifyDir}, {"sandbox.customer_context_dir", sb.CustomerContextDir},
	} {
		var err error
		if resolved[i], err = canonical(d.path); err != nil {
			p.add(d.key, "cannot resolve %s: %v; it must be a directory, or a path whose existing parts are directories", d.path, err)
			failed = true
		}
	}
	if failed {
		return
	}
	data, verify, cust := resolved[0], resolved[1], resolved[2]

	switch {
	case verify == cust:
		p.add("sandbox.customer_context_dir", "resolves to %s, the same directory as silas.sandbox.verify_dir; give them different directories", cust)
	case within(cust, verify):
		p.add("sandbox.verify_dir", "%s is inside silas.sandbox.customer_context_dir (%s); use a directory outside it", verify, cust)
	case within(verify, cust):
		p.add("sandbox.customer_context_dir", "%s is inside silas.sandbox.verify_dir (%s); use a directory outside it", cust, verify)
	}
	if !within(data, cust) {
		p.add("sandbox.customer_context_dir", "%s must be inside silas.data_dir (%s); use e.g. %s",
			cust, data, filepath.Join(c.DataDir, "customer_context"))
	}
	if info, err := os.Stat(cust); err == nil && info.Mode().Perm()&0o002 != 0 {
		p.add("sandbox.customer_context_dir", "%s is world-writable (mode %v); run chmod o-w %s", cust, info.Mode().Perm(), cust)
	}
	c.validateScriptDir(p, verify, cust, data)
}

// validateScriptDir keeps gate scripts out of every directory an agent's
// files reach: the verification dir (artifacts are copied there), customer
// context, and the sandboxes' work dirs.
func (c *Config) validateScriptDir(p *problems, verify, cust, data string) {
	dir := c.Gates.ScriptDir
	p.required("gates.script_dir", dir, `set it to a directory only the owner writes, such as "./data/gates"`)
	if dir == "" {
		return
	}
	scripts, err := canonical(dir)
	if err != nil {
		p.add("gates.script_dir", "cannot resolve %s: %v", dir, err)
		return
	}
	work := filepath.Join(data, "sandbox")
	for _, agent := range []struct{ key, dir string }{
		{"silas.sandbox.verify_dir", verify}, {"silas.sandbox.customer_context_dir", cust}, {"the sandboxes under silas.data_dir", work},
	} {
		if scripts == agent.dir || within(agent.dir, scripts) || within(scripts, agent.dir) {
			p.add("gates.script_dir", "%s overlaps %s (%s), where agent-written files live; use a directory of its own such as %s",
				scripts, agent.key, agent.dir, filepath.Join(c.DataDir, "gates"))
		}
	}
}

// canonical returns the absolute, cleaned form of path with symbolic links resolved
// in the longest part that exists.
func canonical(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	existing, rest := abs, ""
	for {
		resolved, err := filepath.EvalSymlinks(existing)
		if err == nil {
			return filepath.Join(resolved, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(existing)
		if parent == existing {
			return abs, nil
		}
		rest = filepath.Join(filepath.Base(existing), rest)
		existing = parent
	}
}

// within reports whether child is strictly inside dir.
func within(dir, child string) bool {
	rel, err := filepath.Rel(dir, child)
	return err == nil && rel != "." && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}
