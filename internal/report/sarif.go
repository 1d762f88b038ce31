package report

import (
	"fmt"
	"io"
)

// SARIF writes a SARIF 2.1.0 log for GitHub code scanning.
func SARIF(w io.Writer, r Report) error {
	return fmt.Errorf("sarif: not implemented yet")
}
