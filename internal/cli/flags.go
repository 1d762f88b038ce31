package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/phasegate/phasegate/internal/report"
)

// cmdFlags is a command's flag set together with its usage: the synopsis
// from the command table, what the command does, and its flags.
type cmdFlags struct {
	*flag.FlagSet
	e     *environment
	name  string
	about string
}

// flags starts the flag set of the command name (an entry of the command
// table); about says what the command does.
func (e *environment) flags(name, about string) *cmdFlags {
	fs := flag.NewFlagSet("phasegate "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return &cmdFlags{FlagSet: fs, e: e, name: name, about: about}
}

func (f *cmdFlags) usage(w io.Writer) {
	syn := "phasegate " + f.name
	if c, ok := lookup(f.name); ok {
		syn = synopsis(c)
	}
	fmt.Fprintf(w, "Usage: %s\n\n%s\n", syn, f.about)
	hasFlags := false
	f.VisitAll(func(*flag.Flag) { hasFlags = true })
	if hasFlags {
		fmt.Fprint(w, "\nFlags:\n")
		f.SetOutput(w)
		f.PrintDefaults()
		f.SetOutput(io.Discard)
	}
}

// parse parses args. With -h or --help it prints the usage on stdout; with
// a bad flag, the error and the usage on stderr. done says the command
// ends there, with code.
func (f *cmdFlags) parse(args []string) (code int, done bool) {
	switch err := f.Parse(args); {
	case err == nil:
		return ExitOK, false
	case errors.Is(err, flag.ErrHelp):
		f.usage(f.e.stdout)
		return ExitOK, true
	default:
		fmt.Fprintf(f.e.stderr, "phasegate: %s\n\n", flagError(f.FlagSet, err))
		f.usage(f.e.stderr)
		return ExitUsage, true
	}
}

// flagError is the message of fs's parse error, safe to print: an unknown
// flag is quoted and gets the nearest of fs's flags; the flag package's
// other errors, which may hold what was typed unquoted, are escaped.
func flagError(fs *flag.FlagSet, err error) string {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return report.Terminal(err.Error())
	}
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
	return fmt.Sprintf("unknown flag %q%s", "--"+name, didYouMean("--"+name, names))
}
