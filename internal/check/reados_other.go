//go:build !unix

package check

import "os"

// readOS is readLimited for the file p of the OS directory dir: through
// os.DirFS(dir) here (reados_unix.go reads by system calls).
func readOS(dir, p string, limit int64) ([]byte, int64, error) {
	return readLimited(os.DirFS(dir), p, limit)
}
