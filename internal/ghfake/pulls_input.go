package ghfake

// SetPullRequestBase retargets a pull request, as its author editing its
// base on GitHub does: base is the new base branch, sha its head.
func (s *Server) SetPullRequestBase(owner, name string, number int, base, sha string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.repoLocked(owner, name).issues[number]; is != nil && is.pr != nil {
		is.pr.BaseRef, is.pr.BaseSHA = base, sha
		is.updatedAt = s.now().UTC()
	}
}

// SetPullRequestListed sets whether GET /repos/{o}/{r}/commits/{sha}/pulls
// lists a pull request (PullRequest.Unlisted): GitHub's listing lags behind
// a pull request just opened.
func (s *Server) SetPullRequestListed(owner, name string, number int, listed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if is := s.repoLocked(owner, name).issues[number]; is != nil && is.pr != nil {
		is.pr.Unlisted = !listed
	}
}
