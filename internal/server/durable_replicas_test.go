//go:build integration

package server

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/phasegate/phasegate/internal/decide"
	"github.com/phasegate/phasegate/internal/ghfake"
)

// realRecoveryEnv makes TestReplicasDurableBurst wait for asynq's own
// recovery of a dead replica's jobs (60 to 120 s) instead of expiring
// their leases itself.
const realRecoveryEnv = "PHASEGATE_TEST_REAL_RECOVERY"

// jobRun is one run of a job, as the replicas logged it; a run without an
// end (its replica died) ends at the kill.
type jobRun struct {
	key, replica string
	start, end   time.Time
	ended, ok    bool
}

// readJobLog reads the runs of the job log.
func readJobLog(t *testing.T, path string) []*jobRun {
	t.Helper()
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	open := map[string]*jobRun{} // key + replica → run
	var runs []*jobRun
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) != 5 {
			continue // a line being written
		}
		ns, _ := strconv.ParseInt(fs[3], 10, 64)
		at, id := time.Unix(0, ns), fs[1]+" "+fs[2]
		switch fs[0] {
		case "start":
			r := &jobRun{key: fs[1], replica: fs[2], start: at}
			open[id] = r
			runs = append(runs, r)
		case "end":
			if r := open[id]; r != nil {
				r.end, r.ended, r.ok = at, true, fs[4] == "ok"
				delete(open, id)
			}
		}
	}
	return runs
}

// burstWorld adds repos repositories of the installation with prs pull
// requests each, and returns the jobs' keys and their commits.
// burstJob is the repository, pull request and head of a job of the burst.
type burstJob struct {
	repo, sha string
	pr        int
}

func burstWorld(f *ghfake.Server, repos, prs int) (keys []string, commits map[string]burstJob) {
	commits = map[string]burstJob{}
	for r := range repos {
		name := fmt.Sprintf("r%02d", r)
		f.AddRepo(owner, name, "main")
		f.SetTreeFiles(owner, name, shaOf(9999), map[string]string{"README.md": "# " + name + "\n"})
		for p := range prs {
			sha := shaOf(r*100 + p)
			// The App checks each head: its tree, the pull request's files.
			f.SetTreeFiles(owner, name, sha, map[string]string{"README.md": "# " + name + "\n", "notes.txt": sha})
			f.AddPullRequest(owner, name, ghfake.PullRequest{Number: p + 1, HeadSHA: sha, BaseSHA: shaOf(9999), Author: "agent-bot"})
			k := kindCheck + ":" + owner + "/" + name + ":" + sha
			keys = append(keys, k)
			commits[k] = burstJob{repo: name, sha: sha, pr: p + 1}
		}
	}
	return keys, commits
}

// TestReplicasDurableBurst: two serve replicas on one Redis take a burst
// of pull_request deliveries (100 jobs over 20 repositories, plus 20
// re-deliveries for commits already queued). One replica is killed
// (SIGKILL) in the middle of a job; a replacement starts, as an
// orchestrator would start one. Every job completes, none was ever run by
// two replicas at once, and no more than the installation's limit ran at
// once.
//
// asynq recovers a dead replica's jobs 60 to 120 s after it died; to keep
// the test short, it expires the dead jobs' leases in Redis itself (asynq's
// clock moved on), unless PHASEGATE_TEST_REAL_RECOVERY is set.
func TestReplicasDurableBurst(t *testing.T) {
	t.Parallel() // real time (processes, Redis, leases) overlaps the other tests' CPU
	began := time.Now()
	rdb, f, env := replicaWorld(t, "0") // no reconcile loop: only the queue does the work
	keys, commits := burstWorld(f, 20, 5)
	logPath := filepath.Join(t.TempDir(), "jobs.log")
	env.extra = []string{jobLogEnv + "=" + logPath, "PHASEGATE_INSTALLATION_CONCURRENCY=4"}
	a, b := env.start(t, "replica-a"), env.start(t, "replica-b")
	byName := map[string]*replica{a.name: a, b.name: b}

	// The job that will be cut: the 50th's status write is held.
	target := keys[50]
	hold := f.HoldNext(http.MethodPost, "/statuses/"+commits[target].sha)
	answers := burst(t, []*replica{a, b}, keys, commits)
	var held ghfake.Call
	select {
	case held = <-hold.Arrived():
	case <-time.After(guard):
		t.Fatal("no replica reached the held job")
	}
	victim := byName[strings.TrimPrefix(held.UserAgent, "phasegate/")]
	if victim == nil {
		t.Fatalf("held a request from %q", held.UserAgent)
	}
	victim.kill()
	killed := time.Now()
	<-hold.Gone()
	orphans := openRuns(readJobLog(t, logPath), victim.name)
	if len(orphans) == 0 {
		t.Fatal("the killed replica was running no job")
	}
	expired := 0
	if os.Getenv(realRecoveryEnv) == "" {
		expired = expireDeadLeases(t, rdb.Client(t), killed)
	}
	c := env.start(t, "replica-c")
	survivors := []*replica{a, b, c}
	wait := guard
	if os.Getenv(realRecoveryEnv) != "" {
		wait = 4 * time.Minute
	}
	var runs []*jobRun
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		runs = readJobLog(t, logPath)
		m := missing(keys, runs)
		if len(m) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs never completed: %v (the killed replica was running %v)", m, orphans)
		}
	}
	recovered := time.Since(killed)
	for _, r := range survivors {
		if r != victim {
			untilWithin(t, guard, r.name+" idle", func() bool { return r.metric("phasegate_queue_tasks") == 0 })
		}
	}

	checkRuns(t, runs, victim.name, killed, 4)
	for _, k := range keys {
		st, ok := f.LatestStatus(owner, commits[k].repo, commits[k].sha, decide.ContextDecisions)
		if !ok || st.State != "success" {
			t.Errorf("%s: %s is %+v (set: %v)", k, decide.ContextDecisions, st, ok)
		}
	}
	// A run the dead replica finished a moment before it died, before the
	// queue recorded it done, runs again too: at least once, never twice
	// at once.
	again := 0
	seen := map[string]bool{}
	for _, r := range runs {
		if seen[r.key] {
			again++
		}
		seen[r.key] = true
	}
	t.Logf("burst: %d deliveries (%d jobs over 20 repositories), answers %v; %d runs in all (%d jobs run again); %d runs cut by the kill of %s, "+
		"%d of its tasks recovered; every job done %v after the kill; test wall time %v",
		len(keys)+20, len(keys), answers, len(runs), again, len(orphans), victim.name, expired, recovered.Round(time.Millisecond), time.Since(began).Round(time.Millisecond))
}

// burst sends a pull_request delivery for every key, spread over the
// replicas, eight at a time, then a second delivery (another id) for the
// first twenty; it returns the count of each answer.
func burst(t *testing.T, rs []*replica, keys []string, commits map[string]burstJob) map[string]int {
	t.Helper()
	sends := append(append([]string(nil), keys...), keys[:20]...)
	var mu sync.Mutex
	answers := map[string]int{}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	for i, k := range sends {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			j := commits[k]
			code, body := rs[i%len(rs)].send("pull_request", fmt.Sprintf("burst-%d", i), prEvent(installation, owner, j.repo, j.pr, j.sha))
			mu.Lock()
			defer mu.Unlock()
			label := strconv.Itoa(code) + " " + body
			if strings.HasPrefix(body, "accepted: coalesced") {
				label = strconv.Itoa(code) + " coalesced"
			}
			answers[label]++
			if code != http.StatusAccepted {
				t.Errorf("delivery %d (%s): %d %s", i, k, code, body)
			}
		}()
	}
	wg.Wait()
	return answers
}

// openRuns are the keys of the runs of replica that never ended.
func openRuns(runs []*jobRun, replica string) []string {
	var out []string
	for _, r := range runs {
		if r.replica == replica && !r.ended {
			out = append(out, r.key)
		}
	}
	return out
}

// expireDeadLeases finds the tasks of the replica killed at killed — the
// leases nobody extended since (asynq's heartbeats extend every live
// replica's leases every 5 s, to the second, to 30 s ahead) — and moves
// their leases back by two minutes, as if asynq's clock had moved on: the
// next recoverer to look (the replacement replica's, at its start) puts
// them back. It returns how many it moved. The dead replica's tasks are
// all of them: those it was running, and those it had taken but was
// deferring (its installation was busy).
func expireDeadLeases(t *testing.T, rc *redis.Client, killed time.Time) int {
	t.Helper()
	const leaseKey = "asynq:{phasegate}:lease"
	time.Sleep(time.Until(killed.Add(7 * time.Second))) // a live replica's heartbeat came after killed's second
	ctx := context.Background()
	dead, err := rc.ZRangeArgs(ctx, redis.ZRangeArgs{Key: leaseKey, ByScore: true, Start: "-inf", Stop: strconv.FormatInt(killed.Unix()+30, 10)}).Result()
	if err != nil {
		t.Fatal(err)
	}
	past := float64(time.Now().Add(-2 * time.Minute).Unix())
	for _, k := range dead {
		if err := rc.ZAddXX(ctx, leaseKey, redis.Z{Score: past, Member: k}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	return len(dead)
}

// missing are the keys without a run that ended well.
func missing(keys []string, runs []*jobRun) []string {
	done := completed(runs)
	var out []string
	for _, k := range keys {
		if !done[k] {
			out = append(out, k)
		}
	}
	return out
}

// completed are the keys with a run that ended well.
func completed(runs []*jobRun) map[string]bool {
	out := map[string]bool{}
	for _, r := range runs {
		if r.ended && r.ok {
			out[r.key] = true
		}
	}
	return out
}

// checkRuns checks that no key ever had two runs at once, and that at most
// limit runs (all of one installation) overlapped; the dead replica's runs
// end at its kill.
func checkRuns(t *testing.T, runs []*jobRun, dead string, killed time.Time, limit int) {
	t.Helper()
	type edge struct {
		at    time.Time
		delta int
		key   string
	}
	var edges []edge
	for _, r := range runs {
		end := r.end
		if !r.ended {
			if r.replica != dead {
				t.Errorf("a run of %s on %s never ended", r.key, r.replica)
				continue
			}
			end = killed
		}
		edges = append(edges, edge{r.start, +1, r.key}, edge{end, -1, r.key})
	}
	// Ends before starts at the same instant: back-to-back runs do not overlap.
	sort.Slice(edges, func(i, j int) bool {
		if !edges[i].at.Equal(edges[j].at) {
			return edges[i].at.Before(edges[j].at)
		}
		return edges[i].delta < edges[j].delta
	})
	perKey, all, most := map[string]int{}, 0, 0
	for _, e := range edges {
		perKey[e.key] += e.delta
		all += e.delta
		most = max(most, all)
		if perKey[e.key] > 1 {
			t.Errorf("%s ran twice at once (at %v)", e.key, e.at.Format(time.RFC3339Nano))
		}
	}
	if most > limit {
		t.Errorf("%d jobs of one installation ran at once, want at most %d", most, limit)
	}
}

// untilWithin polls cond until it holds, within d.
func untilWithin(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("never: %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
