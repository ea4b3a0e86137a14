//go:build amd64 || arm64

package seccomp

import "golang.org/x/sys/unix"

// commonDenied lists the system calls that fail with EPERM on every
// supported architecture (see the package doc for why each is there).
func commonDenied() []uint32 {
	return []uint32{
		// Tracing and other processes' memory.
		unix.SYS_PTRACE, unix.SYS_PROCESS_VM_READV, unix.SYS_PROCESS_VM_WRITEV,
		unix.SYS_PROCESS_MADVISE, unix.SYS_PIDFD_GETFD, unix.SYS_KCMP,
		// Mounts, old and new API, and changing root.
		unix.SYS_MOUNT, unix.SYS_UMOUNT2, unix.SYS_PIVOT_ROOT, unix.SYS_CHROOT,
		unix.SYS_OPEN_TREE, unix.SYS_OPEN_TREE_ATTR, unix.SYS_MOVE_MOUNT, unix.SYS_FSOPEN,
		unix.SYS_FSCONFIG, unix.SYS_FSMOUNT, unix.SYS_FSPICK, unix.SYS_MOUNT_SETATTR,
		// Namespaces.
		unix.SYS_SETNS, unix.SYS_UNSHARE,
		// Keyrings.
		unix.SYS_KEYCTL, unix.SYS_ADD_KEY, unix.SYS_REQUEST_KEY,
		// Kernel attack surface with a history of privilege escalations.
		unix.SYS_BPF, unix.SYS_PERF_EVENT_OPEN, unix.SYS_USERFAULTFD,
		unix.SYS_IO_URING_SETUP, unix.SYS_IO_URING_ENTER, unix.SYS_IO_URING_REGISTER,
		unix.SYS_FANOTIFY_INIT,
		// File handles bypass path permissions.
		unix.SYS_NAME_TO_HANDLE_AT, unix.SYS_OPEN_BY_HANDLE_AT,
		// Administration of the machine.
		unix.SYS_KEXEC_LOAD, unix.SYS_KEXEC_FILE_LOAD, unix.SYS_INIT_MODULE,
		unix.SYS_FINIT_MODULE, unix.SYS_DELETE_MODULE, unix.SYS_SWAPON, unix.SYS_SWAPOFF,
		unix.SYS_REBOOT, unix.SYS_ACCT, unix.SYS_QUOTACTL, unix.SYS_QUOTACTL_FD,
		unix.SYS_LOOKUP_DCOOKIE, unix.SYS_SYSLOG,
	}
}
