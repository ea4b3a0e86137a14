package seccomp

import "golang.org/x/sys/unix"

func nativeTable() (table, bool) {
	return table{
		auditArch: unix.AUDIT_ARCH_AARCH64,
		clone:     unix.SYS_CLONE,
		clone3:    unix.SYS_CLONE3,
		ioctl:     unix.SYS_IOCTL,
		deny:      commonDenied(),
	}, true
}
