package seccomp

import (
	"encoding/binary"
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ErrUnsupportedArch means the filter has no system call table for the
// running architecture; the sandbox refuses to run without it.
var ErrUnsupportedArch = errors.New("seccomp: unsupported architecture")

// Offsets in struct seccomp_data (little-endian: the low word of an argument
// comes first).
const (
	offNr   = 0
	offArch = 4
	offArg0 = 16
	offArg1 = 24
)

// x32SyscallBit marks system calls of the x32 ABI on x86_64.
const x32SyscallBit = 0x40000000

// namespaceFlags are the clone flags that create a namespace. CLONE_NEWTIME
// (0x80) cannot be passed to clone(2), whose low byte is the exit signal.
const namespaceFlags = unix.CLONE_NEWNS | unix.CLONE_NEWCGROUP | unix.CLONE_NEWUTS | unix.CLONE_NEWIPC |
	unix.CLONE_NEWUSER | unix.CLONE_NEWPID | unix.CLONE_NEWNET

// Terminal ioctls that inject input into, or control, a terminal.
const (
	ioctlTIOCSTI   = 0x5412
	ioctlTIOCLINUX = 0x541C
)

// table is the architecture-specific part of the filter.
type table struct {
	// auditArch is the native AUDIT_ARCH_* value.
	auditArch uint32
	// x32 is set on x86_64, whose x32 ABI shares the audit arch.
	x32 bool
	// clone, clone3 and ioctl are checked on their arguments.
	clone, clone3, ioctl uint32
	// deny fail with EPERM.
	deny []uint32
}

// Program returns the filter for the running architecture.
func Program() ([]unix.SockFilter, error) {
	t, ok := nativeTable()
	if !ok {
		return nil, fmt.Errorf("%w %s: the sandbox's seccomp filter exists for amd64 and arm64 only", ErrUnsupportedArch, runtime.GOARCH)
	}
	return build(t)
}

// build compiles t.
func build(t table) ([]unix.SockFilter, error) {
	const (
		allow  = "allow"
		eperm  = "eperm"
		enosys = "enosys"
		kill   = "kill"
		clone  = "clone"
		ioctl  = "ioctl"
	)
	a := newAsm()
	a.load(offArch)
	a.jump(unix.BPF_JEQ, t.auditArch, "", kill)
	a.load(offNr)
	if t.x32 {
		a.jump(unix.BPF_JGE, x32SyscallBit, eperm, "")
	}
	a.jump(unix.BPF_JEQ, t.clone3, enosys, "")
	a.jump(unix.BPF_JEQ, t.clone, clone, "")
	a.jump(unix.BPF_JEQ, t.ioctl, ioctl, "")
	for _, nr := range t.deny {
		a.jump(unix.BPF_JEQ, nr, eperm, "")
	}
	a.ret(unix.SECCOMP_RET_ALLOW)

	a.label(clone)
	a.load(offArg0)
	a.jump(unix.BPF_JSET, namespaceFlags, eperm, allow)

	a.label(ioctl)
	a.load(offArg1) // the request is an unsigned int: only the low word counts
	a.jump(unix.BPF_JEQ, ioctlTIOCSTI, eperm, "")
	a.jump(unix.BPF_JEQ, ioctlTIOCLINUX, eperm, "")
	a.label(allow)
	a.ret(unix.SECCOMP_RET_ALLOW)

	a.label(eperm)
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM))
	a.label(enosys)
	a.ret(unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS))
	a.label(kill)
	a.ret(unix.SECCOMP_RET_KILL_PROCESS)
	return a.assemble()
}

// Install loads prog as a seccomp filter of the calling thread. The thread
// must have no_new_privs set (or CAP_SYS_ADMIN). It allocates nothing, so it
// can run after the memory limit is lowered; the caller keeps the thread
// locked and execs from it, since the filter applies to this thread only.
func Install(prog []unix.SockFilter) error {
	if len(prog) == 0 {
		return errors.New("seccomp: empty program")
	}
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	if _, _, e := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, 0, uintptr(unsafe.Pointer(&fprog))); e != 0 {
		return fmt.Errorf("seccomp: install filter: %w", e)
	}
	return nil
}

// Marshal encodes prog as an array of struct sock_filter in the host's byte
// order, the format bubblewrap reads from its --seccomp file descriptor.
func Marshal(prog []unix.SockFilter) []byte {
	out := make([]byte, 0, 8*len(prog))
	for _, f := range prog {
		out = binary.NativeEndian.AppendUint16(out, f.Code)
		out = append(out, f.Jt, f.Jf)
		out = binary.NativeEndian.AppendUint32(out, f.K)
	}
	return out
}
