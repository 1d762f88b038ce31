package check

import (
	"context"
	"fmt"
	"runtime"
	"testing"
	"testing/fstest"
	"weak"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/config"
)

// TestPACEDaysNotRetained checks that a long-lived .pace/ is checked in flat
// memory: when the last day is decoded, the documents of every earlier day
// but the latest one checked (held for the unit's status) are unreachable.
// It counts weak pointers after a collection, not bytes or time.
func TestPACEDaysNotRetained(t *testing.T) {
	const days = 60
	fsys := fstest.MapFS{
		".pace/plan.yaml": {Data: []byte("days:\n  - day: 1\n")},
	}
	for n := 1; n <= days; n++ {
		for _, name := range []string{"gate-report.yaml", "handoff.yaml"} {
			fsys[fmt.Sprintf(".pace/day-%d/%s", n, name)] = &fstest.MapFile{Data: []byte(fmt.Sprintf("day: %d\ngate_decision: SHIP\n", n))}
		}
	}
	var (
		seen  []weak.Pointer[artifact.Document]
		alive = -1
		plan  int
	)
	checkedHook = func(d *artifact.Document) {
		n, ok := paceDayOf(d.Path)
		if !ok {
			plan++
			return
		}
		if n == days && alive < 0 {
			runtime.GC()
			alive = 0
			for _, w := range seen {
				if w.Value() != nil {
					alive++
				}
			}
		}
		seen = append(seen, weak.Make(d))
	}
	defer func() { checkedHook = nil }()
	res, err := sharedValidator.RunFS(context.Background(), fsys, Options{Config: config.Default(), Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	if res.Artifacts != 2*days+1 || len(seen) != 2*days || plan != 1 {
		t.Fatalf("checked %d artifacts, %d day documents and %d others decoded; want %d, %d and 1", res.Artifacts, len(seen), plan, 2*days+1, 2*days)
	}
	// The latest day checked (day days-1, two documents) is held for the
	// unit's status; nothing older.
	if alive > 2 {
		t.Errorf("%d of the %d documents of days 1–%d are still reachable when day %d is decoded; want at most 2 (the latest day checked)", alive, 2*(days-1), days-1, days)
	}
}
