package flows

import (
	"context"
	"flag"
	"fmt"
	"image"
	"image/png"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp/kb"

	"github.com/phasegate/phasegate/e2e/browser"
)

func TestMain(m *testing.M) { os.Exit(browser.Main(m)) }

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// open is a person's browser of their own (fresh cookies: no session yet)
// and a tab in it. The tab reaches no avatars host: GitHub's avatars fail
// at once, as on a machine without the network.
func open(t *testing.T) context.Context {
	t.Helper()
	ctx := browser.Start(t).Tab(t)
	must(t, browser.Block(ctx, "https://avatars.githubusercontent.com/*"))
	return ctx
}

// visit opens a page of the world and, on a page that updates live, waits
// for its script to have started (main[data-stream]).
func visit(t *testing.T, ctx context.Context, u string) {
	t.Helper()
	must(t, browser.Navigate(ctx, u))
	live, err := browser.Attr(ctx, "main", "data-live")
	must(t, err)
	if live != "" {
		must(t, browser.WaitTrue(ctx, "the page's script", `document.querySelector("main[data-stream]")`))
	}
}

// streaming waits until the page's event stream is open: a change
// published before then would be missed.
func streaming(t *testing.T, ctx context.Context) {
	t.Helper()
	must(t, browser.WaitTrue(ctx, "the open event stream", `document.querySelector("main[data-stream=open]")`))
}

// waitText waits, a little less than the tab's timeout, for want in the
// element; then it fails the test with the page's main content.
func waitText(t *testing.T, ctx context.Context, selector, want string) {
	t.Helper()
	wait, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	if err := browser.WaitText(wait, selector, want); err != nil {
		main, _ := browser.Eval[string](ctx, `document.activeElement.outerHTML.slice(0, 200) + "\n" + document.querySelector("main").outerHTML`)
		t.Fatalf("%v; focus and main:\n%s", err, main)
	}
}

// item is the inbox entry of a decision.
func item(repo string, issue int, decision string) string {
	return fmt.Sprintf(`li[data-repo="%s/%s"][data-issue="%d"][data-decision="%s"]`, org, repo, issue, decision)
}

// inboxOrder is the inbox's entries, "repo#issue D-00n", top to bottom.
func inboxOrder(t *testing.T, ctx context.Context) []string {
	t.Helper()
	got, err := browser.Eval[[]string](ctx, `[...document.querySelectorAll("li[data-decision]")].map(e =>
		e.dataset.repo + "#" + e.dataset.issue + " " + e.dataset.decision)`)
	must(t, err)
	return got
}

// path is the path (and query and fragment) of the tab's page.
func path(t *testing.T, ctx context.Context) string {
	t.Helper()
	loc, err := browser.Location(ctx)
	must(t, err)
	u, err := url.Parse(loc)
	must(t, err)
	return strings.TrimPrefix(loc, u.Scheme+"://"+u.Host)
}

// cookie is the browser's cookie of the pages named name, nil when none.
func cookie(t *testing.T, ctx context.Context, w *world, name string) *network.Cookie {
	t.Helper()
	cs, err := browser.Cookies(ctx, w.public+"/")
	must(t, err)
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// TestSignInAndOut: a person who opens the pages signed out goes through
// GitHub's sign-in (the fake's authorize page, which consents as them,
// with PKCE) and lands where they were going, signed in; the session is an
// HttpOnly, SameSite=Lax cookie; signing out (a POST from the button)
// ends it, and the sign-in link brings them back.
func TestSignInAndOut(t *testing.T) {
	w := newWorld(t)
	ctx := open(t)

	visit(t, ctx, w.url("/%s/%s/issues/%d", org, shop, w.shopCards))
	if got, want := path(t, ctx), fmt.Sprintf("/%s/%s/issues/%d", org, shop, w.shopCards); got != want {
		t.Fatalf("after signing in the tab is at %s, want %s", got, want)
	}
	viewer, err := browser.Attr(ctx, "[data-viewer]", "data-viewer")
	must(t, err)
	if viewer != person {
		t.Fatalf("signed in as %q, want %q", viewer, person)
	}
	var authorize string
	for _, c := range w.fake.Calls() {
		if c.Path == "/login/oauth/authorize" {
			authorize = c.Query
		}
	}
	if !strings.Contains(authorize, "code_challenge_method=S256") || !strings.Contains(authorize, "state=") {
		t.Errorf("the authorize request %q has no PKCE challenge or no state", authorize)
	}
	s := cookie(t, ctx, w, "phasegate_session")
	if s == nil || !s.HTTPOnly || s.SameSite != network.CookieSameSiteLax || s.Path != "/" {
		t.Fatalf("session cookie %+v, want HttpOnly, SameSite=Lax, Path=/", s)
	}
	if seen, err := browser.Eval[string](ctx, "document.cookie"); err != nil || strings.Contains(seen, "phasegate_session") {
		t.Errorf("the page's script sees the session cookie (%q, %v)", seen, err)
	}

	must(t, browser.Click(ctx, "#sign-out button"))
	must(t, browser.WaitText(ctx, "h1", "Signed out"))
	if c := cookie(t, ctx, w, "phasegate_session"); c != nil {
		t.Fatalf("the session cookie outlived the sign-out: %+v", c)
	}
	if n, err := browser.Count(ctx, "[data-viewer]"); err != nil || n != 0 {
		t.Fatalf("the signed-out page shows a person (%d, %v)", n, err)
	}

	must(t, browser.Click(ctx, "#sign-in"))
	must(t, browser.WaitTrue(ctx, "the inbox, signed in", `document.querySelector("[data-viewer]") && location.pathname === "/inbox"`))
}

// TestResolveWithAClick: from the inbox to the decision's page, an option
// and a reason picked with the mouse, the button: the person's own
// /resolve comment lands on the issue, posted through the App; GitHub
// delivers it to the webhook, serve applies it, phasegate/decisions
// passes, and the open page shows the resolution without a reload.
func TestResolveWithAClick(t *testing.T) {
	w := newWorld(t)
	ctx := open(t)
	visit(t, ctx, w.url("/inbox"))
	want := []string{
		fmt.Sprintf("%s/%s#%d D-001", org, shop, w.shopSearch), // blocking, newest
		fmt.Sprintf("%s/%s#%d D-001", org, api, w.apiLimits),
		fmt.Sprintf("%s/%s#%d D-001", org, shop, w.shopCards),
		fmt.Sprintf("%s/%s#%d D-002", org, shop, w.shopCards), // not blocking
	}
	if cs := w.fake.Comments(org, vault, w.vaultKeys); len(cs) == 0 || cs[0].User != appBot {
		t.Fatalf("no outcome was posted in %s/%s: its absence from the inbox would prove nothing (%+v)", org, vault, cs)
	}
	if got := inboxOrder(t, ctx); !slices.Equal(got, want) {
		t.Fatalf("inbox %q, want blocking first, then newest, and nothing of %s/%s, which alice cannot see: %q", got, org, vault, want)
	}
	if n, err := browser.Count(ctx, item(api, w.apiLimits, "D-001")+" .yours"); err != nil || n != 0 {
		t.Errorf("a decision alice may not resolve says she may (%d, %v)", n, err)
	}

	must(t, browser.Click(ctx, item(shop, w.shopCards, "D-001")+" a.open"))
	must(t, browser.WaitTrue(ctx, "the issue page", `document.querySelector("form[data-resolve=D-001]") && document.querySelector("main[data-stream]")`))
	form := `form[data-resolve="D-001"]`
	must(t, browser.Click(ctx, form+` input[name=option][value=approve]`))
	must(t, browser.Type(ctx, form+` input[name=reason]`, "the stories cover the wallets"))
	streaming(t, ctx)
	must(t, browser.Click(ctx, form+` button[type=submit]`))
	must(t, browser.WaitText(ctx, "#flash", "/resolve D-001 approve"))

	c := w.resolveComment(shop, w.shopCards, person, "D-001")
	if command, note, _ := strings.Cut(c.Body, "\n"); command != "/resolve D-001 approve the stories cover the wallets" ||
		!strings.Contains(note, "Posted through phasegate") || c.ViaApp != appSlug {
		t.Fatalf("the page's comment %q, through %q; want the person's /resolve with the reason, saying it was posted through %s", c.Body, c.ViaApp, appSlug)
	}
	if got := w.decisionsCheck(shop, w.cardsHead); got != "action_required" {
		t.Fatalf("phasegate/decisions before the webhook: %q, want action_required", got)
	}
	streaming(t, ctx)
	w.deliverComment(shop, w.shopCards, c.ID, person, c.Body)
	if got := w.decisionsCheck(shop, w.cardsHead); got != "success" {
		t.Fatalf("phasegate/decisions after the resolution: %q, want success; logs:\n%s", got, w.logs.String())
	}
	waitText(t, ctx, `section[data-decision="D-001"] p.done`, "Resolved approve by "+person)

	visit(t, ctx, w.url("/%s/%s/pull/%d", org, shop, w.cardsPR))
	if got, err := browser.Attr(ctx, "[data-decisions]", "data-decisions"); err != nil || got != "success" {
		t.Errorf("the pull request's page shows phasegate/decisions %q (%v), want success", got, err)
	}
	visit(t, ctx, w.url("/inbox"))
	if n, err := browser.Count(ctx, item(shop, w.shopCards, "D-001")); err != nil || n != 0 {
		t.Errorf("the resolved decision is still in the inbox (%d, %v)", n, err)
	}
}

// TestResolveWithTheKeyboard: the same with the keys only, as the
// shortcuts' help lists them: j to the first decision, Enter to open it,
// j to its form, a for approve, Tab to the reason, Enter to post.
func TestResolveWithTheKeyboard(t *testing.T) {
	w := newWorld(t)
	ctx := open(t)
	visit(t, ctx, w.url("/inbox"))

	must(t, browser.Press(ctx, "?"))
	help, err := browser.Text(ctx, "#help")
	must(t, err)
	for _, key := range []string{"next / previous decision", "open the decision", "pick approve"} {
		if !strings.Contains(help, key) {
			t.Errorf("the shortcuts' help does not say %q:\n%s", key, help)
		}
	}
	must(t, browser.Press(ctx, kb.Escape))
	must(t, browser.WaitTrue(ctx, "the help hidden", `document.getElementById("help").hidden`))

	first := item(shop, w.shopSearch, "D-001")
	must(t, browser.Press(ctx, "j"))
	must(t, browser.WaitTrue(ctx, "the first decision current and focused",
		`document.querySelector(`+js(first+`[aria-current=true]`)+`) && document.activeElement === document.querySelector(`+js(first+` a.open`)+`)`))
	focusVisible(t, ctx)
	must(t, browser.Press(ctx, kb.Enter))
	must(t, browser.WaitTrue(ctx, "the decision's page", `location.pathname.endsWith("/issues/`+fmt.Sprint(w.shopSearch)+`") && document.querySelector("main[data-stream]")`))

	must(t, browser.Press(ctx, "j"))
	must(t, browser.WaitTrue(ctx, "the decision current", `document.querySelector('section[data-decision="D-001"][aria-current=true]')`))
	must(t, browser.Press(ctx, "a"))
	must(t, browser.WaitTrue(ctx, "approve picked and focused", `document.activeElement.matches("input[name=option][value=approve]:checked")`))
	must(t, browser.Press(ctx, kb.Tab))
	must(t, browser.WaitTrue(ctx, "the reason focused", `document.activeElement.name === "reason"`))
	focusVisible(t, ctx)
	must(t, browser.Press(ctx, "trigrams are fine"))
	streaming(t, ctx)
	must(t, browser.Press(ctx, kb.Enter))
	must(t, browser.WaitText(ctx, "#flash", "/resolve D-001 approve"))

	c := w.resolveComment(shop, w.shopSearch, person, "D-001")
	if command, _, _ := strings.Cut(c.Body, "\n"); command != "/resolve D-001 approve trigrams are fine" {
		t.Fatalf("the comment posted from the keyboard: %q", c.Body)
	}
	streaming(t, ctx)
	w.deliverComment(shop, w.shopSearch, c.ID, person, c.Body)
	if got := w.decisionsCheck(shop, w.searchHead); got != "success" {
		t.Fatalf("phasegate/decisions after the resolution: %q, want success", got)
	}
	waitText(t, ctx, `section[data-decision="D-001"] p.done`, "Resolved approve by "+person)
}

// focusVisible fails the test when the focused element shows no focus
// ring.
func focusVisible(t *testing.T, ctx context.Context) {
	t.Helper()
	style, err := browser.Eval[string](ctx, `(e => e.tagName + " " + getComputedStyle(e).outlineStyle + " " + getComputedStyle(e).outlineWidth)(document.activeElement)`)
	must(t, err)
	if f := strings.Fields(style); len(f) != 3 || f[1] == "none" || f[2] == "0px" {
		t.Errorf("the focused element shows no focus ring: %s", style)
	}
}

// js is s as a JavaScript string literal.
func js(s string) string { return fmt.Sprintf("%q", s) }

// TestLiveUpdate: with the inbox open, a decision resolved on GitHub (a
// comment typed there, delivered to the webhook) leaves the inbox without
// a reload, over server-sent events; in a browser without EventSource the
// page polls and gets there too.
func TestLiveUpdate(t *testing.T) {
	w := newWorld(t)
	ctx := open(t)
	visit(t, ctx, w.url("/inbox"))
	streaming(t, ctx)
	_, err := browser.Eval[bool](ctx, "window.notReloaded = true")
	must(t, err)
	w.comment(shop, w.shopCards, person, "/resolve D-002 capture")
	must(t, browser.WaitCount(ctx, item(shop, w.shopCards, "D-002"), 0))
	if still, err := browser.Eval[bool](ctx, "window.notReloaded === true"); err != nil || !still {
		t.Fatalf("the inbox was reloaded (%v, %v), not updated in place", still, err)
	}
	must(t, browser.WaitText(ctx, ".count", "3 pending decisions"))

	t.Run("polling", func(t *testing.T) {
		ctx := open(t)
		// No EventSource, and the page's 30 s poll made quick.
		must(t, browser.OnNewDocument(ctx, `delete window.EventSource;
const si = window.setInterval; window.setInterval = (f, ms, ...a) => si(f, Math.min(ms, 200), ...a);`))
		visit(t, ctx, w.url("/inbox"))
		must(t, browser.WaitTrue(ctx, "polling", `document.querySelector("main[data-stream=polling]")`))
		w.comment(shop, w.shopSearch, person, "/resolve D-001 approve")
		must(t, browser.WaitCount(ctx, item(shop, w.shopSearch, "D-001"), 0))
	})
}

// page is one page the accessibility scan visits.
type page struct {
	name string
	// reach brings the tab to the page (a navigation, or a form posted).
	reach func(t *testing.T, ctx context.Context)
	// want is text the page must show, so a wrong page does not pass.
	want string
}

// TestAccessibility scans every page with axe-core, in light and dark
// mode, at desktop and phone width: none may break a rule (WCAG 2.1 A and
// AA, and axe's best practices), nor be wider than the screen.
func TestAccessibility(t *testing.T) {
	w := newWorld(t)
	ctx := open(t)
	nav := func(p string, args ...any) func(*testing.T, context.Context) {
		return func(t *testing.T, ctx context.Context) { visit(t, ctx, w.url(p, args...)) }
	}
	pages := []page{
		{name: "inbox", reach: nav("/inbox"), want: "4 pending decisions"},
		{name: "filtered inbox", reach: func(t *testing.T, ctx context.Context) {
			// The filters are a plain GET form: pick, tick, press.
			visit(t, ctx, w.url("/inbox"))
			_, err := browser.Eval[bool](ctx, `(s => (s.value = "acme/shop", true))(document.querySelector("#filters select[name=repo]"))`)
			must(t, err)
			must(t, browser.Click(ctx, "#filters input[name=mine]"))
			must(t, browser.Click(ctx, "#filters button[type=submit]"))
			// The new document's address comes before its body is parsed.
			must(t, browser.WaitTrue(ctx, "the filtered inbox", `location.search === "?repo=acme%2Fshop&phase=&type=&mine=1" && document.readyState !== "loading"`))
			if got := inboxOrder(t, ctx); len(got) != 3 || slices.ContainsFunc(got, func(s string) bool { return !strings.HasPrefix(s, org+"/"+shop+"#") }) {
				t.Errorf("the filtered inbox lists %q, want the three decisions of %s/%s", got, org, shop)
			}
		}, want: "3 of 4 pending decisions"},
		{name: "issue", reach: nav("/%s/%s/issues/%d", org, shop, w.shopCards), want: "Saved cards at checkout"},
		{name: "commit", reach: func(t *testing.T, ctx context.Context) {
			visit(t, ctx, w.url("/%s/%s/commit/%s", org, shop, w.searchHead))
			verdict, err := browser.Attr(ctx, "[data-verdict]", "data-verdict")
			must(t, err)
			// Each finding links to its file at the commit, at its line, on GitHub.
			href, err := browser.Attr(ctx, `li[data-finding="outcome.finding-category"] a`, "href")
			must(t, err)
			want := fmt.Sprintf("%s/%s/%s/blob/%s/outcomes/feature-%03d-technical-plan.outcome.yaml#L7", w.fake.WebURL(), org, shop, w.searchHead, w.shopSearch)
			if verdict != "ADVISORY" || href != want {
				t.Errorf("the commit's page: verdict %q, the finding's link %q; want ADVISORY and %s", verdict, href, want)
			}
		}, want: "ADVISORY"},
		{name: "pull request", reach: nav("/%s/%s/pull/%d", org, shop, w.cardsPR), want: "Pull request #"},
		{name: "not found", reach: func(t *testing.T, ctx context.Context) {
			// A repository alice cannot see answers as one that does not exist.
			visit(t, ctx, w.url("/%s/%s/issues/%d", org, vault, w.vaultKeys))
			hidden, err := browser.Eval[string](ctx, "document.documentElement.outerHTML")
			must(t, err)
			visit(t, ctx, w.url("/%s/no-such-repo/issues/%d", org, w.vaultKeys))
			missing, err := browser.Eval[string](ctx, "document.documentElement.outerHTML")
			must(t, err)
			if hidden != missing {
				t.Errorf("a repository alice cannot see answers otherwise than a missing one:\n%s\n---\n%s", hidden, missing)
			}
		}, want: "Not found"},
		{name: "sign-in refused", reach: nav("/oauth/callback?state=forged&code=x"), want: "Sign-in"},
		{name: "resolve refused", reach: func(t *testing.T, ctx context.Context) { staleResolve(t, ctx, w) }, want: "Not resolved"},
		{name: "signed out", reach: func(t *testing.T, ctx context.Context) {
			visit(t, ctx, w.url("/inbox"))
			must(t, browser.Click(ctx, "#sign-out button"))
			must(t, browser.WaitText(ctx, "h1", "Signed out"))
		}, want: "Signed out"},
	}
	for _, p := range pages {
		t.Run(p.name, func(t *testing.T) {
			p.reach(t, ctx)
			waitText(t, ctx, "main", p.want)
			for _, vp := range []browser.Viewport{browser.Desktop, browser.Phone} {
				for _, scheme := range []string{"light", "dark"} {
					must(t, browser.SetViewport(ctx, vp))
					must(t, browser.ColorScheme(ctx, scheme))
					vs, err := browser.Axe(ctx)
					must(t, err)
					for _, v := range vs {
						t.Errorf("%s, %s: %s", vp.Name, scheme, v)
					}
					wide, err := browser.Eval[int](ctx, "document.documentElement.scrollWidth")
					must(t, err)
					if wide > int(vp.Width) {
						t.Errorf("%s: the page is %d px wide, wider than the screen (%d px): it scrolls sideways", vp.Name, wide, vp.Width)
					}
				}
			}
			must(t, browser.SetViewport(ctx, browser.Desktop))
			must(t, browser.ColorScheme(ctx, "light"))
		})
	}
}

// staleResolve posts the resolve form of a page that went stale: the
// person picks an option, the decision is resolved on GitHub meanwhile (the
// page, being filled in, says so instead of refreshing), and the button
// posts anyway; serve refuses, saying why.
func staleResolve(t *testing.T, ctx context.Context, w *world) {
	t.Helper()
	visit(t, ctx, w.url("/%s/%s/issues/%d", org, shop, w.shopSearch))
	streaming(t, ctx)
	must(t, browser.Click(ctx, `form[data-resolve="D-001"] input[name=option][value=reject]`))
	w.comment(shop, w.shopSearch, person, "/resolve D-001 approve")
	waitText(t, ctx, ".live-note", "This page changed")
	must(t, browser.Click(ctx, `form[data-resolve="D-001"] button[type=submit]`))
	must(t, browser.WaitText(ctx, "h1", "Not resolved"))
}

var update = flag.Bool("update", false, "rewrite the README's screenshots in docs/img/")

// screenshotDir is where the README's screenshots are, from this package.
const screenshotDir = "../../docs/img"

// TestScreenshots takes the README's screenshots: the inbox and an issue's
// page, light mode, desktop width. With -update they replace the ones in
// docs/img/; otherwise they are compared loosely with those (the same
// width, a height within a fifth): pixels differ across Chromium versions
// and fonts, so no pixel is compared.
func TestScreenshots(t *testing.T) {
	w := newWorld(t)
	ctx := open(t)
	shots := []struct {
		file, path, want string
	}{
		{file: "inbox.png", path: "/inbox", want: "4 pending decisions"},
		{file: "issue.png", path: fmt.Sprintf("/%s/%s/issues/%d", org, shop, w.shopCards), want: "Saved cards at checkout"},
	}
	for _, s := range shots {
		t.Run(s.file, func(t *testing.T) {
			visit(t, ctx, w.public+s.path)
			waitText(t, ctx, "main", s.want)
			committed := filepath.Join(screenshotDir, s.file)
			if *update {
				must(t, browser.Screenshot(ctx, committed))
				return
			}
			taken := filepath.Join(t.TempDir(), s.file)
			must(t, browser.Screenshot(ctx, taken))
			got, want := pngSize(t, taken), pngSize(t, committed)
			if got.X != want.X || got.Y < want.Y*4/5 || got.Y > want.Y*6/5 {
				t.Errorf("the %s screenshot is %v, the committed one %v: the page's layout changed (rerun with -update and look at it)", s.file, got, want)
			}
		})
	}
}

func pngSize(t *testing.T, file string) image.Point {
	t.Helper()
	f, err := os.Open(file)
	must(t, err)
	defer f.Close()
	c, err := png.DecodeConfig(f)
	if err != nil {
		t.Fatalf("reading %s: %v", file, err)
	}
	return image.Pt(c.Width, c.Height)
}
