package ghclient

import (
	"errors"
	"fmt"
	"os"
)

// maxKeptSpools bounds the archive spools a TreeCache keeps (one per
// repository, the latest): at most this many times MaxArchiveBytes on disk.
const maxKeptSpools = 4

// keptSpool is an archive's spool a CommitFS handed to its TreeCache when
// it closed: the verified whole files it holds, by blob id, serve later
// commits of the repository without a request, from disk rather than
// memory. It is closed (and removed) when the cache drops it and no
// CommitFS still reads it.
type keptSpool struct {
	file *os.File
	name string              // "" once unlinked
	at   map[string][2]int64 // blob id → offset, size
	refs int                 // CommitFSs reading it, under TreeCache.spoolMu
	gone bool                // dropped by the cache
}

// spoolOf is repo's kept spool, held for a CommitFS until releaseSpool.
func (tc *TreeCache) spoolOf(repo string) *keptSpool {
	ks, ok := tc.spools.Get(repo)
	if !ok {
		return nil
	}
	tc.spoolMu.Lock()
	defer tc.spoolMu.Unlock()
	if ks.gone {
		return nil
	}
	ks.refs++
	return ks
}

// releaseSpool gives ks back: closed once dropped and read by none.
func (tc *TreeCache) releaseSpool(ks *keptSpool) error {
	tc.spoolMu.Lock()
	ks.refs--
	done := ks.gone && ks.refs == 0
	tc.spoolMu.Unlock()
	if !done {
		return nil
	}
	return ks.close()
}

// keepSpool makes ks repo's kept spool, dropping the one it replaces (and
// the repository's used least recently past maxKeptSpools).
func (tc *TreeCache) keepSpool(repo string, ks *keptSpool) {
	if old, ok := tc.spools.Peek(repo); ok {
		tc.dropSpool(old)
	}
	tc.spools.Add(repo, ks)
}

// dropSpool is the cache's end of ks: closed now if no CommitFS reads it.
func (tc *TreeCache) dropSpool(ks *keptSpool) {
	tc.spoolMu.Lock()
	ks.gone = true
	done := ks.refs == 0
	tc.spoolMu.Unlock()
	if done {
		_ = ks.close()
	}
}

func (ks *keptSpool) close() error {
	err := ks.file.Close()
	if ks.name != "" {
		err = errors.Join(err, os.Remove(ks.name))
	}
	return err
}

// fromKept reads file n (whole, at most MaxFileBytes) from the kept spool
// when it holds n's blob id at n's size; n's lock is held.
func (f *CommitFS) fromKept(n *node) ([]byte, bool, error) {
	sp, ok := f.kept.at[n.sha] // the id names the size too: "blob <size>\x00…"
	if !ok || n.kind != kindFile {
		return nil, false, nil
	}
	want := min(n.size, f.lim.MaxFileBytes)
	if err := f.reserve(want); err != nil {
		return nil, false, err
	}
	data := make([]byte, want)
	if _, err := f.kept.file.ReadAt(data, sp[0]); err != nil {
		f.release(want)
		return nil, false, fmt.Errorf("read %s from a kept archive: %w", n.sha, err)
	}
	return data, true, nil
}

// handOver gives the FS's spool to the TreeCache with the whole files it
// holds, rather than removing it (Close).
func (f *CommitFS) handOver() {
	ks := &keptSpool{file: f.spool, name: f.spoolName, at: map[string][2]int64{}}
	var walk func(*node)
	walk = func(n *node) {
		for _, k := range n.children {
			walk(k)
		}
		if n.kind == kindFile && n.spooled && n.size <= f.lim.MaxFileBytes {
			ks.at[n.sha] = [2]int64{n.off, n.size}
		}
	}
	walk(f.root)
	f.lim.Trees.keepSpool(repoName(f.owner, f.repo), ks)
}
