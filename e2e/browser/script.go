package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Eval evaluates the JavaScript expression expr in the page of ctx's tab
// and decodes its value (a promise is awaited). Like Axe, it goes over the
// DevTools protocol: the page's CSP neither blocks it nor has to allow it.
func Eval[T any](ctx context.Context, expr string) (T, error) {
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr, chromedp.EvalAwaitPromise))
	if err != nil {
		var zero T
		return zero, fmt.Errorf("evaluating %s: %w", expr, err)
	}
	return v, nil
}

// WaitTrue waits until the expression expr is true in the page, checking
// every 50 ms until ctx ends (the tab's timeout); the error names what,
// the condition waited for. A page that navigates meanwhile is asked again.
func WaitTrue(ctx context.Context, what, expr string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool]("!!("+expr+")"))
		switch {
		case err == nil && ok:
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("waiting for %s (%s): %w", what, expr, ctx.Err())
		}
		// An error other than the deadline's is a navigation under way (the
		// context the expression ran in went): ask again.
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// selectorJS is a CSS selector as a JavaScript string literal.
func selectorJS(selector string) string {
	b, err := json.Marshal(selector)
	if err != nil { // a Go string always marshals
		panic(err)
	}
	return string(b)
}

// Count is the number of elements matching the CSS selector.
func Count(ctx context.Context, selector string) (int, error) {
	return Eval[int](ctx, "document.querySelectorAll("+selectorJS(selector)+").length")
}

// WaitCount waits until exactly n elements match the CSS selector (0: until
// none does), checking every 50 ms until ctx ends; the error says how many
// matched last.
func WaitCount(ctx context.Context, selector string, n int) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	got := -1
	for {
		c, err := Count(ctx, selector)
		switch {
		case err == nil && c == n:
			return nil
		case err == nil:
			got = c
		case ctx.Err() != nil:
			return fmt.Errorf("waiting for %d of %s: %w (%d matched)", n, selector, ctx.Err(), got)
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// Attr is the attribute name of the first element matching the CSS
// selector ("" when there is no such element or attribute).
func Attr(ctx context.Context, selector, name string) (string, error) {
	return Eval[string](ctx, "(document.querySelector("+selectorJS(selector)+")?.getAttribute("+selectorJS(name)+") ?? '')")
}

// Location is the address of the tab's page.
func Location(ctx context.Context) (string, error) {
	return Eval[string](ctx, "location.href")
}

// OnNewDocument runs the JavaScript source in every page the tab opens from
// now on, before the page's own scripts (Page.addScriptToEvaluateOnNewDocument;
// the page's CSP does not apply to it): a test stands in for a browser
// without a feature so.
func OnNewDocument(ctx context.Context, source string) error {
	if _, err := chromedp.Call(ctx, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: source}); err != nil {
		return fmt.Errorf("adding a script to every new document: %w", err)
	}
	return nil
}

// Block makes the tab fail every request to a URL matching one of the
// patterns (URLPattern syntax, such as https://avatars.githubusercontent.com/*)
// at once, as a machine without that host would, only sooner.
func Block(ctx context.Context, patterns ...string) error {
	if _, err := chromedp.Call(ctx, network.Enable, network.EnableParams{}); err != nil {
		return fmt.Errorf("blocking %v: %w", patterns, err)
	}
	ps := make([]*network.BlockPattern, len(patterns))
	for i, p := range patterns {
		ps[i] = &network.BlockPattern{URLPattern: p, Block: true}
	}
	if _, err := chromedp.Call(ctx, network.SetBlockedURLs, network.SetBlockedURLsParams{URLPatterns: ps}); err != nil {
		return fmt.Errorf("blocking %v: %w", patterns, err)
	}
	return nil
}

// Cookies are the browser's cookies for url, HttpOnly ones included.
func Cookies(ctx context.Context, url string) ([]*network.Cookie, error) {
	res, err := chromedp.Call(ctx, network.GetCookies, network.GetCookiesParams{URLs: []string{url}})
	if err != nil {
		return nil, fmt.Errorf("reading the cookies of %s: %w", url, err)
	}
	return res.Cookies, nil
}
