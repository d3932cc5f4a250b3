package server

import (
	"context"
	"errors"
	"time"
)

// JobStore keeps the state of the operations that run in the background (Async), so that
// every instance sharing it answers their polls. Like the other stores, it is given keys
// already scoped: scope is a hash of the principal the job belongs to, and a job is named by
// its scope and id together, so that no caller reaches another's. It is an interface of its
// own, apart from IdempotencyStore, so that stores written before it keep compiling; the
// MemoryStore and redisstore.Store implement all three, and storetest.RunJobs is its contract.
type JobStore interface {
	// PutJob stores job under scope and id, kept for ttl, replacing a running job (its end
	// replaces its running state). A job that has ended (succeeded or failed) is final: a put
	// over it stores nothing and returns an error that is ErrJobEnded, the check and the write
	// one atomic step, so that of two ends put at once (the handler's, and the failure a poll
	// past the job's deadline declares) exactly one is kept and every reader sees that one. A
	// new id is counted against the scope's quota of jobs: a store or scope that holds as many
	// live jobs as it may refuses it with an error that is ErrStoreFull, storing nothing.
	// Replacing a live job never needs room.
	PutJob(ctx context.Context, scope, id string, job Job, ttl time.Duration) error
	// GetJob returns the job under scope and id; ok is false when there is none (never put,
	// another scope's, or expired). The job returned is the caller's to keep.
	GetJob(ctx context.Context, scope, id string) (job Job, ok bool, err error)
}

// ErrJobEnded: a JobStore refused to replace a job that has ended. A job's end is final: once
// a poll has read it succeeded or failed, it reads so until it expires.
var ErrJobEnded = errors.New("server: the job has ended, and its end is final")

// JobState is where a background operation is: running, then succeeded or failed.
type JobState string

// The states of a Job, as the status resource spells them.
const (
	JobRunning   JobState = "running"
	JobSucceeded JobState = "succeeded"
	JobFailed    JobState = "failed"
)

// Job is a background operation's state.
type Job struct {
	Operation string   // the operation id
	State     JobState // running, succeeded or failed
	// Status and Body are the answer a synchronous call would have had, once the job ended:
	// the result (succeeded) or the canonical envelope {"error":{...}} (failed).
	Status int
	Body   []byte
	// Started is when it was accepted; Deadline is when a job still running is taken for
	// lost (its handler overran AsyncOptions.Timeout, or its instance stopped): the first poll
	// past it ends the job in the store, failed with an outcome unknown (see AsyncOptions).
	Started, Deadline time.Time
}
