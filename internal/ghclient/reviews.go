package ghclient

import (
	"context"
	"fmt"
	"time"

	"github.com/google/go-github/v60/github"
)

// Review is a pull request review.
type Review struct {
	ID int64
	// User is the reviewer's login.
	User string
	// State is APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED or PENDING.
	State string
	// CommitID is the head the review was given on.
	CommitID    string
	SubmittedAt time.Time
}

// PullRequestReviews lists the reviews of a pull request, oldest first.
func (c *Client) PullRequestReviews(ctx context.Context, owner, repo string, number int) ([]Review, error) {
	return listAll(withOp(ctx, "PullRequestReviews"), c, fmt.Sprintf("list reviews of %s#%d", repoName(owner, repo), number),
		func(r *github.PullRequestReview) Review {
			return Review{ID: r.GetID(), User: r.GetUser().GetLogin(), State: r.GetState(), CommitID: r.GetCommitID(), SubmittedAt: r.GetSubmittedAt().Time}
		}, func(ctx context.Context, o github.ListOptions) ([]*github.PullRequestReview, *github.Response, error) {
			return c.gh.PullRequests.ListReviews(ctx, owner, repo, number, &o)
		})
}
