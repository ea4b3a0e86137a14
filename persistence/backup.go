package persistence

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"

	"github.com/dgraph-io/badger/v4"
)

// Backup file format, version 1: what DB.Backup writes, VerifyBackup
// checks and Restore reads.
//
//	"SILAS-BACKUP 1\n"          magic line
//	<n:4 BE><n bytes> ...       Badger's backup stream (badger.DB.Backup) in frames, n > 0
//	<0:4 BE>                    end of the stream
//	<sha256:32 raw>             of the stream bytes
//	<version:8 BE>              Badger version the backup is consistent at
//
// The stream is framed so that a file cut short (a dropped connection, a
// full disk where it was written) is told apart from a complete one: it
// lacks the end frame or the checksum, and is refused whole.
const backupMagic = "SILAS-BACKUP 1\n"

// backupFrame is the largest frame written.
const backupFrame = 256 << 10

// maxBackupFrame bounds a frame read, so that a corrupt length cannot
// make a reader allocate gigabytes.
const maxBackupFrame = 16 << 20

// restorePendingWrites bounds Badger's in-flight batches during Load.
const restorePendingWrites = 64

// ErrBadBackup means a backup file is not one DB.Backup wrote completely:
// the wrong format, cut short, or its checksum does not match. Take a new
// backup; do not restore this one.
var ErrBadBackup = errors.New("persistence: not a complete silas backup")

// ErrRestoreTarget means Restore was given a directory that is not empty.
// Restore only into a new or empty directory, then point silas.data_dir at
// it; it never merges into or overwrites a data dir.
var ErrRestoreTarget = errors.New("persistence: restore target is not empty")

// BackupInfo describes a complete backup.
type BackupInfo struct {
	// Bytes is the size of Badger's stream inside the file.
	Bytes int64 `json:"bytes"`
	// SHA256 is the hex checksum of that stream.
	SHA256 string `json:"sha256"`
	// Version is the Badger version the backup is consistent at.
	Version uint64 `json:"version"`
}

// Backup writes a consistent copy of the whole database to w while it
// keeps serving (Badger's online backup at one read timestamp): every
// write committed before the call is in it. Nothing is written to the
// data dir. An error leaves w incomplete, and VerifyBackup and Restore
// refuse what was written.
func (d *DB) Backup(ctx context.Context, w io.Writer) (BackupInfo, error) {
	if err := d.check(ctx); err != nil {
		return BackupInfo{}, err
	}
	if _, err := io.WriteString(w, backupMagic); err != nil {
		return BackupInfo{}, fmt.Errorf("write backup: %w", err)
	}
	fw := &frameWriter{ctx: ctx, w: w, sum: sha256.New(), buf: make([]byte, 0, backupFrame)}
	version, err := d.bdb.Backup(fw, 0)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("back up the database: %w", mapBadgerErr(err))
	}
	info, err := fw.finish(version)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("write backup: %w", err)
	}
	return info, nil
}

// frameWriter frames Badger's stream and checksums it.
type frameWriter struct {
	ctx   context.Context
	w     io.Writer
	sum   hash.Hash
	buf   []byte
	total int64
}

func (f *frameWriter) Write(p []byte) (int, error) {
	if err := f.ctx.Err(); err != nil {
		return 0, err
	}
	n := len(p)
	for len(p) > 0 {
		k := min(len(p), backupFrame-len(f.buf))
		f.buf = append(f.buf, p[:k]...)
		p = p[k:]
		if len(f.buf) == backupFrame {
			if err := f.flush(); err != nil {
				return n - len(p), err
			}
		}
	}
	return n, nil
}

func (f *frameWriter) flush() error {
	if len(f.buf) == 0 {
		return nil
	}
	var hdr [4]byte
	binary.BigEndian.PutUint32(hdr[:], uint32(len(f.buf)))
	if _, err := f.w.Write(hdr[:]); err != nil {
		return err
	}
	if _, err := f.w.Write(f.buf); err != nil {
		return err
	}
	f.sum.Write(f.buf)
	f.total += int64(len(f.buf))
	f.buf = f.buf[:0]
	return nil
}

// finish writes the last frame, the end frame and the trailer.
func (f *frameWriter) finish(version uint64) (BackupInfo, error) {
	if err := f.flush(); err != nil {
		return BackupInfo{}, err
	}
	sum := f.sum.Sum(nil)
	tail := make([]byte, 0, 4+len(sum)+8)
	tail = binary.BigEndian.AppendUint32(tail, 0)
	tail = append(tail, sum...)
	tail = binary.BigEndian.AppendUint64(tail, version)
	if _, err := f.w.Write(tail); err != nil {
		return BackupInfo{}, err
	}
	return BackupInfo{Bytes: f.total, SHA256: hex.EncodeToString(sum), Version: version}, nil
}

// frameReader returns the stream of a backup and, at its end, checks the
// trailer: it returns io.EOF only after a complete, matching backup.
type frameReader struct {
	r    *bufio.Reader
	sum  hash.Hash
	left int // bytes left in the current frame
	info BackupInfo
	done bool
}

// newFrameReader checks the magic line.
func newFrameReader(r io.Reader) (*frameReader, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	magic := make([]byte, len(backupMagic))
	if _, err := io.ReadFull(br, magic); err != nil || string(magic) != backupMagic {
		return nil, fmt.Errorf("%w: it does not start with %q", ErrBadBackup, backupMagic[:len(backupMagic)-1])
	}
	return &frameReader{r: br, sum: sha256.New()}, nil
}

func (f *frameReader) Read(p []byte) (int, error) {
	if f.done {
		return 0, io.EOF
	}
	for f.left == 0 {
		var hdr [4]byte
		if _, err := io.ReadFull(f.r, hdr[:]); err != nil {
			return 0, fmt.Errorf("%w: it ends after %d bytes of data, before its end mark (cut short?)", ErrBadBackup, f.info.Bytes)
		}
		n := binary.BigEndian.Uint32(hdr[:])
		if n == 0 {
			return 0, f.trailer()
		}
		if n > maxBackupFrame {
			return 0, fmt.Errorf("%w: a frame of %d bytes is larger than any backup writes", ErrBadBackup, n)
		}
		f.left = int(n)
	}
	p = p[:min(len(p), f.left)]
	n, err := io.ReadFull(f.r, p)
	f.sum.Write(p[:n])
	f.left -= n
	f.info.Bytes += int64(n)
	if err != nil {
		return n, fmt.Errorf("%w: it ends inside a frame after %d bytes of data (cut short?)", ErrBadBackup, f.info.Bytes)
	}
	return n, nil
}

// trailer checks the checksum and reads the version.
func (f *frameReader) trailer() error {
	var tail [sha256.Size + 8]byte
	if _, err := io.ReadFull(f.r, tail[:]); err != nil {
		return fmt.Errorf("%w: its checksum is missing (cut short?)", ErrBadBackup)
	}
	want := f.sum.Sum(nil)
	if string(tail[:sha256.Size]) != string(want) {
		return fmt.Errorf("%w: its checksum does not match its contents", ErrBadBackup)
	}
	if _, err := f.r.ReadByte(); err != io.EOF {
		return fmt.Errorf("%w: there are bytes after its end", ErrBadBackup)
	}
	f.info.SHA256 = hex.EncodeToString(want)
	f.info.Version = binary.BigEndian.Uint64(tail[sha256.Size:])
	f.done = true
	return io.EOF
}

// VerifyBackup reads a whole backup and checks its format and checksum,
// without a database. It is how `silas backup` decides that the file it
// received is complete before it keeps it.
func VerifyBackup(r io.Reader) (BackupInfo, error) {
	fr, err := newFrameReader(r)
	if err != nil {
		return BackupInfo{}, err
	}
	if _, err := io.Copy(io.Discard, fr); err != nil {
		return BackupInfo{}, err
	}
	return fr.info, nil
}

// Restore creates the database at o.Dir from the backup in r. o.Dir must
// not exist or be empty (ErrRestoreTarget). r is read twice: first whole,
// to check the backup's format and checksum without a database (Badger's
// loader trusts the sizes in its stream, so a damaged one must never
// reach it), then to load it; a backup that is not complete is refused
// (ErrBadBackup) before anything is written. The restored database is
// then opened once with Open, so that its schema is checked (and migrated
// forward) before Restore reports success; after any failure what was
// written is removed.
func Restore(ctx context.Context, r io.ReadSeeker, o Options) (BackupInfo, error) {
	if o.InMemory || o.Dir == "" {
		return BackupInfo{}, fmt.Errorf("restore: Dir is required and InMemory must be off: %w", ErrInvalid)
	}
	if err := targetEmpty(o.Dir); err != nil {
		return BackupInfo{}, err
	}
	want, err := VerifyBackup(&ctxReader{ctx: ctx, r: r})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("restore: %w", err)
	}
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return BackupInfo{}, fmt.Errorf("restore: rewind the backup: %w", err)
	}
	created, err := prepareRestoreDir(o.Dir)
	if err != nil {
		return BackupInfo{}, err
	}
	info, err := restore(ctx, r, o)
	if err == nil && info != want {
		err = fmt.Errorf("restore: %w: it changed while it was read", ErrBadBackup)
	}
	if err != nil {
		if cerr := clearRestoreDir(o.Dir, created); cerr != nil {
			err = errors.Join(err, cerr)
		}
		return BackupInfo{}, err
	}
	return info, nil
}

func restore(ctx context.Context, r io.Reader, o Options) (BackupInfo, error) {
	fr, err := newFrameReader(&ctxReader{ctx: ctx, r: r})
	if err != nil {
		return BackupInfo{}, fmt.Errorf("restore: %w", err)
	}
	bdb, err := badger.Open(badgerOptions(o))
	if err != nil {
		return BackupInfo{}, fmt.Errorf("restore: open badger at %q: %w", o.Dir, err)
	}
	err = bdb.Load(fr, restorePendingWrites)
	if cerr := bdb.Close(); cerr != nil {
		err = errors.Join(err, fmt.Errorf("close badger: %w", cerr))
	}
	if err != nil {
		return BackupInfo{}, fmt.Errorf("restore into %s: %w", o.Dir, err)
	}
	if !fr.done {
		// Badger stopped before the end mark without an error.
		return BackupInfo{}, fmt.Errorf("restore: %w: data after the last record", ErrBadBackup)
	}
	d, err := Open(ctx, o)
	if err != nil {
		return BackupInfo{}, fmt.Errorf("restore: the restored database does not open: %w", err)
	}
	if err := d.Close(); err != nil {
		return BackupInfo{}, fmt.Errorf("restore: close the restored database: %w", err)
	}
	return fr.info, nil
}

// targetEmpty refuses a restore target that holds anything.
func targetEmpty(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("restore: read %s: %w", dir, err)
	case len(entries) > 0:
		return fmt.Errorf("%w: %s holds %d entries; restore into a new or empty directory", ErrRestoreTarget, dir, len(entries))
	}
	return nil
}

// prepareRestoreDir makes dir, or accepts it empty; it reports whether it
// created dir.
func prepareRestoreDir(dir string) (created bool, err error) {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return false, fmt.Errorf("restore: create %s: %w", dir, err)
		}
		return true, nil
	case err != nil:
		return false, fmt.Errorf("restore: read %s: %w", dir, err)
	case len(entries) > 0:
		return false, fmt.Errorf("%w: %s holds %d entries; restore into a new or empty directory", ErrRestoreTarget, dir, len(entries))
	}
	return false, nil
}

// clearRestoreDir removes what a failed restore wrote: dir itself when
// Restore created it, otherwise its contents (it was empty before).
func clearRestoreDir(dir string, created bool) error {
	if created {
		return os.RemoveAll(dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		errs = append(errs, os.RemoveAll(dir+string(os.PathSeparator)+e.Name()))
	}
	return errors.Join(errs...)
}

// ctxReader stops reading once ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c *ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
