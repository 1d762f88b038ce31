//go:build !linux

package redistest

import "syscall"

// procAttr: only Linux can tie a child's life to its parent's; elsewhere a
// test binary that dies leaves its redis-server running.
func procAttr() *syscall.SysProcAttr { return nil }
