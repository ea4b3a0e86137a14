package load

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// OpenFDs counts the open file descriptors of process pid
// (/proc/<pid>/fd).
func OpenFDs(pid int) (int, error) {
	es, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	if err != nil {
		return 0, fmt.Errorf("count open files of pid %d: %w", pid, err)
	}
	return len(es), nil
}

// DirSize is the size of a directory tree: the bytes of its regular files
// as listed (Apparent) and the disk blocks they hold (Allocated, what du
// reports). Badger's files are preallocated and memory-mapped, so the two
// differ.
type DirSize struct {
	Apparent  int64
	Allocated int64
}

// MeasureDir walks dir and sums its regular files. Files that vanish
// during the walk (Badger compacts as it goes) are skipped.
func MeasureDir(dir string) (DirSize, error) {
	var s DirSize
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) && path != dir {
				return nil
			}
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		s.Apparent += fi.Size()
		if st, ok := fi.Sys().(*syscall.Stat_t); ok {
			s.Allocated += st.Blocks * 512
		}
		return nil
	})
	if err != nil {
		return s, fmt.Errorf("measure %s: %w", dir, err)
	}
	return s, nil
}

// metricsClient reads gauges from a daemon's /metrics with a bearer token
// (the owner token or silas.channels.web.metrics_token).
type metricsClient struct {
	http  *http.Client
	token string
}

func newMetricsClient(token string) *metricsClient {
	return &metricsClient{http: &http.Client{Timeout: 5 * time.Second}, token: token}
}

// gauges fetches http://addr/metrics once and returns the values of the
// samples named names (without labels), in that order.
func (m *metricsClient) gauges(ctx context.Context, addr string, names ...string) ([]float64, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/metrics", nil)
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+m.token)
	resp, err := m.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("read /metrics: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("read /metrics: status %d: %s", resp.StatusCode, firstLine(body))
	}
	vs := make([]float64, len(names))
	for i, name := range names {
		if vs[i], err = parseGauge(body, name); err != nil {
			return nil, err
		}
	}
	return vs, nil
}

// parseGauge finds "name value" in a Prometheus text exposition. A sample
// with labels ("name{...} value") is not the one asked for.
func parseGauge(exposition []byte, name string) (float64, error) {
	sc := bufio.NewScanner(bytes.NewReader(exposition))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != name {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			return 0, fmt.Errorf("metric %s: value %q: %w", name, f[1], err)
		}
		return v, nil
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("scan /metrics: %w", err)
	}
	return 0, fmt.Errorf("metric %s not in /metrics", name)
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\n"))
	if len(line) > 200 {
		line = line[:200]
	}
	return string(line)
}
