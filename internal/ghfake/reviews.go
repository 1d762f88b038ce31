package ghfake

import (
	"fmt"
	"strconv"
	"time"
)

// Review is a pull request review (GET /repos/{o}/{r}/pulls/{n}/reviews).
type Review struct {
	User     string
	State    string // APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING
	CommitID string // the head the review was given on
	Body     string
}

type review struct {
	Review
	id        int64
	submitted time.Time
}

// AddReview records a review of pull request number and returns its id.
func (s *Server) AddReview(owner, name string, number int, rv Review) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	rp := s.repoLocked(owner, name)
	id := s.nextID()
	if rp.reviews == nil {
		rp.reviews = map[int][]review{}
	}
	rp.reviews[number] = append(rp.reviews[number], review{Review: rv, id: id, submitted: s.now()})
	return id
}

// listReviews is GET /repos/{o}/{r}/pulls/{n}/reviews, oldest first, in the
// OpenAPI pull-request-review shape.
func (s *Server) listReviews(q *req) reply {
	rp, is, ok := s.issueOf(q)
	if !ok || is.pr == nil {
		return notFound()
	}
	base := q.apiBase + "/repos/" + rp.owner + "/" + rp.name
	html := s.webURL + "/" + rp.owner + "/" + rp.name + "/pull/" + strconv.Itoa(is.number)
	out := []any{}
	for _, rv := range rp.reviews[is.number] {
		out = append(out, map[string]any{
			"id": rv.id, "node_id": fmt.Sprintf("PRR_%d", rv.id), "user": s.simpleUserJSON(q, rv.User), "body": rv.Body,
			"state": rv.State, "html_url": html + "#pullrequestreview-" + strconv.FormatInt(rv.id, 10),
			"pull_request_url": base + "/pulls/" + strconv.Itoa(is.number), "commit_id": rv.CommitID,
			"submitted_at": rv.submitted.UTC().Format(time.RFC3339), "author_association": "COLLABORATOR",
			"_links": map[string]any{"html": map[string]any{"href": html}, "pull_request": map[string]any{"href": base + "/pulls/" + strconv.Itoa(is.number)}},
		})
	}
	return reply{status: 200, list: out}
}
