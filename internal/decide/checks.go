package decide

import (
	"context"

	"github.com/phasegate/phasegate/internal/ghclient"
)

// ContextContracts is the verdict of a commit's artifacts.
const ContextContracts = "phasegate/contracts"

// Contracts is phasegate/contracts of one commit as the App publishes it:
// the verdict's state and the check run's output.
type Contracts struct {
	// State is the status's state: success (SHIP, ADVISORY) or failure
	// (HOLD, or the commit could not be checked).
	State string
	// Conclusion is the check run's: success, neutral (ADVISORY) or failure.
	Conclusion string
	// Title is the one line (the status's description).
	Title string
	// Summary and Text are the check run's Markdown output.
	Summary, Text string
	DetailsURL    string
	// Annotations are one per finding, at its file and line.
	Annotations []ghclient.Annotation
	// Input is the digest of the input checked (checkjob.Input) and PR
	// the pull request it was checked as, recorded in the check run's
	// external_id (Record): the result stands for that input only.
	Input string
	PR    int
}

// StartContracts marks phasegate/contracts of sha as being checked: an
// in-progress check run of the App (its id is returned for
// PublishContracts) and, when statuses are published, a pending status.
func (h *Handler) StartContracts(ctx context.Context, gh GitHub, owner, repo, sha, detailsURL string) (int64, error) {
	s := ghclient.Status{Context: ContextContracts, State: "pending", Description: "checking the artifacts of this commit", TargetURL: detailsURL}
	return h.publishRecord(ctx, gh, owner, repo, sha, s, 0, ghclient.CheckRun{Name: ContextContracts, HeadSHA: sha, Status: "in_progress",
		DetailsURL: detailsURL, Title: "Checking the artifacts", Summary: "phasegate is checking the artifacts of this commit."})
}

// PublishContracts completes phasegate/contracts of sha: the check run id
// (0: a new one) and, when statuses are published, the status.
func (h *Handler) PublishContracts(ctx context.Context, gh GitHub, owner, repo, sha string, id int64, c Contracts) error {
	s := ghclient.Status{Context: ContextContracts, State: c.State, Description: c.Title, TargetURL: c.DetailsURL}
	_, err := h.publishRecord(ctx, gh, owner, repo, sha, s, id, ghclient.CheckRun{Name: ContextContracts, HeadSHA: sha, Status: "completed", Conclusion: c.Conclusion,
		DetailsURL: c.DetailsURL, ExternalID: Record{State: c.State, Input: c.Input, PR: c.PR}.ExternalID(), Title: c.Title, Summary: c.Summary, Text: c.Text,
		Annotations: c.Annotations})
	return err
}
