package ledger

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkFold10k folds a thread of 10,000 comments: 50 outcomes posted by
// phasegate, a resolution for each of their decisions, forged copies, and
// thousands of ordinary comments and commands by people.
func BenchmarkFold10k(b *testing.B) {
	out, id := posted(b, seed, nil)
	res1 := resolution(b, id, "D-001", "approve", "alice", 1, nil)
	res2 := resolution(b, id, "D-002", "capture", "alice", 2, nil)
	var cs []Comment
	for i := 0; len(cs) < 10000; i++ {
		at := t0.Add(time.Duration(len(cs)) * time.Second)
		switch {
		case i%200 == 0:
			cs = append(cs, Comment{ID: int64(len(cs) + 1), Author: bot, Body: out, CreatedAt: at})
		case i%200 == 1:
			cs = append(cs, Comment{ID: int64(len(cs) + 1), Author: bot, Body: res1, CreatedAt: at})
		case i%200 == 2:
			cs = append(cs, Comment{ID: int64(len(cs) + 1), Author: bot, Body: res2, CreatedAt: at})
		case i%200 == 3:
			cs = append(cs, Comment{ID: int64(len(cs) + 1), Author: "mallory", Body: out, CreatedAt: at})
		case i%10 == 0:
			cs = append(cs, Comment{ID: int64(len(cs) + 1), Author: "alice", Body: "/resolve D-001 approve\nlooks right", CreatedAt: at})
		default:
			cs = append(cs, Comment{ID: int64(len(cs) + 1), Author: "bob", Body: fmt.Sprintf("Comment %d: I reviewed the PREQ and have a question about section %d.", i, i%7), CreatedAt: at})
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		st := Fold(cs, Options{Identity: bot})
		if len(st.Outcomes) != 1 {
			b.Fatalf("outcomes = %d", len(st.Outcomes))
		}
	}
}
