package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// Viewport is a page size the tests render at: fixed, so screenshots are
// deterministic.
type Viewport struct {
	Name          string
	Width, Height int64
	Mobile        bool
}

var (
	// Desktop is every tab's viewport until another is applied.
	Desktop = Viewport{Name: "desktop", Width: 1280, Height: 800}
	// Phone is a phone held upright (an iPhone 12–15's CSS pixels).
	Phone = Viewport{Name: "phone", Width: 390, Height: 844, Mobile: true}
)

// Apply is the action that makes the tab this viewport (device scale 1).
func (v Viewport) Apply() chromedp.Action[chromedp.Void] {
	opts := []chromedp.EmulateViewportOption{chromedp.EmulatePortrait}
	if v.Width > v.Height {
		opts[0] = chromedp.EmulateLandscape
	}
	if v.Mobile {
		opts = append(opts, chromedp.EmulateMobile, chromedp.EmulateTouch)
	}
	return chromedp.EmulateViewport(v.Width, v.Height, opts...)
}

// SetViewport makes the tab of ctx render at v.
func SetViewport(ctx context.Context, v Viewport) error {
	if err := chromedp.Do(ctx, v.Apply()); err != nil {
		return fmt.Errorf("setting the %s viewport (%dx%d): %w", v.Name, v.Width, v.Height, err)
	}
	return nil
}

// ColorScheme makes the page see prefers-color-scheme: scheme ("dark" or
// "light"), as a person whose system is set so would; it holds across
// navigations of the tab.
func ColorScheme(ctx context.Context, scheme string) error {
	if scheme != "dark" && scheme != "light" {
		return fmt.Errorf("color scheme %q: want dark or light", scheme)
	}
	_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
		Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: scheme}},
	})
	if err != nil {
		return fmt.Errorf("emulating prefers-color-scheme: %s: %w", scheme, err)
	}
	return nil
}

// Navigate opens url in the tab and waits for its load event.
func Navigate(ctx context.Context, url string) error {
	if err := chromedp.Do(ctx, chromedp.Navigate(url)); err != nil {
		return fmt.Errorf("opening %s: %w", url, err)
	}
	return nil
}

// Click clicks (real mouse events, at its centre) the first element matching
// the CSS selector, once it is visible.
func Click(ctx context.Context, selector string) error {
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(selector), chromedp.NodeVisible)); err != nil {
		return fmt.Errorf("clicking %s: %w", selector, err)
	}
	return nil
}

// Type focuses the first element matching the CSS selector and types text
// into it, key by key.
func Type(ctx context.Context, selector, text string) error {
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.CSS(selector), text, chromedp.NodeVisible)); err != nil {
		return fmt.Errorf("typing into %s: %w", selector, err)
	}
	return nil
}

// Focus moves the keyboard focus to the first element matching the CSS
// selector.
func Focus(ctx context.Context, selector string) error {
	if err := chromedp.Do(ctx, chromedp.Focus(chromedp.CSS(selector), chromedp.NodeVisible)); err != nil {
		return fmt.Errorf("focusing %s: %w", selector, err)
	}
	return nil
}

// Press sends keys to whatever has the focus, as keyDown / char / keyUp
// events: printable characters as they are, named keys as the constants of
// github.com/chromedp/chromedp/kb (kb.Enter, kb.Escape, kb.ArrowDown …).
func Press(ctx context.Context, keys string) error {
	if err := chromedp.Do(ctx, chromedp.KeyEvent(keys)); err != nil {
		return fmt.Errorf("pressing %q: %w", keys, err)
	}
	return nil
}

// Text is the text content of the first element matching the CSS selector
// ("" and no error when there is none).
func Text(ctx context.Context, selector string) (string, error) {
	sel, err := json.Marshal(selector)
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", selector, err)
	}
	// An evaluated expression, not chromedp.Poll: Poll's predicate goes
	// through new Function, which a page's CSP without 'unsafe-eval' blocks.
	text, err := chromedp.Run(ctx, chromedp.Evaluate[*string](
		`(() => { const e = document.querySelector(`+string(sel)+`); return e ? e.textContent : null })()`))
	if err != nil {
		return "", fmt.Errorf("reading %s: %w", selector, err)
	}
	if text == nil {
		return "", nil
	}
	return *text, nil
}

// WaitText waits until the text content of the first element matching the
// CSS selector contains want, checking every 50 ms until ctx ends (the tab's
// timeout); the error then says what the element held.
func WaitText(ctx context.Context, selector, want string) error {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		got, err := Text(ctx, selector)
		switch {
		case err == nil && strings.Contains(got, want):
			return nil
		case ctx.Err() != nil:
			return fmt.Errorf("waiting for %q in %s: %w (it holds %q)", want, selector, ctx.Err(), got)
		case err != nil:
			return err
		}
		select {
		case <-ctx.Done():
		case <-tick.C:
		}
	}
}

// Screenshot writes a PNG of the whole page (beyond the viewport's height,
// at the viewport's width) to path, creating its directory.
func Screenshot(ctx context.Context, path string) error {
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)) // 100: PNG
	if err != nil {
		return fmt.Errorf("taking the screenshot %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("writing the screenshot %s: %w", path, err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		return fmt.Errorf("writing the screenshot %s: %w", path, err)
	}
	return nil
}
