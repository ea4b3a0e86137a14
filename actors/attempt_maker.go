package actors

import (
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/silas-ai/silas/skills/manifest"
)

// SkillMakerName is the bundled skill that writes new skills (spec 10.5).
// A work item that lists it has the skills it staged proposed to the owner
// when it passes verification.
const SkillMakerName = "skill-maker"

// makerStagingDir is where skill-maker's create_skill.py writes, relative
// to the work dir: staging/<name>/.
const makerStagingDir = "staging"

// maxStagedSkills bounds the skills one work item may propose, so that a
// runaway executor cannot flood the owner with cards.
const maxStagedSkills = 4

// stagedSkill is one skill a skill-maker work item left in its staging
// directory: its files, read before the sandbox was destroyed. Problem is
// set instead when the directory could not be taken (a symlink, too large).
type stagedSkill struct {
	name    string
	files   []manifest.Entry
	problem string
}

// harvestStagedSkills reads every skill under staging/ in the work dir.
// The work dir is opened as an os.Root and manifest.Read refuses symlinks
// and special files, so that nothing the sandboxed code left behind can
// make the daemon read outside it; the files stay in memory, bounded by
// the manifest limits, until the installer stages them under the data dir.
func harvestStagedSkills(workDir string) ([]stagedSkill, error) {
	root, err := os.OpenRoot(workDir)
	if err != nil {
		return nil, fmt.Errorf("open the work dir: %w", err)
	}
	defer root.Close()
	entries, err := fs.ReadDir(root.FS(), makerStagingDir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", makerStagingDir, err)
	}
	var out []stagedSkill
	for _, e := range entries { // in name order
		name := e.Name()
		if len(out) == maxStagedSkills {
			out = append(out, stagedSkill{name: name, problem: fmt.Sprintf("only %d skills are proposed per work item; stage the rest in another one", maxStagedSkills)})
			break
		}
		if !e.IsDir() || e.Type()&fs.ModeSymlink != 0 {
			out = append(out, stagedSkill{name: name, problem: makerStagingDir + "/" + name + " is not a directory"})
			continue
		}
		if err := manifest.ValidName(name); err != nil {
			out = append(out, stagedSkill{name: name, problem: err.Error()})
			continue
		}
		sub, err := fs.Sub(root.FS(), makerStagingDir+"/"+name)
		if err != nil {
			out = append(out, stagedSkill{name: name, problem: err.Error()})
			continue
		}
		files, err := manifest.Read(sub)
		if err != nil {
			out = append(out, stagedSkill{name: name, problem: err.Error()})
			continue
		}
		out = append(out, stagedSkill{name: name, files: files})
	}
	return out, nil
}
