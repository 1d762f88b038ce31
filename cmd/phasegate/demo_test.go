//go:build integration

package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestDemoOutsideCheckout: `phasegate demo` works from a binary copied out
// of the checkout and run there with an empty environment (no HOME, no
// PATH, no Go): it prints what internal/cli's golden of the demo holds (the
// same run as `phasegate gate examples/demo`, TestDemo checks), exits 0,
// and leaves nothing in its temporary directory.
func TestDemoOutsideCheckout(t *testing.T) {
	want, err := os.ReadFile(filepath.Join("..", "..", "internal", "cli", "testdata", "demo.txt"))
	if err != nil {
		t.Fatal(err)
	}
	built := filepath.Join(t.TempDir(), "phasegate")
	build := exec.Command("go", "build", "-o", built, ".")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, b)
	}
	elsewhere, tmp := t.TempDir(), t.TempDir()
	bin := filepath.Join(elsewhere, "phasegate")
	data, err := os.ReadFile(built)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "demo")
	cmd.Dir, cmd.Env = elsewhere, []string{"TMPDIR=" + tmp}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("demo: %v (want exit 0), stderr %q", err, stderr.String())
	}
	if stderr.Len() != 0 {
		t.Errorf("demo wrote to stderr: %q", stderr.String())
	}
	if !bytes.Equal(stdout.Bytes(), want) {
		t.Errorf("demo outside the checkout printed\n%s\nwant (internal/cli/testdata/demo.txt)\n%s", stdout.String(), want)
	}
	if left, err := os.ReadDir(tmp); err != nil || len(left) != 0 {
		t.Errorf("demo left %v in TMPDIR (%v)", left, err)
	}
	if entries, err := os.ReadDir(elsewhere); err != nil || len(entries) != 1 {
		t.Errorf("demo wrote into its working directory: %v (%v)", entries, err)
	}
}
