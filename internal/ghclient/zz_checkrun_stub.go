package ghclient

import (
	"context"
	"errors"
	"io/fs"
	"time"
)

// TEMPORARY stub (issue 19): replaced by the real check-run client.

type Annotation struct {
	Path                   string
	StartLine, EndLine     int
	StartColumn, EndColumn int
	Level                  string
	Title, Message         string
	RawDetails             string
}

type CheckRun struct {
	ID                     int64
	Name, HeadSHA          string
	Status, Conclusion     string
	DetailsURL, ExternalID string
	Title, Summary, Text   string
	Annotations            []Annotation
	StartedAt, CompletedAt time.Time
	AppSlug                string
}

func (c *Client) CreateCheckRun(ctx context.Context, owner, repo string, cr CheckRun) (int64, error) {
	return 0, errors.New("stub")
}
func (c *Client) UpdateCheckRun(ctx context.Context, owner, repo string, id int64, cr CheckRun) error {
	return errors.New("stub")
}
func (c *Client) CheckRunsForRef(ctx context.Context, owner, repo, sha, name string) ([]CheckRun, error) {
	return nil, errors.New("stub")
}

var ErrTooLarge = errors.New("too large")

type TreeLimits struct{}

func (c *Client) TreeFS(ctx context.Context, owner, repo, sha string, l TreeLimits) (fs.FS, error) {
	return nil, errors.New("stub")
}
