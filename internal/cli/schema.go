package cli

import (
	"fmt"
	"io/fs"
	"strings"
	"text/tabwriter"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/schemas"
)

// schema lists the kinds, or prints one kind's schema.
func (e *environment) schema(args []string) int {
	switch {
	case len(args) == 0:
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tTITLE\tFOUND AT")
		for _, k := range artifact.Kinds() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", k.ID, k.Title, k.Paths)
		}
		tw.Flush()
		fmt.Fprintf(e.stdout, "\nSchemas: phasegate schema KIND, or %s<family>/<kind>.schema.json\n", check.SchemaBaseURL)
		fmt.Fprintln(e.stdout, "Convention-tier fields (schema.convention warnings, with their upstream basis): phasegate schema --conventions")
		return ExitOK
	case len(args) == 1 && args[0] == "--conventions":
		convs, err := check.Conventions()
		if err != nil {
			return e.failf("%v", err)
		}
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SCHEMA\tFIELD\tBASIS (why upstream accepts a departure here)")
		for _, c := range convs {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", c.Schema, c.Field, c.Basis)
		}
		tw.Flush()
		return ExitOK
	case len(args) == 1 && !strings.HasPrefix(args[0], "-"):
		k := artifact.KindByID(args[0])
		if k == nil {
			return e.failf("unknown kind %q (run 'phasegate schema' to list the kinds)", args[0])
		}
		data, err := fs.ReadFile(schemas.FS, k.SchemaPath())
		if err != nil {
			return e.failf("reading schema of %s: %v", k.ID, err)
		}
		if _, err := e.stdout.Write(data); err != nil {
			return e.failf("writing schema: %v", err)
		}
		return ExitOK
	case len(args) == 1 && (args[0] == "-h" || args[0] == "--help"):
		fmt.Fprintln(e.stdout, "Usage: phasegate schema [KIND | --conventions]\n\nWithout KIND, lists every artifact kind; with KIND, prints its JSON Schema (draft 2020-12),\nwhose x-tier/x-basis annotations mark the convention tier; --conventions lists every\nconvention-tier field with its upstream basis.")
		return ExitOK
	}
	return e.failf("usage: phasegate schema [KIND | --conventions]")
}
