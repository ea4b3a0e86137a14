//go:build !amd64 && !arm64

package seccomp

func nativeTable() (table, bool) { return table{}, false }

func commonDenied() []uint32 { return nil }
