//go:build !unix

package history

import "io/fs"

// inode is 0 where the system has none to give, as the git index records it
// there.
func inode(fs.FileInfo) uint32 { return 0 }
