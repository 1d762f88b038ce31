//go:build unix

package check

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// groupDir is a directory of the tree a group's rules look into (an SCC
// task folder), opened once through the tree's os.Root, whose files are
// looked up relative to it by system calls: fstatat, and openat, fstat, one
// read, close for a read (os.File adds four fcntl and an epoll_ctl that
// fails, and io.ReadAll a read that sees the end). A name is one path
// element and is never followed if it is a symlink (O_NOFOLLOW,
// AT_SYMLINK_NOFOLLOW): such a name, like any failure, is left to the
// tree's root (Group.Exists, Group.ReadFile), which resolves it confined.
type groupDir struct {
	f  *os.File
	fd int
}

func openGroupDir(root *os.Root, dir string) (*groupDir, error) {
	f, err := root.Open(dir)
	if err != nil {
		return nil, err
	}
	return &groupDir{f: f, fd: int(f.Fd())}, nil
}

// errNotRegular and errOverLimit are readFile's answers about a file that
// is there: Group.ReadFile words them.
var (
	errNotRegular = errors.New("not a regular file")
	errOverLimit  = errors.New("over the size limit")
)

func (d *groupDir) close() { d.f.Close() }

// exists reports whether name is there and is not a symlink; false means
// "ask the tree's root".
func (d *groupDir) exists(name string) bool {
	var st unix.Stat_t
	err := retryEINTR(func() error { return unix.Fstatat(d.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) })
	return err == nil && st.Mode&unix.S_IFMT != unix.S_IFLNK
}

// readFile reads name up to limit bytes: errNotRegular and errOverLimit
// (with the size) are answers; any other error means "ask the tree's root".
func (d *groupDir) readFile(name string, limit int64) ([]byte, int64, error) {
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = unix.Openat(d.fd, name, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
		return err
	})
	if err != nil {
		return nil, 0, err
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return nil, 0, err
	}
	if st.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return nil, 0, errNotRegular
	}
	if st.Size > limit {
		return nil, st.Size, errOverLimit
	}
	data, err := readFD(fd, name, make([]byte, 0, max(st.Size, 0)+1), st.Size)
	// A file that grew since fstat is read on, up to the limit (as
	// io.LimitReader would).
	for err == nil && len(data) == cap(data) && int64(len(data)) <= limit {
		data, err = readFD(fd, name, growTo(data, limit+1), -1)
	}
	if err != nil {
		return nil, 0, err
	}
	if int64(len(data)) > limit {
		data = data[:limit]
	}
	return data, int64(len(data)), nil
}
