package skills_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/silas-ai/silas/skills"
	"github.com/silas-ai/silas/skills/bundled"
)

func TestLoadBundledAndLocal(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, filepath.Join(dir, "demo"), demoFS())
	bad := demoFS()
	writeTree(t, filepath.Join(dir, "broken"), bad) // name demo in a dir named broken
	coding := demoFS()
	coding["SKILL.md"] = &fstest.MapFile{Data: []byte(strings.Replace(skillMD, "name: demo", "name: coding", 1))}
	writeTree(t, filepath.Join(dir, "coding"), coding)                                         // shadows a bundled skill
	writeTree(t, filepath.Join(dir, ".staging", "demo2"), demoFS())                            // staging areas are skipped
	writeTree(t, filepath.Join(dir, "_drafts", "x"), demoFS())                                 // so are '_' directories
	if err := os.WriteFile(filepath.Join(dir, "README.txt"), []byte("x"), 0o644); err != nil { // stray files are ignored
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "demo"), filepath.Join(dir, "linked")); err != nil {
		t.Fatal(err)
	}

	c, probs := skills.Load(dir, bundled.FS())
	if got := c.Names(); !slices.Equal(got, []string{"api-key", "coding", "demo", "oauth-browser", "oauth-device", "skill-maker"}) {
		t.Fatalf("names %v (problems %v)", got, probs)
	}
	if e, _ := c.Get("coding"); e.Origin != skills.OriginBundled {
		t.Fatalf("coding came from %s, want the bundled one", e.Origin)
	}
	if e, _ := c.Get("demo"); e.Origin != skills.OriginLocal || e.Dir != filepath.Join(dir, "demo") {
		t.Fatalf("demo %+v", e)
	}
	got := map[string]string{}
	for _, p := range probs {
		got[p.Name] = p.Error()
	}
	want := map[string]string{
		"broken": `does not match the directory name "broken"`,
		"coding": "has the name of a bundled skill",
		"linked": "is a symlink",
	}
	if len(got) != len(want) {
		t.Fatalf("problems %v", got)
	}
	for n, msg := range want {
		if !strings.Contains(got[n], msg) {
			t.Errorf("problem for %s: %q, want %q", n, got[n], msg)
		}
	}

	// A missing skills_dir is empty, not an error.
	c, probs = skills.Load(filepath.Join(dir, "nope"), bundled.FS())
	if len(probs) != 0 || len(c.Names()) != len(bundled.Names()) {
		t.Fatalf("missing dir: %v %v", c.Names(), probs)
	}
}

func TestResolveAndViews(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, filepath.Join(dir, "demo"), demoFS())
	manual := demoFS()
	manual["SKILL.md"] = &fstest.MapFile{Data: []byte(strings.NewReplacer("name: demo", "name: manual-one", "activation: auto", "activation: manual").Replace(skillMD))}
	writeTree(t, filepath.Join(dir, "manual-one"), manual)
	c, probs := skills.Load(dir, bundled.FS())
	if len(probs) != 0 {
		t.Fatal(probs)
	}
	list, err := c.Resolve([]string{"coding", "demo", "coding"}, nil)
	if err != nil || len(list) != 2 || list[0].Name != "coding" || list[1].Name != "demo" {
		t.Fatalf("resolve: %v %v", list, err)
	}
	if _, err := c.Resolve([]string{"missing"}, nil); !errors.Is(err, skills.ErrUnknownSkill) {
		t.Fatalf("unknown: %v", err)
	}
	if _, err := c.Resolve([]string{"manual-one"}, nil); !errors.Is(err, skills.ErrManualSkill) {
		t.Fatalf("manual not named: %v", err)
	}
	if _, err := c.Resolve([]string{"manual-one"}, []string{"manual-one"}); err != nil {
		t.Fatalf("manual named: %v", err)
	}
	var cand []string
	for _, s := range c.PlannerCandidates() {
		cand = append(cand, s.Name)
	}
	if !slices.Equal(cand, []string{"api-key", "coding", "demo", "oauth-browser", "oauth-device", "skill-maker"}) {
		t.Fatalf("planner candidates %v", cand)
	}

	// The proxy budget drops from the end of the list, deterministically.
	all, _ := c.Resolve([]string{"coding", "demo", "skill-maker"}, nil)
	kept, dropped := skills.ProxyMetadata(all, 1000, nil)
	if len(kept) != 3 || dropped != nil {
		t.Fatalf("large budget: %v %v", kept, dropped)
	}
	words := func(s string) int { return len(strings.Fields(s)) + 1 }
	first := words(all[0].Name) + words(all[0].Description) + 4
	kept, dropped = skills.ProxyMetadata(all, first+1, words)
	if len(kept) != 1 || kept[0].Name != "coding" || !slices.Equal(dropped, []string{"demo", "skill-maker"}) {
		t.Fatalf("tight budget: %v %v", kept, dropped)
	}
	if kept, dropped = skills.ProxyMetadata(all, 0, words); len(kept) != 0 || len(dropped) != 3 {
		t.Fatalf("zero budget: %v %v", kept, dropped)
	}
	e, _ := c.Get("coding")
	if v := e.Skill.ExecutorView(); len(v.Scripts) != 3 || !strings.Contains(v.Body, "## When to use") {
		t.Fatalf("executor view %+v", v)
	}
	if v := e.Skill.PlannerView(); v.Scripts != nil || v.Body == "" {
		t.Fatalf("planner view %+v", v)
	}
}
