package redistest

import "syscall"

// procAttr makes the kernel kill a redis-server when the test binary that
// started it dies without stopping it (a panic, -timeout, a kill): the
// shared server outlives every test, so a crash would otherwise leave it
// running. The signal follows the OS thread that started the process; the
// Go runtime ends a thread only when a goroutine locked to it exits, and
// no caller here locks one.
func procAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
