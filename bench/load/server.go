package load

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"
)

// Options says which binaries a scenario runs and how.
type Options struct {
	// SilasBin is the silas binary, e.g. "bin/silas".
	SilasBin string
	// MockBin is the mock model binary, e.g. "bin/mockllm".
	MockBin string
	// BaselineBin is the baseline daemon binary, e.g. "bin/baseline"; only
	// loads run against [DaemonBaseline] need it.
	BaselineBin string
	// ReadyTimeout bounds the wait for each process's ready line; zero means
	// 30 s.
	ReadyTimeout time.Duration
	// ServerCPUProfile and ServerMemProfile, if set, are passed to silas as
	// serve --cpuprofile and --memprofile (a CPU profile of the whole run, a
	// heap profile at shutdown); each scenario adds its name before the
	// extension.
	ServerCPUProfile string
	ServerMemProfile string
	// Progress, if set, is called about once a second while a scenario runs.
	Progress func(Progress)
	// Note, if set, receives one-line notes that should always be shown
	// (a kill and restart of the chaos scenario, a soak sample), as they
	// happen.
	Note func(string)
}

// note passes a formatted line to o.Note, if set.
func (o Options) note(format string, args ...any) {
	if o.Note != nil {
		o.Note(fmt.Sprintf(format, args...))
	}
}

func (o Options) readyTimeout() time.Duration {
	if o.ReadyTimeout > 0 {
		return o.ReadyTimeout
	}
	return 30 * time.Second
}

// Resolve makes the binary paths absolute (children run in their scenario
// directory) and reports a missing binary with what to do about it. The
// mock is required; an empty SilasBin or BaselineBin is left empty, and a
// scenario that needs it fails.
func (o *Options) Resolve() error {
	if o.MockBin == "" {
		return fmt.Errorf("no mock model binary; build it with `go build -o bin/mockllm ./bench/cmd/mockllm` (make bench does)")
	}
	for _, b := range []struct {
		path  *string
		build string
	}{
		{&o.SilasBin, "go build -o bin/silas ./cmd/silas"},
		{&o.MockBin, "go build -o bin/mockllm ./bench/cmd/mockllm"},
		{&o.BaselineBin, "go build -o bin/baseline ./bench/cmd/baseline"},
	} {
		if *b.path == "" {
			continue
		}
		abs, err := filepath.Abs(*b.path)
		if err != nil {
			return fmt.Errorf("binary %s: %w", *b.path, err)
		}
		if _, err := os.Stat(abs); err != nil {
			return fmt.Errorf("binary %s: %w; build it with `%s` (make bench does)", *b.path, err, b.build)
		}
		*b.path = abs
	}
	for _, p := range []*string{&o.ServerCPUProfile, &o.ServerMemProfile} {
		if *p == "" {
			continue
		}
		abs, err := filepath.Abs(*p)
		if err == nil {
			err = os.MkdirAll(filepath.Dir(abs), 0o755)
		}
		if err != nil {
			return fmt.Errorf("server profile %s: %w", *p, err)
		}
		*p = abs
	}
	return nil
}

// server is a daemon (silas or the baseline) and its mock model, running
// for one scenario.
type server struct {
	dir     string
	cfgPath string
	mock    *process
	// daemon is silas or the baseline, whichever the scenario drives.
	daemon       *process
	addr         string
	startToReady time.Duration
	profiles     []string // requested profile files
	// env is extra environment for the daemon, besides the model key.
	env []string
}

// readyLine is the line silas and the baseline print once they listen.
var readyLine = regexp.MustCompile(`ready on http://(\S+)`)

// startServer starts the mock model answering after delay, then the daemon
// d pointed at it, in a new temporary directory.
func (o Options) startServer(d Daemon, scenario string, delay time.Duration) (*server, error) {
	return o.startServerEnv(d, scenario, delay, nil)
}

// startServerEnv is startServer with extra environment for the daemon (and
// its restarts), such as a metrics token that must not appear in the
// config the report shows.
func (o Options) startServerEnv(d Daemon, scenario string, delay time.Duration, env []string) (_ *server, err error) {
	dir, err := os.MkdirTemp("", "silas-bench-")
	if err != nil {
		return nil, fmt.Errorf("make scenario directory: %w", err)
	}
	s := &server{dir: dir, env: env}
	defer func() {
		if err != nil {
			s.abort()
		}
	}()
	s.mock, err = startProcess("mockllm", o.MockBin,
		[]string{"-addr", "127.0.0.1:0", "-delay", delay.String()}, dir, childEnv())
	if err != nil {
		return nil, err
	}
	mockURL, _, err := s.mock.waitLine(o.readyTimeout(), func(l string) (string, bool) {
		return l, strings.HasPrefix(l, "http://")
	})
	if err != nil {
		return nil, err
	}
	if d == DaemonBaseline {
		return s, s.startBaseline(o, mockURL)
	}
	if d != DaemonSilas {
		return nil, fmt.Errorf("unknown daemon %q; want %s or %s", d, DaemonSilas, DaemonBaseline)
	}
	yaml, err := ServerConfig{DataDir: filepath.Join(dir, "data"), MockURL: mockURL}.YAML()
	if err != nil {
		return nil, err
	}
	cfgPath := filepath.Join(dir, "silas.yaml")
	if err := os.WriteFile(cfgPath, []byte(yaml), 0o600); err != nil {
		return nil, fmt.Errorf("write silas config: %w", err)
	}
	s.cfgPath = cfgPath
	return s, s.startSilas(o, scenario)
}

// startSilas starts silas with the scenario's config and waits until ready.
func (s *server) startSilas(o Options, scenario string) error {
	if o.SilasBin == "" {
		return fmt.Errorf("no silas binary; build it with `go build -o bin/silas ./cmd/silas` (make bench does)")
	}
	args := []string{"serve", "--config", s.cfgPath}
	s.profiles = nil
	for _, p := range []struct{ flag, path string }{{"--cpuprofile", o.ServerCPUProfile}, {"--memprofile", o.ServerMemProfile}} {
		if p.path != "" {
			path := profilePath(p.path, scenario)
			args = append(args, p.flag, path)
			s.profiles = append(s.profiles, path)
		}
	}
	return s.startDaemon(o, "silas", o.SilasBin, args)
}

// startBaseline starts the baseline daemon pointed at the mock and waits
// until ready.
func (s *server) startBaseline(o Options, mockURL string) error {
	if o.BaselineBin == "" {
		return fmt.Errorf("no baseline binary; build it with `go build -o bin/baseline ./bench/cmd/baseline` (make bench does)")
	}
	s.profiles = nil
	return s.startDaemon(o, "baseline", o.BaselineBin,
		[]string{"-addr", "127.0.0.1:0", "-model-url", mockURL, "-api-key-env", ModelKeyEnv})
}

// startDaemon starts the daemon and waits for its ready line.
func (s *server) startDaemon(o Options, name, bin string, args []string) error {
	var err error
	s.daemon, err = startProcess(name, bin, args, s.dir, childEnv(append([]string{ModelKeyEnv + "=bench"}, s.env...)...))
	if err != nil {
		return err
	}
	var ready time.Time
	s.addr, ready, err = s.daemon.waitLine(o.readyTimeout(), func(l string) (string, bool) {
		m := readyLine.FindStringSubmatch(l)
		if m == nil {
			return "", false
		}
		return m[1], true
	})
	if err != nil {
		return err
	}
	s.startToReady = ready.Sub(s.daemon.started)
	return nil
}

// profilePath inserts the scenario name before the extension of path.
func profilePath(path, scenario string) string {
	ext := filepath.Ext(path)
	return strings.TrimSuffix(path, ext) + "-" + scenario + ext
}

// MockStats is what the mock model counted, from its exit line.
type MockStats struct {
	Requests    int `json:"requests"`
	MaxInFlight int `json:"max_in_flight"`
}

// stopped is what a server leaves behind when it stops.
type stopped struct {
	mock MockStats
	// warnings counts the lines the daemon wrote to stderr (silas logs at
	// level warn and the baseline only errors, so every line is a warning
	// or an error).
	warnings int
	// missingProfiles are requested profiles silas did not write.
	missingProfiles []string
}

// stop stops the daemon, then the mock, reads the mock's counters and
// removes the scenario directory.
func (s *server) stop() (stopped, error) {
	var st stopped
	errDaemon := s.daemon.stop(60 * time.Second)
	st.warnings = s.daemon.stderr.Lines()
	for _, p := range s.profiles {
		if fi, err := os.Stat(p); err != nil || fi.Size() == 0 {
			st.missingProfiles = append(st.missingProfiles, p)
		}
	}
	errMock := s.mock.stop(10 * time.Second)
	st.mock = parseMockStats(s.mock.stderr.String())
	if err := os.RemoveAll(s.dir); err != nil {
		return st, fmt.Errorf("remove scenario directory: %w", err)
	}
	if errDaemon != nil {
		return st, errDaemon
	}
	return st, errMock
}

// abort kills whatever runs and removes the directory; for failures.
func (s *server) abort() {
	if s.daemon != nil {
		s.daemon.kill()
	}
	if s.mock != nil {
		s.mock.kill()
	}
	_ = os.RemoveAll(s.dir)
}

var mockStatsLine = regexp.MustCompile(`mockllm: (\d+) requests \(max (\d+) in flight`)

// parseMockStats reads the counters from the mock's exit line; zero if
// absent.
func parseMockStats(stderr string) MockStats {
	var ms MockStats
	m := mockStatsLine.FindStringSubmatch(stderr)
	if m == nil {
		return ms
	}
	_, _ = fmt.Sscan(m[1], &ms.Requests)
	_, _ = fmt.Sscan(m[2], &ms.MaxInFlight)
	return ms
}
