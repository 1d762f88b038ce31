package ghclient

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/ghfake"
)

const (
	appToken   = "ghs-phasegate"
	otherToken = "ghs-other"
)

// checksEnv is a client authenticated as an installation of App 4242
// ("phasegate"); App 99 ("other") has a token too.
func checksEnv(t *testing.T, token string) *env {
	t.Helper()
	return checksEnvOpts(t, Options{Token: token})
}

// checksEnvOpts is checksEnv with further options.
func checksEnvOpts(t *testing.T, opts Options) *env {
	t.Helper()
	opts.BackoffBase, opts.BackoffMax = 1, 1
	e := newEnv(t, opts)
	e.fake.AddAppToken(appToken, 4242, "phasegate")
	e.fake.AddAppToken(otherToken, 99, "other")
	return e
}

func annotations(n int) []Annotation {
	out := make([]Annotation, n)
	for i := range out {
		out[i] = Annotation{Path: "a.yaml", StartLine: i + 1, EndLine: i + 1, Level: "warning", Message: fmt.Sprintf("m%d", i)}
	}
	return out
}

func TestCreateCheckRun(t *testing.T) {
	base := CheckRun{Name: "phasegate", HeadSHA: headSHA, Status: "completed", Conclusion: "failure", Title: "2 findings", Summary: "s"}
	with := func(edit func(*CheckRun)) CheckRun {
		cr := base
		edit(&cr)
		return cr
	}
	tests := []struct {
		name         string
		token        string
		cr           CheckRun
		wantErr      string
		wantStatus   int // of the error
		wantRequests int // POSTs and PATCHes sent
		check        func(t *testing.T, got ghfake.CheckRun)
	}{
		{name: "no annotations", cr: base, wantRequests: 1, check: func(t *testing.T, got ghfake.CheckRun) {
			if got.Conclusion != "failure" || got.Title != "2 findings" || got.AppSlug != "phasegate" || got.Creator != "phasegate[bot]" {
				t.Errorf("run %+v", got)
			}
		}},
		{name: "120 annotations: three requests", cr: with(func(c *CheckRun) { c.Annotations = annotations(120) }), wantRequests: 3,
			check: func(t *testing.T, got ghfake.CheckRun) {
				if len(got.Annotations) != 120 || got.Annotations[119].Message != "m119" || got.Writes != 3 || got.Title != "2 findings" {
					t.Errorf("%d annotations, %d writes, title %q", len(got.Annotations), got.Writes, got.Title)
				}
			}},
		{name: "long texts cut on a rune boundary", cr: with(func(c *CheckRun) {
			c.Title, c.Summary, c.Text = strings.Repeat("é", 200), strings.Repeat("é", 40000), strings.Repeat("€", 30000)
		}), wantRequests: 1, check: func(t *testing.T, got ghfake.CheckRun) {
			for _, s := range []string{got.Title, got.Summary, got.Text} {
				if !utf8.ValidString(s) || !strings.HasSuffix(s, "…") && !strings.HasSuffix(s, truncatedMark) {
					t.Errorf("cut badly: ...%q", s[max(0, len(s)-20):])
				}
			}
			if len(got.Title) > 255 || len(got.Summary) > 65535 || len(got.Text) > 65535 {
				t.Errorf("lengths %d %d %d", len(got.Title), len(got.Summary), len(got.Text))
			}
		}},
		{name: "columns only on one line", cr: with(func(c *CheckRun) {
			c.Annotations = []Annotation{{Path: "a", StartLine: 3, EndLine: 5, StartColumn: 2, EndColumn: 4, Level: "failure", Message: "m"},
				{Path: "a", StartLine: 0, StartColumn: 2, EndColumn: 4, Level: "notice", Message: "m", Title: strings.Repeat("t", 300)}}
		}), wantRequests: 1, check: func(t *testing.T, got ghfake.CheckRun) {
			a, b := got.Annotations[0], got.Annotations[1]
			if a.StartColumn != 0 || a.EndColumn != 0 || b.StartLine != 1 || b.EndLine != 1 || b.StartColumn != 2 || b.EndColumn != 4 || len(b.Title) > 255 {
				t.Errorf("annotations %+v", got.Annotations)
			}
		}},
		{name: "a user's token", token: botToken, cr: base, wantErr: "403", wantStatus: 403, wantRequests: 1},
		{name: "no name", cr: with(func(c *CheckRun) { c.Name = "" }), wantErr: "no check run name"},
		{name: "stale is GitHub's", cr: with(func(c *CheckRun) { c.Conclusion = "stale" }), wantErr: "conclusion"},
		{name: "completed without a conclusion", cr: with(func(c *CheckRun) { c.Conclusion = "" }), wantErr: "needs a conclusion"},
		{name: "annotations without a title", cr: with(func(c *CheckRun) { c.Title, c.Annotations = "", annotations(1) }), wantErr: "title and a summary"},
		{name: "an annotation without a message", cr: with(func(c *CheckRun) { c.Annotations = []Annotation{{Path: "a", Level: "notice"}} }), wantErr: "annotation 0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			token := tt.token
			if token == "" {
				token = appToken
			}
			e := checksEnv(t, token)
			id, err := e.c.CreateCheckRun(ctxT(t), owner, repo, tt.cr)
			if n := e.fake.CountCalls("POST", "/repos/acme/widgets/check-runs") + e.fake.CountCalls("PATCH", "/repos/acme/widgets/check-runs"); n != tt.wantRequests {
				t.Errorf("%d requests, want %d", n, tt.wantRequests)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || StatusCode(err) != tt.wantStatus {
					t.Fatalf("err = %v (status %d), want %q", err, StatusCode(err), tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			runs := e.fake.CheckRuns(owner, repo, headSHA)
			if len(runs) != 1 || runs[0].ID != id {
				t.Fatalf("runs %+v, id %d", runs, id)
			}
			tt.check(t, runs[0])
		})
	}
}

// TestCreateCheckRunLostResponses loses half the responses of writes: the
// guards find what was applied, so there is one run with each annotation
// once.
func TestCreateCheckRunLostResponses(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		t.Run(fmt.Sprint("seed ", seed), func(t *testing.T) {
			e := checksEnv(t, appToken)
			e.fake.SetFaults(ghfake.Faults{Seed: seed, LostResponseRate: 0.5, WritesOnly: true})
			cr := CheckRun{Name: "phasegate", HeadSHA: headSHA, Status: "in_progress", Title: "t", Summary: "s", Annotations: annotations(120)}
			id, err := e.c.CreateCheckRun(ctxT(t), owner, repo, cr)
			if err != nil {
				t.Fatal(err)
			}
			err = e.c.UpdateCheckRun(ctxT(t), owner, repo, id, CheckRun{Name: "phasegate", Conclusion: "success", Title: "t", Summary: "s", Annotations: annotations(60)})
			if err != nil {
				t.Fatal(err)
			}
			runs := e.fake.CheckRuns(owner, repo, headSHA)
			if len(runs) != 1 || len(runs[0].Annotations) != 180 || runs[0].Conclusion != "success" {
				t.Fatalf("%d runs; %+v", len(runs), runs)
			}
			lost := 0
			for _, c := range e.fake.Calls() {
				if c.Fault == "lost-response" {
					lost++
				}
			}
			if lost == 0 || e.c.Stats().GuardHits == 0 {
				t.Fatalf("%d responses lost, %d guard hits: the test tests nothing", lost, e.c.Stats().GuardHits)
			}
		})
	}
}

func TestUpdateCheckRun(t *testing.T) {
	tests := []struct {
		name         string
		token        string
		cr           CheckRun
		wantErr      string
		wantStatus   int
		wantRequests string // methods sent to check-runs/{id}
		wantRun      string // status/conclusion/annotations
	}{
		{name: "complete it", cr: CheckRun{Name: "phasegate", Conclusion: "success", Title: "ok", Summary: "fine"},
			wantRequests: "PATCH", wantRun: "completed/success/0"},
		{name: "60 annotations: read, then two batches", cr: CheckRun{Name: "phasegate", Status: "in_progress", Title: "t", Summary: "s", Annotations: annotations(60)},
			wantRequests: "GET PATCH PATCH", wantRun: "in_progress//60"},
		{name: "another app may not", token: otherToken, cr: CheckRun{Name: "phasegate", Conclusion: "success"},
			wantErr: "403", wantStatus: 403, wantRequests: "PATCH", wantRun: "queued//0"},
		{name: "no name", cr: CheckRun{Conclusion: "success"}, wantErr: "no check run name", wantRun: "queued//0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := checksEnv(t, appToken)
			id, err := e.c.CreateCheckRun(ctxT(t), owner, repo, CheckRun{Name: "phasegate", HeadSHA: headSHA})
			if err != nil {
				t.Fatal(err)
			}
			c := e.c
			if tt.token != "" {
				if c, err = New(Options{BaseURL: e.fake.URL(), Token: tt.token}); err != nil {
					t.Fatal(err)
				}
			}
			e.fake.ResetCalls()
			err = c.UpdateCheckRun(ctxT(t), owner, repo, id, tt.cr)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || StatusCode(err) != tt.wantStatus {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			var methods []string
			for _, call := range e.fake.Calls() {
				methods = append(methods, call.Method)
			}
			r := e.fake.CheckRuns(owner, repo, headSHA)[0]
			got := fmt.Sprintf("%s/%s/%d", r.Status, r.Conclusion, len(r.Annotations))
			if strings.Join(methods, " ") != tt.wantRequests || got != tt.wantRun {
				t.Fatalf("requests %v, run %s", methods, got)
			}
		})
	}
}

func TestCheckRunsForRef(t *testing.T) {
	e := checksEnvOpts(t, Options{Token: appToken, perPage: smallPage})
	other, err := New(Options{BaseURL: e.fake.URL(), Token: otherToken})
	if err != nil {
		t.Fatal(err)
	}
	e.fake.SetBranch(owner, repo, "main", headSHA)
	// 13 names and "phasegate" (three pages), "phasegate" twice by this App and once by the other.
	for i := 0; i < 2*smallPage+3; i++ {
		if _, err := e.c.CreateCheckRun(ctxT(t), owner, repo, CheckRun{Name: fmt.Sprint("check-", i), HeadSHA: headSHA}); err != nil {
			t.Fatal(err)
		}
	}
	for i, c := range []*Client{e.c, e.c, other} {
		if _, err := c.CreateCheckRun(ctxT(t), owner, repo, CheckRun{Name: "phasegate", HeadSHA: headSHA, ExternalID: fmt.Sprint(i)}); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name, ref, check string
		want             string // count, then external id/app slug of the first ones
		wantNotFound     bool
	}{
		{name: "every name, paginated", ref: headSHA, want: fmt.Sprint(2*smallPage + 3 + 2)},
		{name: "the latest of each app", ref: "main", check: "phasegate", want: "2 2/other 1/phasegate"},
		{name: "none", ref: headSHA, check: "nope", want: "0"},
		{name: "unknown repository", ref: headSHA, wantNotFound: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := repo
			if tt.wantNotFound {
				r = "nope"
			}
			runs, err := e.c.CheckRunsForRef(ctxT(t), owner, r, tt.ref, tt.check)
			if tt.wantNotFound {
				if !IsNotFound(err) {
					t.Fatalf("err = %v, want a 404", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got := fmt.Sprint(len(runs))
			if tt.check != "" {
				for _, r := range runs {
					got += " " + r.ExternalID + "/" + r.AppSlug
					if r.AppID == 0 || r.HeadSHA != headSHA || r.Status != "queued" || r.HTMLURL == "" {
						t.Errorf("run %+v", r)
					}
				}
			}
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
