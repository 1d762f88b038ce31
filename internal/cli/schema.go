package cli

import (
	"fmt"
	"io/fs"
	"text/tabwriter"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/schemas"
)

// schema lists the kinds, or prints one kind's schema.
func (e *environment) schema(args []string) int {
	fset := e.flags("schema", "Without KIND, lists every artifact kind and where it is found; with KIND, prints its\nJSON Schema (draft 2020-12), whose x-tier/x-basis annotations mark the convention tier;\n`phasegate schema config` prints the schema of .github/phasegate.yml;\n--conventions lists every convention-tier field with its upstream basis.\n\nExit codes: 0 printed; 2 unknown KIND, or usage error.")
	conventions := fset.Bool("conventions", false, "list the convention-tier fields (schema.convention warnings) and their upstream basis")
	if code, done := fset.parse(args); done {
		return code
	}
	switch {
	case *conventions && fset.NArg() == 0:
		return e.listConventions()
	case fset.NArg() == 0:
		tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "KIND\tTITLE\tFOUND AT")
		for _, k := range artifact.Kinds() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", k.ID, k.Title, k.Paths)
		}
		tw.Flush()
		fmt.Fprintf(e.stdout, "\nSchemas: phasegate schema KIND, or %s<family>/<kind>.schema.json\n", check.SchemaBaseURL)
		fmt.Fprintf(e.stdout, "The schema of %s: phasegate schema %s, or %s%s\n", config.DefaultPath, configSchemaName, check.SchemaBaseURL, config.SchemaPath)
		fmt.Fprintln(e.stdout, "Convention-tier fields (schema.convention warnings, with their upstream basis): phasegate schema --conventions")
		return ExitOK
	case fset.NArg() == 1 && !*conventions:
		path, err := schemaPathOf(fset.Arg(0))
		if err != nil {
			return e.failf("%v", err)
		}
		data, err := fs.ReadFile(schemas.FS, path)
		if err != nil {
			return e.failf("reading schema %s: %v", path, err)
		}
		if _, err := e.stdout.Write(data); err != nil {
			return e.failf("writing schema: %v", err)
		}
		return ExitOK
	}
	return e.failf("usage: phasegate schema [KIND | --conventions]")
}

// configSchemaName is the name `phasegate schema` gives the config's schema.
const configSchemaName = "config"

// schemaPathOf is the schema file of a kind ID, or of the config; an
// unknown name is an error that names the nearest kind.
func schemaPathOf(name string) (string, error) {
	if name == configSchemaName {
		return config.SchemaPath, nil
	}
	if k := artifact.KindByID(name); k != nil {
		return k.SchemaPath(), nil
	}
	return "", fmt.Errorf("unknown kind %q%s (run 'phasegate schema' to list the kinds)", name, didYouMean(name, append(kindIDs(), configSchemaName)))
}

// kindIDs are the IDs of every artifact kind.
func kindIDs() []string {
	var ids []string
	for _, k := range artifact.Kinds() {
		ids = append(ids, k.ID)
	}
	return ids
}

func (e *environment) listConventions() int {
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
}
