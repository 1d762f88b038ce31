package server

import (
	"context"
	"reflect"
	"testing"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/redisx"
	"github.com/phasegate/phasegate/internal/testutil/redistest"
)

// TestSharedUnitsAcrossReplicas: a unit's result one replica keeps is
// read by another through Redis; when Redis is gone, a replica still
// keeps and reads its own results, and a result it cannot get is a miss,
// never an error or a stale answer.
func TestSharedUnitsAcrossReplicas(t *testing.T) {
	rdb := redistest.SharedDB(t)
	open := func() *redisx.Store {
		st, err := redisx.Open(context.Background(), rdb.URL())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	a, b := newSharedUnits(open(), 10), newSharedUnits(open(), 10)
	unit := &check.Unit{Artifacts: 2, Deps: []check.Dep{{Path: "o:x/y", ID: "blob 1"}},
		Findings: []check.Finding{{File: "x/plan.yaml", Line: 3, Column: 1, Rule: "schema", Severity: check.SeverityError, Message: "m"}},
		Statuses: []check.Status{{Family: "jg", Unit: "JG 1", State: "planned"}}}
	key := [32]byte{1, 2, 3}
	if _, ok := b.Get(key); ok {
		t.Fatal("a unit no replica kept is known")
	}
	a.Add(key, unit)
	got, ok := b.Get(key)
	if !ok || !reflect.DeepEqual(got, unit) {
		t.Fatalf("the other replica reads %+v, %v; want %+v", got, ok, unit)
	}
	closed := open()
	gone := newSharedUnits(closed, 10)
	closed.Close() // Redis unreachable from this replica
	gone.Add([32]byte{9}, unit)
	if got, ok := gone.Get([32]byte{9}); !ok || !reflect.DeepEqual(got, unit) {
		t.Fatal("without Redis, a replica does not read back what it kept")
	}
	if _, ok := gone.Get(key); ok {
		t.Fatal("without Redis, a replica knows a result it never read")
	}
}
