package pages

import (
	"cmp"
	"container/list"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/report"
	"github.com/phasegate/phasegate/internal/web"
)

// The check results the pages show, per commit (source.go): what
// CommitPage needs of the last check job of owner/repo@sha, kept in a
// bounded in-memory LRU and, with Redis, as JSON every replica reads
// (Config.SharedResults). A commit with no known result is shown as not
// checked, never with a made-up verdict.

// Bounds of the result store.
const (
	// DefaultResultBytes bounds the in-memory results (an estimate of
	// their size: the strings they hold).
	DefaultResultBytes = 32 << 20
	// maxKeptFindings are the findings kept of one commit; the rest are
	// counted.
	maxKeptFindings = 1000
	// maxKeptReasons are the verdict's reasons kept of one commit.
	maxKeptReasons = 200
	// maxKeptText bounds one message or reason (bytes).
	maxKeptText = 2048
)

// SharedResults stores check results where every replica reads them
// (internal/redisx.Blobs: JSON under a key, with a TTL).
type SharedResults interface {
	Put(ctx context.Context, key string, value []byte) error
	Get(ctx context.Context, key string) ([]byte, bool, error)
}

// commitResult is one commit's check result as the pages show it.
type commitResult struct {
	Verdict   string            `json:"verdict"`
	Reasons   []string          `json:"reasons,omitempty"`
	Findings  []web.FindingView `json:"findings,omitempty"`
	More      int               `json:"more,omitempty"` // findings beyond those kept
	CheckedAt time.Time         `json:"checked_at"`
	// Input is what the result stands for (checkjob.Input.Rows).
	Input []web.InputRow `json:"input,omitempty"`
}

// newCommitResult keeps what the pages show of a report, bounded.
func newCommitResult(rep *report.Report, at time.Time) commitResult {
	cr := commitResult{Verdict: string(rep.Verdict.Verdict), CheckedAt: at.UTC()}
	for i, r := range rep.Verdict.Reasons {
		if i == maxKeptReasons {
			cr.Reasons = append(cr.Reasons, fmt.Sprintf("…and %d more", len(rep.Verdict.Reasons)-i))
			break
		}
		cr.Reasons = append(cr.Reasons, clipText(r))
	}
	for i, f := range rep.Findings {
		if i == maxKeptFindings {
			cr.More = len(rep.Findings) - i
			break
		}
		cr.Findings = append(cr.Findings, web.FindingView{File: clipText(f.File), Line: f.Line, Column: f.Column, Rule: clipText(f.Rule),
			Severity: string(f.Severity), Message: clipText(f.Message)})
	}
	return cr
}

// clipText bounds a string at maxKeptText bytes, on a rune boundary.
func clipText(s string) string {
	if len(s) <= maxKeptText {
		return s
	}
	cut := maxKeptText
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// size estimates the memory a result holds.
func (cr *commitResult) size() int64 {
	n := int64(128 + len(cr.Verdict))
	for _, r := range cr.Reasons {
		n += int64(16 + len(r))
	}
	for _, f := range cr.Findings {
		n += int64(96 + len(f.File) + len(f.Rule) + len(f.Severity) + len(f.Message))
	}
	return n
}

// resultKey names a commit's result: owner/repo@sha, lower-cased.
func resultKey(owner, repo, sha string) string {
	return strings.ToLower(owner + "/" + repo + "@" + sha)
}

// resultStore is the bounded in-memory LRU of results, in front of the
// shared store when there is one. Safe for concurrent use.
type resultStore struct {
	shared SharedResults

	mu    sync.Mutex
	max   int64
	bytes int64
	ll    *list.List // front: most recently used
	items map[string]*list.Element
}

type resultEntry struct {
	key  string
	cr   commitResult
	size int64
}

func newResultStore(maxBytes int64, shared SharedResults) *resultStore {
	return &resultStore{shared: shared, max: cmp.Or(max(maxBytes, 0), DefaultResultBytes), ll: list.New(), items: map[string]*list.Element{}}
}

// put records a result in memory and in the shared store.
func (r *resultStore) put(ctx context.Context, key string, cr commitResult) error {
	r.keep(key, cr)
	if r.shared == nil {
		return nil
	}
	data, err := json.Marshal(cr)
	if err != nil {
		return fmt.Errorf("encoding the check result of %s: %w", key, err)
	}
	if err := r.shared.Put(ctx, key, data); err != nil {
		return fmt.Errorf("storing the check result of %s: %w", key, err)
	}
	return nil
}

// keep records a result in memory, forgetting the least recently used
// beyond the byte bound.
func (r *resultStore) keep(key string, cr commitResult) {
	e := &resultEntry{key: key, cr: cr, size: cr.size()}
	r.mu.Lock()
	defer r.mu.Unlock()
	if el, ok := r.items[key]; ok {
		r.bytes -= el.Value.(*resultEntry).size
		r.ll.Remove(el)
	}
	r.items[key] = r.ll.PushFront(e)
	r.bytes += e.size
	for r.bytes > r.max && r.ll.Len() > 1 {
		old := r.ll.Back()
		r.ll.Remove(old)
		delete(r.items, old.Value.(*resultEntry).key)
		r.bytes -= old.Value.(*resultEntry).size
	}
}

// get is a commit's result: from memory, else from the shared store (then
// kept in memory).
func (r *resultStore) get(ctx context.Context, key string) (commitResult, bool, error) {
	r.mu.Lock()
	if el, ok := r.items[key]; ok {
		r.ll.MoveToFront(el)
		cr := el.Value.(*resultEntry).cr
		r.mu.Unlock()
		return cr, true, nil
	}
	r.mu.Unlock()
	if r.shared == nil {
		return commitResult{}, false, nil
	}
	data, ok, err := r.shared.Get(ctx, key)
	if err != nil || !ok {
		if err != nil {
			err = fmt.Errorf("reading the check result of %s: %w", key, err)
		}
		return commitResult{}, false, err
	}
	var cr commitResult
	if err := json.Unmarshal(data, &cr); err != nil {
		return commitResult{}, false, fmt.Errorf("decoding the check result of %s: %w", key, err)
	}
	r.keep(key, cr)
	return cr, true, nil
}
