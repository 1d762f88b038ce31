//go:build unix

package check

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
)

// readOS is readLimited for the file p (an fs path) of the OS directory dir,
// the FS os.DirFS(dir) would open, by system calls: open, fstat, one read of
// the size fstat gives, close. os.Open costs six more per file on Linux (it
// tries to add every file to the network poller: four fcntl and a failed
// epoll_ctl), and io.ReadFull a read that only sees the end; over 10,000
// artifacts those were a third of the run's system calls. A read that
// returns exactly the size fstat gave is the whole file; a shorter one (the
// file shrank, or a file system that returns short reads) or a longer one
// (it grew) reads on to its end, up to the limit, like readLimited. A file
// over the limit is not read past its head. Errors are readLimited's on
// os.DirFS: "opening p: " or "reading p: " and a *fs.PathError.
func readOS(dir, p string, limit int64) ([]byte, int64, error) {
	if !fs.ValidPath(p) {
		return nil, 0, fmt.Errorf("opening %s: %w", p, &fs.PathError{Op: "open", Path: p, Err: fs.ErrInvalid})
	}
	name := dir + "/" + p
	var fd int
	err := retryEINTR(func() (err error) {
		fd, err = syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC|syscall.O_NONBLOCK, 0)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("opening %s: %w", p, &fs.PathError{Op: "open", Path: p, Err: err})
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := retryEINTR(func() error { return syscall.Fstat(fd, &st) }); err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", p, &fs.PathError{Op: "stat", Path: name, Err: err})
	}
	if st.Size > limit {
		// Read only the head, enough to classify an unclassified file.
		head, err := readFD(fd, name, make([]byte, 0, min(limit, sniffSize)), -1)
		if err != nil {
			return nil, 0, fmt.Errorf("reading %s: %w", p, err)
		}
		return head, st.Size, nil
	}
	data, err := readFD(fd, name, make([]byte, 0, max(st.Size, 0)+1), st.Size)
	// While the buffer fills up, the file grew since fstat (or said no
	// size): read on, up to the limit and one byte more, to see it is over.
	for err == nil && len(data) == cap(data) && int64(len(data)) <= limit {
		data, err = readFD(fd, name, growTo(data, limit+1), -1)
	}
	if err != nil {
		return nil, 0, fmt.Errorf("reading %s: %w", p, err)
	}
	return data, int64(len(data)), nil
}

// readFD reads fd into buf's spare capacity until it is full or the file
// ends; a read that brings buf to exactly whole bytes (≥ 0) is taken as the
// end without a read to confirm it.
func readFD(fd int, name string, buf []byte, whole int64) ([]byte, error) {
	for len(buf) < cap(buf) {
		var n int
		err := retryEINTR(func() (err error) {
			n, err = syscall.Read(fd, buf[len(buf):cap(buf)])
			return err
		})
		if err != nil {
			return nil, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n <= 0 {
			break
		}
		buf = buf[:len(buf)+n]
		if int64(len(buf)) == whole {
			break
		}
	}
	return buf, nil
}

// growTo returns buf with a capacity of n (at least its length).
func growTo(buf []byte, n int64) []byte {
	if int64(cap(buf)) >= n {
		return buf
	}
	// Grow by doubling, not straight to the limit: a file that grew a
	// little since fstat needs little more.
	c := max(int64(cap(buf))*2, 512)
	out := make([]byte, len(buf), min(c, n))
	copy(out, buf)
	return out
}

// retryEINTR runs a system call again while it is interrupted by a signal.
func retryEINTR(call func() error) error {
	for {
		if err := call(); !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
