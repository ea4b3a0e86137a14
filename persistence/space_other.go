//go:build !linux

package persistence

import "errors"

// errAllocUnsupported means the file system cannot preallocate files.
var errAllocUnsupported = errors.New("preallocation is implemented on Linux only")

// freeBytes is implemented on Linux only; elsewhere the watermark is not
// enforced.
func freeBytes(string) (uint64, error) {
	return 0, errors.New("free space is measured on Linux only")
}

func allocateFile(string) error { return errAllocUnsupported }
