//go:build unix

package history

import (
	"io/fs"
	"syscall"
)

// inode is the low 32 bits of the file's inode number, as the git index
// records it.
func inode(info fs.FileInfo) uint32 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return uint32(st.Ino)
	}
	return 0
}
