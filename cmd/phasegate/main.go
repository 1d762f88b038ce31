// Command phasegate checks agent-pipeline artifacts and gates their commits.
package main

import (
	"os"

	"github.com/phasegate/phasegate/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Getenv, os.Stdout, os.Stderr)) }
