package cli

import (
	"io"
	"os"

	"golang.org/x/term"
)

// useColor says whether text output to w may use ANSI colours: w is a
// terminal, NO_COLOR is not set (https://no-color.org: any non-empty value
// turns colour off) and TERM is not "dumb". A pipe, a file or a buffer never
// gets colour.
func useColor(w io.Writer, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" {
		return false
	}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false
	}
	return enableVT(f)
}
