package cli

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/phasegate/phasegate/internal/testutil"
)

// openPTY opens a pseudo-terminal: stdout for phasegate is its terminal
// side, and what phasegate writes is read from the controlling side.
func openPTY(t *testing.T) (ptmx, tty *os.File) {
	t.Helper()
	ptmx, err := os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("no pseudo-terminal on this machine: %v", err)
	}
	t.Cleanup(func() { ptmx.Close() })
	var unlock int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCSPTLCK, uintptr(unsafe.Pointer(&unlock))); e != 0 {
		t.Fatalf("unlocking the pseudo-terminal: %v", e)
	}
	var n uint32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, ptmx.Fd(), syscall.TIOCGPTN, uintptr(unsafe.Pointer(&n))); e != 0 {
		t.Fatalf("naming the pseudo-terminal: %v", e)
	}
	tty, err = os.OpenFile("/dev/pts/"+strconv.Itoa(int(n)), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("opening the terminal side: %v", err)
	}
	t.Cleanup(func() { tty.Close() })
	return ptmx, tty
}

// runOnTTY runs phasegate with stdout on a terminal and returns what it
// wrote there.
func runOnTTY(t *testing.T, env map[string]string, args ...string) (int, string) {
	t.Helper()
	ptmx, tty := openPTY(t)
	read := make(chan string)
	go func() {
		var b bytes.Buffer
		io.Copy(&b, ptmx) // ends with EIO once the terminal side is closed
		read <- b.String()
	}()
	var stderr bytes.Buffer
	code := Main(args, func(k string) string { return env[k] }, tty, &stderr)
	if stderr.Len() > 0 {
		t.Errorf("stderr: %s", stderr.String())
	}
	tty.Close()
	return code, <-read
}

// TestColorOnATerminal: text output to a terminal is coloured, unless
// NO_COLOR is set or TERM is dumb; JSON to a terminal never is.
func TestColorOnATerminal(t *testing.T) {
	root := testutil.WriteTree(t, t.TempDir(), map[string]string{
		".pace/day-1/gate-report.yaml": validGateReport,
		".pace/day-2/gate-report.yaml": brokenYAML,
	})
	tests := []struct {
		name      string
		env       map[string]string
		args      []string
		wantColor bool
	}{
		{name: "text", env: map[string]string{"TERM": "xterm"}, args: []string{"validate", root}, wantColor: true},
		{name: "text without TERM", env: map[string]string{}, args: []string{"gate", root}, wantColor: true},
		{name: "NO_COLOR", env: map[string]string{"TERM": "xterm", "NO_COLOR": "1"}, args: []string{"validate", root}},
		{name: "NO_COLOR empty is unset", env: map[string]string{"TERM": "xterm", "NO_COLOR": ""}, args: []string{"validate", root}, wantColor: true},
		{name: "dumb terminal", env: map[string]string{"TERM": "dumb"}, args: []string{"validate", root}},
		{name: "json", env: map[string]string{"TERM": "xterm"}, args: []string{"validate", "--format", "json", root}},
		{name: "github", env: map[string]string{"TERM": "xterm"}, args: []string{"validate", "--format", "github", root}},
		{name: "--color=never", env: map[string]string{"TERM": "xterm"}, args: []string{"validate", "--color=never", root}},
		{name: "--no-color", env: map[string]string{"TERM": "xterm"}, args: []string{"gate", root, "--no-color"}},
		{name: "--no-color before the command", env: map[string]string{"TERM": "xterm"}, args: []string{"--no-color", "validate", root}},
		{name: "--color=never beats FORCE_COLOR", env: map[string]string{"FORCE_COLOR": "1"}, args: []string{"validate", "--color", "never", root}},
		{name: "--color=always beats NO_COLOR", env: map[string]string{"NO_COLOR": "1"}, args: []string{"validate", "--color=always", root}, wantColor: true},
		{name: "--color=always beats a dumb terminal", env: map[string]string{"TERM": "dumb"}, args: []string{"validate", "--color=always", root}, wantColor: true},
		{name: "--color=auto on a terminal", env: map[string]string{"TERM": "xterm"}, args: []string{"--color=never", "validate", "--color=auto", root}, wantColor: true},
		{name: "json, whatever --color says", env: map[string]string{"TERM": "xterm"}, args: []string{"validate", "--color=always", "--format", "json", root}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runOnTTY(t, tc.env, tc.args...)
			if code != ExitFindings {
				t.Fatalf("exit %d, output:\n%s", code, out)
			}
			hasColor := strings.Contains(out, "\x1b[")
			if hasColor != tc.wantColor {
				t.Errorf("coloured = %v, want %v:\n%q", hasColor, tc.wantColor, out)
			}
			if tc.wantColor {
				for _, want := range []string{"\x1b[1;31merror\x1b[0m syntax:", "— \x1b[1;31mHOLD\x1b[0m"} {
					if !strings.Contains(out, want) {
						t.Errorf("output lacks %q:\n%q", want, out)
					}
				}
			}
		})
	}
}
