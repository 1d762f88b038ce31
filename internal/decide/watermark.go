package decide

import (
	"strings"
	"sync"
	"time"
)

// Watermarks remember, per repository, when the last successful reconcile
// pass of it started, so that the next pass lists only the comments since
// then (less a skew margin) instead of the whole ReconcileWindow. They live
// in memory: after a restart, or on a replica that did not run the last
// pass, the first pass lists the whole window again. Safe for concurrent use.
type Watermarks struct {
	m sync.Map // "owner/repo" (lower case) → time.Time
}

// WatermarkSkew is how far before the previous pass's start the next pass
// lists comments: GitHub's updated_at and this machine's clock may differ,
// and a comment written while the previous pass listed is not lost.
const WatermarkSkew = 5 * time.Minute

func watermarkKey(owner, repo string) string { return strings.ToLower(owner + "/" + repo) }

// since is where a pass starting at now lists comments from: the window's
// start, or the previous successful pass's start less the skew when that is
// later.
func (w *Watermarks) since(owner, repo string, now time.Time, window time.Duration) time.Time {
	from := now.Add(-window)
	if w == nil {
		return from
	}
	if v, ok := w.m.Load(watermarkKey(owner, repo)); ok {
		if t := v.(time.Time).Add(-WatermarkSkew); t.After(from) {
			return t
		}
	}
	return from
}

// passed records a successful pass that started at start.
func (w *Watermarks) passed(owner, repo string, start time.Time) {
	if w != nil {
		w.m.Store(watermarkKey(owner, repo), start)
	}
}
