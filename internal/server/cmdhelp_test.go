package server

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// serveHelp is `phasegate serve -h`.
func serveHelp(t *testing.T) string {
	t.Helper()
	var stdout, stderr bytes.Buffer
	if code := Main([]string{"-h"}, func(string) string { return "" }, &stdout, &stderr, "test"); code != 0 || stderr.Len() > 0 {
		t.Fatalf("serve -h: exit %d, stderr %q", code, stderr.String())
	}
	return stdout.String()
}

// TestServeHelpListsEveryVariable: every environment variable parseServe
// reads — recorded through its getenv, over settings that take each of its
// paths — is named in `phasegate serve -h`, and the help names no other.
func TestServeHelpListsEveryVariable(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	secretFile := filepath.Join(dir, "secret")
	if err := os.WriteFile(secretFile, []byte("s1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(dir, "key.pem")
	if err := os.WriteFile(keyFile, []byte("-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	settings := []struct {
		name string
		env  map[string]string
	}{
		{name: "secret and key in variables, notifications on", env: map[string]string{
			"PHASEGATE_APP_ID": "42", "PHASEGATE_WEBHOOK_SECRET": "s1", "PHASEGATE_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\nx\n-----END RSA PRIVATE KEY-----\n",
			"PHASEGATE_SIGNING_KEY": "k", "PHASEGATE_NOTIFY_URL": "https://hooks.example.com/phasegate", "PHASEGATE_NOTIFY_SECRET": "n", "PHASEGATE_NOTIFY_ALLOW_PRIVATE": "false"}},
		{name: "secret and key in files", env: map[string]string{
			"PHASEGATE_APP_ID": "42", "PHASEGATE_WEBHOOK_SECRET_FILE": secretFile, "PHASEGATE_PRIVATE_KEY_FILE": keyFile}},
	}
	var mu sync.Mutex
	read := map[string]bool{}
	for _, s := range settings {
		getenv := func(k string) string {
			mu.Lock()
			read[k] = true
			mu.Unlock()
			return s.env[k]
		}
		var out, errb bytes.Buffer
		if _, err := parseServe(nil, getenv, &out, &errb); err != nil {
			t.Fatalf("%s: %v (the settings must parse, so that every variable is read)", s.name, err)
		}
	}
	var want []string
	for k := range read {
		if strings.HasPrefix(k, "PHASEGATE_") {
			want = append(want, k)
		}
	}
	sort.Strings(want)
	help := serveHelp(t)
	named := map[string]bool{}
	for _, k := range regexp.MustCompile(`PHASEGATE_[A-Z0-9_]+`).FindAllString(help, -1) {
		named[k] = true
	}
	var got []string
	for k := range named {
		got = append(got, k)
	}
	sort.Strings(got)
	if !slices.Equal(got, want) {
		t.Errorf("serve -h names\n  %v\nparseServe reads\n  %v\nhelp:\n%s", got, want, help)
	}
}

// TestServeHelpListsExitCodes: the help's exit codes are the ones Main
// returns: 0 for -h (and a graceful shutdown), 2 when it cannot start.
func TestServeHelpListsExitCodes(t *testing.T) {
	t.Parallel()
	help := serveHelp(t)
	i := strings.Index(help, "Exit codes:")
	if i < 0 {
		t.Fatalf("serve -h lists no exit codes:\n%s", help)
	}
	var listed []string
	for _, m := range regexp.MustCompile(`(?:^|; )(\d+) (?:after|when)`).FindAllStringSubmatch(strings.ReplaceAll(help[i+len("Exit codes: "):], "\n", " "), -1) {
		listed = append(listed, m[1])
	}
	var stdout, stderr bytes.Buffer
	returned := map[string]int{
		"0": Main([]string{"-h"}, func(string) string { return "" }, &stdout, &stderr, "test"),
		"1": Main([]string{"--probe", "--addr", "127.0.0.1:1"}, func(string) string { return "" }, &stdout, &stderr, "test"),
		"2": Main([]string{"--no-such-flag"}, func(string) string { return "" }, &stdout, &stderr, "test"),
	}
	for code, got := range returned {
		if code != strconv.Itoa(got) {
			t.Errorf("Main returned %d where the help says %s", got, code)
		}
	}
	if !slices.Equal(listed, []string{"0", "1", "2"}) {
		t.Errorf("serve -h lists the exit codes %v, want [0 1 2]:\n%s", listed, help[i:])
	}
}
