package reexec

import (
	"fmt"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// stageAndDrop carries out d on the calling (locked) thread: see Drop.
func stageAndDrop(d Drop) error {
	if os.Geteuid() != 0 {
		return fmt.Errorf("dropping to uid %d needs root", d.UID)
	}
	parent := os.Getppid()
	// A mount namespace of this thread only (CLONE_NEWNS unshares its
	// filesystem context too); the program exec'd from it keeps it.
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("private mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_SLAVE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	// Open every path while still root (the unprivileged program may not be
	// allowed to traverse its parents), and from inside the new mount
	// namespace: a bind only takes a mount of the caller's namespace.
	fds := make([]int, len(d.Stage))
	for i, p := range d.Stage {
		fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("stage %s: %w", p, err)
		}
		fds[i] = fd
	}
	opts := fmt.Sprintf("mode=0700,uid=%d,gid=%d,size=1m", d.UID, d.GID)
	if err := unix.Mount("tmpfs", StageDir, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return fmt.Errorf("staging tmpfs on %s: %w", StageDir, err)
	}
	for i, fd := range fds {
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			return fmt.Errorf("stage %s: %w", d.Stage[i], err)
		}
		target := StagePath(i)
		if err := makeMountpoint(target, st.Mode&unix.S_IFMT == unix.S_IFDIR); err != nil {
			return fmt.Errorf("stage %s: %w", d.Stage[i], err)
		}
		src := fmt.Sprintf("/proc/self/fd/%d", fd)
		if err := unix.Mount(src, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return fmt.Errorf("stage %s: bind: %w", d.Stage[i], err)
		}
		_ = unix.Close(fd)
	}
	// Groups first, then gid, then uid: each needs the privilege the next
	// one gives up. Go applies these to every thread.
	if err := syscall.Setgroups(nil); err != nil {
		return fmt.Errorf("clear supplementary groups: %w", err)
	}
	if err := syscall.Setresgid(d.GID, d.GID, d.GID); err != nil {
		return fmt.Errorf("setresgid %d: %w", d.GID, err)
	}
	if err := syscall.Setresuid(d.UID, d.UID, d.UID); err != nil {
		return fmt.Errorf("setresuid %d: %w", d.UID, err)
	}
	// The uid change cleared the parent-death signal: set it again, then
	// make sure the parent did not die in between.
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGKILL), 0, 0, 0); err != nil {
		return fmt.Errorf("parent-death signal: %w", err)
	}
	if os.Getppid() != parent {
		return fmt.Errorf("silas exited during sandbox setup")
	}
	return nil
}

// makeMountpoint creates an empty directory or file at path.
func makeMountpoint(path string, dir bool) error {
	if dir {
		return unix.Mkdir(path, 0o700)
	}
	fd, err := unix.Open(path, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return err
	}
	return unix.Close(fd)
}
