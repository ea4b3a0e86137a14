package load

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Report is everything one bench run measured, with where and on what.
type Report struct {
	Started         time.Time `json:"started"`
	DurationSeconds float64   `json:"duration_seconds"`
	Machine         Machine   `json:"machine"`
	Build           Build     `json:"build"`
	// Command is how the bench was invoked.
	Command string `json:"command"`
	// Config is the silas config every scenario ran with; DataDir and
	// MockURL are placeholders for the per-scenario values.
	Config       string  `json:"silas_config"`
	RaisedLimits []Limit `json:"raised_limits"`

	Startup *StartupResult `json:"startup,omitempty"`
	// Loads are silas's load results, the kept (best) run of each scenario;
	// BaselineLoads the baseline daemon's, likewise.
	Loads         []*LoadResult `json:"loads,omitempty"`
	BaselineLoads []*LoadResult `json:"baseline_loads,omitempty"`
	// Comparisons put silas next to the baseline in every scenario both ran.
	Comparisons []Comparison `json:"comparisons,omitempty"`
	// Runs are every load run, kept or not, in the order they ran.
	Runs []RunSummary `json:"runs,omitempty"`
	Idle *IdleResult  `json:"idle,omitempty"`
	// Chaos is the kill -9 scenario (bench -chaos); Soak the long run at a
	// fixed rate (bench -soak).
	Chaos *ChaosResult `json:"chaos,omitempty"`
	Soak  *SoakResult  `json:"soak,omitempty"`

	Targets []TargetResult `json:"targets"`
	// Failures lists scenarios that could not run to the end.
	Failures []string `json:"failures,omitempty"`
	// Notes are remarks about the run, such as a profile that was requested
	// but not written.
	Notes []string `json:"notes,omitempty"`
}

// NewReport starts a report of a run beginning now.
func NewReport(command, repoDir string) (*Report, error) {
	cfg, err := ServerConfig{DataDir: "<scenario dir>/data", MockURL: "http://<mock addr>/v1"}.YAML()
	if err != nil {
		return nil, err
	}
	return &Report{
		Started: time.Now().UTC(), Machine: ReadMachine(), Build: ReadBuild(repoDir),
		Command: command, Config: cfg, RaisedLimits: RaisedLimits,
	}, nil
}

// Finish stamps the duration, compares silas with the baseline and
// evaluates the targets.
func (r *Report) Finish() {
	r.DurationSeconds = seconds(time.Since(r.Started))
	r.Comparisons = r.compare()
	r.Targets = EvaluateTargets(r)
	for _, l := range r.Loads {
		for _, p := range l.Server.Profiles {
			if slices.Contains(l.Server.MissingProfiles, p) {
				r.Notes = append(r.Notes, fmt.Sprintf("%s: silas wrote no profile to %s", l.Name, p))
			} else {
				r.Notes = append(r.Notes, fmt.Sprintf("%s: silas profile in %s (go tool pprof %s)", l.Name, p, p))
			}
		}
	}
}

// JSON renders the report, indented.
func (r *Report) JSON() ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	return append(b, '\n'), nil
}

// Load returns silas's load result with the given customers and model
// delay and no think time, or nil.
func (r *Report) Load(customers int, delay time.Duration) *LoadResult {
	return findLoad(r.Loads, customers, delay)
}

// Baseline returns the baseline's load result with the given customers and
// model delay and no think time, or nil.
func (r *Report) Baseline(customers int, delay time.Duration) *LoadResult {
	return findLoad(r.BaselineLoads, customers, delay)
}

func findLoad(ls []*LoadResult, customers int, delay time.Duration) *LoadResult {
	for _, l := range ls {
		if l.Customers == customers && l.DelayMS == ms(delay) && l.ThinkMS == 0 {
			return l
		}
	}
	return nil
}

// compare pairs each silas load with the baseline's run of the same
// scenario (same name, customers, messages, model delay and think time).
func (r *Report) compare() []Comparison {
	var cs []Comparison
	for _, s := range r.Loads {
		for _, b := range r.BaselineLoads {
			if s.Name == b.Name && s.Customers == b.Customers && s.MessagesEach == b.MessagesEach &&
				s.DelayMS == b.DelayMS && s.ThinkMS == b.ThinkMS {
				cs = append(cs, Compare(s, b))
				break
			}
		}
	}
	return cs
}
