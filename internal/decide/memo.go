package decide

import (
	"cmp"
	"container/list"
	"crypto/sha256"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// FoldMemo remembers, per thread, what the last successful reconcile of it
// saw, so that ReconcileRepo re-reads only the threads that changed since
// (issue 20). A thread is skipped — no request at all — when the two
// listings every pass makes anyway show it unchanged:
//
//   - the pending-issue listing (open issues labelled phasegate:pending)
//     gives its number of comments, which a new or deleted comment moves,
//     and its labels;
//   - the recent-comment listing (the comments created or edited since the
//     previous successful pass, less WatermarkSkew) gives every comment
//     written or edited since: a comment newer than the newest the fold
//     saw, or one updated at or after the fold's read (less the skew) whose
//     updated_at and body are not the ones the fold saw, is a change;
//
// and the configuration on the default branch is the one the fold used,
// and the memo is younger than MaxAge. Anything else re-reads the thread.
// A thread whose reconcile failed or was cut short keeps its old memo (or
// none), so the next pass re-reads it.
//
// Like Watermarks it lives in memory, bounded (least recently used threads
// are forgotten first): after a restart every thread is read once. Safe for
// concurrent use.
type FoldMemo struct {
	// MaxAge is how long a memo stands before the thread is re-read
	// whatever the listings say (statuses and pull requests outside the
	// thread move too); zero means DefaultMemoMaxAge.
	MaxAge time.Duration

	mu       sync.Mutex
	max      int
	ll       *list.List // front: most recently used
	items    map[string]*list.Element
	deferred map[string][]int // repository → threads a cut-short pass left
}

// Defaults of the fold memo.
const (
	DefaultMemoEntries = 20000
	DefaultMemoMaxAge  = 24 * time.Hour
)

// NewFoldMemo returns a memo of at most entries threads (0: DefaultMemoEntries).
func NewFoldMemo(entries int) *FoldMemo {
	return &FoldMemo{max: cmp.Or(max(entries, 0), DefaultMemoEntries), ll: list.New(), items: map[string]*list.Element{}, deferred: map[string][]int{}}
}

// threadMemo is what a successful reconcile of a thread saw.
type threadMemo struct {
	key        string
	readAt     time.Time // when its comments were read (this machine's clock)
	count      int       // its comments after the pass, phasegate's own included
	maxID      int64
	maxUpdated time.Time
	// edge: the comments updated at or after readAt less WatermarkSkew,
	// by id: a digest of their updated_at and body.
	edge        map[int64][16]byte
	labels      string // after the pass, lower-cased and sorted; see labelsKnown
	labelsKnown bool
	config      string // digest of the configuration the fold used
}

// listed is what a pass's listings say of one thread.
type listed struct {
	pending   bool   // in the pending-issue listing
	count     int    // its comments, from that listing
	labels    string // labelKey of its labels, from that listing
	labelList []string
	recent    []ghclient.Comment // its comments in the recent-comment listing
	title     string             // its title, from the pending listing
}

func commentDigest(c ghclient.Comment) [16]byte {
	sum := sha256.Sum256([]byte(c.UpdatedAt.UTC().Format(time.RFC3339Nano) + "\n" + c.Body))
	return [16]byte(sum[:16])
}

func labelKey(labels []string) string {
	l := make([]string, len(labels))
	for i, s := range labels {
		l[i] = strings.ToLower(s)
	}
	sort.Strings(l)
	return strings.Join(l, "\n")
}

// unchanged reports whether the listings show the thread as the memo has
// it, under the configuration digest cfg, at now.
func (m *FoldMemo) unchanged(owner, repo string, issue int, in listed, cfg string, now time.Time) bool {
	if m == nil {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	el, ok := m.items[lockKey(owner, repo, issue)]
	if !ok {
		return false
	}
	tm := el.Value.(*threadMemo)
	switch {
	case tm.config != cfg, now.Sub(tm.readAt) >= cmp.Or(max(m.MaxAge, 0), DefaultMemoMaxAge),
		in.pending && in.count != tm.count,
		in.pending && tm.labelsKnown && in.labels != tm.labels:
		return false
	}
	edge := tm.readAt.Add(-WatermarkSkew)
	for _, c := range in.recent {
		if c.ID > tm.maxID || c.UpdatedAt.After(tm.maxUpdated) {
			return false
		}
		if !c.UpdatedAt.Before(edge) {
			if d, seen := tm.edge[c.ID]; !seen || d != commentDigest(c) {
				return false
			}
		}
	}
	m.ll.MoveToFront(el)
	return true
}

// record remembers a thread after a successful reconcile of it.
func (m *FoldMemo) record(t *thread, cfg string) {
	if m == nil {
		return
	}
	tm := &threadMemo{key: lockKey(t.owner, t.repo, t.issue), readAt: t.readAt, count: len(t.comments), config: cfg, edge: map[int64][16]byte{}}
	edge := t.readAt.Add(-WatermarkSkew)
	for _, c := range t.comments {
		tm.maxID = max(tm.maxID, c.ID)
		if c.UpdatedAt.After(tm.maxUpdated) {
			tm.maxUpdated = c.UpdatedAt
		}
		if !c.UpdatedAt.Before(edge) {
			tm.edge[c.ID] = commentDigest(c)
		}
	}
	if t.labelsAfter != nil {
		tm.labels, tm.labelsKnown = labelKey(t.labelsAfter), true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[tm.key]; ok {
		m.ll.Remove(el)
	}
	m.items[tm.key] = m.ll.PushFront(tm)
	for m.ll.Len() > m.max {
		old := m.ll.Back()
		m.ll.Remove(old)
		delete(m.items, old.Value.(*threadMemo).key)
	}
}

// Forget drops a thread's memo, so that the next reconcile pass reads it
// again: after a failed reconcile of it, or for a reader of the folds
// (Handler.Observe) that dropped what it knew of the thread and needs it
// folded once more.
func (m *FoldMemo) Forget(owner, repo string, issue int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if el, ok := m.items[lockKey(owner, repo, issue)]; ok {
		m.ll.Remove(el)
		delete(m.items, lockKey(owner, repo, issue))
	}
}

// Len is the number of threads remembered.
func (m *FoldMemo) Len() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ll.Len()
}

// setDeferred records the threads a cut-short pass of the repository left
// (nil: none), which the next pass takes first.
func (m *FoldMemo) setDeferred(owner, repo string, issues []int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := watermarkKey(owner, repo)
	if len(issues) == 0 {
		delete(m.deferred, k)
		return
	}
	m.deferred[k] = append([]int(nil), issues...)
}

// takeDeferred is the threads the previous pass of the repository left.
func (m *FoldMemo) takeDeferred(owner, repo string) []int {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.deferred[watermarkKey(owner, repo)]
}
