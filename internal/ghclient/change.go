package ghclient

import (
	"context"
	"errors"
	"fmt"
)

// CompareWhole is Compare with every file of the change: a comparison lists
// at most 300 files, and past that its files are the change of head from
// the merge base read from the two trees (TreeChange, bounded by lim),
// never the list in part, which could leave out an edit of the gate or an
// outcome past the cut. What cannot be read whole is an error.
func (c *Client) CompareWhole(ctx context.Context, owner, repo, base, head string, lim TreeLimits) (Comparison, error) {
	cmp, err := c.Compare(ctx, owner, repo, base, head)
	if !errors.Is(err, ErrTruncated) {
		return cmp, err
	}
	if cmp.MergeBase == "" {
		return cmp, fmt.Errorf("GitHub lists only part of the change of %s and gave no merge base", head)
	}
	if cmp.Files, err = c.TreeChange(ctx, owner, repo, cmp.MergeBase, head, lim); err != nil {
		return cmp, fmt.Errorf("GitHub lists only part of the change of %s, and its trees could not be compared: %w", head, err)
	}
	return cmp, nil
}
