package proc

import (
	"bufio"
	"bytes"
	"os"
	"strconv"
)

// TasksOf counts the tasks (processes and threads, as RLIMIT_NPROC counts
// them) whose real uid is uid, from /proc. Tasks it cannot read are not
// counted.
func TasksOf(uid int) int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	n := 0
	for _, e := range entries {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/status")
		if err != nil {
			continue
		}
		if u, threads, ok := parseStatusIDs(b); ok && u == uid {
			n += threads
		}
	}
	return n
}

// parseStatusIDs reads the real uid and the thread count of a
// /proc/<pid>/status file.
func parseStatusIDs(b []byte) (uid, threads int, ok bool) {
	var haveUID, haveThreads bool
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		key, val, found := bytes.Cut(sc.Bytes(), []byte(":"))
		if !found {
			continue
		}
		fields := bytes.Fields(val)
		if len(fields) == 0 {
			continue
		}
		n, err := strconv.Atoi(string(fields[0]))
		if err != nil {
			continue
		}
		switch string(key) {
		case "Uid":
			uid, haveUID = n, true
		case "Threads":
			threads, haveThreads = n, true
		}
	}
	return uid, threads, haveUID && haveThreads
}
