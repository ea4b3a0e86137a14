package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/silas-ai/silas/config"
	"github.com/silas-ai/silas/messages"
	"github.com/silas-ai/silas/persistence"
)

// Memory bundles (spec 6.5, memory.portability_bundle_format). A bundle is
// newline-delimited JSON: a header line, then one line per memory item.
//
//	{"bundle_version":"jsonl-v1","exported_at":"...","schema_version":2,"scopes":["owner"],"count":2}
//	{"scope":"owner","item":{"memory_id":"m1",...}}
//	{"scope":"owner","item":{"memory_id":"m2",...}}
//
// Items keep every MemoryItem field as stored (taint, trust_level,
// reingestion_tier, timestamps, embedding). Readers decode strictly: an
// unknown field is refused rather than silently dropped.

// bundleFormat is the only bundle format this build reads and writes.
const bundleFormat = "jsonl-v1"

// bundleHeader is the first line of a bundle.
type bundleHeader struct {
	// BundleVersion names the bundle format; always bundleFormat here.
	BundleVersion string `json:"bundle_version"`
	// ExportedAt is when the bundle was written (UTC).
	ExportedAt time.Time `json:"exported_at"`
	// SchemaVersion is the store schema of the silas that wrote it; a
	// bundle from a newer schema is refused.
	SchemaVersion uint32 `json:"schema_version"`
	// Scopes are the scopes the bundle covers, each fully: import
	// --replace clears exactly these. Every item's scope is one of them.
	Scopes []string `json:"scopes"`
	// Count is the number of item lines; a reader refuses a bundle whose
	// item lines differ (truncated or edited).
	Count int `json:"count"`
}

// bundleRecord is every line after the header.
type bundleRecord struct {
	Scope string              `json:"scope"`
	Item  messages.MemoryItem `json:"item"`
}

// maxBundleLine bounds one bundle line: an item is at most
// persistence.MaxValueBytes stored, plus its scope and the envelope.
const maxBundleLine = persistence.MaxValueBytes + 64<<10

// importChunkItems and importChunkBytes bound one Memory.Put of an import;
// a chunk Badger still finds too large is split in halves.
const (
	importChunkItems = 256
	importChunkBytes = 1 << 20
)

const memoryUsage = "Usage: silas memory export [--scope S] [--out FILE|-]\n       silas memory import --merge|--replace [--in FILE|-]\n       silas memory reindex [--scope S]"

// runMemory dispatches `silas memory export|import`.
func runMemory(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	if len(args) > 0 {
		switch args[0] {
		case "export":
			return runMemoryExport(ctx, args[1:], stdout, stderr)
		case "import":
			return runMemoryImport(ctx, args[1:], stdin, stdout, stderr)
		case "reindex":
			return runMemoryReindex(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintln(stderr, memoryUsage)
	return &exitError{code: 2, err: errors.New("memory: the subcommands are export, import and reindex")}
}

// runMemoryReindex rebuilds the keyword (BM25) index of every scope, or of
// one, from the stored items (persistence.Memory.Reindex).
func runMemoryReindex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("memory reindex", "Rebuild the memory keyword index (BM25 postings, document frequencies, totals) from the stored items.\nStop the daemon first: the database allows one process at a time.", stderr)
	var c common
	c.register(fs)
	scope := fs.String("scope", "", "reindex only this scope (default: every scope)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("memory reindex: unexpected argument %q; use --scope S", fs.Arg(0))}
	}
	cfg, err := c.load(nil)
	if err != nil {
		return err
	}
	if _, err := os.Stat(cfg.DataPath("db")); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("memory reindex: no database at %s; check --data-dir or silas.data_dir", cfg.DataPath("db"))
	}
	db, err := openMemoryDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	mem := db.Memory()
	scopes := []string{*scope}
	if *scope == "" {
		if scopes, err = mem.Scopes(ctx); err != nil {
			return fmt.Errorf("memory reindex: %w", err)
		}
	}
	total := 0
	for _, s := range scopes {
		n, err := mem.Reindex(ctx, s)
		if err != nil {
			return fmt.Errorf("memory reindex: %w; run it again to finish", err)
		}
		total += n
	}
	fmt.Fprintf(stdout, "reindexed %d %s in %d %s\n", total, plural(total, "memory", "memories"), len(scopes), plural(len(scopes), "scope", "scopes"))
	return nil
}

// openMemoryDB opens the database of cfg, which the daemon must not hold.
func openMemoryDB(ctx context.Context, cfg *config.Config) (*persistence.DB, error) {
	db, err := persistence.Open(ctx, persistence.Options{Dir: cfg.DataPath("db"), SyncWrites: cfg.Persistence.SyncWrites})
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w (is `silas serve` still running? stop it first)", cfg.DataPath("db"), err)
	}
	return db, nil
}

// checkFormat refuses a configured bundle format this build cannot write.
func checkFormat(cfg *config.Config) error {
	if f := cfg.Memory.PortabilityBundleFormat; f != "" && f != bundleFormat {
		return fmt.Errorf("memory.portability_bundle_format is %q but this silas only supports %q; fix the config", f, bundleFormat)
	}
	return nil
}

func runMemoryExport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("memory export", "Write every memory item (or one scope's) to a jsonl-v1 bundle that `silas memory import` reads.\nStop the daemon first: the database allows one process at a time.", stderr)
	var c common
	c.register(fs)
	scope := fs.String("scope", "", "export only this scope (default: every scope)")
	out := fs.String("out", "-", `bundle file to write, or "-" for standard output`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("memory export: unexpected argument %q; use --out FILE", fs.Arg(0))}
	}
	cfg, err := c.load(nil)
	if err != nil {
		return err
	}
	if err := checkFormat(cfg); err != nil {
		return err
	}
	// Opening creates a missing database; an export from a mistyped data
	// dir must fail instead of writing an empty bundle.
	if _, err := os.Stat(cfg.DataPath("db")); errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("memory export: no database at %s; check --data-dir or silas.data_dir", cfg.DataPath("db"))
	}
	db, err := openMemoryDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()

	mem := db.Memory()
	scopes := []string{}
	if *scope != "" {
		scopes = []string{*scope}
	} else if all, err := mem.Scopes(ctx); err != nil {
		return fmt.Errorf("memory export: %w", err)
	} else if all != nil {
		scopes = all
	}
	h := bundleHeader{BundleVersion: bundleFormat, ExportedAt: time.Now().UTC(), SchemaVersion: persistence.SchemaVersion(), Scopes: scopes}
	for _, s := range scopes {
		n, err := mem.Count(ctx, s)
		if err != nil {
			return fmt.Errorf("memory export: %w", err)
		}
		if n == 0 {
			fmt.Fprintf(stderr, "warning: scope %q has no memories; the bundle holds it empty (import --replace would clear it)\n", s)
		}
		h.Count += n
	}

	dest, summary := "standard output", stderr // keep the bundle alone on stdout
	write := func(w io.Writer) error { return writeBundle(ctx, mem, h, w) }
	if *out == "-" {
		bw := bufio.NewWriter(stdout)
		if err := write(bw); err != nil {
			return fmt.Errorf("memory export: %w", err)
		}
		if err := bw.Flush(); err != nil {
			return fmt.Errorf("memory export: write standard output: %w", err)
		}
	} else {
		dest, summary = *out, stdout
		if err := writeFileAtomic(*out, write); err != nil {
			return fmt.Errorf("memory export: %w", err)
		}
	}
	fmt.Fprintf(summary, "exported %d %s from %d %s to %s\n", h.Count, plural(h.Count, "memory", "memories"), len(scopes), plural(len(scopes), "scope", "scopes"), dest)
	return nil
}

// writeBundle writes h and then every item of h.Scopes to w. It fails if
// the items differ in number from h.Count.
func writeBundle(ctx context.Context, mem persistence.Memory, h bundleHeader, w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(h); err != nil {
		return fmt.Errorf("write bundle header: %w", err)
	}
	n := 0
	for _, s := range h.Scopes {
		err := mem.All(ctx, s, func(m messages.MemoryItem) error {
			n++
			return enc.Encode(bundleRecord{Scope: s, Item: m})
		})
		if err != nil {
			return fmt.Errorf("write scope %s: %w", s, err)
		}
	}
	if n != h.Count {
		return fmt.Errorf("memory changed during export (%d items counted, %d written); stop the daemon and export again", h.Count, n)
	}
	return nil
}

// writeFileAtomic writes path through fn into a temporary file next to it
// (mode 0600: memories are private) and renames it into place once synced,
// so a failed export never leaves a truncated bundle at path.
func writeFileAtomic(path string, fn func(io.Writer) error) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("create bundle file next to %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	bw := bufio.NewWriter(f)
	if err := fn(bw); err != nil {
		return err
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("close %s: %w", path, err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("move bundle into place at %s: %w", path, err)
	}
	return nil
}

func runMemoryImport(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	fs := newFlagSet("memory import", "Read a jsonl-v1 bundle written by `silas memory export` into the database.\nThe whole bundle is checked before anything is written; a bad line imports nothing.\nStop the daemon first: the database allows one process at a time.", stderr)
	var c common
	c.register(fs)
	merge := fs.Bool("merge", false, "add the bundle's items, replacing items with the same memory_id")
	replace := fs.Bool("replace", false, "delete every memory of the bundle's scopes first, then add its items")
	in := fs.String("in", "-", `bundle file to read, or "-" for standard input`)
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return &exitError{code: 2, err: fmt.Errorf("memory import: unexpected argument %q; use --in FILE", fs.Arg(0))}
	}
	if *merge == *replace {
		return &exitError{code: 2, err: errors.New("memory import: give exactly one of --merge (upsert by memory_id) or --replace (clear the bundle's scopes first)")}
	}
	cfg, err := c.load(nil)
	if err != nil {
		return err
	}
	if err := checkFormat(cfg); err != nil {
		return err
	}

	src, name, cleanup, err := openBundle(*in, stdin)
	if err != nil {
		return fmt.Errorf("memory import: %w", err)
	}
	defer cleanup()
	h, err := checkBundle(src)
	if err != nil {
		return fmt.Errorf("memory import: %s: %w; nothing was imported", name, err)
	}

	db, err := openMemoryDB(ctx, cfg)
	if err != nil {
		return err
	}
	defer db.Close()
	mem := db.Memory()
	if *replace {
		for _, s := range h.Scopes {
			if err := mem.DeleteScope(ctx, s); err != nil {
				return fmt.Errorf("memory import: clear scope %s: %w; run the import again to finish", s, err)
			}
		}
	}
	if _, err := src.Seek(0, io.SeekStart); err != nil {
		return fmt.Errorf("memory import: rewind %s: %w", name, err)
	}
	if err := importBundle(ctx, mem, src); err != nil {
		return fmt.Errorf("memory import: %s: %w; part of the bundle may be imported, run the import again", name, err)
	}
	mode := "merged"
	if *replace {
		mode = "replaced"
	}
	fmt.Fprintf(stdout, "imported %d %s into %d %s from %s (%s)\n", h.Count, plural(h.Count, "memory", "memories"), len(h.Scopes), plural(len(h.Scopes), "scope", "scopes"), name, mode)
	return nil
}

// openBundle opens the bundle to import. Standard input is copied to a
// temporary file first, because an import reads the bundle twice: once to
// check all of it, once to write it.
func openBundle(in string, stdin io.Reader) (io.ReadSeeker, string, func(), error) {
	if in != "-" {
		f, err := os.Open(in)
		if err != nil {
			return nil, "", nil, fmt.Errorf("open bundle: %w", err)
		}
		return f, in, func() { f.Close() }, nil
	}
	f, err := os.CreateTemp("", "silas-memory-import-*.jsonl")
	if err != nil {
		return nil, "", nil, fmt.Errorf("buffer standard input: %w", err)
	}
	cleanup := func() {
		f.Close()
		os.Remove(f.Name())
	}
	if _, err := io.Copy(f, stdin); err != nil {
		cleanup()
		return nil, "", nil, fmt.Errorf("read standard input: %w", err)
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		cleanup()
		return nil, "", nil, fmt.Errorf("rewind buffered standard input: %w", err)
	}
	return f, "standard input", cleanup, nil
}

// checkBundle reads all of r and reports the first problem that would stop
// the import, naming its line: an unknown format, an item failing
// MemoryItem.Validate, a scope missing from the header, a duplicate
// memory_id, or an item count that differs from the header's.
func checkBundle(r io.Reader) (bundleHeader, error) {
	seen := map[string]int{} // scope \0 memory_id -> line
	n := 0
	h, err := scanBundle(r, func(line int, rec *bundleRecord) error {
		k := rec.Scope + "\x00" + rec.Item.MemoryID
		if first, dup := seen[k]; dup {
			return fmt.Errorf("line %d: memory_id %q of scope %q already appears on line %d; remove one of them", line, rec.Item.MemoryID, rec.Scope, first)
		}
		seen[k] = line
		n++
		return nil
	})
	if err != nil {
		return bundleHeader{}, err
	}
	if n != h.Count {
		return bundleHeader{}, fmt.Errorf("the header announces %d items but the bundle holds %d: it was truncated or edited; export it again", h.Count, n)
	}
	return h, nil
}

// importBundle writes the items of the bundle r (already checked) in
// chunks of one scope each.
func importBundle(ctx context.Context, mem persistence.Memory, r io.Reader) error {
	var (
		scope string
		chunk []messages.MemoryItem
		size  int
	)
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		err := putChunk(ctx, mem, scope, chunk)
		chunk, size = chunk[:0], 0
		return err
	}
	_, err := scanBundle(r, func(line int, rec *bundleRecord) error {
		if rec.Scope != scope || len(chunk) == importChunkItems || size >= importChunkBytes {
			if err := flush(); err != nil {
				return fmt.Errorf("before line %d: %w", line, err)
			}
			scope = rec.Scope
		}
		chunk = append(chunk, rec.Item)
		size += len(rec.Item.Content) + 4*len(rec.Item.Embedding)
		return nil
	})
	if err != nil {
		return err
	}
	return flush()
}

// putChunk stores items in scope, halving a chunk too large for one
// transaction.
func putChunk(ctx context.Context, mem persistence.Memory, scope string, items []messages.MemoryItem) error {
	err := mem.Put(ctx, scope, items...)
	if errors.Is(err, persistence.ErrTooLarge) && len(items) > 1 {
		half := len(items) / 2
		if err := putChunk(ctx, mem, scope, items[:half]); err != nil {
			return err
		}
		return putChunk(ctx, mem, scope, items[half:])
	}
	return err
}

// scanBundle reads the header of the bundle r, then calls fn with every
// item line that passes the checks of one line; errors name the line.
// Blank lines are skipped.
func scanBundle(r io.Reader, fn func(line int, rec *bundleRecord) error) (bundleHeader, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxBundleLine)
	var (
		h      bundleHeader
		scopes map[string]bool
		line   int
		header bool
	)
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if !header {
			var err error
			if h, err = parseHeader(b); err != nil {
				return bundleHeader{}, fmt.Errorf("line %d: %w", line, err)
			}
			header = true
			scopes = make(map[string]bool, len(h.Scopes))
			for _, s := range h.Scopes {
				scopes[s] = true
			}
			continue
		}
		var rec bundleRecord
		if err := decodeStrict(b, &rec); err != nil {
			return bundleHeader{}, fmt.Errorf("line %d: %w", line, err)
		}
		if err := checkRecord(&rec, scopes); err != nil {
			return bundleHeader{}, fmt.Errorf("line %d: %w", line, err)
		}
		if err := fn(line, &rec); err != nil {
			return bundleHeader{}, err
		}
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return bundleHeader{}, fmt.Errorf("line %d is longer than %d bytes, more than any memory item can be", line+1, maxBundleLine)
		}
		return bundleHeader{}, fmt.Errorf("read bundle: %w", err)
	}
	if !header {
		return bundleHeader{}, errors.New("the bundle is empty; write one with `silas memory export`")
	}
	return h, nil
}

// parseHeader decodes and checks a bundle's header line.
func parseHeader(b []byte) (bundleHeader, error) {
	var probe struct {
		BundleVersion *string `json:"bundle_version"`
	}
	if err := json.Unmarshal(b, &probe); err != nil || probe.BundleVersion == nil {
		return bundleHeader{}, errors.New(`not a memory bundle header (want {"bundle_version":"jsonl-v1",...}); write bundles with ` + "`silas memory export`")
	}
	if *probe.BundleVersion != bundleFormat {
		return bundleHeader{}, fmt.Errorf("bundle version %q is not supported: this silas reads %q; import it with the silas that exported it, or upgrade silas", *probe.BundleVersion, bundleFormat)
	}
	var h bundleHeader
	if err := decodeStrict(b, &h); err != nil {
		return bundleHeader{}, fmt.Errorf("bundle header: %w", err)
	}
	if h.SchemaVersion > persistence.SchemaVersion() {
		return bundleHeader{}, fmt.Errorf("bundle has schema version %d, this silas knows %d: upgrade silas to import it", h.SchemaVersion, persistence.SchemaVersion())
	}
	if h.Count < 0 {
		return bundleHeader{}, fmt.Errorf("bundle header: count %d is negative", h.Count)
	}
	for _, s := range h.Scopes {
		if err := checkKeyID("scope", s); err != nil {
			return bundleHeader{}, fmt.Errorf("bundle header: %w", err)
		}
	}
	slices.Sort(h.Scopes)
	h.Scopes = slices.Compact(h.Scopes)
	return h, nil
}

// checkRecord checks one item line: what Memory.Put would refuse, checked
// before anything is written.
func checkRecord(rec *bundleRecord, scopes map[string]bool) error {
	if err := checkKeyID("scope", rec.Scope); err != nil {
		return err
	}
	if !scopes[rec.Scope] {
		return fmt.Errorf("scope %q is not listed in the bundle header's scopes; add it there", rec.Scope)
	}
	m := &rec.Item
	if err := m.Validate(); err != nil {
		return err
	}
	if err := checkKeyID("memory_id", m.MemoryID); err != nil {
		return err
	}
	if !m.CreatedAt.IsZero() && (m.CreatedAt.Before(time.Unix(0, math.MinInt64)) || m.CreatedAt.After(time.Unix(0, math.MaxInt64))) {
		return fmt.Errorf("memory %s: created_at %s is outside 1678-2262", m.MemoryID, m.CreatedAt)
	}
	v, err := json.Marshal(m)
	if err != nil {
		return fmt.Errorf("memory %s: %w", m.MemoryID, err)
	}
	if len(v) >= persistence.MaxValueBytes {
		return fmt.Errorf("memory %s is %d bytes, more than the %d a memory item may take", m.MemoryID, len(v), persistence.MaxValueBytes)
	}
	return nil
}

// checkKeyID mirrors the identifier rules of persistence's key layout.
func checkKeyID(what, s string) error {
	switch {
	case s == "":
		return fmt.Errorf("%s is empty", what)
	case len(s) > 1024:
		return fmt.Errorf("%s is %d bytes, more than 1024", what, len(s))
	case strings.IndexByte(s, 0) >= 0:
		return fmt.Errorf("%s %q contains a NUL byte", what, s)
	}
	return nil
}

// decodeStrict decodes one JSON value from b into v, refusing unknown
// fields and trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("invalid JSON: %w", err)
	}
	if dec.More() {
		return errors.New("invalid JSON: more than one value on the line")
	}
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
