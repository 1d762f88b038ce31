package server

import (
	"bytes"
	"encoding/hex"
	stdjson "encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"unicode"

	"github.com/phasegate/phasegate/internal/ghfake"
)

// seedPayloads are real-shaped deliveries of every event phasegate reads.
func seedPayloads() map[string][]byte {
	return map[string][]byte{
		"issue_comment":             commentEvent("created", 42, 7, "alice", "alice", "/resolve D-001 approve"),
		"pull_request":              pullRequestEvent("synchronize", 100, headSHA),
		"status":                    statusEvent("phasegate/decisions", "mallory", headSHA, "success"),
		"installation":              installationEvent("installation", "created", "acme/shop"),
		"installation_repositories": installationEvent("installation_repositories", "added", "acme/shop"),
		"merge_group":               mergeGroupEvent("checks_requested", headSHA, addedSHA),
		"push":                      pushEvent("refs/heads/feature", addedSHA, headSHA, false),
		"check_suite":               checkSuiteEvent("rerequested", headSHA, "feature", addedSHA),
		"check_run":                 checkRunEvent("rerequested", headSHA),
		"pull_request_review":       reviewEvent("submitted", 100, headSHA),
		"deployment_protection_rule": deploymentEvent(9001, "production", headSHA,
			"https://api.github.com/repos/acme/shop/actions/runs/9001/deployment_protection_rule"),
	}
}

// FuzzClassify: any verified payload of any event is a job, a reason to
// ignore it, or a malformed-payload error — never a panic; a job's
// repository is one GitHub could name, and what is echoed is clipped.
func FuzzClassify(f *testing.F) {
	seeds := seedPayloads()
	for event, body := range seeds {
		f.Add(event, body, "")
		f.Add(event, body, appBot)
		for other := range seeds { // every body under every other event's header
			if other != event {
				f.Add(other, body, "")
			}
		}
	}
	f.Add("issue_comment", []byte(`{"action":"created","installation":{"id":1},"repository":{"full_name":"a/../b"},"issue":{"number":1},"comment":{"id":1,"body":"/resolve D-001 approve"}}`), "")
	f.Add("status", []byte(`{"context":"phasegate/decisions","sha":"x","installation":{"id":1},"repository":{"name":"r\n","owner":{"login":"o"}}}`), "")
	f.Fuzz(func(t *testing.T, event string, body []byte, identity string) {
		j, why, err := classify(event, "fuzz", body, identity)
		switch {
		case err != nil:
			if !errors.Is(err, errMalformed) {
				t.Fatalf("error %v is not errMalformed", err)
			}
			if j != nil || why != "" {
				t.Fatal("an error with a job or a reason")
			}
		case j != nil:
			if why != "" || j.Kind == "" || j.Installation <= 0 {
				t.Fatalf("job %+v, reason %q", j, why)
			}
			if j.Owner != "" && (!validName(j.Owner) || !validName(j.Repo)) {
				t.Fatalf("job for a repository GitHub could not name: %q/%q", j.Owner, j.Repo)
			}
			switch j.Kind {
			case kindComment, kindTamper:
				if j.Issue <= 0 || j.Comment.ID <= 0 || j.Owner == "" {
					t.Fatalf("comment job %+v", j)
				}
			case kindPullRequest:
				if j.PR <= 0 || j.Owner == "" {
					t.Fatalf("pull request job %+v", j)
				}
			case kindCheck:
				// Its commit goes into API paths: a full sha, or (a pull
				// request's) read from the API.
				if j.Owner == "" || (j.SHA == "" && j.PR <= 0) || (j.SHA != "" && (!hexSHA(j.SHA) || j.SHA != strings.ToLower(j.SHA))) {
					t.Fatalf("check job %+v", j)
				}
			case kindDeploy:
				// The run and the environment go into the answer's API
				// path and body; the commit into the check.
				if j.Owner == "" || j.RunID <= 0 || j.Environment == "" || len(j.Environment) > maxEnvironment || !hexSHA(j.SHA) || j.SHA != strings.ToLower(j.SHA) ||
					strings.ContainsFunc(j.Environment, unicode.IsControl) || j.ReplayKey == "" {
					t.Fatalf("deployment job %+v", j)
				}
			case kindStatus:
				if j.SHA == "" || j.Owner == "" {
					t.Fatalf("status job %+v", j)
				}
			case kindInstallRepos, kindUninstall:
				// Only an installation event's shape: its account, no
				// repository of a repository event.
				if j.Account == "" || j.Owner != "" {
					t.Fatalf("installation job from a body that is not an installation event's: %+v", j)
				}
			}
			for _, r := range j.Repos {
				if o, n, ok := r.ownerName(); ok && (!validName(o) || !validName(n)) {
					t.Fatalf("repository %q", r.FullName)
				}
			}
		default:
			if why == "" {
				t.Fatal("neither a job, a reason nor an error")
			}
			if len(why) > 200 || strings.IndexFunc(string(why), func(r rune) bool { return r != '…' && (r > unicode.MaxASCII || !unicode.IsPrint(r)) }) >= 0 {
				t.Fatalf("reason %q is not clipped", why)
			}
		}
	})
}

// FuzzWebhook: any signed body under any event and content type gets one
// of the documented answers from the HTTP handler, never a panic or a 5xx
// other than 503.
func FuzzWebhook(f *testing.F) {
	for event, body := range seedPayloads() {
		f.Add(event, body, false)
		f.Add(event, []byte("payload="+url.QueryEscape(string(body))), true)
	}
	f.Add("issue_comment", []byte(`{"action":`), false)
	f.Add("ping", []byte(`{"zen":"Keep it logically awesome."}`), false)
	h := newHarness(f, func(c *Config) { c.QueueSize = 1 << 20 })
	f.Fuzz(func(t *testing.T, event string, body []byte, form bool) {
		req := httptest.NewRequest(http.MethodPost, "/webhook", bytes.NewReader(body))
		if form {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		} else {
			req.Header.Set("Content-Type", "application/json")
		}
		req.Header.Set("X-GitHub-Event", event)
		req.Header.Set("X-GitHub-Delivery", h.newID())
		req.Header.Set("X-Hub-Signature-256", ghfake.SignWebhook(testSecret, body))
		rec := httptest.NewRecorder()
		h.srv.Handler().ServeHTTP(rec, req)
		switch rec.Code {
		case http.StatusOK, http.StatusAccepted, http.StatusBadRequest, http.StatusServiceUnavailable:
		default:
			t.Fatalf("answer %d %q", rec.Code, rec.Body.String())
		}
	})
}

// FuzzParseSignature: any X-Hub-Signature-256 header is refused or decodes
// to the 32 bytes it spells, never a panic.
func FuzzParseSignature(f *testing.F) {
	f.Add("sha256=" + strings.Repeat("0f", 32))
	f.Add("sha256=" + strings.Repeat("0F", 32))
	f.Add("sha1=" + strings.Repeat("ab", 20))
	f.Add("sha256=")
	f.Add("")
	f.Fuzz(func(t *testing.T, header string) {
		want, ok := parseSignature(header)
		if !ok {
			if want != nil {
				t.Fatal("a refused header with a value")
			}
			return
		}
		if len(want) != 32 || !strings.EqualFold(header, "sha256="+hex.EncodeToString(want)) {
			t.Fatalf("%q decoded to %x", header, want)
		}
	})
}

// FuzzDecodePayload holds the acknowledgement's decoder (go-json-experiment's v1,
// chosen for speed: bench/serve/README.md) to encoding/json, the
// reference: on any body, both refuse it or both read the same payload.
func FuzzDecodePayload(f *testing.F) {
	for _, body := range seedPayloads() {
		f.Add(body)
	}
	examples, err := examplesOnce() // GitHub's own payloads of every event
	if err != nil {
		f.Fatal(err)
	}
	for _, e := range examples {
		f.Add(e.body)
	}
	for _, depth := range []int{9999, 10000, 10001} { // encoding/json's nesting limit
		f.Add([]byte(`{"x":` + strings.Repeat("[", depth) + strings.Repeat("]", depth) + `}`))
	}
	f.Add([]byte(`{"action":"created","comment":{"body":"a\ud800b\u00e9\\\"","id":1e2}}`))
	f.Add([]byte(`{"ACTION":"x","action":"y","Installation":{"id":1}}`))
	f.Add([]byte("{\"comment\":{\"body\":\"\xff\xfe\"}}"))
	f.Fuzz(func(t *testing.T, body []byte) {
		got, gotErr := decodePayload(body)
		want := new(payload)
		wantErr := stdjson.Unmarshal(body, want)
		if (gotErr != nil) != (wantErr != nil) {
			t.Fatalf("decodePayload error %v, encoding/json error %v", gotErr, wantErr)
		}
		if gotErr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("decodePayload read\n%+v\nencoding/json read\n%+v", got, want)
		}
	})
}
