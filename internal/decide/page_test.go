package decide

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

const (
	pageApp  = int64(77)
	pageSlug = "phasegate"
)

// person is a Client of login's user access token, issued through the
// App's OAuth flow (the App installed on every repository).
func (w *world) person(login string) *ghclient.Client {
	w.t.Helper()
	w.fake.AddAppToken("tok-app", pageApp, pageSlug)
	w.fake.AddInstallation(pageApp, 500)
	w.fake.AddUserToken("ghu_"+login, login, pageApp)
	c, err := ghclient.NewUser("ghu_"+login, ghclient.Options{BaseURL: w.fake.URL()})
	if err != nil {
		w.t.Fatal(err)
	}
	return c
}

// handle runs the handler on a comment already on the thread, as its
// webhook would.
func (w *world) handle(c ghclient.Comment) Result {
	w.t.Helper()
	r, err := w.h.HandleComment(context.Background(), w.gh, Event{Owner: owner, Repo: repo, Issue: w.issue,
		Comment: Comment{ID: c.ID, Author: c.User, Body: c.Body}})
	if err != nil {
		w.t.Fatalf("handling comment %d: %v", c.ID, err)
	}
	return r
}

// TestMayResolveAgreesWithTyped: for every reason a typed /resolve is
// refused for, and for one that is not, MayResolve answers what the typed
// command then meets, with the same reason.
func TestMayResolveAgreesWithTyped(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(w *world)
		login string
		want  string // a substring of why; "" when they may
	}{
		{name: "a writer may", login: "alice"},
		{name: "read permission", login: "bob", want: "needs write permission"},
		{name: "the agent that pushed the outcome", login: "agent-bot", want: "pushed or authored the change"},
		{name: "the pull request's author", login: "dora", want: "pushed or authored the change", setup: func(w *world) {
			w.fake.AddPullRequest(owner, repo, ghfake.PullRequest{Number: prNumber, HeadSHA: headSHA, BaseSHA: addedSHA, Author: "dora"})
			w.fake.SetPermission(owner, repo, "dora", "write")
		}},
		{name: "a pusher of the branch", login: "alice", want: "you pushed commits to", setup: func(w *world) {
			w.fake.Push(owner, repo, ghfake.Push{Ref: "feature-100", After: headSHA, Actor: "alice", Force: true})
		}},
		{name: "not in the team", login: "bob", want: "needs admin permission", setup: func(w *world) {
			w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  permission: admin\n  teams: [acme/leads]\n"))
			w.fake.AddTeamMember(owner, "leads", "carol", "active")
		}},
		{name: "in the team", login: "carol", setup: func(w *world) {
			w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  permission: admin\n  teams: [acme/leads]\n"))
			w.fake.AddTeamMember(owner, "leads", "carol", "active")
		}},
		{name: "a bot", login: "renovate[bot]", want: "bots never resolve"},
		{name: "excluded", login: "alice", want: "excluded from resolving", setup: func(w *world) {
			w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  exclude: [alice]\n"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			if tc.setup != nil {
				tc.setup(w)
			}
			id := w.postOutcome(seed, source, bot)
			ok, why, err := w.h.MayResolve(context.Background(), w.gh, owner, repo, w.issue, "d-001", tc.login)
			if err != nil {
				t.Fatal(err)
			}
			if ok != (tc.want == "") || !strings.Contains(why, tc.want) || (ok && why != "") {
				t.Fatalf("MayResolve = %v, %q; want %q", ok, why, tc.want)
			}
			w.say(tc.login, "/resolve D-001 approve")
			d := w.state().Outcome(id).Decision("D-001")
			if typed := d.Resolution != nil; typed != ok {
				t.Fatalf("typed /resolve resolved: %v, MayResolve said %v\n%s", typed, ok, w.lastReply())
			}
			if !ok && !strings.Contains(w.lastReply(), why) {
				t.Errorf("the typed command's reply does not give MayResolve's reason %q:\n%s", why, w.lastReply())
			}
		})
	}
}

// TestResolveAsUserLandsAndApplies: the person's comment lands as theirs,
// through the App; the webhook path then applies it like a typed one and
// phasegate/decisions turns green. A second click before the webhook is
// handled posts nothing more.
func TestResolveAsUserLandsAndApplies(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.postOutcome(seed, source, bot)
	alice := w.person("alice")
	ctx := context.Background()
	req := ResolveAsUser{Owner: owner, Repo: repo, Issue: w.issue, Decision: "D-001", Option: "Approve", Reason: "looks complete", Login: "alice"}
	posted, err := w.h.ResolveAsUser(ctx, w.gh, alice, req)
	if err != nil {
		t.Fatal(err)
	}
	if posted.User != "alice" || posted.ViaApp != pageSlug {
		t.Fatalf("posted = %+v, want alice's comment via %s", posted, pageSlug)
	}
	if !strings.HasPrefix(posted.Body, "/resolve D-001 approve looks complete\n\n") || !strings.Contains(posted.Body, PageFooter) {
		t.Errorf("body = %q", posted.Body)
	}
	if d := w.state().Outcome(id).Decision("D-001"); d.Resolution != nil {
		t.Fatal("ResolveAsUser applied the resolution itself")
	}
	again, err := w.h.ResolveAsUser(ctx, w.gh, alice, req)
	if err != nil || again.ID != posted.ID {
		t.Fatalf("second click = %+v, %v; want the same comment %d", again, err, posted.ID)
	}
	if n := len(w.fake.Comments(owner, repo, w.issue)); n != 2 {
		t.Fatalf("%d comments, want the outcome and one /resolve", n)
	}
	if r := w.handle(posted); r.Resolutions != 1 {
		t.Fatalf("handling it: %+v\n%s", r, w.lastReply())
	}
	d := w.state().Outcome(id).Decision("D-001")
	if d.Resolution == nil || d.Resolution.By != "alice" || d.Resolution.Option != "approve" {
		t.Fatalf("D-001 = %+v", d.Resolution)
	}
	if st, ok := w.fake.LatestStatus(owner, repo, headSHA, ContextDecisions); !ok || st.State != "success" {
		t.Errorf("%s = %+v, want success", ContextDecisions, st)
	}
	// Resolved now: the page may no longer.
	if _, err := w.h.ResolveAsUser(ctx, w.gh, w.person("erin"), ResolveAsUser{Owner: owner, Repo: repo, Issue: w.issue, Decision: "D-001", Option: "reject", Login: "erin"}); !isRefused(err, "already resolved") {
		t.Errorf("after the resolution: %v, want refused as already resolved", err)
	}
}

func isRefused(err error, want string) bool {
	var re *RefusedError
	return errors.As(err, &re) && strings.Contains(re.Why, want)
}

// TestResolveAsUserRefuses: what it refuses posts nothing.
func TestResolveAsUserRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		setup func(w *world)
		req   ResolveAsUser // Owner, Repo, Issue filled in
		want  string
	}{
		{name: "not allowed", req: ResolveAsUser{Decision: "D-001", Option: "approve", Login: "bob"}, want: "needs write permission"},
		{name: "an unknown option", req: ResolveAsUser{Decision: "D-001", Option: "maybe", Login: "alice"}, want: "not an option of D-001"},
		{name: "an unknown decision", req: ResolveAsUser{Decision: "D-999", Option: "approve", Login: "alice"}, want: "no pending decision D-999"},
		{name: "a decision that is not a word", req: ResolveAsUser{Decision: "D-001 reject", Option: "approve", Login: "alice"}, want: "no pending decision"},
		{name: "already resolved", req: ResolveAsUser{Decision: "D-001", Option: "approve", Login: "alice"}, want: "already resolved", setup: func(w *world) {
			w.say("erin", "/resolve D-001 reject")
		}},
		{name: "a frozen thread", req: ResolveAsUser{Decision: "D-001", Option: "approve", Login: "alice"}, want: "frozen", setup: func(w *world) {
			cs := w.fake.Comments(owner, repo, w.issue)
			w.fake.EditComment(cs[0].ID, strings.Replace(cs[0].Body, "Approve PREQ", "Approve anything", 1))
		}},
		{name: "an invalid configuration", req: ResolveAsUser{Decision: "D-001", Option: "approve", Login: "alice"}, want: "configuration on the default branch is invalid", setup: func(w *world) {
			w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers: [\n"))
		}},
		{name: "commands through an App refused", req: ResolveAsUser{Decision: "D-001", Option: "approve", Login: "alice"}, want: "resolvers.via_apps: false", setup: func(w *world) {
			w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte("resolvers:\n  via_apps: false\n"))
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			w.postOutcome(seed, source, bot)
			if tc.setup != nil {
				tc.setup(w)
			}
			before := len(w.fake.Comments(owner, repo, w.issue))
			r := tc.req
			r.Owner, r.Repo, r.Issue = owner, repo, w.issue
			_, err := w.h.ResolveAsUser(context.Background(), w.gh, w.person(r.Login), r)
			if !isRefused(err, tc.want) {
				t.Fatalf("err = %v, want refused: %q", err, tc.want)
			}
			if after := len(w.fake.Comments(owner, repo, w.issue)); after != before {
				t.Errorf("%d comments posted", after-before)
			}
		})
	}
}

// injections are reasons crafted to post a second command, to hide text
// from the reader, or to change what the command reads as.
var injections = []struct{ name, reason string }{
	{name: "a second command on its own line", reason: "fine\n/resolve D-001 reject"},
	{name: "a second command after CR", reason: "fine\r/resolve D-001 reject"},
	{name: "a second command after a line separator", reason: "fine\u2028/resolve D-001 reject"},
	{name: "a second paragraph", reason: "fine\n\n/resolve D-002 capture"},
	{name: "an HTML comment hiding text", reason: "ok <!-- secretly: /resolve D-001 reject --> sure"},
	{name: "a collapsed details block", reason: "<details><summary>ok</summary>\n/resolve D-001 reject\n</details>"},
	{name: "a link hiding its target", reason: "[see the review](https://evil.example/x)"},
	{name: "an image", reason: "![x](https://evil.example/pixel.png)"},
	{name: "a code span", reason: "`/resolve D-001 reject`"},
	{name: "strikethrough", reason: "~~not~~ approved"},
	{name: "an entity for a zero-width space", reason: "a&#8203;b &amp; c"},
	{name: "direction overrides and zero-width characters", reason: "ok\u202e\u200b\u2066 fine\ufeff"},
	{name: "a table", reason: "| a | b |\n| - | - |\n| c | d |"},
	{name: "backslashes", reason: `\\<b>bold\\</b>`},
	{name: "too long", reason: strings.Repeat("ab<c ", 2000)},
	{name: "not UTF-8", reason: "ok \xff\xfe fine"},
}

// TestComposeResolveNeutralisesInjection (red team): whatever the reason,
// the body reads as exactly one /resolve of the intended decision and
// option, its reason on one line where every character Markdown or HTML
// reads is escaped, and no longer than MaxReason characters before
// escaping.
func TestComposeResolveNeutralisesInjection(t *testing.T) {
	t.Parallel()
	for _, tc := range injections {
		t.Run(tc.name, func(t *testing.T) {
			body, err := ComposeResolve("D-001", "approve", tc.reason)
			if err != nil {
				t.Fatal(err)
			}
			cmds := command.Parse(body)
			if len(cmds) != 1 || cmds[0].Kind != command.Resolve || cmds[0].ID != "D-001" || cmds[0].Option != "approve" {
				t.Fatalf("%q parses as %+v", body, cmds)
			}
			line, rest, _ := strings.Cut(body, "\n")
			if rest != "\n"+PageFooter {
				t.Errorf("the reason spilled past its line: %q", body)
			}
			if strings.ContainsAny(line, "<>") {
				t.Errorf("raw < or > in %q", line)
			}
			for i := 0; i < len(line); i++ {
				switch {
				case line[i] == '&' && !strings.HasPrefix(line[i:], "&amp;") && !strings.HasPrefix(line[i:], "&lt;") && !strings.HasPrefix(line[i:], "&gt;"):
					t.Errorf("a raw & at %d of %q", i, line)
				case line[i] == '\\':
					i++ // an escape and what it escapes
				case strings.IndexByte("[]`*_~|", line[i]) >= 0:
					t.Errorf("unescaped %q at %d of %q", line[i], i, line)
				}
			}
			plain := strings.NewReplacer(`\`, "", "&amp;", "&", "&lt;", "<", "&gt;", ">").Replace(cmds[0].Rationale)
			if n := utf8.RuneCountInString(plain); n > MaxReason {
				t.Errorf("reason of %d characters, want at most %d", n, MaxReason)
			}
			if !utf8.ValidString(body) || strings.ContainsAny(body, "\u202e\u200b\u2066\ufeff\r\u2028") {
				t.Errorf("invisible or invalid characters left in %q", body)
			}
		})
	}
}

// TestComposeResolveParseBack (red team): were the reason's escaping ever to
// miss something, the parse-back check refuses what does not read back as
// the one intended command. The escaping is switched off here to show it.
func TestComposeResolveParseBack(t *testing.T) {
	saved := reasonEscaper
	t.Cleanup(func() { reasonEscaper = saved })
	reasonEscaper = func(s string) string { return s }
	tests := []struct{ name, reason string }{
		{name: "a second command", reason: "fine\n/resolve D-001 reject"},
		{name: "an HTML comment", reason: "ok <!-- hidden --> sure"},
		{name: "a second paragraph", reason: "fine\n\n/decisions"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := ComposeResolve("D-001", "approve", tc.reason)
			if !isRefused(err, "rephrase the reason") {
				t.Errorf("ComposeResolve = %q, %v; want refused", body, err)
			}
		})
	}
}

// TestResolveAsUserInjectionEndToEnd (red team): a reason that tries to
// reject behind the approval lands as one approval, applied as such.
func TestResolveAsUserInjectionEndToEnd(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	id := w.postOutcome(seed, source, bot)
	posted, err := w.h.ResolveAsUser(context.Background(), w.gh, w.person("alice"), ResolveAsUser{Owner: owner, Repo: repo, Issue: w.issue,
		Decision: "D-001", Option: "approve", Reason: "fine\n/resolve D-001 reject\n/resolve D-002 capture <!-- x -->", Login: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	r := w.handle(posted)
	st := w.state().Outcome(id)
	if r.Resolutions != 1 || r.Replies != 0 || st.Decision("D-001").Resolution.Option != "approve" || st.Decision("D-002").Resolution != nil {
		t.Errorf("result %+v; D-001 %+v, D-002 %+v", r, st.Decision("D-001").Resolution, st.Decision("D-002").Resolution)
	}
}

// TestViaAppsRefusal: with resolvers.via_apps: false, a command posted
// through an App gets the normal refusal (a reply, 😕) and resolves
// nothing, while the same command typed resolves; by default both count.
func TestViaAppsRefusal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		config   string
		viaApp   bool
		resolves bool
	}{
		{name: "through an App, refused", config: "resolvers:\n  via_apps: false\n", viaApp: true},
		{name: "typed, with the App refused", config: "resolvers:\n  via_apps: false\n", resolves: true},
		{name: "through an App, by default", viaApp: true, resolves: true},
		{name: "through an App, allowed", config: "resolvers:\n  via_apps: true\n", viaApp: true, resolves: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel() // its own fake GitHub
			w := newWorld(t)
			if tc.config != "" {
				w.fake.SetFile(owner, repo, "main", ".github/phasegate.yml", []byte(tc.config))
			}
			id := w.postOutcome(seed, source, bot)
			var c ghclient.Comment
			if tc.viaApp {
				var err error
				// Posted directly, as a page that did not ask MayResolve would.
				if c, err = w.person("alice").CreateIssueComment(context.Background(), owner, repo, w.issue, "/resolve D-001 approve"); err != nil {
					t.Fatal(err)
				}
			} else {
				c = ghclient.Comment{ID: w.fake.AddComment(owner, repo, w.issue, "alice", "/resolve D-001 approve"), User: "alice", Body: "/resolve D-001 approve"}
			}
			w.handle(c)
			d := w.state().Outcome(id).Decision("D-001")
			if got := d.Resolution != nil; got != tc.resolves {
				t.Fatalf("resolved: %v, want %v\n%s", got, tc.resolves, w.lastReply())
			}
			if !tc.resolves {
				if reply := w.lastReply(); !strings.Contains(reply, "posted through the GitHub App `"+pageSlug+"`") || !strings.Contains(reply, "via_apps: false") {
					t.Errorf("reply:\n%s", reply)
				}
				if got := w.reactions(c.ID); got != reactConfused {
					t.Errorf("reactions = %q, want %q", got, reactConfused)
				}
			}
		})
	}
}
