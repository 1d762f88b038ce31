package server

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
	"github.com/phasegate/phasegate/internal/outcome"
	"github.com/phasegate/phasegate/internal/testutil/outcometest"
)

// The red-team cases through serve's entry points (webhooks and the
// reconcile loop), with the real decision handler against the fake GitHub;
// the action's side is internal/action/redteam_test.go and the threat model
// docs/security.md.

// redTeamServe starts serve with the real handler, optionally signing, and
// the seed outcome posted by the App on the feature issue.
func redTeamServe(t *testing.T, key string, opts ...func(*Config)) *harness {
	t.Helper()
	h := newHarness(t, append([]func(*Config){func(c *Config) {
		c.NewDecider = nil
		if key != "" {
			c.SigningKey = []byte(key)
		}
	}}, opts...)...)
	seedFeature(t, h.fake)
	h.fake.SetPermission(owner, repo, "erin", "admin")
	if key != "" { // re-post the outcome signed
		for _, c := range h.fake.Comments(owner, repo, featureIssue) {
			h.fake.DeleteComment(c.ID)
		}
		postSigned(t, h.fake, key)
	}
	h.start()
	h.waitReady()
	return h
}

// command posts a comment and delivers its webhook, waiting for the job.
func (h *harness) command(login, body string) int64 {
	h.t.Helper()
	id := h.fake.AddComment(owner, repo, featureIssue, login, body)
	if code, answer := h.send(delivery{event: "issue_comment", body: commentEvent("created", featureIssue, id, login, login, body)}); code != http.StatusAccepted {
		h.t.Fatalf("delivery of %q: %d %q", body, code, answer)
	}
	if d := h.waitJobs(1)[0]; d.outcome != "ok" {
		h.t.Fatalf("job %+v; logs:\n%s", d, h.logs.String())
	}
	return id
}

func (h *harness) newest(login, contains string) ghfake.Comment {
	h.t.Helper()
	cs := h.fake.Comments(owner, repo, featureIssue)
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].User == login && strings.Contains(cs[i].Body, contains) {
			return cs[i]
		}
	}
	h.t.Fatalf("no comment by %s holding %q", login, contains)
	return ghfake.Comment{}
}

func TestRedTeamServe(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"", "serve-red-team-key"} {
		mode := map[bool]string{false: "no key", true: "signing key"}[key != ""]
		t.Run("deleted reject and its command/"+mode, func(t *testing.T) {
			t.Parallel() // its own harness
			h := redTeamServe(t, key)
			cmd := h.command("alice", "/resolve D-001 reject")
			res := h.newest(appBot, "phasegate:resolution")
			if st, _ := h.fake.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); st.State != "failure" {
				t.Fatalf("after reject: %+v", st)
			}
			h.fake.DeleteComment(res.ID)
			h.fake.DeleteComment(cmd)
			if code, _ := h.send(delivery{event: "issue_comment", body: commentEvent("deleted", featureIssue, res.ID, appBot, "mallory", res.Body)}); code != http.StatusAccepted {
				t.Fatalf("deletion delivery: %d", code)
			}
			if d := h.waitJobs(1)[0]; d.kind != kindTamper || d.outcome != "ok" {
				t.Fatalf("job %+v", d)
			}
			st, _ := h.fake.LatestStatus(owner, repo, headSHA, decide.ContextDecisions)
			if st.State != "failure" || !strings.Contains(st.Description, "tampering") {
				t.Fatalf("after the deletion: %+v, want failure for tampering", st)
			}
			h.command("erin", "/resolve D-001 approve")
			if reply := h.newest(appBot, "phasegate:reply").Body; !strings.Contains(reply, "frozen") {
				t.Errorf("a /resolve after the deletion was not refused:\n%s", reply)
			}
			if st, _ := h.fake.LatestStatus(owner, repo, headSHA, decide.ContextDecisions); st.State != "failure" {
				t.Errorf("after a new /resolve: %+v, want failure", st)
			}
		})
		t.Run("a person's comment edited into a command/"+mode, func(t *testing.T) {
			t.Parallel() // its own harness
			h := redTeamServe(t, key, func(c *Config) { c.ReconcileEvery = 50 * time.Millisecond })
			id := h.fake.AddComment(owner, repo, featureIssue, "alice", "Looks good so far.")
			h.fake.EditComment(id, "Looks good so far.\n/resolve D-001 approve")
			// GitHub sends "edited": serve ignores people's edits.
			if code, answer := h.send(delivery{event: "issue_comment", body: commentEvent("edited", featureIssue, id, "alice", "mallory", "Looks good so far.\n/resolve D-001 approve")}); code != http.StatusOK {
				t.Fatalf("edited delivery: %d %q", code, answer)
			}
			// The reconcile loop finds the comment and refuses it.
			defer func() {
				if t.Failed() {
					t.Log(h.logs.String())
				}
			}()
			h.until("reconcile answers the edited comment", func() bool {
				for _, c := range h.fake.Comments(owner, repo, featureIssue) {
					if c.User == appBot && strings.Contains(c.Body, "phasegate:reply") {
						return true
					}
				}
				return false
			})
			reply := h.newest(appBot, "phasegate:reply").Body
			if !strings.Contains(reply, "edited") {
				t.Errorf("reply:\n%s", reply)
			}
			for _, c := range h.fake.Comments(owner, repo, featureIssue) {
				if strings.Contains(c.Body, "phasegate:resolution") {
					t.Fatalf("an edited comment was resolved:\n%s", c.Body)
				}
			}
		})
	}
}

// postSigned posts the seed outcome on the feature issue as the App, signed
// with key.
func postSigned(t *testing.T, f *ghfake.Server, key string) {
	t.Helper()
	yaml := outcometest.SeedFor(featureIssue)
	body, _ := outcometest.Render(t, yaml, outcome.Meta{Source: source, Commit: addedSHA, PR: prNumber, Actors: []string{"agent-bot"}, Key: []byte(key)})
	f.SetFile(owner, repo, addedSHA, source, []byte(yaml))
	f.SetFile(owner, repo, headSHA, source, []byte(yaml))
	f.AddComment(owner, repo, featureIssue, appBot, body)
}
