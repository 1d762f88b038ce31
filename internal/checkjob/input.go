package checkjob

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/phasegate/phasegate/internal/check"
	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/report"
)

// Input is what the App's verdict on a commit is a function of, besides
// phasegate's rules: the commit, what it is compared with, the pull
// request it is checked as, the gate's configuration and phasegate's
// version. phasegate/contracts records its digest (decide.Record), and a
// result stands only for the input it records: the App checks again
// whenever the current input differs (a pull request's base edited, a
// pull request opened for a commit checked as a push, the configuration
// changed on the default branch, another version).
type Input struct {
	// Head is the commit checked; Tree its tree (named by Head, so not in
	// the digest: the server compares inputs without reading the commit).
	Head, Tree string
	// BaseRef and Base are what the change is measured from: the pull
	// request's base branch and commit, or the pushed branch and its
	// previous head ("": none, a new branch).
	BaseRef, Base string
	// PR is the pull request checked (0: a push), Fork the repository of
	// its head when it is a fork.
	PR   int
	Fork string
	// ConfigBlob is the git blob id of the configuration on the default
	// branch ("": none, the defaults).
	ConfigBlob string
	Version    string
}

// InputOf is the input of req with the configuration configBlob (the tree
// is the job's to read).
func InputOf(req Request, configBlob string) Input {
	return Input{Head: strings.ToLower(req.SHA), BaseRef: req.BaseRef, Base: strings.ToLower(req.Base),
		Fork: strings.ToLower(req.Fork), ConfigBlob: configBlob, Version: req.Version, PR: req.PRNumber()}
}

// Digest is the input's canonical digest: SHA-256 of its fields but the
// tree, in a fixed order, as JSON (no field can run into the next).
func (in Input) Digest() string {
	b, err := json.Marshal([]string{"phasegate input v1", in.Head, in.BaseRef, in.Base, strconv.Itoa(in.PR), in.Fork, in.ConfigBlob, in.Version})
	if err != nil { // strings only: never
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// InputRow is one line of an input as people read it; Code marks a value
// that is an identifier (a commit, a branch), shown as code.
type InputRow struct {
	Name, Value string
	Code        bool
}

// Rows is the input as people read it: phasegate/contracts' summary and
// the commit's page.
func (in Input) Rows() []InputRow {
	val := func(name, v, none string) InputRow {
		if v == "" {
			return InputRow{Name: name, Value: none}
		}
		return InputRow{Name: name, Value: v, Code: true}
	}
	base := val("base", in.Base, "none (a new branch)")
	if in.Base != "" && in.BaseRef != "" {
		base.Value = in.BaseRef + "@" + in.Base
	}
	pr := InputRow{Name: "pull request", Value: "none (a push)"}
	if in.PR > 0 {
		pr.Value = "#" + strconv.Itoa(in.PR)
	}
	return []InputRow{val("head", in.Head, "unknown"), val("tree", in.Tree, "unknown"), base, pr, val("fork", in.Fork, "no"),
		val("configuration", in.ConfigBlob, "defaults (no configuration file)"), val("phasegate", in.Version, "unknown"),
		val("digest", in.Digest(), "")}
}

// Markdown is the input as phasegate/contracts' summary shows it: every
// value escaped (a branch name is the pusher's to choose).
func (in Input) Markdown() string {
	var b strings.Builder
	b.WriteString("### Checked input\n\nThis result stands for this input only: phasegate checks again when any of it changes.\n\n")
	b.WriteString("| | |\n| --- | --- |\n")
	for _, r := range in.Rows() {
		v := r.Value
		if r.Code {
			v = "`" + codeText(v) + "`"
		}
		b.WriteString("| " + r.Name + " | " + v + " |\n")
	}
	return b.String()
}

// codeText keeps s inside a code span of a table cell: what could end the
// span or the cell becomes '?', control and invisible characters visible
// escapes (report.Terminal).
func codeText(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '`' || r == '|' {
			return '?'
		}
		return r
	}, report.Terminal(s))
}

// ConfigReader reads a file of the default branch (ghclient.Client).
type ConfigReader interface {
	FileContent(ctx context.Context, owner, repo, path, ref string) ([]byte, bool, error)
}

// ConfigBlob is the git blob id of the configuration file path at ref of
// owner/repo ("": the default branch), "" when there is none: the id git
// gives its content (SHA-1, as GitHub names blobs).
func ConfigBlob(ctx context.Context, gh ConfigReader, owner, repo, path, ref string) (string, error) {
	data, found, err := gh.FileContent(ctx, owner, repo, path, ref)
	if err != nil {
		return "", fmt.Errorf("reading %s from %s: %w", path, cmp.Or(ref, "the default branch"), err)
	}
	if !found {
		return "", nil
	}
	return check.BlobID(data), nil
}

// input is the input of req checked with the configuration whose blob id
// the check read (the same read, so the record names exactly what was
// checked), and the commit's tree, shown but not compared (the head names
// it): a commit GitHub does not give leaves it "unknown".
func (j *Job) input(ctx context.Context, gh GitHub, req Request, configBlob string) *Input {
	in := InputOf(req, configBlob)
	if info, err := gh.Commit(ctx, req.Owner, req.Repo, req.SHA); err == nil {
		in.Tree = strings.ToLower(info.Tree)
	}
	return &in
}

// cutNote replaces the end of a summary cut to make room for the input.
const cutNote = "\n\n*(the summary is cut here to fit the check run)*\n"

// record sets what phasegate/contracts records of the input (nil: none
// could be read, so none is recorded and the result matches no input):
// its digest and pull request in the external_id, and its section at the
// end of the summary, which is cut to keep both within GitHub's limit.
func (in *Input) record(c *decide.Contracts) {
	if in == nil {
		return
	}
	c.Input, c.PR = in.Digest(), in.PR
	sec := "\n\n" + in.Markdown()
	if room := ghclient.MaxCheckOutputBytes - len(sec); len(c.Summary) > room {
		c.Summary = strings.ToValidUTF8(c.Summary[:room-len(cutNote)], "") + cutNote
	}
	c.Summary += sec
}
