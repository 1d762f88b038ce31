package check

import (
	"slices"
	"testing"
)

// TestSortStatuses: statuses come out by family (FamilyOrder), unit, state
// and first decision's file, whatever order the workers made them in; two
// statuses of one unit (an SCC task's files in two folders) included.
func TestSortStatuses(t *testing.T) {
	t.Parallel()
	want := []Status{
		{Family: "pace", Unit: "PACE day 2", State: "GATE SHIP"},
		{Family: "scc", Unit: "SCC task t", State: "DONE", Decisions: []Decision{{File: "b/verdict.json"}}},
		{Family: "scc", Unit: "SCC task t", State: "NEED_INPUT", Decisions: []Decision{{File: "a/submit.json"}}},
		{Family: "scc", Unit: "SCC task t", State: "NEED_INPUT", Decisions: []Decision{{File: "c/submit.json"}}},
		{Family: "outcome", Unit: "outcome x", State: "pending"},
	}
	keys := func(sts []Status) []string {
		var out []string
		for _, s := range sts {
			out = append(out, s.Family+"|"+s.Unit+"|"+s.State+"|"+firstFile(s))
		}
		return out
	}
	tests := []struct {
		name  string
		order []int
	}{
		{name: "sorted", order: []int{0, 1, 2, 3, 4}},
		{name: "reversed", order: []int{4, 3, 2, 1, 0}},
		{name: "one unit's statuses swapped", order: []int{2, 0, 4, 3, 1}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			var sts []Status
			for _, i := range tc.order {
				sts = append(sts, want[i])
			}
			SortStatuses(sts)
			if got, w := keys(sts), keys(want); !slices.Equal(got, w) {
				t.Errorf("SortStatuses =\n  %q\nwant\n  %q", got, w)
			}
		})
	}
}
