package persistence

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/rs/zerolog"
)

// Free-space watermark. A full disk must not take the daemon down: Badger
// writes its logs through memory-mapped files, and a page of such a file
// that the file system cannot back makes the kernel send SIGBUS, which no
// Go code can turn into an error. So the DB watches the free space of the
// data dir's file system and, below Options.MinFreeBytes, refuses the
// writes that would start new work (Queue.Enqueue, ErrDiskFull), while
// turns already accepted, acks, deliveries and the audit log go on inside
// the room the watermark keeps. Should the space fall under a quarter of
// the watermark anyway (another process filling the disk), every write is
// refused with ErrDiskFull, so that Badger never has to flush a memtable
// or start a new log without room for it. Once space is freed, the next
// check lets writes and new messages in again, without a restart.
//
// Badger's files are kept from growing into space the watermark does not
// cover (see badgerOptions in db.go): the write-ahead log of the memtable
// in use is allocated on disk (fallocate) right after Badger creates it,
// so its writes never need a new block; value log files are small; and
// what a memtable flush writes (one table of at most a memtable's size) is
// what the watermark leaves room for.

// DefaultSpaceCheckInterval is how often the free space is measured.
const DefaultSpaceCheckInterval = time.Second

// DiskSpace is the last measurement of the data dir's file system.
type DiskSpace struct {
	// Dir is the directory measured (Options.Dir).
	Dir string `json:"dir"`
	// FreeBytes is the space available to unprivileged writers.
	FreeBytes uint64 `json:"free_bytes"`
	// MinFreeBytes is the watermark (Options.MinFreeBytes); 0 means off.
	MinFreeBytes uint64 `json:"min_free_bytes"`
	// CheckedAt is when it was measured.
	CheckedAt time.Time `json:"checked_at"`
	// Err is why the measurement failed; the watermark is then not
	// enforced (a file system that cannot say is not assumed full).
	Err error `json:"-"`
}

// Low reports whether the free space is below the watermark.
func (s DiskSpace) Low() bool {
	return s.MinFreeBytes > 0 && s.Err == nil && s.FreeBytes < s.MinFreeBytes
}

// Critical reports whether the free space is below a quarter of the
// watermark, where the DB refuses every write.
func (s DiskSpace) Critical() bool {
	return s.MinFreeBytes > 0 && s.Err == nil && s.FreeBytes < s.MinFreeBytes/4
}

// Refusal returns nil above the watermark, and otherwise an error
// wrapping ErrDiskFull that names the directory, the free space and what
// to do.
func (s DiskSpace) Refusal() error {
	if !s.Low() {
		return nil
	}
	return fmt.Errorf("%w: the file system of %s has %d MB free, below persistence.min_free_mb (%d MB); "+
		"free space there (or lower persistence.min_free_mb) and new messages are accepted again within seconds, without a restart",
		ErrDiskFull, s.Dir, s.FreeBytes>>20, s.MinFreeBytes>>20)
}

// criticalRefusal returns nil unless the space is critical, and then an
// error wrapping ErrDiskFull for any write.
func (s DiskSpace) criticalRefusal() error {
	if !s.Critical() {
		return nil
	}
	return fmt.Errorf("%w: the file system of %s has %d MB free, under a quarter of persistence.min_free_mb (%d MB), so no write is taken "+
		"(Badger could not flush or compact without crashing); free space there and writes resume within seconds",
		ErrDiskFull, s.Dir, s.FreeBytes>>20, s.MinFreeBytes>>20)
}

// spaceMonitor measures free space on a ticker and keeps the write-ahead
// log in use allocated. It belongs to one DB; the DB starts and stops it.
type spaceMonitor struct {
	dir      string
	min      uint64
	interval time.Duration
	statfs   func(dir string) (free uint64, err error)
	log      zerolog.Logger

	last atomic.Pointer[DiskSpace]

	// Owned by the monitor goroutine (and by start, before it runs).
	allocated string // the .mem file last allocated
	noAlloc   bool   // the file system cannot fallocate
	wasLow    bool

	stop chan struct{}
	done chan struct{}
}

func newSpaceMonitor(o Options) *spaceMonitor {
	m := &spaceMonitor{
		dir: o.Dir, interval: o.spaceInterval, statfs: o.statfs,
		stop: make(chan struct{}), done: make(chan struct{}),
		log: zerolog.Nop(),
	}
	if o.MinFreeBytes > 0 {
		m.min = uint64(o.MinFreeBytes)
	}
	if m.interval <= 0 {
		m.interval = DefaultSpaceCheckInterval
	}
	if m.statfs == nil {
		m.statfs = freeBytes
	}
	// Without a watermark nothing of this is wanted (tests, tools): the
	// log stays sparse, as Badger makes it.
	m.noAlloc = m.min == 0
	if o.Logger != nil {
		m.log = o.Logger.With().Str("component", "persistence").Logger()
	}
	return m
}

// start measures once, so that Open already knows, then keeps measuring
// every interval until close.
func (m *spaceMonitor) start() {
	m.tick()
	go pprof.Do(context.Background(), pprof.Labels("silas", "persistence.space"), func(context.Context) {
		defer close(m.done)
		t := time.NewTicker(m.interval)
		defer t.Stop()
		for {
			select {
			case <-m.stop:
				return
			case <-t.C:
				m.tick()
			}
		}
	})
}

func (m *spaceMonitor) close() {
	close(m.stop)
	<-m.done
}

// tick allocates a new write-ahead log, then measures.
func (m *spaceMonitor) tick() {
	allocErr := m.allocateWAL()
	s := m.measure()
	if allocErr != nil {
		m.log.Error().Err(allocErr).Str("dir", m.dir).Msg("cannot allocate Badger's write-ahead log on disk; the disk is full")
	}
	switch low := s.Low(); {
	case low && !m.wasLow:
		m.log.Error().Str("dir", m.dir).Uint64("free_mb", s.FreeBytes>>20).Uint64("min_free_mb", m.min>>20).
			Msg("disk space below persistence.min_free_mb: new messages are refused until space is freed")
	case !low && m.wasLow:
		m.log.Info().Str("dir", m.dir).Uint64("free_mb", s.FreeBytes>>20).Msg("disk space above persistence.min_free_mb again: accepting new messages")
	}
	m.wasLow = s.Low()
}

// measure takes one measurement and publishes it.
func (m *spaceMonitor) measure() DiskSpace {
	s := DiskSpace{Dir: m.dir, MinFreeBytes: m.min, CheckedAt: time.Now()}
	s.FreeBytes, s.Err = m.statfs(m.dir)
	if s.Err != nil {
		s.Err = fmt.Errorf("measure free space of %s: %w", m.dir, s.Err)
	}
	m.last.Store(&s)
	return s
}

// space returns the last measurement.
func (m *spaceMonitor) space() DiskSpace {
	if s := m.last.Load(); s != nil {
		return *s
	}
	return DiskSpace{Dir: m.dir, MinFreeBytes: m.min}
}

// allocateWAL allocates the newest memtable log (<fid>.mem) on disk, once
// per file. Badger creates it as a sparse file and writes it through a
// memory mapping; allocated, its pages are backed, and a write to it
// cannot fault when another process fills the disk. A failure with ENOSPC
// is returned (the disk is full); one saying the file system cannot
// allocate turns allocation off.
func (m *spaceMonitor) allocateWAL() error {
	if m.noAlloc {
		return nil
	}
	name, err := newestWAL(m.dir)
	if err != nil || name == "" || name == m.allocated {
		return nil // nothing new; a dir that cannot be read shows in measure
	}
	err = allocateFile(filepath.Join(m.dir, name))
	switch {
	case err == nil:
		m.allocated = name
		return nil
	case errors.Is(err, errAllocUnsupported):
		m.noAlloc = true
		m.log.Info().Err(err).Str("dir", m.dir).Msg("the data dir's file system cannot preallocate files; relying on the free-space watermark alone")
		return nil
	case errors.Is(err, os.ErrNotExist):
		return nil // flushed and deleted since the listing
	}
	return err
}

// noRoomToFlush measures once more and returns an error wrapping
// ErrDiskFull when the file system has less free space than a memtable
// flush may write. Badger's Close writes the memtable out as a table
// through a memory mapping, and without room for it that is SIGBUS: Close
// then leaves Badger open, since everything is in the write-ahead log
// (allocated, see allocateWAL), which the next Open replays. The process
// is shutting down; its exit releases Badger's files and lock.
func (m *spaceMonitor) noRoomToFlush() error {
	if m.min == 0 {
		return nil
	}
	free, err := m.statfs(m.dir)
	if err != nil || free >= flushRoom {
		return nil
	}
	m.log.Error().Str("dir", m.dir).Uint64("free_mb", free>>20).
		Msg("disk full: closing without flushing the memtable; the write-ahead log holds every write and is replayed at the next start")
	return fmt.Errorf("close: %w: the file system of %s has %d MB free, less than a memtable flush needs (%d MB); "+
		"the database was left to its write-ahead log, which the next start replays: free space before starting again",
		ErrDiskFull, m.dir, free>>20, flushRoom>>20)
}

// flushRoom is the free space a memtable flush may need: a table of at
// most the memtable's size, and some room for the manifest.
const flushRoom = memTableSize + memTableSize/2

// newestWAL returns the name of the highest-numbered .mem file in dir.
func newestWAL(dir string) (string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	best, bestID := "", int64(-1)
	for _, e := range entries {
		id, ok := strings.CutSuffix(e.Name(), ".mem")
		if !ok {
			continue
		}
		n, err := strconv.ParseInt(id, 10, 64)
		if err == nil && n > bestID {
			best, bestID = e.Name(), n
		}
	}
	return best, nil
}

// Space returns the last measurement of the data dir's free space (taken
// at most DefaultSpaceCheckInterval ago). An in-memory DB reports no
// watermark.
func (d *DB) Space() DiskSpace {
	if d.space == nil {
		return DiskSpace{}
	}
	return d.space.space()
}

// AcceptingWork returns nil when new work may start, and otherwise an
// error wrapping ErrDiskFull (free space is below Options.MinFreeBytes) or
// ErrClosed. It reads the last measurement and costs no system call, so
// actors may call it before they accept a message.
func (d *DB) AcceptingWork() error {
	if d.closed.Load() {
		return ErrClosed
	}
	return d.Space().Refusal()
}
