package redisx

import (
	"sync"
	"sync/atomic"
	"testing"
)

// TestTable: values are kept until taken, a field is taken by exactly one
// of many replicas, and a full table refuses a new field but not a
// replacement.
func TestTable(t *testing.T) {
	t.Parallel()
	srv := startRedis(t)
	ctx := testCtx(t)
	a, b := srv.open(t).Table("table", 2), srv.open(t).Table("table", 2)
	if err := a.Put(ctx, "x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := b.Put(ctx, "y", []byte("2")); err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, "z", []byte("3")); err == nil {
		t.Fatal("a third field in a table of two was taken")
	}
	if err := a.Put(ctx, "x", []byte("1b")); err != nil {
		t.Fatalf("replacing a field of a full table: %v", err)
	}
	all, err := b.All(ctx)
	if err != nil || len(all) != 2 || all["x"] != "1b" || all["y"] != "2" {
		t.Fatalf("All = %v %v", all, err)
	}
	var took atomic.Int32
	var wg sync.WaitGroup
	for i := range 32 {
		tb := []*Table{a, b}[i%2]
		wg.Go(func() {
			if ok, err := tb.Take(ctx, "x"); err != nil {
				t.Error(err)
			} else if ok {
				took.Add(1)
			}
		})
	}
	wg.Wait()
	if n := took.Load(); n != 1 {
		t.Fatalf("the field was taken %d times, want once", n)
	}
	if all, _ := a.All(ctx); len(all) != 1 || all["y"] != "2" {
		t.Fatalf("after the take: %v", all)
	}
}
