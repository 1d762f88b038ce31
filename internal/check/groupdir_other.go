//go:build !unix

package check

import (
	"errors"
	"os"
)

// errNotRegular and errOverLimit are readFile's answers about a file that
// is there (never given here).
var (
	errNotRegular = errors.New("not a regular file")
	errOverLimit  = errors.New("over the size limit")
)

// groupDir is a directory of the tree a group's rules look into, opened
// once as an os.Root of its own (groupdir_unix.go opens it as a file and
// reads by system calls).
type groupDir struct {
	r *os.Root
}

func openGroupDir(root *os.Root, dir string) (*groupDir, error) {
	r, err := root.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &groupDir{r: r}, nil
}

func (d *groupDir) close() { d.r.Close() }

func (d *groupDir) exists(name string) bool {
	_, err := d.r.Stat(name)
	return err == nil
}

// readFile leaves every read to the tree's root here.
func (d *groupDir) readFile(string, int64) ([]byte, int64, error) { return nil, 0, os.ErrInvalid }
