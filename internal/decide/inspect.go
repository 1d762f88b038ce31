package decide

import (
	"context"

	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
)

// Inspection is an issue as the handler sees it, for reading: the config of
// the default branch, the fold of the thread, and the comments it was folded
// from (their web URLs and times).
type Inspection struct {
	Config   config.Config
	State    *ledger.State
	Comments []ghclient.Comment
	// PRs are the pull requests that carried the thread's outcomes, by
	// number, as read for the fold (open, closed and merged).
	PRs map[int]ghclient.PR
}

// Comment returns the comment with that id, as listed.
func (in *Inspection) Comment(id int64) (ghclient.Comment, bool) { return commentIn(in.Comments, id) }

// Inspect reads an issue's state exactly as the handler folds it (same
// config, identity, key and ledger), without locking it or writing
// anything: `phasegate decisions`. Repeated reads of an unchanged issue cost
// only conditional requests answered 304.
func (h *Handler) Inspect(ctx context.Context, gh GitHub, owner, repo string, issue int) (*Inspection, error) {
	t, err := h.load(ctx, gh, owner, repo, issue, nil, nil)
	if err != nil {
		return nil, err
	}
	return &Inspection{Config: t.cfg, State: t.st, Comments: t.comments, PRs: t.prs}, nil
}
