package ghfake_test

import (
	"context"
	"fmt"
	"time"

	"github.com/phasegate/phasegate/internal/ghclient"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// A test drives the real client against the fake: configure identities and
// repository state, inject faults, then assert on the state and the call log.
func Example() {
	f := ghfake.New()
	defer f.Close()
	clock := ghfake.NewManualClock(time.Date(2024, 5, 1, 12, 0, 0, 0, time.UTC))
	f.SetClock(clock.Now)
	f.AddToken("tok", "github-actions[bot]")
	f.AddRepo("acme", "widgets", "main")
	issue := f.AddIssue("acme", "widgets", "Feature 42", "", "alice")
	f.SetFaults(ghfake.Faults{Seed: 1, ServerErrorRate: 0.3})

	// As GITHUB_API_URL; the shared clock makes backoff and Retry-After free.
	c, err := ghclient.New(ghclient.Options{BaseURL: f.URL(), Token: "tok", Now: clock.Now, Sleep: clock.Sleep})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for i := 1; i <= 3; i++ {
		if _, err := c.CreateIssueComment(ctx, "acme", "widgets", issue, fmt.Sprintf("outcome %d", i)); err != nil {
			fmt.Println(err)
			return
		}
	}
	if err := c.AddLabels(ctx, "acme", "widgets", issue, []string{"phasegate:pending"}); err != nil {
		fmt.Println(err)
		return
	}
	for _, cm := range f.Comments("acme", "widgets", issue) {
		fmt.Println(cm.User, cm.UserType, cm.Body)
	}
	fmt.Println(f.Labels("acme", "widgets", issue))
	// Output:
	// github-actions[bot] Bot outcome 1
	// github-actions[bot] Bot outcome 2
	// github-actions[bot] Bot outcome 3
	// [phasegate:pending]
}
