package skills

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/silas-ai/silas/skills/manifest"
)

// ImportOptions configure Import.
type ImportOptions struct {
	// StagingRoot is the directory the adapted skill is written into, as
	// StagingRoot/<name>; it is created if missing. Keep it outside
	// skills_dir (or in a '.'-prefixed directory of it) so the loader does
	// not pick up unapproved skills.
	StagingRoot string
	// FormatHint overrides format detection (spec 10.4.1 format_hint).
	FormatHint Format
	// Name overrides the skill's name.
	Name string
}

// Imported is the result of Import: the adapted skill staged on disk, its
// parse (nil when the staged skill still breaks a rule the import cannot
// fix) and the transformation report.
type Imported struct {
	Skill  *Skill
	Dir    string
	Report TransformationReport
}

// srcFile is a file read from the import source.
type srcFile struct {
	path string
	data []byte
}

var remoteRE = regexp.MustCompile(`^(?:[A-Za-z][A-Za-z0-9+.\-]*://|[\w.\-]+@[\w.\-]+:)`)

// Import adapts the skill in the local directory src into a Silas skill
// (spec 10.4.1): it detects the format, normalises the front matter
// (keeping compatible keys, translating what maps, stripping the rest),
// moves files into scripts/, references/ and assets/, gives every shell
// script a Python entry point with explicit arguments, and never carries a
// secret over (credential files and hidden files are dropped, credential
// literals removed from text). The result is written to
// o.StagingRoot/<name> and parsed; it still has to pass Validate and be
// approved (skill_install) like any skill. A URL is ErrRemoteSource: clone
// it first, then import the directory.
func Import(src string, o ImportOptions) (Imported, error) {
	rep := newReport()
	if remoteRE.MatchString(src) || strings.HasPrefix(src, "github.com/") {
		return Imported{Report: rep}, fmt.Errorf("import %s: %w", src, ErrRemoteSource)
	}
	if o.StagingRoot == "" {
		return Imported{Report: rep}, fmt.Errorf("import %s: %w: no staging directory given", src, ErrImport)
	}
	abs, err := filepath.Abs(src)
	if err != nil {
		return Imported{Report: rep}, fmt.Errorf("import %s: %w: %w", src, ErrImport, err)
	}
	st, err := os.Stat(abs)
	if err != nil || !st.IsDir() {
		return Imported{Report: rep}, fmt.Errorf("import %s: %w: not a directory; give the skill's directory (the one holding SKILL.md)", src, ErrImport)
	}
	rep.Source.URI = "file://" + filepath.ToSlash(abs)
	commit, worktree := gitCommit(abs)
	rep.Source.Commit = commit
	if worktree {
		rep.review("", 0, "the source is a git worktree or submodule (.git is a file); its commit was not recorded")
	}

	files, err := readSource(abs, &rep)
	if err != nil {
		return Imported{Report: rep}, fmt.Errorf("import %s: %w: %w", src, ErrImport, err)
	}
	a := &adapter{rep: &rep, files: files, dirName: filepath.Base(abs), opts: o}
	if err := a.run(); err != nil {
		return Imported{Report: rep}, fmt.Errorf("import %s: %w: %w", src, ErrImport, err)
	}
	dest := filepath.Join(o.StagingRoot, a.name)
	rep.Name, rep.StagedDir = a.name, dest
	if err := writeStaged(o.StagingRoot, a.name, a.out); err != nil {
		return Imported{Report: rep}, fmt.Errorf("import %s: %w: %w", src, ErrImport, err)
	}
	sk, err := ParseDir(dest)
	if err != nil {
		rep.review(SkillFile, 0, "the adapted skill still breaks the skill format; fix the staged copy and validate it again")
		return Imported{Dir: dest, Report: rep}, fmt.Errorf("import %s: the adapted skill at %s needs manual fixes: %w", src, dest, err)
	}
	return Imported{Skill: sk, Dir: dest, Report: rep}, nil
}

// readSource reads every regular file of the source through an os.Root,
// dropping (and reporting) what must never be imported.
func readSource(abs string, rep *TransformationReport) ([]srcFile, error) {
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, err
	}
	defer func() { _ = root.Close() }()
	fsys := root.FS()
	var (
		out   []srcFile
		total int
	)
	drop := func(p, reason string) {
		rep.DroppedFiles = append(rep.DroppedFiles, DroppedFile{Path: p, Reason: reason})
	}
	err = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == "." {
			return nil
		}
		base := path.Base(p)
		if d.IsDir() {
			if reason := skippedDir(base); reason != "" {
				drop(p+"/", reason)
				return fs.SkipDir
			}
			return nil
		}
		switch t := d.Type(); {
		case t&fs.ModeSymlink != 0:
			drop(p, "symlink; skills hold only regular files")
			rep.review(p, 0, "was a symlink and was not imported; copy the file it pointed to into the skill if it is needed")
			return nil
		case !t.IsRegular():
			drop(p, "not a regular file")
			return nil
		}
		if reason := secretFile(base); reason != "" {
			drop(p, reason)
			return nil
		}
		if strings.HasPrefix(base, ".") {
			drop(p, "hidden file")
			return nil
		}
		if len(out) == manifest.MaxFiles {
			return fmt.Errorf("the source has more than %d files", manifest.MaxFiles)
		}
		f, err := fsys.Open(p)
		if err != nil {
			return err
		}
		data, err := io.ReadAll(io.LimitReader(f, manifest.MaxFileBytes+1))
		_ = f.Close()
		if err != nil {
			return err
		}
		if len(data) > manifest.MaxFileBytes {
			return fmt.Errorf("%s is larger than %d bytes", p, manifest.MaxFileBytes)
		}
		if total += len(data); total > manifest.MaxTotalBytes {
			return fmt.Errorf("the source's files total more than %d bytes", manifest.MaxTotalBytes)
		}
		if isExecutableBinary(data) {
			drop(p, "compiled executable; skills ship Python sources only")
			return nil
		}
		out = append(out, srcFile{path: p, data: data})
		return nil
	})
	return out, err
}

// skippedDir returns why a directory is not imported, or "".
func skippedDir(base string) string {
	switch base {
	case ".git":
		return "git metadata (the commit is recorded in the report)"
	case ".clawhub", ".clawdhub":
		return "ClawHub install metadata"
	case "__pycache__":
		return "compiled Python cache"
	case "node_modules", ".venv", "venv", "site-packages":
		return "installed dependencies are not imported; list them under requirements"
	}
	if strings.HasPrefix(base, ".") {
		return "hidden directory"
	}
	return ""
}

// secretFile returns why a file is treated as a credential store and never
// imported, or "".
func secretFile(base string) string {
	b := strings.ToLower(base)
	ext := path.Ext(b)
	switch {
	case b == ".env" || b == ".envrc" || strings.HasPrefix(b, ".env.") || ext == ".env":
		return "environment file (may hold secrets); secrets are never imported"
	case slices.Contains([]string{".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx", ".ppk", ".gpg"}, ext):
		return "key or certificate store; secrets are never imported"
	case strings.HasPrefix(b, "id_rsa") || strings.HasPrefix(b, "id_dsa") || strings.HasPrefix(b, "id_ecdsa") || strings.HasPrefix(b, "id_ed25519"):
		return "SSH private key; secrets are never imported"
	case slices.Contains([]string{".netrc", ".npmrc", ".pypirc", ".git-credentials", ".htpasswd", ".pgpass", "token.json"}, b):
		return "credential file; secrets are never imported"
	case slices.Contains([]string{".py", ".sh", ".md", ".txt"}, ext):
		return ""
	case strings.Contains(b, "credential") || strings.Contains(b, "secret") || strings.Contains(b, "service-account") || strings.Contains(b, "service_account"):
		return "credential file; secrets are never imported"
	}
	return ""
}

// isExecutableBinary recognises ELF, Mach-O and PE executables.
func isExecutableBinary(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	switch {
	case string(b[:4]) == "\x7fELF",
		string(b[:4]) == "\xcf\xfa\xed\xfe", string(b[:4]) == "\xce\xfa\xed\xfe", string(b[:4]) == "\xca\xfe\xba\xbe",
		string(b[:2]) == "MZ":
		return true
	}
	return false
}

// writeStaged writes files (path -> bytes) to stagingRoot/name through an
// os.Root, refusing to overwrite an earlier staging.
func writeStaged(stagingRoot, name string, files map[string][]byte) error {
	if err := os.MkdirAll(stagingRoot, 0o755); err != nil {
		return fmt.Errorf("staging directory: %w", err)
	}
	if err := os.Mkdir(filepath.Join(stagingRoot, name), 0o755); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s is already staged in %s; remove it or stage into another directory", name, stagingRoot)
		}
		return fmt.Errorf("staging directory: %w", err)
	}
	root, err := os.OpenRoot(filepath.Join(stagingRoot, name))
	if err != nil {
		return err
	}
	defer func() { _ = root.Close() }()
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		if d := path.Dir(p); d != "." {
			if err := root.MkdirAll(d, 0o755); err != nil {
				return err
			}
		}
		if err := root.WriteFile(p, files[p], 0o644); err != nil {
			return err
		}
	}
	return nil
}
