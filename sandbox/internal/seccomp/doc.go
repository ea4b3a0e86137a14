// Package seccomp builds and installs the seccomp filter of the isolating
// sandbox backends, in pure Go (no libseccomp, no cgo).
//
// The filter allows every system call except those that reach past the
// sandbox or widen the kernel surface it exposes, which fail with EPERM:
// ptrace and cross-process memory access (process_vm_readv/writev,
// process_madvise, pidfd_getfd, kcmp); every way of mounting (mount,
// umount2, pivot_root, chroot and the new mount API: open_tree, move_mount,
// fsopen, fsconfig, fsmount, fspick, mount_setattr); every way of entering or
// creating namespaces (setns, unshare, clone with a CLONE_NEW* flag); the
// kernel keyring (keyctl, add_key, request_key); bpf, perf_event_open,
// userfaultfd, io_uring, fanotify_init; file handles (name_to_handle_at,
// open_by_handle_at); kernel modules, kexec, swap, reboot, acct, quotactl,
// lookup_dcookie, syslog; and terminal input injection (ioctl TIOCSTI and
// TIOCLINUX).
//
// clone3 fails with ENOSYS instead: its flags sit in memory a filter cannot
// read, and ENOSYS makes the C library fall back to clone, whose flags the
// filter checks.
//
// The filter first checks the audit architecture: a system call made through
// another ABI than the native one (i386 on x86_64, arm32 on arm64) kills the
// process, and on x86_64 the x32 ABI's numbers fail with EPERM, so no
// numbering of the table can be bypassed. Only x86_64 and arm64 are supported;
// Program fails elsewhere and the backends refuse to run (fail closed).
package seccomp
