package ghclient

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

// TestCompareWhole: a comparison GitHub lists whole is taken as listed; one
// it cuts at 300 files is read whole from the trees, or fails: never taken
// in part.
func TestCompareWhole(t *testing.T) {
	t.Parallel()
	headSHA := strings.Repeat("c", 40)
	many := func(n int) map[string]string {
		files := map[string]string{"README.md": "base\n"}
		for i := range n {
			files[fmt.Sprintf("pad/%04d.txt", i)] = "x\n"
		}
		return files
	}
	tests := []struct {
		name      string
		head      map[string]string
		lim       TreeLimits
		fail      string // an API path that keeps failing
		wantFiles int
		wantTrees bool // the trees were read
		wantErr   string
		wantIs    error
	}{
		{name: "a change GitHub lists whole", head: many(3), wantFiles: 3},
		{name: "a change past the 300 files GitHub lists: from the trees", head: many(305), wantFiles: 305, wantTrees: true},
		{name: "trees over the limit", head: many(305), lim: TreeLimits{MaxEntries: 10}, wantTrees: true,
			wantErr: "its trees could not be compared", wantIs: ErrTreeTooLarge},
		{name: "the trees cannot be read", head: many(305), fail: "/git/trees/", wantTrees: true, wantErr: "its trees could not be compared"},
		{name: "the comparison cannot be read", head: many(3), fail: "/compare/", wantErr: "compare acme/widgets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, Options{MaxAttempts: 1})
			e.fake.SetTreeFiles(owner, repo, baseSHA, map[string]string{"README.md": "base\n"})
			e.fake.SetTreeFiles(owner, repo, headSHA, tt.head)
			if tt.fail != "" {
				e.fake.FailNext(1, 502, tt.fail)
			}
			cmp, err := e.c.CompareWhole(ctxT(t), owner, repo, baseSHA, headSHA, tt.lim)
			trees := len(statuses(e.fake, "GET", "/repos/"+owner+"/"+repo+"/git/trees/")) > 0
			if trees != tt.wantTrees {
				t.Errorf("trees read: %t, want %t", trees, tt.wantTrees)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || tt.wantIs != nil && !errors.Is(err, tt.wantIs) {
					t.Fatalf("error %v, want one saying %q (is %v)", err, tt.wantErr, tt.wantIs)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cmp.Files) != tt.wantFiles || cmp.MergeBase == "" {
				t.Fatalf("%d files, merge base %q; want %d and the merge base", len(cmp.Files), cmp.MergeBase, tt.wantFiles)
			}
			for name, status := range cmp.Files {
				if !strings.HasPrefix(name, "pad/") || status != ChangeAdded {
					t.Fatalf("%s %s, want only the padding added", name, status)
				}
			}
		})
	}
}
