package server

// What the differential suite (differential_test.go, package server_test:
// it runs `phasegate gate` through internal/cli, which imports this
// package) needs of a Server's insides.

// SetJobDoneHook calls f after each job with its kind and outcome; set it
// before Serve.
func SetJobDoneHook(s *Server, f func(kind, outcome string)) {
	s.onJobDone = func(j *job, outcome string) { f(j.Kind, outcome) }
}
