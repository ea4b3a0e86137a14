package persistence

import (
	"time"

	"github.com/rs/zerolog"
)

// DefaultProcessedTTL is how long processed and acked markers are kept when
// Options.ProcessedTTL is zero. A channel that redelivers a message later
// than this is treated as sending a new message.
const DefaultProcessedTTL = 7 * 24 * time.Hour

// Options configure Open.
type Options struct {
	// Dir is the Badger data directory. Required unless InMemory is set.
	Dir string
	// InMemory keeps everything in RAM (tests, ephemeral runs); nothing
	// survives Close. Dir must be empty.
	InMemory bool
	// SyncWrites makes every write wait for the write-ahead log to reach
	// stable storage before it returns; writes of many callers share one
	// sync (group commit, see the package doc). Default false: a write
	// survives a crash of the process but not a power loss.
	SyncWrites bool
	// Logger receives Badger's own log lines. Nil discards them.
	Logger *zerolog.Logger
	// VerboseStorageLog forwards Badger's info and debug lines too; by
	// default only warnings and errors are forwarded.
	VerboseStorageLog bool
	// ProcessedTTL is how long processed/acked message markers are kept for
	// idempotency (spec 19.2.3). Zero means DefaultProcessedTTL.
	ProcessedTTL time.Duration
	// MinFreeBytes is the free-space watermark (persistence.min_free_mb):
	// while Dir's file system has less free, Queue.Enqueue refuses new
	// messages with ErrDiskFull and DB.Space reports Low (space.go). Zero
	// turns the check off, and with it the preallocation of Badger's
	// write-ahead log that keeps a full disk from crashing the process.
	MinFreeBytes int64

	// Knobs for tests, zero meaning the default.
	memTableSize   int64                                     // Badger memtable size; bounds its transaction size
	maxGroupWrites int                                       // writes per commit group (defaultMaxGroupWrites)
	maxGroupBytes  int64                                     // estimated bytes per commit group (half Badger's max batch)
	spaceInterval  time.Duration                             // free-space checks (DefaultSpaceCheckInterval)
	statfs         func(dir string) (free uint64, err error) // measures free space (freeBytes)
}

func (o Options) processedTTL() time.Duration {
	if o.ProcessedTTL <= 0 {
		return DefaultProcessedTTL
	}
	return o.ProcessedTTL
}
