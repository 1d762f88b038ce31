package check

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/testutil"
)

// TestUnitTrees checks the cross-file fixtures under testdata/units: for each
// family, a consistent unit (a PACE day that ships, a JG issue through git, a
// DONE SCC task, a completed Autopilot run, the seed's Phase Outcome) must
// give no finding at all, and an inconsistent copy of it must give exactly
// the findings and pipeline status its .golden file lists.
func TestUnitTrees(t *testing.T) {
	for _, fam := range FamilyOrder {
		for _, variant := range []string{"consistent", "inconsistent"} {
			t.Run(fam+"/"+variant, func(t *testing.T) {
				dir := filepath.Join("testdata", "units", fam, variant)
				res, err := sharedValidator.Run(context.Background(), dir, Options{Config: config.Default()})
				if err != nil {
					t.Fatal(err)
				}
				if res.Artifacts == 0 {
					t.Fatal("no artifacts found")
				}
				var b strings.Builder
				for _, f := range res.Findings {
					b.WriteString(formatFinding(f) + "\n")
				}
				if variant == "consistent" && b.Len() > 0 {
					t.Fatalf("a consistent unit has findings:\n%s", b.String())
				}
				if variant == "inconsistent" && b.Len() == 0 {
					t.Fatal("an inconsistent unit has no finding")
				}
				for _, st := range res.Statuses {
					fmt.Fprintf(&b, "status %s | %s | %s\n", st.Family, st.Unit, st.State)
					for _, d := range st.Decisions {
						fmt.Fprintf(&b, "  %s %s:%d %s\n", d.Effect, d.File, d.Line, d.Reason)
					}
				}
				testutil.Golden(t, dir+".golden", []byte(b.String()))
			})
		}
	}
}
