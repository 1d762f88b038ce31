package server

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
)

// jobWireVersion is the version of jobWire: a replica refuses (and the
// queue archives) a task of another version rather than misread it.
const jobWireVersion = 1

// jobWire is a job as the durable queue carries it (JSON): every field of
// job but the in-memory queue's element. A field added to job must be
// added here too (TestJobWireRoundTrip fails until it is).
type jobWire struct {
	V            int           `json:"v"`
	Kind         string        `json:"kind"`
	Delivery     string        `json:"delivery"`
	Event        string        `json:"event"`
	Action       string        `json:"action,omitempty"`
	Installation int64         `json:"installation"`
	Account      string        `json:"account,omitempty"`
	Owner        string        `json:"owner,omitempty"`
	Repo         string        `json:"repo,omitempty"`
	Issue        int           `json:"issue,omitempty"`
	Comment      commentWire   `json:"comment"`
	Labels       []string      `json:"labels"` // null and [] differ: nil is "none listed"
	Sender       string        `json:"sender,omitempty"`
	SenderType   string        `json:"sender_type,omitempty"`
	PR           int           `json:"pr,omitempty"`
	SHA          string        `json:"sha,omitempty"`
	State        string        `json:"state,omitempty"`
	Description  string        `json:"description,omitempty"`
	Repos        []repoRefWire `json:"repos,omitempty"`
	TargetURL    string        `json:"target_url,omitempty"`
	CommentURL   string        `json:"comment_url,omitempty"`
	ReplayKey    string        `json:"replay_key,omitempty"`
	Base         string        `json:"base,omitempty"`
	BaseRef      string        `json:"base_ref,omitempty"`
	Ref          string        `json:"ref,omitempty"`
	Fork         string        `json:"fork,omitempty"`
	RepoURL      string        `json:"repo_url,omitempty"`
	Pusher       string        `json:"pusher,omitempty"`
	Enqueued     time.Time     `json:"enqueued"`
}

type commentWire struct {
	ID     int64  `json:"id,omitempty"`
	Author string `json:"author,omitempty"`
	Bot    bool   `json:"bot,omitempty"`
	Body   string `json:"body,omitempty"`
}

type repoRefWire struct {
	ID       int64  `json:"id,omitempty"`
	Name     string `json:"name,omitempty"`
	FullName string `json:"full_name,omitempty"`
}

// encodeJob is j's JSON for the durable queue.
func encodeJob(j *job) ([]byte, error) {
	b, err := json.Marshal(j.wire())
	if err != nil {
		return nil, fmt.Errorf("encoding the job of delivery %s: %w", j.Delivery, err)
	}
	return b, nil
}

// wire is j as the durable queue carries it.
func (j *job) wire() jobWire {
	w := jobWire{
		V: jobWireVersion, Kind: j.Kind, Delivery: j.Delivery, Event: j.Event, Action: j.Action,
		Installation: j.Installation, Account: j.Account, Owner: j.Owner, Repo: j.Repo, Issue: j.Issue,
		Comment: commentWire{ID: j.Comment.ID, Author: j.Comment.Author, Bot: j.Comment.Bot, Body: j.Comment.Body},
		Labels:  j.Labels, Sender: j.Sender, SenderType: j.SenderType, PR: j.PR, SHA: j.SHA, State: j.State,
		Description: j.Description, TargetURL: j.TargetURL, CommentURL: j.CommentURL, ReplayKey: j.ReplayKey, Enqueued: j.Enqueued,
		Base: j.Base, BaseRef: j.BaseRef, Ref: j.Ref, Fork: j.Fork, RepoURL: j.RepoURL, Pusher: j.Pusher,
	}
	if j.Repos != nil {
		w.Repos = make([]repoRefWire, len(j.Repos))
		for i, r := range j.Repos {
			w.Repos[i] = repoRefWire(r)
		}
	}
	return w
}

// decodeJob is the job encodeJob encoded.
func decodeJob(b []byte) (*job, error) {
	var w jobWire
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decoding a queued job: %w", err)
	}
	if w.V != jobWireVersion {
		return nil, fmt.Errorf("decoding a queued job: version %d, this phasegate reads %d", w.V, jobWireVersion)
	}
	if w.Kind == "" || w.Installation <= 0 {
		return nil, errors.New("decoding a queued job: no kind or installation")
	}
	j := &job{
		Kind: w.Kind, Delivery: w.Delivery, Event: w.Event, Action: w.Action,
		Installation: w.Installation, Account: w.Account, Owner: w.Owner, Repo: w.Repo, Issue: w.Issue,
		Comment: decide.Comment{ID: w.Comment.ID, Author: w.Comment.Author, Bot: w.Comment.Bot, Body: w.Comment.Body},
		Labels:  w.Labels, Sender: w.Sender, SenderType: w.SenderType, PR: w.PR, SHA: w.SHA, State: w.State,
		Description: w.Description, TargetURL: w.TargetURL, CommentURL: w.CommentURL, ReplayKey: w.ReplayKey, Enqueued: w.Enqueued,
		Base: w.Base, BaseRef: w.BaseRef, Ref: w.Ref, Fork: w.Fork, RepoURL: w.RepoURL, Pusher: w.Pusher,
	}
	if w.Repos != nil {
		j.Repos = make([]repoRef, len(w.Repos))
		for i, r := range w.Repos {
			j.Repos[i] = repoRef(r)
		}
	}
	return j, nil
}

// taskKey is the durable queue's key of j: kind:owner/repo:what:input,
// lower case, where what is the commit (else the pull request, the issue,
// the delivery) and input the SHA-256 of everything the delivery says that
// the job acts on (inputDigest). Two deliveries share a key only when their
// jobs would be the same job: a pull request's delivery never joins a
// push's job of the same commit, whose input lacks the pull request, its
// base and the gate-change guard they bring. The queue coalesces a
// delivery only into a job of its key that has not started yet
// (redisx.Queue.Enqueue); one that started may have read GitHub before the
// delivery's news, so the delivery's job runs after it.
func (j *job) taskKey() (string, error) {
	var what string
	switch {
	case j.SHA != "":
		what = strings.ToLower(j.SHA)
	case j.PR > 0:
		what = "pr-" + strconv.Itoa(j.PR)
	case j.Issue > 0:
		what = "issue-" + strconv.Itoa(j.Issue)
	default:
		what = "delivery-" + j.Delivery
	}
	digest, err := j.inputDigest()
	if err != nil {
		return "", err
	}
	return j.Kind + ":" + strings.ToLower(j.repository()) + ":" + what + ":" + digest, nil
}

// inputDigest is the hex SHA-256 of j's input: its wire form without what
// names the delivery rather than the work (its ID, replay key, arrival).
// Every field of job is in it unless removed here, so a field added to job
// (and to jobWire) keeps apart the deliveries it tells apart.
func (j *job) inputDigest() (string, error) {
	w := j.wire()
	w.Delivery, w.ReplayKey, w.Enqueued = "", "", time.Time{}
	b, err := json.Marshal(w)
	if err != nil {
		return "", fmt.Errorf("encoding the input of delivery %s: %w", j.Delivery, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
