package seccomp

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// childEnv marks the re-executed test binary that installs the filter on
// itself (TestInstalledFilter).
const childEnv = "SILAS_SECCOMP_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(child())
	}
	os.Exit(m.Run())
}

// data is a struct seccomp_data.
type data struct {
	nr   uint32
	arch uint32
	args [6]uint64
}

// eval runs prog on d: a small interpreter of the instructions build emits.
func eval(t *testing.T, prog []unix.SockFilter, d data) uint32 {
	t.Helper()
	buf := make([]byte, 64)
	binary.LittleEndian.PutUint32(buf[0:], d.nr)
	binary.LittleEndian.PutUint32(buf[4:], d.arch)
	for i, a := range d.args {
		binary.LittleEndian.PutUint64(buf[16+8*i:], a)
	}
	var acc uint32
	for pc := 0; pc < len(prog); pc++ {
		f := prog[pc]
		switch f.Code {
		case unix.BPF_LD | unix.BPF_W | unix.BPF_ABS:
			acc = binary.LittleEndian.Uint32(buf[f.K:])
		case unix.BPF_RET | unix.BPF_K:
			return f.K
		case unix.BPF_JMP | unix.BPF_JEQ | unix.BPF_K, unix.BPF_JMP | unix.BPF_JGE | unix.BPF_K, unix.BPF_JMP | unix.BPF_JSET | unix.BPF_K:
			var ok bool
			switch f.Code & 0xf0 {
			case unix.BPF_JEQ:
				ok = acc == f.K
			case unix.BPF_JGE:
				ok = acc >= f.K
			case unix.BPF_JSET:
				ok = acc&f.K != 0
			}
			if ok {
				pc += int(f.Jt)
			} else {
				pc += int(f.Jf)
			}
		default:
			t.Fatalf("instruction %d: unexpected code %#x", pc, f.Code)
		}
	}
	t.Fatal("program fell off its end")
	return 0
}

func TestDecisions(t *testing.T) {
	tab, ok := nativeTable()
	if !ok {
		t.Skipf("no seccomp table for %s: the backends refuse to run here", runtime.GOARCH)
	}
	prog, err := build(tab)
	if err != nil {
		t.Fatal(err)
	}
	const (
		allow  = unix.SECCOMP_RET_ALLOW
		eperm  = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)
		enosys = unix.SECCOMP_RET_ERRNO | uint32(unix.ENOSYS)
		kill   = unix.SECCOMP_RET_KILL_PROCESS
	)
	native := tab.auditArch
	cases := []struct {
		name string
		d    data
		want uint32
	}{
		{"getpid", data{nr: unix.SYS_GETPID, arch: native}, allow},
		{"read", data{nr: unix.SYS_READ, arch: native}, allow},
		{"execve", data{nr: unix.SYS_EXECVE, arch: native}, allow},
		{"ptrace", data{nr: unix.SYS_PTRACE, arch: native}, eperm},
		{"mount", data{nr: unix.SYS_MOUNT, arch: native}, eperm},
		{"setns", data{nr: unix.SYS_SETNS, arch: native}, eperm},
		{"unshare", data{nr: unix.SYS_UNSHARE, arch: native}, eperm},
		{"keyctl", data{nr: unix.SYS_KEYCTL, arch: native}, eperm},
		{"bpf", data{nr: unix.SYS_BPF, arch: native}, eperm},
		{"open_tree", data{nr: unix.SYS_OPEN_TREE, arch: native}, eperm},
		{"io_uring_setup", data{nr: unix.SYS_IO_URING_SETUP, arch: native}, eperm},
		{"clone3 falls back to clone", data{nr: unix.SYS_CLONE3, arch: native}, enosys},
		{"clone for fork", data{nr: unix.SYS_CLONE, arch: native, args: [6]uint64{uint64(unix.SIGCHLD)}}, allow},
		{"clone for a thread", data{nr: unix.SYS_CLONE, arch: native, args: [6]uint64{unix.CLONE_VM | unix.CLONE_FS | unix.CLONE_FILES | unix.CLONE_SIGHAND | unix.CLONE_THREAD}}, allow},
		{"clone with a user namespace", data{nr: unix.SYS_CLONE, arch: native, args: [6]uint64{unix.CLONE_NEWUSER | uint64(unix.SIGCHLD)}}, eperm},
		{"clone with a network namespace", data{nr: unix.SYS_CLONE, arch: native, args: [6]uint64{unix.CLONE_NEWNET}}, eperm},
		{"clone with a mount namespace, high word set", data{nr: unix.SYS_CLONE, arch: native, args: [6]uint64{1<<40 | unix.CLONE_NEWNS}}, eperm},
		{"ioctl TIOCSTI", data{nr: unix.SYS_IOCTL, arch: native, args: [6]uint64{0, ioctlTIOCSTI}}, eperm},
		{"ioctl TIOCSTI with high bits", data{nr: unix.SYS_IOCTL, arch: native, args: [6]uint64{0, 1<<32 | ioctlTIOCSTI}}, eperm},
		{"ioctl TIOCLINUX", data{nr: unix.SYS_IOCTL, arch: native, args: [6]uint64{0, ioctlTIOCLINUX}}, eperm},
		{"ioctl TCGETS", data{nr: unix.SYS_IOCTL, arch: native, args: [6]uint64{0, unix.TCGETS}}, allow},
		{"foreign architecture", data{nr: unix.SYS_GETPID, arch: 0x40000003 /* AUDIT_ARCH_I386 */}, kill},
	}
	if tab.x32 {
		cases = append(cases, struct {
			name string
			d    data
			want uint32
		}{"x32 numbering", data{nr: x32SyscallBit | unix.SYS_GETPID, arch: native}, eperm})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := eval(t, prog, tc.d); got != tc.want {
				t.Fatalf("action %#x, want %#x", got, tc.want)
			}
		})
	}
	for _, nr := range tab.deny {
		if got := eval(t, prog, data{nr: nr, arch: native}); got != eperm {
			t.Errorf("denied system call %d: action %#x, want EPERM", nr, got)
		}
	}
}

func TestMarshal(t *testing.T) {
	prog := []unix.SockFilter{{Code: 0x20, Jt: 1, Jf: 2, K: 4}, {Code: 0x06, K: unix.SECCOMP_RET_ALLOW}}
	got := Marshal(prog)
	want := make([]byte, 16)
	binary.NativeEndian.PutUint16(want[0:], 0x20)
	want[2], want[3] = 1, 2
	binary.NativeEndian.PutUint32(want[4:], 4)
	binary.NativeEndian.PutUint16(want[8:], 0x06)
	binary.NativeEndian.PutUint32(want[12:], unix.SECCOMP_RET_ALLOW)
	if !bytes.Equal(got, want) {
		t.Fatalf("got % x, want % x", got, want)
	}
}

func TestAssembleRefusesBadJumps(t *testing.T) {
	a := newAsm()
	a.jump(unix.BPF_JEQ, 1, "nowhere", "")
	if _, err := a.assemble(); err == nil {
		t.Fatal("undefined label: want an error")
	}
	a = newAsm()
	a.label("back")
	a.load(0)
	a.jump(unix.BPF_JEQ, 1, "back", "")
	if _, err := a.assemble(); err == nil {
		t.Fatal("backward jump: want an error")
	}
}

// TestInstalledFilter installs the filter in a child process and makes the
// system calls it must refuse, and the ones it must let through.
func TestInstalledFilter(t *testing.T) {
	if _, ok := nativeTable(); !ok {
		t.Skipf("no seccomp table for %s", runtime.GOARCH)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "filter ok") {
		t.Fatalf("child did not finish:\n%s", out)
	}
}

// child installs the filter and checks what it does; it returns the exit
// status.
func child() int {
	runtime.LockOSThread()
	fail := func(format string, a ...any) int { fmt.Printf(format+"\n", a...); return 1 }
	prog, err := Program()
	if err != nil {
		return fail("program: %v", err)
	}
	if err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0); err != nil {
		return fail("no_new_privs: %v", err)
	}
	if err := Install(prog); err != nil {
		return fail("install: %v", err)
	}
	checks := []struct {
		name string
		nr   uintptr
		args [3]uintptr
		want unix.Errno
	}{
		{"ptrace(PTRACE_TRACEME)", unix.SYS_PTRACE, [3]uintptr{unix.PTRACE_TRACEME}, unix.EPERM},
		{"unshare(CLONE_NEWUSER)", unix.SYS_UNSHARE, [3]uintptr{unix.CLONE_NEWUSER}, unix.EPERM},
		{"keyctl(GET_KEYRING_ID)", unix.SYS_KEYCTL, [3]uintptr{unix.KEYCTL_GET_KEYRING_ID, ^uintptr(2) /* KEY_SPEC_SESSION_KEYRING */}, unix.EPERM},
		{"clone3", unix.SYS_CLONE3, [3]uintptr{}, unix.ENOSYS},
		{"getpid", unix.SYS_GETPID, [3]uintptr{}, 0},
	}
	for _, c := range checks {
		_, _, e := unix.RawSyscall(c.nr, c.args[0], c.args[1], c.args[2])
		if e != c.want {
			return fail("%s: errno %v, want %v", c.name, e, c.want)
		}
	}
	// Forking and exec'ing a program still work (clone without namespace
	// flags, or clone3 falling back to clone).
	if err := exec.Command("/bin/sh", "-c", "exit 0").Run(); err != nil {
		return fail("fork and exec under the filter: %v", err)
	}
	fmt.Println("filter ok")
	return 0
}
