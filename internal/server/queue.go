package server

import (
	"container/list"
	"sync"
	"time"
)

// queue is the bounded FIFO between the webhook handler and the workers.
//
// It coalesces nothing: every verified delivery that is not a duplicate
// (its ID, or an issue_comment body, seen before) is a job of its own. Two
// jobs of one commit (a push's, its pull request's) wait for each other on
// the per-commit lock (Server.lockCommit), under which each reads what it
// checks, so the last to finish checked the change as it then was.
//
// A delivery takes a slot (reserve) before its ID is recorded as seen, and
// only then is pushed, so a delivery refused for a full queue is never
// recorded: GitHub's redelivery of it is not mistaken for a replay. After
// close no slot is given; the workers drain what was pushed.
type queue struct {
	ch chan *job // capacity = size: a push with a slot never blocks

	mu       sync.Mutex
	size     int
	taken    int // slots reserved or holding a job not yet popped
	closed   bool
	pushers  sync.WaitGroup // reservations not yet pushed or released
	waiting  *list.List     // jobs pushed and not yet popped, oldest first
	inflight int            // jobs popped and not yet done
}

func newQueue(size int) *queue {
	return &queue{ch: make(chan *job, size), size: size, waiting: list.New()}
}

// Answers of reserve.
const (
	slotReserved = iota
	slotFull
	slotClosed
)

func (q *queue) reserve() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case q.closed:
		return slotClosed
	case q.taken >= q.size:
		return slotFull
	}
	q.taken++
	q.pushers.Add(1)
	return slotReserved
}

// release gives back a reserved slot that will not be pushed.
func (q *queue) release() {
	q.mu.Lock()
	q.taken--
	q.mu.Unlock()
	q.pushers.Done()
}

// push enqueues a job into a reserved slot.
func (q *queue) push(j *job, now time.Time) {
	q.mu.Lock()
	j.Enqueued = now
	j.elem = q.waiting.PushBack(j)
	q.mu.Unlock()
	q.ch <- j
	q.pushers.Done()
}

// popped records that a worker took j from the channel.
func (q *queue) popped(j *job) {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.waiting.Remove(j.elem)
	j.elem = nil
	q.taken--
	q.inflight++
}

func (q *queue) done() {
	q.mu.Lock()
	q.inflight--
	q.mu.Unlock()
}

// close stops giving slots, waits for the reservations in progress, and
// closes the channel so that the workers end once it is drained.
func (q *queue) close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.mu.Unlock()
	q.pushers.Wait()
	close(q.ch)
}

// stats returns the number of jobs waiting, being handled, and the age of
// the oldest waiting one.
func (q *queue) stats(now time.Time) (waiting, inflight int, oldest time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if f := q.waiting.Front(); f != nil {
		oldest = now.Sub(f.Value.(*job).Enqueued)
	}
	return q.waiting.Len(), q.inflight, oldest
}
