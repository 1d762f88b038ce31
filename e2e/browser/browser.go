// Package browser is the harness of phasegate's browser tests: it starts
// Debian's headless Chromium through chromedp, opens a tab per test with a
// timeout, and gives the few actions the flows need — navigate, click, type,
// press keys, wait for text —, an accessibility scan with axe-core (Axe), the
// colour scheme the page sees (ColorScheme), viewports and full-page
// screenshots.
//
// It is test support of the e2e module (e2e/go.mod), never of the product.
// Nothing is skipped silently: when Chromium or axe-core is missing, Start
// fails the test with the command that installs it. Only a `go test -short`
// run (the developer's quick loop) skips instead, and says why.
package browser

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// DefaultChromium is where Debian's chromium package installs the browser.
// The environment variable PHASEGATE_CHROMIUM names another binary.
const DefaultChromium = "/usr/bin/chromium"

// ChromiumEnv is the environment variable that overrides DefaultChromium.
const ChromiumEnv = "PHASEGATE_CHROMIUM"

// NoSandboxEnv, set to 1, runs Chromium without its sandbox also when not
// root (the tests only open pages they serve themselves).
const NoSandboxEnv = "PHASEGATE_CHROMIUM_NO_SANDBOX"

// TabTimeout bounds each tab's context (a test's deadline, when sooner, wins):
// a page that never shows the awaited text fails the test instead of hanging.
const TabTimeout = 60 * time.Second

// installHint is what a missing Chromium fails with.
const installHint = "install Debian's chromium (apt-get install -y --no-install-recommends chromium; .ci/run does) " +
	"or set " + ChromiumEnv + " to a Chromium or Chrome binary"

// Browser is one headless Chromium process, closed when the test that
// started it ends.
type Browser struct {
	// Path is the binary that runs.
	Path string
	// Launched is how long the Chromium process took to start and open its
	// first tab (the shared one's, under Main).
	Launched time.Duration
	// Started is how long Start took: Launched, or the time to open a
	// browser context of the shared browser.
	Started time.Duration

	ctx    context.Context // the browser's first tab; its children are new tabs
	output *lockedBuffer   // Chromium's stdout and stderr, for failures
}

// Start gives the test t a headless Chromium of its own: a fresh browser
// context (its own cookies and storage) of the package's shared browser when
// TestMain runs Main, a new Chromium process otherwise; t's cleanup closes it.
// It fails t (skips it under -short) when Chromium or axe-core is missing,
// saying how to install them.
func Start(t testing.TB) *Browser {
	t.Helper()
	path, err := Chromium()
	if err == nil {
		_, err = axeSource()
	}
	if err != nil {
		if testing.Short() {
			t.Skipf("browser tests skipped in -short mode: %v", err)
		}
		t.Fatal(err)
	}
	if shared.enabled {
		shared.once.Do(func() { shared.b, shared.close, shared.err = launch(path, shared.profile, log.Printf) })
		if shared.err != nil {
			t.Fatal(shared.err)
		}
		return shared.b.isolated(t)
	}
	logf := guardedLogf(t)
	b, closeBrowser, err := launch(path, t.TempDir(), logf.printf)
	t.Cleanup(func() {
		closeBrowser()
		logf.stop()
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// shared is the browser Main has the tests share, launched by the first
// Start.
var shared struct {
	enabled bool
	profile string
	once    sync.Once
	b       *Browser
	close   func()
	err     error
}

// Main runs a package's tests (call it from TestMain: os.Exit(browser.Main(m)))
// with one Chromium process for all of them, launched by the first Start, so
// that each later Start costs a browser context, not a browser.
func Main(m *testing.M) int {
	profile, err := os.MkdirTemp("", "phasegate-e2e-chromium-")
	if err != nil {
		log.Printf("e2e: no profile directory for a shared browser, each test starts its own: %v", err)
		return m.Run()
	}
	defer os.RemoveAll(profile)
	shared.enabled, shared.profile = true, profile
	defer func() {
		if shared.close != nil {
			shared.close()
		}
	}()
	return m.Run()
}

// isolated is a fresh browser context of b for t, disposed of by t's
// cleanup.
func (b *Browser) isolated(t testing.TB) *Browser {
	t.Helper()
	begin := time.Now()
	ctx, cancel := chromedp.NewContext(b.ctx, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a browser context: %v\nchromium said:\n%s", err, b.Output())
	}
	return &Browser{Path: b.Path, Launched: b.Launched, Started: time.Since(begin), ctx: ctx, output: b.output}
}

// Chromium is the browser binary the tests run: PHASEGATE_CHROMIUM, or
// DefaultChromium; an error, saying how to install it, when it is missing.
func Chromium() (string, error) {
	path := os.Getenv(ChromiumEnv)
	if path == "" {
		path = DefaultChromium
	}
	full, err := exec.LookPath(path)
	if err != nil {
		return "", fmt.Errorf("the browser tests need Chromium, and %s is not an executable (%w): %s", path, err, installHint)
	}
	return full, nil
}

// flags are the command line this machine needs, on top of chromedp's
// defaults (headless, no first run, no background networking, no sync …),
// repeated here so that the list does not depend on chromedp's: no GPU (none
// here), no QUIC, no component updates, a fresh profile, a fixed window.
func flags(path, profile string) []chromedp.ExecAllocatorOption {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-domain-reliability", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(int(Desktop.Width), int(Desktop.Height)),
	)
	if os.Geteuid() == 0 || os.Getenv(NoSandboxEnv) == "1" {
		// Chromium refuses to run as root with its sandbox (CI runs as
		// root); a machine whose kernel forbids the unprivileged user
		// namespaces the sandbox needs sets PHASEGATE_CHROMIUM_NO_SANDBOX=1.
		opts = append(opts, chromedp.NoSandbox)
	}
	return opts
}

// launch starts Chromium with the profile directory profile, sending
// chromedp's errors to logf; closeBrowser ends the process and waits for it,
// also after an error.
func launch(path, profile string, logf func(string, ...any)) (b *Browser, closeBrowser func(), err error) {
	out := &lockedBuffer{}
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		append(flags(path, profile), chromedp.CombinedOutput(out))...)
	ctx, cancel := chromedp.NewContext(allocCtx, chromedp.WithErrorf(logf))
	closeBrowser = func() {
		cancel()
		cancelAlloc() // waits for the process to end, so the profile's removal can follow
	}
	begin := time.Now()
	// The first action starts the browser and binds it to ctx, which has no
	// timeout (the tabs have theirs): the wait for it is bounded here.
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(ctx) }()
	select {
	case err = <-started:
	case <-time.After(TabTimeout):
		cancel()
		err = fmt.Errorf("no answer in %v", TabTimeout)
	}
	if err != nil {
		return nil, closeBrowser, fmt.Errorf("starting %s: %w\n(%s)\nchromium said:\n%s", path, err, installHint, out.String())
	}
	took := time.Since(begin)
	return &Browser{Path: path, Launched: took, Started: took, ctx: ctx, output: out}, closeBrowser, nil
}

// Tab opens a new tab for t, with its own context bounded by TabTimeout (or
// t's deadline when sooner); t's cleanup closes it. Tabs of one browser share
// its profile (cookies included): a test that needs a fresh session starts a
// browser of its own.
func (b *Browser) Tab(t testing.TB) context.Context {
	t.Helper()
	deadline := time.Now().Add(TabTimeout)
	if d, ok := t.(interface{ Deadline() (time.Time, bool) }); ok {
		if td, ok := d.Deadline(); ok && td.Before(deadline) {
			deadline = td.Add(-2 * time.Second) // room to report the failure
		}
	}
	tab, cancelTab := chromedp.NewContext(b.ctx)
	ctx, cancel := context.WithDeadline(tab, deadline)
	t.Cleanup(func() {
		cancel()
		cancelTab()
	})
	if err := chromedp.Do(ctx, Desktop.Apply()); err != nil {
		t.Fatalf("opening a tab: %v\nchromium said:\n%s", err, b.Output())
	}
	return ctx
}

// Output is what Chromium wrote to stdout and stderr so far (for a failure
// message).
func (b *Browser) Output() string { return b.output.String() }

// lockedBuffer is an io.Writer safe for the browser's output goroutine and
// the test reading it.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// logger forwards chromedp's error log to t.Logf until the test's cleanup,
// after which a t.Logf would panic.
type logger struct {
	mu      sync.Mutex
	t       testing.TB
	stopped bool
}

func guardedLogf(t testing.TB) *logger { return &logger{t: t} }

func (l *logger) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.stopped {
		l.t.Logf("chromedp: "+format, args...)
	}
}

func (l *logger) stop() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.stopped = true
}

// moduleDir is the e2e module's root: the nearest directory, from the
// working directory (a test's is its package's) upwards, whose go.mod is
// the e2e module.
func moduleDir() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("finding the e2e module: %w", err)
	}
	for {
		data, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && strings.HasPrefix(string(data), "module github.com/phasegate/phasegate/e2e\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("finding the e2e module: no go.mod of github.com/phasegate/phasegate/e2e above the working directory")
		}
		dir = parent
	}
}
