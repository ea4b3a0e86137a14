package seccomp

import "golang.org/x/sys/unix"

func nativeTable() (table, bool) {
	return table{
		auditArch: unix.AUDIT_ARCH_X86_64,
		x32:       true,
		clone:     unix.SYS_CLONE,
		clone3:    unix.SYS_CLONE3,
		ioctl:     unix.SYS_IOCTL,
		deny: append(commonDenied(),
			unix.SYS_USELIB, unix.SYS_IOPL, unix.SYS_IOPERM,
		),
	}, true
}
