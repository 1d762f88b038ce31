package server

import (
	"context"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	"github.com/phasegate/phasegate/internal/web"
)

// Which installation of the App holds a repository, for the pages: learnt
// from every job (its delivery names both) and every reconcile pass (its
// listings), and on a miss from GitHub's listings of the App's
// installations and their repositories, at most once per
// installRefreshEvery. A repository the App is not installed on is
// web.ErrNotFound, exactly like one that does not exist.

// installRefreshEvery bounds how often a miss lists the installations.
const installRefreshEvery = time.Minute

type installIndex struct {
	mu    sync.Mutex
	repos map[string]int64 // "owner/repo" lower-cased → installation
	// refresh serialises the listings; refreshed is when one last ran.
	refresh   sync.Mutex
	refreshed time.Time
}

func (x *installIndex) learn(owner, repo string, installation int64) {
	if owner == "" || repo == "" || installation <= 0 {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.repos[strings.ToLower(owner+"/"+repo)] = installation
}

// drop forgets owner/repo (removed from its installation), or every
// repository of installation when repo is "".
func (x *installIndex) drop(owner, repo string, installation int64) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if repo != "" {
		delete(x.repos, strings.ToLower(owner+"/"+repo))
		return
	}
	maps.DeleteFunc(x.repos, func(_ string, id int64) bool { return id == installation })
}

func (x *installIndex) lookup(owner, repo string) (int64, bool) {
	x.mu.Lock()
	defer x.mu.Unlock()
	id, ok := x.repos[strings.ToLower(owner+"/"+repo)]
	return id, ok
}

// installationOf is the installation holding owner/repo; web.ErrNotFound
// when the App is not installed there.
func (s *Server) installationOf(ctx context.Context, owner, repo string) (int64, error) {
	if id, ok := s.installs.lookup(owner, repo); ok {
		return id, nil
	}
	x := s.installs
	x.refresh.Lock()
	defer x.refresh.Unlock()
	if id, ok := x.lookup(owner, repo); ok {
		return id, nil
	}
	if now := s.cfg.Now(); x.refreshed.IsZero() || now.Sub(x.refreshed) >= installRefreshEvery {
		x.refreshed = now
		if err := s.listInstalls(ctx); err != nil {
			return 0, err
		}
	}
	if id, ok := x.lookup(owner, repo); ok {
		return id, nil
	}
	return 0, web.ErrNotFound
}

func (s *Server) listInstalls(ctx context.Context) error {
	installs, err := s.appGH.ListInstallations(ctx)
	if err != nil {
		return fmt.Errorf("listing the App's installations: %w", err)
	}
	for _, in := range installs {
		if in.Suspended {
			continue
		}
		gh, err := s.client(in.ID)
		if err != nil {
			return err
		}
		repos, err := gh.InstallationRepos(ctx)
		if err != nil {
			return fmt.Errorf("listing the repositories of installation %d: %w", in.ID, err)
		}
		for _, r := range repos {
			s.installs.learn(r.Owner, r.Name, in.ID)
		}
	}
	return nil
}
