package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// checkWritable refuses a data dir the daemon cannot write, naming it: a
// read-only mount, a directory owned by someone else, a full disk. Badger
// would otherwise fail later with an error about one of its files, or,
// writing through a memory map, with a signal.
func checkWritable(dir, key string) error {
	f, err := os.CreateTemp(dir, ".silas-write-check-*")
	if err != nil {
		return fmt.Errorf("%s: %s is not writable (%w); %s", key, dir, unwrapPath(err), writableHint(err, dir))
	}
	name := f.Name()
	_, werr := f.Write([]byte("silas\n"))
	serr := f.Sync()
	cerr := f.Close()
	rerr := os.Remove(name)
	if err := errors.Join(werr, serr, cerr); err != nil {
		return fmt.Errorf("%s: cannot write to %s (%w); %s", key, dir, unwrapPath(err), writableHint(err, dir))
	}
	if rerr != nil {
		return fmt.Errorf("%s: cannot remove %s in %s (%w); fix the directory's permissions", key, filepath.Base(name), dir, unwrapPath(rerr))
	}
	return nil
}

// unwrapPath drops the *PathError wrapper, whose path is a temporary name.
func unwrapPath(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

func writableHint(err error, dir string) string {
	switch {
	case errors.Is(err, syscall.EROFS):
		return "it is on a read-only file system: mount it read-write or set silas.data_dir to a writable directory"
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "its disk is full: free space there and start again"
	case errors.Is(err, os.ErrPermission):
		return fmt.Sprintf("run silas as the user that owns it, or `chown` %s to that user", dir)
	}
	return "check that it exists, is a directory and is writable by this user"
}
