package cli

import (
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"

	"golang.org/x/term"
)

// colorModes are the values of --color; "" (no flag) is auto.
var colorModes = []string{"auto", "always", "never"}

// colorFlag is the value of --color, which --no-color sets to never.
type colorFlag string

func (c *colorFlag) String() string { return string(*c) }

func (c *colorFlag) Set(v string) error {
	if !slices.Contains(colorModes, v) {
		return fmt.Errorf("want auto, always or never")
	}
	*c = colorFlag(v)
	return nil
}

// addColorFlags adds --color and --no-color, setting c, to fs: before the
// command (the default of every command) and on the commands that colour.
func addColorFlags(fs *flag.FlagSet, c *colorFlag) {
	fs.Var(c, "color", "colour `mode` of the text output: auto (on a terminal, unless NO_COLOR is set or TERM=dumb; a FORCE_COLOR other than 0 forces it), always or never (default auto)")
	fs.BoolFunc("no-color", "the same as --color=never", func(v string) error {
		on, err := strconv.ParseBool(v)
		if on {
			*c = "never"
		}
		return err
	})
}

// useColor says whether text output to w may use ANSI colours. --color
// decides when given; under auto, FORCE_COLOR (non-empty and not "0")
// turns colour on, then NO_COLOR (https://no-color.org: any non-empty
// value) or TERM=dumb turns it off, and otherwise only a terminal gets
// colour: a pipe, a file or a buffer never does.
func useColor(mode colorFlag, w io.Writer, getenv func(string) string) bool {
	force := mode == "always" || mode != "never" && getenv("FORCE_COLOR") != "" && getenv("FORCE_COLOR") != "0"
	if mode == "never" || !force && (getenv("NO_COLOR") != "" || getenv("TERM") == "dumb") {
		return false
	}
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return force
	}
	return enableVT(f) || force
}
