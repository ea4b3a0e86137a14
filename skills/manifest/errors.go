package manifest

import (
	"errors"
	"fmt"
)

// Sentinel errors; match them with errors.Is.
var (
	// ErrChanged means a skill's files differ from the manifest that was
	// approved. The skill must not run: ask the owner to review and
	// re-approve it (skill_install), or restore the approved files.
	ErrChanged = errors.New("skill changed since it was approved")

	// ErrUnreadable means a skill directory breaks the reading rules (a
	// symlink or special file, a path or tree past the limits, an I/O
	// error). Fix the directory; nothing in it was trusted.
	ErrUnreadable = errors.New("skill directory cannot be read")

	// ErrInvalidName means a skill name breaks the naming rule of spec 10.1.
	ErrInvalidName = errors.New("invalid skill name")
)

// Change kinds of a ChangedError.
const (
	ChangeModified = "modified"
	ChangeAdded    = "added"
	ChangeRemoved  = "removed"
	ChangeIdentity = "identity" // name or version differ
)

// ChangedError names the first file (in path order) whose content differs
// from the approved manifest. errors.Is(err, ErrChanged) holds.
type ChangedError struct {
	// Skill is the skill's name.
	Skill string
	// Path is the file's path relative to the skill directory ("" for an
	// identity change).
	Path string
	// Change is ChangeModified, ChangeAdded, ChangeRemoved or ChangeIdentity.
	Change string
}

func (e *ChangedError) Error() string {
	switch e.Change {
	case ChangeIdentity:
		return fmt.Sprintf("skill %s changed since it was approved (name or version differ); re-approve it with skill_install before using it", e.Skill)
	case ChangeAdded:
		return fmt.Sprintf("skill %s changed since it was approved: file %s was added; re-approve it with skill_install or remove the file", e.Skill, e.Path)
	case ChangeRemoved:
		return fmt.Sprintf("skill %s changed since it was approved: file %s was removed; re-approve it with skill_install or restore the file", e.Skill, e.Path)
	}
	return fmt.Sprintf("skill %s changed since it was approved: file %s was modified; re-approve it with skill_install or restore the file", e.Skill, e.Path)
}

// Is makes errors.Is(err, ErrChanged) true.
func (e *ChangedError) Is(target error) bool { return target == ErrChanged }
