package decide

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/phasegate/phasegate/internal/command"
	"github.com/phasegate/phasegate/internal/config"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ledger"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The decisions of a command, from a thread and the facts read for it:
// no GitHub (fake or real) takes part; a fact a decision lacks is named as
// its need.

const (
	pureHead  = "1111111111111111111111111111111111111111"
	pureGiven = "2222222222222222222222222222222222222222"
)

var purePR = ghclient.PR{Number: 4, State: "open", Author: "agent", HeadRef: "feature", HeadSHA: pureHead}

// pureThread is a thread holding one outcome (comment 10, of pull
// request 4, pushed by "agent") whose blocking approval D-001 is resolved
// by res (nil: pending).
func pureThread(res *outcome.Resolution, cfg config.Config, fs facts) *thread {
	d := &ledger.Decision{Decision: outcome.Decision{ID: "D-001", Type: "approval", Options: []string{"approve", "reject"}, Blocking: true}}
	if res != nil {
		d.Resolution, d.ResolutionComment = res, 11
	}
	o := &ledger.Outcome{CommentID: 10, ID: "sha256:o", Outcome: &outcome.Outcome{Phase: "requirements"}, Source: "docs/req/outcome.yaml",
		Commit: pureGiven, PR: 4, Actors: []string{"agent"}, Decisions: []*ledger.Decision{d}}
	return &thread{owner: "acme", repo: "shop", issue: 1, cfg: cfg, st: &ledger.State{Outcomes: []*ledger.Outcome{o}},
		prs: map[int]ghclient.PR{4: purePR}, facts: fs}
}

// known is facts holding each need with its answer.
func known(pairs ...any) facts {
	fs := facts{}
	for i := 0; i < len(pairs); i += 2 {
		fs[pairs[i].(need)] = pairs[i+1].(fact)
	}
	return fs
}

func TestAnswerResolve(t *testing.T) {
	t.Parallel()
	pushers := need{ref: purePR.HeadRef, head: purePR.HeadSHA}
	alicePerm := need{login: "alice"}
	noPush := fact{pushers: []string{"agent"}}
	approved := &outcome.Resolution{Decision: "D-001", Option: "approve", By: "bob", Head: pureGiven}
	teams := config.Config{Resolvers: config.Resolvers{Teams: []string{"acme/leads"}}}
	cases := []struct {
		name     string
		author   string
		bot      bool
		text     string
		res      *outcome.Resolution
		cfg      config.Config
		facts    facts
		need     *need
		auth     string // the resolution's, when one is decided
		refusal  string // part of the reply line, when refused
		resolves bool
	}{
		{name: "pushers read first", author: "alice", text: "/resolve D-001 approve", facts: facts{}, need: &pushers},
		{name: "then the permission", author: "alice", text: "/resolve D-001 approve", facts: known(pushers, noPush), need: &alicePerm},
		{name: "write permission resolves", author: "alice", text: "/resolve D-001 approve", facts: known(pushers, noPush, alicePerm, fact{perm: "write"}),
			resolves: true, auth: "write"},
		{name: "read permission is refused", author: "alice", text: "/resolve D-001 approve", facts: known(pushers, noPush, alicePerm, fact{perm: "read"}),
			refusal: "resolving needs write permission on this repository (you have read)"},
		{name: "a bot, before any read", author: "helper", bot: true, text: "/resolve D-001 approve", facts: facts{}, refusal: "bots never resolve decisions"},
		{name: "an actor, before any read", author: "agent", text: "/resolve D-001 approve", facts: facts{}, refusal: "you pushed or authored the change"},
		{name: "a pusher of the branch", author: "alice", text: "/resolve D-001 approve", facts: known(pushers, fact{pushers: []string{"agent", "Alice"}}),
			refusal: "you pushed commits to `feature`"},
		{name: "pushers that cannot be shown", author: "alice", text: "/resolve D-001 approve", facts: known(pushers, fact{why: "nobody can be shown"}),
			refusal: "nobody can be shown"},
		{name: "a team is read before the permission", author: "alice", text: "/resolve D-001 approve", cfg: teams, facts: known(pushers, noPush),
			need: &need{team: "acme/leads", login: "alice"}},
		{name: "a team member is listed", author: "alice", text: "/resolve D-001 approve", cfg: teams,
			facts: known(pushers, noPush, need{team: "acme/leads", login: "alice"}, fact{member: true}), resolves: true, auth: "listed"},
		{name: "an unreadable team is named in the refusal", author: "alice", text: "/resolve D-001 approve", cfg: teams,
			facts:   known(pushers, noPush, need{team: "acme/leads", login: "alice"}, fact{unreadable: true}, alicePerm, fact{perm: "triage"}),
			refusal: "cannot read team membership of acme/leads"},
		{name: "an unknown option, with a suggestion", author: "alice", text: "/resolve D-001 aprove", facts: facts{}, refusal: "Did you mean `/resolve D-001 approve`?"},
		{name: "no such decision", author: "alice", text: "/resolve D-009 approve", facts: facts{}, refusal: "there is no pending decision `D-009`"},
		{name: "a resolved decision: is it stale at the head?", author: "alice", text: "/resolve D-001 approve", res: approved, facts: facts{},
			need: &need{base: pureGiven, head: pureHead}},
		{name: "resolved, and the push changed nothing it covers", author: "alice", text: "/resolve D-001 approve", res: approved,
			facts:   known(need{base: pureGiven, head: pureHead}, fact{cmp: ghclient.Comparison{Status: "ahead", Files: map[string]string{"src/x.go": "modified"}}}),
			refusal: "`D-001` was already resolved"},
		{name: "resolved, and the push changed its directory: re-confirmed", author: "alice", text: "/resolve D-001 approve", res: approved,
			facts: known(need{base: pureGiven, head: pureHead}, fact{cmp: ghclient.Comparison{Status: "ahead", Files: map[string]string{"docs/req/spec.md": "modified"}}},
				pushers, noPush, alicePerm, fact{perm: "admin"}), resolves: true, auth: "admin"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			th := pureThread(tc.res, tc.cfg, tc.facts)
			cmds := command.Parse(tc.text)
			if len(cmds) != 1 {
				t.Fatalf("%q parses to %d commands", tc.text, len(cmds))
			}
			s, n, err := answer(th, Comment{ID: 20, Author: tc.author, Bot: tc.bot, Body: tc.text}, cmds[0])
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case tc.need != nil:
				if n == nil || *n != *tc.need {
					t.Fatalf("need %+v, want %+v", n, *tc.need)
				}
			case n != nil:
				t.Fatalf("needs %+v, want a decision", *n)
			case tc.resolves:
				if s.res == nil || s.refused || s.res.Auth != tc.auth || s.res.Head != pureHead || s.res.Command != 20 || s.res.By != tc.author {
					t.Fatalf("step %+v (resolution %+v), want a resolution by %s (%s) on the head", s, s.res, tc.author, tc.auth)
				}
			default:
				if s.res != nil || !s.refused || !strings.Contains(s.line, tc.refusal) {
					t.Fatalf("step %+v, want a refusal saying %q", s, tc.refusal)
				}
			}
		})
	}
}

func TestAnswerOtherCommands(t *testing.T) {
	t.Parallel()
	th := pureThread(nil, config.Config{}, facts{})
	cases := []struct {
		text    string
		line    string
		refused bool
	}{
		{text: "/phasegate help", line: helpText},
		{text: "/decisions", line: "| `D-001` | requirements |"},
		{text: "/reslove D-001 approve", line: "/resolve", refused: true},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			t.Parallel()
			s, n, err := answer(th, Comment{ID: 20, Author: "alice"}, command.Parse(tc.text)[0])
			if err != nil || n != nil || s.res != nil || s.refused != tc.refused || !strings.Contains(s.line, tc.line) {
				t.Fatalf("answer: %+v, %v, %v; want the line %q (refused %v)", s, n, err, tc.line, tc.refused)
			}
		})
	}
}

func TestApproverOf(t *testing.T) {
	t.Parallel()
	pushers := need{ref: purePR.HeadRef, head: purePR.HeadSHA}
	review := func(user, state, commit string) ghclient.Review {
		return ghclient.Review{User: user, State: state, CommitID: commit}
	}
	cases := []struct {
		name     string
		reviews  []ghclient.Review
		facts    facts
		need     *need
		approver string
		why      string
	}{
		{name: "none", why: "no approving review of the pull request's head"},
		{name: "an approval of an older head", reviews: []ghclient.Review{review("carol", "APPROVED", pureGiven)}, why: "no approving review"},
		{name: "taken back", reviews: []ghclient.Review{review("carol", "APPROVED", pureHead), review("carol", "CHANGES_REQUESTED", pureHead)},
			why: "no approving review"},
		{name: "the author", reviews: []ghclient.Review{review("agent", "APPROVED", pureHead)}, why: "the pull request's author"},
		{name: "pushers read first", reviews: []ghclient.Review{review("carol", "APPROVED", pureHead)}, facts: facts{}, need: &pushers},
		{name: "a pusher", reviews: []ghclient.Review{review("carol", "APPROVED", pureHead)}, facts: known(pushers, fact{pushers: []string{"carol"}}),
			why: "they pushed the pull request's branch"},
		{name: "pushers that cannot be shown", reviews: []ghclient.Review{review("carol", "APPROVED", pureHead)},
			facts: known(pushers, fact{why: "nobody can be shown not to have pushed it"}), why: "nobody can be shown not to have pushed it"},
		{name: "then the permission", reviews: []ghclient.Review{review("carol", "APPROVED", pureHead)}, facts: known(pushers, fact{}),
			need: &need{login: "carol"}},
		{name: "too little permission", reviews: []ghclient.Review{review("carol", "APPROVED", pureHead)},
			facts: known(pushers, fact{}, need{login: "carol"}, fact{perm: "read"}), why: "it needs write permission (they have read)"},
		{name: "approved", reviews: []ghclient.Review{review("carol", "COMMENTED", pureHead), review("carol", "APPROVED", pureHead)},
			facts: known(pushers, fact{}, need{login: "carol"}, fact{perm: "maintain"}), approver: "carol"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			fs := tc.facts
			if fs == nil {
				fs = facts{}
			}
			approver, why, n := approverOf(tc.reviews, purePR, config.Config{}, "phasegate[bot]", fs)
			switch {
			case tc.need != nil:
				if n == nil || *n != *tc.need {
					t.Fatalf("need %+v, want %+v", n, *tc.need)
				}
			case n != nil:
				t.Fatalf("needs %+v, want a decision", *n)
			case approver != tc.approver || !strings.Contains(why, tc.why):
				t.Fatalf("approver %q (%q), want %q (%q)", approver, why, tc.approver, tc.why)
			}
		})
	}
}

// TestSettleAsksOnce: a decision that names a fact it was given is a bug,
// reported as an error, never a loop that reads GitHub forever.
func TestSettleAsksOnce(t *testing.T) {
	t.Parallel()
	fs := known(need{login: "alice"}, fact{perm: "write"})
	h := &Handler{}
	err := h.settle(context.Background(), nil, "acme", "shop", fs, func() (*need, error) { return &need{login: "alice"}, nil })
	if err == nil || !strings.Contains(err.Error(), "asked again") {
		t.Fatalf("settle: %v, want an error saying the fact was asked again", err)
	}
	boom := errors.New("boom")
	if err := h.settle(context.Background(), nil, "acme", "shop", fs, func() (*need, error) { return nil, boom }); !errors.Is(err, boom) {
		t.Fatalf("settle: %v, want the decision's error", err)
	}
}

func TestPlanLabels(t *testing.T) {
	t.Parallel()
	pending := pureThread(nil, config.Config{}, nil).st
	done := pureThread(&outcome.Resolution{Option: "approve"}, config.Config{}, nil).st
	done.Phase = "design"
	cases := []struct {
		name                       string
		st                         *ledger.State
		have                       []string
		add, remove, unpend, after string
	}{
		{name: "pending, unlabelled", st: pending, have: []string{"bug"}, add: LabelPending, after: "bug," + LabelPending},
		{name: "pending, labelled in another case", st: pending, have: []string{"PhaseGate:Pending"}, after: "PhaseGate:Pending"},
		{name: "resolved: the phase moves, pending comes off last", st: done, have: []string{LabelPending, "phase:requirements", "bug"},
			add: "phase:design", remove: "phase:requirements", unpend: LabelPending, after: "bug,phase:design"},
		{name: "resolved, already in line", st: done, have: []string{"Phase:Design"}, after: "Phase:Design"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p := planLabels(tc.have, tc.st)
			got := []string{strings.Join(p.add, ","), strings.Join(p.remove, ","), strings.Join(p.unpend, ","), strings.Join(p.after, ",")}
			want := []string{tc.add, tc.remove, tc.unpend, tc.after}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("plan (add, remove, unpend, after) = %q, want %q", got, want)
				}
			}
		})
	}
}

func TestPlanWork(t *testing.T) {
	t.Parallel()
	issues := []ghclient.Issue{{Number: 9, Comments: 3, Labels: []string{LabelPending}, Title: "nine"}, {Number: 2}}
	recent := []ghclient.Comment{{Issue: 5, Body: "looks good"}, {Issue: 7, Body: "/resolve D-001 approve"}, {Issue: 0, Body: "/decisions"}}
	w := planWork(issues, recent, []int{4, 9})
	// Commands first, then what the last pass left, then the rest by number.
	if got, want := w.order, []int{7, 4, 9, 2, 5}; !equalInts(got, want) {
		t.Fatalf("order %v, want %v", got, want)
	}
	if l := w.listed[9]; !l.pending || l.count != 3 || l.title != "nine" || !w.forced[9] || w.commands[9] {
		t.Fatalf("issue 9 planned as %+v (forced %v, commands %v)", l, w.forced[9], w.commands[9])
	}
	if l := w.listed[5]; l.pending || len(l.recent) != 1 || w.forced[5] || w.commands[5] {
		t.Fatalf("issue 5 planned as %+v", l)
	}
}

func equalInts(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestVerdict(t *testing.T) {
	t.Parallel()
	pending := pureThread(nil, config.Config{}, nil).st.Outcomes
	approved := pureThread(&outcome.Resolution{Option: "approve"}, config.Config{}, nil).st.Outcomes
	cases := []struct {
		name                   string
		carried                int
		outcomes               []*ledger.Outcome
		invalid, frozen, stale string
		state, description     string
	}{
		{name: "nothing carried", state: "success", description: "no Phase Outcome in this change"},
		{name: "pending", carried: 1, outcomes: pending, state: "pending", description: "D-001"},
		{name: "pending again after a push", carried: 1, outcomes: pending, stale: "D-001 (approve on x) is stale", state: "pending", description: "is stale"},
		{name: "approved", carried: 1, outcomes: approved, state: "success"},
		{name: "tampered", carried: 1, outcomes: approved, frozen: "tampering on #1", state: "failure", description: "tampering on #1"},
		{name: "invalid config wins", carried: 1, outcomes: approved, frozen: "tampering", invalid: "bad yaml", state: "error", description: "bad yaml"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			v := verdict(tc.carried, tc.outcomes, config.Config{}, tc.invalid, tc.frozen, tc.stale)
			if v.State != tc.state || !strings.Contains(v.Description, tc.description) {
				t.Fatalf("verdict %+v, want %s saying %q", v, tc.state, tc.description)
			}
		})
	}
}

func TestStaleOf(t *testing.T) {
	t.Parallel()
	cmp := need{base: pureGiven, head: pureHead}
	ahead := func(files ...string) fact {
		f := fact{cmp: ghclient.Comparison{Status: "ahead", Files: map[string]string{}}}
		for _, name := range files {
			f.cmp.Files[name] = "modified"
		}
		return f
	}
	cases := []struct {
		name   string
		option string
		cfg    config.Config
		facts  facts
		need   bool
		stale  string // part of the description; "" when it still covers the head
	}{
		{name: "the comparison is read", option: "approve", facts: facts{}, need: true},
		{name: "a file it covers changed", option: "approve", facts: known(cmp, ahead("docs/req/spec.md", "src/a.go")), stale: "1 file(s) changed since: docs/req/spec.md"},
		{name: "the next phase's outcome is no change to it", option: "approve", facts: known(cmp, ahead("docs/req/design.outcome.yaml")), stale: ""},
		{name: "anything, with invalidate_on_push: all", option: "approve", cfg: config.Config{Decisions: config.Decisions{InvalidateOnPush: config.InvalidateAll}},
			facts: known(cmp, ahead("src/a.go")), stale: "src/a.go"},
		{name: "a rewritten history", option: "approve", facts: known(cmp, fact{cmp: ghclient.Comparison{Status: "diverged"}}), stale: "history was rewritten"},
		{name: "a rejection is final, nothing is read", option: "reject", facts: facts{}, stale: ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			th := pureThread(&outcome.Resolution{Option: tc.option, Head: pureGiven}, tc.cfg, tc.facts)
			o := th.st.Outcomes[0]
			st, n, err := staleOf(tc.cfg, o, o.Decisions[0], pureHead, tc.facts)
			switch {
			case err != nil:
				t.Fatal(err)
			case tc.need:
				if n == nil || *n != cmp {
					t.Fatalf("need %+v, want the comparison", n)
				}
			case n != nil:
				t.Fatalf("needs %+v", *n)
			case tc.stale == "" && st != nil:
				t.Fatalf("stale: %s, want it to cover the head", st.describe())
			case tc.stale != "" && (st == nil || !strings.Contains(st.describe(), tc.stale)):
				t.Fatalf("staleness %+v, want %q", st, tc.stale)
			}
		})
	}
}

func TestAttested(t *testing.T) {
	t.Parallel()
	push := func(actor string) ghclient.Push { return ghclient.Push{Actor: actor, After: pureHead} }
	many := make([]string, outcome.MaxActors+1)
	for i := range many {
		many[i] = "user" + strconv.Itoa(i)
	}
	cases := []struct {
		name   string
		actors []string
		pushes []ghclient.Push
		want   string // the accounts, comma-separated
		why    string
	}{
		{name: "the caller's and the pushers, once each", actors: []string{"agent", ""}, pushes: []ghclient.Push{push("Agent"), push("carol")}, want: "agent,carol"},
		{name: "a push without an account", actors: []string{"agent"}, pushes: []ghclient.Push{push("")}, why: "has no GitHub account"},
		{name: "a login a marker cannot hold", actors: []string{"agent", "not a login"}},
		{name: "more than a marker holds", actors: many, why: "more than an outcome marker records"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, why := attested(tc.actors, tc.pushes)
			if strings.Join(got, ",") != tc.want || !strings.Contains(why, tc.why) {
				t.Fatalf("attested %q (%q), want %q (%q)", got, why, tc.want, tc.why)
			}
		})
	}
}

func TestWiped(t *testing.T) {
	t.Parallel()
	th := pureThread(nil, config.Config{}, nil)
	cases := []struct {
		name   string
		events []ghclient.LabelEvent
		wiped  bool
	}{
		{name: "never labelled"},
		{name: "labelled by someone else", events: []ghclient.LabelEvent{{Actor: "mallory", Label: LabelPending}}},
		{name: "phasegate labelled it pending", events: []ghclient.LabelEvent{{Actor: "github-actions[bot]", Label: LabelPending}}, wiped: true},
		{name: "phasegate labelled its phase", events: []ghclient.LabelEvent{{Actor: "github-actions[bot]", Label: "Phase:Design"}}, wiped: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if err := wiped(th, tc.events); errors.Is(err, ErrWiped) != tc.wiped {
				t.Fatalf("wiped: %v, want wiped %v", err, tc.wiped)
			}
		})
	}
}

func TestCommandsToAsk(t *testing.T) {
	t.Parallel()
	cmd := func(id int64) ledger.CommandComment {
		return ledger.CommandComment{Comment: ledger.Comment{ID: id, Author: "alice", Body: "/resolve D-001 approve"}}
	}
	th := pureThread(nil, config.Config{}, nil)
	th.comments = []ghclient.Comment{{ID: 20, NodeID: "IC_20"}, {ID: 21, NodeID: "IC_21"}, {ID: 22}, {ID: 23, NodeID: "IC_23"}, {ID: 24, NodeID: "IC_24"}}
	th.st.Unanswered = []ledger.CommandComment{cmd(20), cmd(21), cmd(22), cmd(23), cmd(24)}
	th.edited = map[int64]bool{21: true}
	cases := []struct {
		before int64
		want   string // the node ids asked about
	}{
		{before: 0, want: "IC_20,IC_23,IC_24"}, // a reconcile pass: every command not known to be edited, with a node id
		{before: 24, want: "IC_20,IC_23"},      // a live comment: the commands before it
		{before: 20, want: ""},
	}
	for _, tc := range cases {
		var got []string
		for _, c := range commandsToAsk(th, tc.before) {
			got = append(got, c.NodeID)
		}
		if strings.Join(got, ",") != tc.want {
			t.Errorf("before %d: asked about %q, want %q", tc.before, got, tc.want)
		}
	}
}

func TestEditedBy(t *testing.T) {
	t.Parallel()
	answer := map[string]bool{"IC_1": true, "IC_2": false}
	cases := []struct {
		node string
		rest bool
		want bool
	}{
		{node: "IC_1", want: true},
		{node: "IC_2", rest: true, want: false}, // GraphQL knows it was never edited: a reaction moved updated_at
		{node: "IC_3", rest: true, want: true},  // unknown to GraphQL: the REST timestamps decide
		{node: "IC_3", want: false},
	}
	for _, tc := range cases {
		if got := editedBy(answer, ghclient.Comment{NodeID: tc.node}, tc.rest); got != tc.want {
			t.Errorf("editedBy(%s, rest %v) = %v, want %v", tc.node, tc.rest, got, tc.want)
		}
	}
}
