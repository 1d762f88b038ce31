package browser

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// strictCSP is the policy the fixtures are served with, as strict as the
// pages' own: nothing inline, everything from the page's origin.
const strictCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"form-action 'self'; base-uri 'none'; frame-ancestors 'none'"

// fixtures serves testdata/ under a strict CSP, and /events: a server-sent
// event stream that sends every string written to the returned channel as
// a "decision" event.
func fixtures(t *testing.T) (*httptest.Server, chan<- string) {
	t.Helper()
	events := make(chan string)
	quit := make(chan struct{})
	mux := http.NewServeMux()
	mux.Handle("/", http.FileServerFS(os.DirFS("testdata")))
	mux.HandleFunc("/events", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		rc := http.NewResponseController(w)
		if err := rc.Flush(); err != nil {
			return
		}
		for {
			select {
			case <-r.Context().Done():
				return
			case <-quit:
				return
			case data := <-events:
				if _, err := fmt.Fprintf(w, "event: decision\ndata: %s\n\n", data); err != nil {
					return
				}
				if err := rc.Flush(); err != nil {
					return
				}
			}
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", strictCSP)
		mux.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(quit) }) // runs first: the stream ends, so Close does not wait for it
	return srv, events
}

func eval[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// scan runs Axe and logs how long it took.
func scan(t *testing.T, ctx context.Context) []Violation {
	t.Helper()
	begin := time.Now()
	vs, err := Axe(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("axe scan: %v", time.Since(begin).Round(time.Millisecond))
	return vs
}

// TestAxeCleanPage: a page that meets WCAG 2.1 AA under a strict CSP scans
// clean in both colour schemes — the CSP is enforced (its inline script did
// not run, its own script did), and the scheme is the one asked for.
func TestAxeCleanPage(t *testing.T) {
	srv, _ := fixtures(t)
	b := Start(t)
	t.Logf("chromium %s launched in %v; this test's browser context ready in %v", b.Path,
		b.Launched.Round(time.Millisecond), b.Started.Round(time.Millisecond))
	for _, scheme := range []string{"light", "dark"} {
		t.Run(scheme, func(t *testing.T) {
			ctx := b.Tab(t)
			if err := ColorScheme(ctx, scheme); err != nil {
				t.Fatal(err)
			}
			if err := Navigate(ctx, srv.URL+"/clean.html"); err != nil {
				t.Fatal(err)
			}
			if err := WaitText(ctx, "h1", "Decisions waiting"); err != nil {
				t.Fatal(err)
			}
			if got := eval[string](t, ctx, `document.documentElement.dataset.script || ""`); got != "ran" {
				t.Fatalf("the page's own script did not run (%q): the fixture is broken", got)
			}
			if got := eval[string](t, ctx, `document.documentElement.dataset.inline || ""`); got != "" {
				t.Fatalf("the inline script ran (%q): the CSP is not enforced, so the scan proves nothing about CSP", got)
			}
			if dark := eval[bool](t, ctx, `matchMedia("(prefers-color-scheme: dark)").matches`); dark != (scheme == "dark") {
				t.Fatalf("prefers-color-scheme: dark matches = %v under ColorScheme(%q)", dark, scheme)
			}
			for _, v := range scan(t, ctx) {
				t.Errorf("violation: %v", v)
			}
		})
	}
}

// TestAxeFindsThePlantedViolations: axe really runs, and finds exactly what
// was planted — an image without alt, a nameless button and, in dark mode
// only, low-contrast text — on the elements they were planted on.
func TestAxeFindsThePlantedViolations(t *testing.T) {
	srv, _ := fixtures(t)
	b := Start(t)
	tests := []struct {
		scheme string
		want   map[string]string // rule → the element's selector
	}{
		{scheme: "light", want: map[string]string{"image-alt": "#noalt", "button-name": "#noname"}},
		{scheme: "dark", want: map[string]string{"image-alt": "#noalt", "button-name": "#noname", "color-contrast": "#faint"}},
	}
	for _, tt := range tests {
		t.Run(tt.scheme, func(t *testing.T) {
			ctx := b.Tab(t)
			if err := ColorScheme(ctx, tt.scheme); err != nil {
				t.Fatal(err)
			}
			if err := Navigate(ctx, srv.URL+"/planted.html"); err != nil {
				t.Fatal(err)
			}
			vs := scan(t, ctx)
			got := IDs(vs)
			slices.Sort(got)
			want := make([]string, 0, len(tt.want))
			for id := range tt.want {
				want = append(want, id)
			}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("violations %q, want %q:\n%v", got, want, vs)
			}
			for _, v := range vs {
				if len(v.Nodes) != 1 || !slices.Equal(v.Nodes[0].Target, []string{tt.want[v.ID]}) {
					t.Errorf("%s found on %+v, want on %s only", v.ID, v.Nodes, tt.want[v.ID])
				}
				if !strings.Contains(v.String(), v.ID) || v.HelpURL == "" {
					t.Errorf("violation %+v reads %q", v, v.String())
				}
			}
		})
	}
}

// TestClickAndKeyboard: real mouse clicks, typing and key presses reach the
// page's own script.
func TestClickAndKeyboard(t *testing.T) {
	srv, _ := fixtures(t)
	ctx := Start(t).Tab(t)
	if err := Navigate(ctx, srv.URL+"/keys.html"); err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name      string
		do        func() error
		sel, want string
	}{
		{"click", func() error { return Click(ctx, "#inc") }, "#count", "1"},
		{"click again", func() error { return Click(ctx, "#inc") }, "#count", "2"},
		{"type", func() error { return Type(ctx, "#reason", "looks good") }, "#echo", "looks good"},
		{"j while typing is text", func() error { return Press(ctx, "j") }, "#echo", "looks goodj"},
		{"j selects the first", func() error { return press(ctx, "h1", "j") }, "#selected", "D-001"},
		{"j selects the next", func() error { return Press(ctx, "j") }, "#selected", "D-002"},
		{"k goes back", func() error { return Press(ctx, "k") }, "#selected", "D-001"},
		{"Enter resolves it", func() error { return Press(ctx, kb.Enter) }, "#status", "resolved D-001"},
	}
	for _, s := range steps {
		if err := s.do(); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		if err := WaitText(ctx, s.sel, s.want); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
	}
	if got := eval[string](t, ctx, `document.activeElement.id`); got != "" {
		t.Errorf("the focus is on #%s, want the page body", got)
	}
}

// press moves the focus off the text field (a click on a non-field
// element) and presses keys.
func press(ctx context.Context, on, keys string) error {
	if err := Click(ctx, on); err != nil {
		return err
	}
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](`document.activeElement.blur()`)); err != nil {
		return err
	}
	return Press(ctx, keys)
}

// TestLiveUpdates: an event the server pushes over server-sent events shows
// on the open page, without a reload, one after another.
func TestLiveUpdates(t *testing.T) {
	srv, events := fixtures(t)
	ctx := Start(t).Tab(t)
	if err := Navigate(ctx, srv.URL+"/live.html"); err != nil {
		t.Fatal(err)
	}
	if err := WaitText(ctx, "#conn", "connected"); err != nil {
		t.Fatal(err)
	}
	for _, msg := range []string{"D-001 resolved by octocat", "D-002 waiting on hubot"} {
		select {
		case events <- msg:
		case <-ctx.Done():
			t.Fatalf("the page's stream was gone before %q: %v", msg, ctx.Err())
		}
		if err := WaitText(ctx, "#live", msg); err != nil {
			t.Fatal(err)
		}
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("#live li").length`); n != 2 {
		t.Errorf("%d items in the live list, want 2", n)
	}
}

// TestScreenshots: a full-page PNG at each fixed viewport, at the
// viewport's width, at least its height.
func TestScreenshots(t *testing.T) {
	srv, _ := fixtures(t)
	ctx := Start(t).Tab(t)
	dir := t.TempDir()
	for _, v := range []Viewport{Desktop, Phone} {
		t.Run(v.Name, func(t *testing.T) {
			if err := SetViewport(ctx, v); err != nil {
				t.Fatal(err)
			}
			if err := Navigate(ctx, srv.URL+"/clean.html"); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "shots", v.Name+".png")
			if err := Screenshot(ctx, path); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			cfg, err := png.DecodeConfig(bytes.NewReader(data))
			if err != nil {
				t.Fatalf("%s is not a PNG: %v", path, err)
			}
			if int64(cfg.Width) != v.Width || int64(cfg.Height) < v.Height {
				t.Errorf("%s is %d×%d, want %d wide and at least %d high", path, cfg.Width, cfg.Height, v.Width, v.Height)
			}
		})
	}
}

func TestColorSchemeRefusesOthers(t *testing.T) {
	if err := ColorScheme(context.Background(), "sepia"); err == nil || !strings.Contains(err.Error(), "want dark or light") {
		t.Errorf("ColorScheme(sepia) = %v", err)
	}
}

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// tb records how Start ends a test instead of ending it.
type tb struct {
	testing.TB
	fatal, skip string
}

type stopped struct{}

func (r *tb) Helper() {}

func (r *tb) Fatal(args ...any) { r.fatal = fmt.Sprint(args...); panic(stopped{}) }

func (r *tb) Skipf(format string, args ...any) {
	r.skip = fmt.Sprintf(format, args...)
	panic(stopped{})
}

// TestMissingChromiumSaysHowToInstall: without Chromium, Start fails the
// test (skips it under -short only), saying how to install it.
func TestMissingChromiumSaysHowToInstall(t *testing.T) {
	t.Setenv(ChromiumEnv, filepath.Join(t.TempDir(), "no-chromium"))
	rec := &tb{TB: t}
	func() {
		defer func() {
			if r := recover(); r != nil && r != (stopped{}) {
				panic(r)
			}
		}()
		Start(rec)
		t.Fatal("Start went on without Chromium")
	}()
	got, other := rec.fatal, rec.skip
	if testing.Short() {
		got, other = rec.skip, rec.fatal
	}
	for _, want := range []string{"no-chromium", "apt-get install -y --no-install-recommends chromium", ChromiumEnv} {
		if !strings.Contains(got, want) {
			t.Errorf("Start without Chromium (short %v) said %q, want it to say %q", testing.Short(), got, want)
		}
	}
	if other != "" {
		t.Errorf("Start without Chromium (short %v) also said %q", testing.Short(), other)
	}
}

func TestMissingAxeSaysHowToInstall(t *testing.T) {
	_, err := readAxe(t.TempDir())
	if err == nil || !strings.Contains(err.Error(), "run `npm ci` in e2e/") {
		t.Errorf("readAxe of a module without node_modules = %v", err)
	}
	dir, err := moduleDir()
	if err != nil {
		t.Fatal(err)
	}
	if src, err := readAxe(dir); err != nil || !strings.Contains(src, "axe") {
		t.Errorf("readAxe(%s) = %d bytes, %v", dir, len(src), err)
	}
}
