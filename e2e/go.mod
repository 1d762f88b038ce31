module github.com/phasegate/phasegate/e2e

go 1.25.0

// The product, from this repository: the browser tests drive the checkout they
// sit in (and may import its internal/ packages: the rule is by import path).
replace github.com/phasegate/phasegate => ../

require (
	github.com/chromedp/cdproto v0.159.0
	github.com/chromedp/chromedp v0.23.0
)

require github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
