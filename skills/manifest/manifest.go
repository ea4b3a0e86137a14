package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/silas-ai/silas/runtime/canonical"
)

// HashKind is the domain tag inside the hashed projection, so a skill hash
// can never equal a hash of another canonical object.
const HashKind = "silas.skill.v1"

// File is one file of a skill: its slash-separated path relative to the
// skill directory, the lower-case hex SHA-256 of its bytes and its size.
type File struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
}

// Manifest is a skill's content identity: name, version, every file
// (sorted by path) and Hash, the skill hash over them (see SkillHash).
type Manifest struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Files   []File `json:"files"`
	Hash    string `json:"hash"`
}

// Entry is a file read from a skill directory with its bytes.
type Entry struct {
	File
	Data []byte
}

// hashedFile is a file as it enters the skill hash: the size is implied by
// the content hash and left out.
type hashedFile struct {
	Path   string `json:"path"`
	SHA256 string `json:"sha256"`
}

// hashed is the projection the skill hash is computed over.
type hashed struct {
	Kind    string       `json:"kind"`
	Name    string       `json:"name"`
	Version string       `json:"version"`
	Files   []hashedFile `json:"files"`
}

// SkillHash returns the skill hash: the lower-case hex SHA-256 of the
// canonical JSON (runtime/canonical) of
//
//	{"files":[{"path":...,"sha256":...},...],"kind":"silas.skill.v1","name":...,"version":...}
//
// with files sorted by path. Sizes are not hashed (the content hash covers
// them). Duplicate paths are an error.
func SkillHash(name, version string, files []File) (string, error) {
	hf := make([]hashedFile, len(files))
	for i, f := range files {
		hf[i] = hashedFile{Path: f.Path, SHA256: f.SHA256}
	}
	slices.SortFunc(hf, func(a, b hashedFile) int { return strings.Compare(a.Path, b.Path) })
	for i := 1; i < len(hf); i++ {
		if hf[i].Path == hf[i-1].Path {
			return "", fmt.Errorf("skill %s: file %s listed twice", name, hf[i].Path)
		}
	}
	h, err := canonical.SHA256Hex(hashed{Kind: HashKind, Name: name, Version: version, Files: hf})
	if err != nil {
		return "", fmt.Errorf("skill %s: hash: %w", name, err)
	}
	return h, nil
}

// New builds the manifest of entries (any order) for name and version.
func New(name, version string, entries []Entry) (Manifest, error) {
	files := make([]File, len(entries))
	for i, e := range entries {
		files[i] = e.File
	}
	return FromFiles(name, version, files)
}

// FromFiles builds the manifest of files (any order) for name and version.
func FromFiles(name, version string, files []File) (Manifest, error) {
	fs := slices.Clone(files)
	slices.SortFunc(fs, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	h, err := SkillHash(name, version, fs)
	if err != nil {
		return Manifest{}, err
	}
	return Manifest{Name: name, Version: version, Files: fs, Hash: h}, nil
}

// Check reports whether m is self-consistent: files sorted by path, each
// hash 64 lower-case hex digits, and Hash equal to the recomputed skill
// hash. A record read back from storage is checked before it is trusted.
func (m Manifest) Check() error {
	for i, f := range m.Files {
		if err := checkPath(f.Path); err != nil {
			return err
		}
		if !isHexSHA256(f.SHA256) {
			return fmt.Errorf("skill %s: file %s: sha256 %q is not 64 lower-case hex digits", m.Name, f.Path, f.SHA256)
		}
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return fmt.Errorf("skill %s: files are not sorted by path or repeat %s", m.Name, f.Path)
		}
	}
	h, err := SkillHash(m.Name, m.Version, m.Files)
	if err != nil {
		return err
	}
	if h != m.Hash {
		return fmt.Errorf("skill %s: stored hash %s does not match its files (%s)", m.Name, m.Hash, h)
	}
	return nil
}

// Compare checks that got (what is on disk now) is exactly want (what was
// approved). The first difference in path order is returned as a
// *ChangedError wrapping ErrChanged.
func Compare(want, got Manifest) error {
	i, j := 0, 0
	for i < len(want.Files) || j < len(got.Files) {
		switch {
		case j == len(got.Files) || (i < len(want.Files) && want.Files[i].Path < got.Files[j].Path):
			return &ChangedError{Skill: want.Name, Path: want.Files[i].Path, Change: ChangeRemoved}
		case i == len(want.Files) || got.Files[j].Path < want.Files[i].Path:
			return &ChangedError{Skill: want.Name, Path: got.Files[j].Path, Change: ChangeAdded}
		}
		if want.Files[i].SHA256 != got.Files[j].SHA256 || want.Files[i].Size != got.Files[j].Size {
			return &ChangedError{Skill: want.Name, Path: want.Files[i].Path, Change: ChangeModified}
		}
		i++
		j++
	}
	if want.Name != got.Name || want.Version != got.Version || want.Hash != got.Hash {
		return &ChangedError{Skill: want.Name, Change: ChangeIdentity}
	}
	return nil
}

// HashBytes returns the lower-case hex SHA-256 of b.
func HashBytes(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
