package decide

import (
	"context"
	"fmt"
	"strings"

	"github.com/phasegate/phasegate/internal/artifact"
	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/outcome"
)

// The I/O half of the ledger's trust model (docs/security.md): what the
// pure fold cannot read by itself.

// maxSourceReads bounds the outcome files read for one thread.
const maxSourceReads = 20

// readSources reads, for every outcome comment phasegate's identity posted
// on the thread, the file its marker names at the commit it names, and
// records which outcome that file holds. Without a signing key this is how
// the fold tells phasegate's outcome comments from ones another workflow
// posting as the same identity invented. Each file is read once per
// process: a commit's content never changes.
func (h *Handler) readSources(ctx context.Context, gh GitHub, t *thread) error {
	t.sources = map[string]string{}
	identity := t.cfg.IdentityOrDefault()
	reads := 0
	for _, c := range t.comments {
		if !strings.EqualFold(c.User, identity) {
			continue
		}
		marks := outcome.ParseMarkers(c.Body)
		if len(marks) == 0 || marks[0].Kind != outcome.KindOutcome {
			continue
		}
		mk := marks[0]
		local := mk.Commit + ":" + mk.Source
		if _, done := t.sources[local]; done {
			continue
		}
		cacheKey := strings.ToLower(t.owner+"/"+t.repo) + "@" + local
		if id, ok := h.sources.Load(cacheKey); ok {
			t.sources[local] = id.(string)
			continue
		}
		if reads == maxSourceReads {
			t.sources[local] = "" // not read: the outcome does not count
			continue
		}
		reads++
		// Through the handler's read cache: the commit's sync reads the
		// same file at the same commit for the outcomes it carries.
		data, found, err := h.content(ctx, gh, t.owner, t.repo, mk.Source, mk.Commit)
		if err != nil {
			if ghclient.StatusCode(err) == 422 {
				found = false // no such commit
			} else {
				return fmt.Errorf("reading %s at %s for the outcome on %s/%s#%d: %w", mk.Source, mk.Commit, t.owner, t.repo, t.issue, err)
			}
		}
		id := ""
		if found {
			id, _, _ = outcomeOf(mk.Source, data)
		}
		t.sources[local] = id
		h.sources.Store(cacheKey, id)
	}
	return nil
}

// outcomeOf decodes an outcome file: its ID, the outcome and the decoded
// value; id is "" when the file is not a valid Phase Outcome.
func outcomeOf(name string, data []byte) (id string, o *outcome.Outcome, value any) {
	doc := artifact.Decode(name, artifact.KindByID("outcome.phase-outcome"), data, artifact.DefaultLimits)
	if !doc.Decoded {
		return "", nil, nil
	}
	o, err := outcome.Parse(doc.Value)
	if err != nil {
		return "", nil, nil
	}
	canonical, err := outcome.Canonical(doc.Value)
	if err != nil {
		return "", nil, nil
	}
	return outcome.ID(canonical), o, doc.Value
}
