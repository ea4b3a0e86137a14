package persistence

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// errAllocUnsupported means the file system cannot preallocate files.
var errAllocUnsupported = errors.New("the file system does not support fallocate")

// freeBytes returns the space of dir's file system available to
// unprivileged writers (statfs f_bavail), the figure df shows.
func freeBytes(dir string) (uint64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}

// allocateFile allocates every block of path's current size, keeping its
// size and contents (fallocate mode 0): holes read as zeros before and
// after.
func allocateFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return err
	}
	if info.Size() == 0 {
		return nil
	}
	err = unix.Fallocate(int(f.Fd()), 0, 0, info.Size())
	switch {
	case err == nil:
		return nil
	case errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS):
		return fmt.Errorf("allocate %s: %w: %w", path, errAllocUnsupported, err)
	}
	return fmt.Errorf("allocate %s: %w", path, err)
}
