package persistence

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/dgraph-io/badger/v4"
	"github.com/dgraph-io/badger/v4/options"
)

// TestSnappyDataDirStillOpens: data dirs written before memOptions turned
// compression off hold Snappy tables. They open with the current options
// (no block cache), read back, and survive a compaction that rewrites them.
func TestSnappyDataDirStillOpens(t *testing.T) {
	dir := t.TempDir()
	old := badger.DefaultOptions(dir).WithLogger(nil).WithCompression(options.Snappy).WithMemTableSize(1 << 20).WithValueThreshold(1 << 16)
	bdb, err := badger.Open(old)
	if err != nil {
		t.Fatal(err)
	}
	val := func(i int) []byte { return bytes.Repeat([]byte(fmt.Sprintf("value %d ", i)), 40) }
	const n = 3000 // several memtables: several compressed tables
	for i := 0; i < n; i += 100 {
		err := bdb.Update(func(txn *badger.Txn) error {
			for j := i; j < i+100; j++ {
				if err := txn.Set([]byte(fmt.Sprintf("k%05d", j)), val(j)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}

	readAll := func(bdb *badger.DB) {
		t.Helper()
		err := bdb.View(func(txn *badger.Txn) error {
			for i := 0; i < n; i++ {
				item, err := txn.Get([]byte(fmt.Sprintf("k%05d", i)))
				if err != nil {
					return fmt.Errorf("key %d: %w", i, err)
				}
				v, err := item.ValueCopy(nil)
				if err != nil {
					return err
				}
				if !bytes.Equal(v, val(i)) {
					return errors.New("value changed")
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	bdb, err = badger.Open(badgerOptions(Options{Dir: dir}))
	if err != nil {
		t.Fatalf("open a Snappy data dir with the current options: %v", err)
	}
	t.Cleanup(func() { _ = bdb.Close() })
	var compressed int
	for _, ti := range bdb.Tables() {
		if uint64(ti.OnDiskSize) < uint64(ti.UncompressedSize)/2 {
			compressed++
		}
	}
	if compressed == 0 {
		t.Fatalf("the old data dir has no compressed table (%d tables): the test wrote too little", len(bdb.Tables()))
	}
	readAll(bdb)
	if err := bdb.Flatten(2); err != nil {
		t.Fatal(err)
	}
	readAll(bdb)
	if err := bdb.Close(); err != nil {
		t.Fatal(err)
	}

	// And the store on top of it opens too.
	d, err := Open(context.Background(), Options{Dir: dir})
	if err != nil {
		t.Fatalf("open persistence on the old data dir: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
}
