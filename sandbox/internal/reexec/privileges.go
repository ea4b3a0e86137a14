package reexec

import (
	"errors"
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Secure bits (linux/securebits.h): the in-sandbox uid 0 gets no capability
// from exec or from changing ids, ambient capabilities cannot be raised,
// and all of it is locked.
const (
	secbitNoRoot                  = 1 << 0
	secbitNoRootLocked            = 1 << 1
	secbitNoSetuidFixup           = 1 << 2
	secbitNoSetuidFixupLocked     = 1 << 3
	secbitKeepCapsLocked          = 1 << 5
	secbitNoCapAmbientRaise       = 1 << 6
	secbitNoCapAmbientRaiseLocked = 1 << 7
	lockedSecurebits              = secbitNoRoot | secbitNoRootLocked | secbitNoSetuidFixup | secbitNoSetuidFixupLocked |
		secbitKeepCapsLocked | secbitNoCapAmbientRaise | secbitNoCapAmbientRaiseLocked
)

// dropPrivileges leaves the calling thread, and every process forked from it,
// with no capability at all and no way to gain one: secure bits locked,
// bounding set and ambient set cleared, capability sets empty,
// no_new_privs, and a process that cannot be inspected (not dumpable).
func dropPrivileges() error {
	if err := unix.Prctl(unix.PR_SET_SECUREBITS, lockedSecurebits, 0, 0, 0); err != nil {
		return fmt.Errorf("lock secure bits: %w", err)
	}
	for c := 0; ; c++ {
		err := unix.Prctl(unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0)
		if errors.Is(err, unix.EINVAL) {
			break // past the last capability the kernel knows
		}
		if err != nil {
			return fmt.Errorf("drop capability %d from the bounding set: %w", c, err)
		}
	}
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if _, _, e := unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0); e != 0 {
		return fmt.Errorf("clear capabilities: %w", e)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("no_new_privs: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0); err != nil {
		return fmt.Errorf("not dumpable: %w", err)
	}
	return nil
}
