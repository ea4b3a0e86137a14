package reexec

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/silas-ai/silas/sandbox/internal/layout"
)

// newRoot is where the sandbox's root tmpfs is mounted before pivot_root
// (the init's own mount namespace; the host's /tmp is not touched).
const newRoot = "/tmp"

// devNodes are the host device nodes bound into the sandbox's /dev.
func devNodes() []string { return []string{"null", "zero", "full", "random", "urandom", "tty"} }

// source is one layout entry opened by the init, or handed to it.
type source struct {
	entry layout.Entry
	fd    int    // an O_PATH descriptor or a detached mount tree; -1 for a symlink
	tree  bool   // fd is a detached mount tree (open_tree) to attach
	link  string // the target of a system symlink (merged /usr)
	dir   bool
}

type sources struct {
	list    []source
	devices map[string]int
}

// openSources opens every entry as an O_PATH descriptor, or takes the
// required ones from the mount trees Silas handed over (trees). Optional
// entries that do not exist are left out.
func openSources(entries []layout.Entry, trees bool) (*sources, error) {
	s := &sources{devices: map[string]int{}}
	nextTree := FirstTreeFD
	for _, e := range entries {
		if trees && e.Required() {
			fd := nextTree
			nextTree++
			var st unix.Stat_t
			if err := unix.Fstat(fd, &st); err != nil {
				s.close()
				return nil, fmt.Errorf("mount tree of %s on descriptor %d: %w", e.Path, fd, err)
			}
			s.list = append(s.list, source{entry: e, fd: fd, tree: true, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
			continue
		}
		if e.Kind == layout.System {
			fi, err := os.Lstat(e.Path)
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				s.close()
				return nil, fmt.Errorf("%s: %w", e.Path, err)
			}
			if fi.Mode()&os.ModeSymlink != 0 {
				target, err := os.Readlink(e.Path)
				if err != nil {
					s.close()
					return nil, fmt.Errorf("%s: %w", e.Path, err)
				}
				s.list = append(s.list, source{entry: e, fd: -1, link: target})
				continue
			}
		}
		fd, err := unix.Open(e.Path, unix.O_PATH|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) && !e.Required() {
			continue
		}
		if err != nil {
			s.close()
			return nil, fmt.Errorf("open %s: %w", e.Path, err)
		}
		var st unix.Stat_t
		if err := unix.Fstat(fd, &st); err != nil {
			_ = unix.Close(fd)
			s.close()
			return nil, fmt.Errorf("stat %s: %w", e.Path, err)
		}
		s.list = append(s.list, source{entry: e, fd: fd, dir: st.Mode&unix.S_IFMT == unix.S_IFDIR})
	}
	for _, d := range devNodes() {
		fd, err := unix.Open("/dev/"+d, unix.O_PATH|unix.O_CLOEXEC, 0)
		if err != nil {
			continue // a device the host lacks is left out
		}
		s.devices[d] = fd
	}
	return s, nil
}

func (s *sources) close() {
	for _, src := range s.list {
		if src.fd >= 0 {
			_ = unix.Close(src.fd)
		}
	}
	for _, fd := range s.devices {
		_ = unix.Close(fd)
	}
}

// buildRoot makes the sandbox's root in a tmpfs and pivots into it: /proc of
// the new PID namespace, a minimal /dev, a private /tmp, an empty /root,
// then the layout's binds, the work dir last. The old root is detached and
// the root tmpfs made read-only.
func buildRoot(c InitConfig, s *sources) error {
	if err := unix.Mount("tmpfs", newRoot, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0755,size=1m"); err != nil {
		return fmt.Errorf("root tmpfs: %w", err)
	}
	if err := ensureMountpoint(newRoot, "/proc", true); err != nil {
		return err
	}
	if err := unix.Mount("proc", newRoot+"/proc", "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return fmt.Errorf("mount /proc (a /proc partly hidden by other mounts, as in some containers, forbids it): %w", err)
	}
	if err := buildDev(s.devices, c.TmpBytes); err != nil {
		return err
	}
	size := "size=" + strconv.FormatUint(c.TmpBytes, 10)
	if err := ensureMountpoint(newRoot, "/tmp", true); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", newRoot+"/tmp", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777,"+size); err != nil {
		return fmt.Errorf("mount /tmp: %w", err)
	}
	if err := ensureMountpoint(newRoot, "/root", true); err != nil {
		return err
	}
	for _, src := range s.list {
		if err := place(src); err != nil {
			return err
		}
	}
	return pivot()
}

// place binds (or, for a system symlink, recreates) one source.
func place(src source) error {
	p := src.entry.Path
	if src.link != "" {
		if err := ensureMountpoint(newRoot, parentOf(p), true); err != nil {
			return err
		}
		if err := unix.Symlink(src.link, newRoot+p); err != nil {
			return fmt.Errorf("symlink %s: %w", p, err)
		}
		return nil
	}
	if err := ensureMountpoint(newRoot, p, src.dir); err != nil {
		return err
	}
	attr := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
	if !src.entry.Writable() {
		attr |= unix.MOUNT_ATTR_RDONLY
	}
	if src.tree {
		if err := attachTree(src.fd, newRoot+p, attr); err != nil {
			return fmt.Errorf("attach %s: %w", p, err)
		}
		return nil
	}
	if err := bindFD(src.fd, newRoot+p, attr, true); err != nil {
		return fmt.Errorf("bind %s: %w", p, err)
	}
	return nil
}

// attachTree mounts the detached mount tree fd on target and sets attr on
// every mount of it.
func attachTree(fd int, target string, attr uint64) error {
	if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
		return fmt.Errorf("move_mount: %w", err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, target, unix.AT_RECURSIVE, &unix.MountAttr{Attr_set: attr}); err != nil {
		return fmt.Errorf("mount_setattr (Linux 5.12 or later): %w", err)
	}
	return nil
}

// bindFD binds the path behind fd on target and sets attr on the new mount
// (and, when recursive, on every mount below it).
func bindFD(fd int, target string, attr uint64, recursive bool) error {
	flags, setFlags := uintptr(unix.MS_BIND), uint(0)
	if recursive {
		flags |= unix.MS_REC
		setFlags = unix.AT_RECURSIVE
	}
	if err := unix.Mount("/proc/self/fd/"+strconv.Itoa(fd), target, "", flags, ""); err != nil {
		return err
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, target, setFlags, &unix.MountAttr{Attr_set: attr}); err != nil {
		return fmt.Errorf("mount_setattr (Linux 5.12 or later): %w", err)
	}
	return nil
}

// buildDev mounts the sandbox's /dev: a read-only tmpfs with the host's
// harmless device nodes bound in, a private devpts and a /dev/shm tmpfs.
func buildDev(devices map[string]int, shmBytes uint64) error {
	dev := newRoot + "/dev"
	if err := ensureMountpoint(newRoot, "/dev", true); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return fmt.Errorf("mount /dev: %w", err)
	}
	for _, name := range devNodes() {
		fd, ok := devices[name]
		if !ok {
			continue
		}
		if err := ensureMountpoint(newRoot, "/dev/"+name, false); err != nil {
			return err
		}
		if err := bindFD(fd, dev+"/"+name, unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, false); err != nil {
			return fmt.Errorf("bind /dev/%s: %w", name, err)
		}
	}
	for _, d := range []string{"/dev/pts", "/dev/shm"} {
		if err := ensureMountpoint(newRoot, d, true); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", dev+"/pts", "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return fmt.Errorf("mount /dev/pts: %w", err)
	}
	shm := "mode=1777,size=" + strconv.FormatUint(shmBytes, 10)
	if err := unix.Mount("tmpfs", dev+"/shm", "tmpfs", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, shm); err != nil {
		return fmt.Errorf("mount /dev/shm: %w", err)
	}
	links := [][2]string{{"pts/ptmx", "ptmx"}, {"/proc/self/fd", "fd"}, {"/proc/self/fd/0", "stdin"},
		{"/proc/self/fd/1", "stdout"}, {"/proc/self/fd/2", "stderr"}}
	for _, l := range links {
		if err := unix.Symlink(l[0], dev+"/"+l[1]); err != nil {
			return fmt.Errorf("symlink /dev/%s: %w", l[1], err)
		}
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, dev, 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make /dev read-only: %w", err)
	}
	return nil
}

// pivot makes newRoot the root, detaches the old one (the host's whole
// tree, from this mount namespace) and makes the root tmpfs read-only.
func pivot() error {
	oldRoot, err := unix.Open("/", unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open old root: %w", err)
	}
	defer unix.Close(oldRoot)
	if err := unix.Chdir(newRoot); err != nil {
		return fmt.Errorf("enter new root: %w", err)
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return fmt.Errorf("pivot_root: %w", err)
	}
	if err := unix.Fchdir(oldRoot); err != nil {
		return fmt.Errorf("enter old root: %w", err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return fmt.Errorf("detach old root: %w", err)
	}
	if err := unix.Chdir("/"); err != nil {
		return fmt.Errorf("enter root: %w", err)
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, "/", 0, &unix.MountAttr{Attr_set: unix.MOUNT_ATTR_RDONLY}); err != nil {
		return fmt.Errorf("make the root read-only: %w", err)
	}
	return nil
}

// ensureMountpoint makes sure root+path exists, creating missing directories
// (and the last component as a directory or an empty file). It never
// follows a symlink, so nothing is created outside root.
func ensureMountpoint(root, path string, dir bool) error {
	if path == "/" {
		return nil
	}
	parts := strings.Split(strings.TrimPrefix(path, "/"), "/")
	cur := root
	for i, part := range parts {
		cur += "/" + part
		last := i == len(parts)-1
		fi, err := os.Lstat(cur)
		switch {
		case err == nil && fi.Mode()&os.ModeSymlink != 0:
			return fmt.Errorf("mount point %s: %s is a symlink inside the sandbox", path, strings.TrimPrefix(cur, root))
		case err == nil && !last && !fi.IsDir():
			return fmt.Errorf("mount point %s: %s is not a directory", path, strings.TrimPrefix(cur, root))
		case err == nil:
			continue
		case !errors.Is(err, os.ErrNotExist):
			return fmt.Errorf("mount point %s: %w", path, err)
		case !last || dir:
			if err := unix.Mkdir(cur, 0o755); err != nil {
				return fmt.Errorf("mount point %s: %w", path, err)
			}
		default:
			fd, err := unix.Open(cur, unix.O_CREAT|unix.O_EXCL|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
			if err != nil {
				return fmt.Errorf("mount point %s: %w", path, err)
			}
			_ = unix.Close(fd)
		}
	}
	return nil
}

// parentOf returns the parent directory of an absolute path.
func parentOf(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
