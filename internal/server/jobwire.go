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
)

// jobVersion is the version of a queued job's JSON: a replica refuses
// (and the queue archives) a task of another version rather than misread
// it.
const jobVersion = 1

// versioned is a job as the durable queue carries it: its JSON and the
// version.
type versioned struct {
	V int `json:"v"`
	*job
}

func encodeJob(j *job) ([]byte, error) {
	b, err := json.Marshal(versioned{jobVersion, j})
	if err != nil {
		return nil, fmt.Errorf("encoding the job of delivery %s: %w", j.Delivery, err)
	}
	return b, nil
}

func decodeJob(b []byte) (*job, error) {
	w := versioned{job: new(job)}
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, fmt.Errorf("decoding a queued job: %w", err)
	}
	if w.V != jobVersion {
		return nil, fmt.Errorf("decoding a queued job: version %d, this phasegate reads %d", w.V, jobVersion)
	}
	if w.Kind == "" || w.Installation <= 0 {
		return nil, errors.New("decoding a queued job: no kind or installation")
	}
	return w.job, nil
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

// inputDigest is the hex SHA-256 of j's input: its JSON without what
// names the delivery rather than the work (its ID, replay key, arrival).
// Every field of job is in it unless removed here, so a field added to job
// keeps apart the deliveries it tells apart.
func (j *job) inputDigest() (string, error) {
	w := *j
	w.Delivery, w.ReplayKey, w.Enqueued, w.elem = "", "", time.Time{}, nil
	b, err := json.Marshal(&w)
	if err != nil {
		return "", fmt.Errorf("encoding the input of delivery %s: %w", j.Delivery, err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:]), nil
}
