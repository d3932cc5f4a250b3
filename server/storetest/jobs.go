package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/remedy-go/remedy/server"
)

// RunJobs runs the suite of server.JobStore, the store of background operations (server.Async).
// newStore returns a fresh, empty store whose scopes hold at most scopeJobs live jobs (0: the
// store's default), and a function that moves its clock forward, as Run's does. It is a suite
// of its own, beside Run, so that stores written before jobs existed keep passing Run.
func RunJobs(t *testing.T, newStore func(t *testing.T, scopeJobs int) (server.JobStore, func(d time.Duration))) {
	for _, tc := range []struct {
		name  string
		quota int
		test  func(t *testing.T, s server.JobStore, advance func(time.Duration))
	}{
		{"RoundTrip", 0, jobRoundTrip},
		{"Unknown", 0, jobUnknown},
		{"Ended", 0, jobEnded},
		{"EndIsFinal", 0, jobEndIsFinal},
		{"ConcurrentEnds", 0, jobConcurrentEnds},
		{"Expired", 0, jobExpired},
		{"Copied", 0, jobCopied},
		{"ScopesApart", 0, jobScopesApart},
		{"CancelledContext", 0, jobCancelledContext},
		{"Quota/PerScope", quota, jobQuotaPerScope},
		{"Quota/EndNeedsNoRoom", quota, jobEndNeedsNoRoom},
		{"Quota/FreedByExpiry", quota, jobQuotaFreedByExpiry},
		{"Quota/ConcurrentPuts", quota, jobQuotaConcurrent},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, advance := newStore(t, tc.quota)
			mustNotNil(t, s, "newStore returned no store")
			mustNotNil(t, advance, "newStore returned no clock")
			tc.test(t, s, advance)
		})
	}
}

// sampleJob is a running job with times that do not fall on a second.
func sampleJob() server.Job {
	started := time.Date(2026, 11, 25, 3, 4, 5, 6_000_000, time.UTC)
	return server.Job{Operation: "export_invoices", State: server.JobRunning, Started: started, Deadline: started.Add(time.Hour)}
}

// sameJob requires got to be want, times compared as instants.
func sameJob(t *testing.T, want, got server.Job, msg string) {
	t.Helper()
	checkEqual(t, want.Operation, got.Operation, msg+": operation")
	checkEqual(t, want.State, got.State, msg+": state")
	checkEqual(t, want.Status, got.Status, msg+": status")
	checkTrue(t, bytes.Equal(want.Body, got.Body), msg+": body %q, want %q", got.Body, want.Body)
	checkTrue(t, want.Started.Equal(got.Started), msg+": started %v, want %v", got.Started, want.Started)
	checkTrue(t, want.Deadline.Equal(got.Deadline), msg+": deadline %v, want %v", got.Deadline, want.Deadline)
}

func getJob(t *testing.T, s server.JobStore, sc, id string) (server.Job, bool) {
	t.Helper()
	job, ok, err := s.GetJob(context.Background(), sc, id)
	mustNoError(t, err, "GetJob(%q)", id)
	return job, ok
}

func jobRoundTrip(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	want := sampleJob()
	mustNoError(t, s.PutJob(context.Background(), scope, "j1", want, Long), "PutJob")
	got, ok := getJob(t, s, scope, "j1")
	mustTrue(t, ok, "the job just put is not found")
	sameJob(t, want, got, "running job")
}

func jobUnknown(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	_, ok := getJob(t, s, scope, "never")
	checkFalse(t, ok, "a job never put is found")
}

// jobEnded: the end replaces the running state, body (binary) and status included.
func jobEnded(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	ctx := context.Background()
	job := sampleJob()
	mustNoError(t, s.PutJob(ctx, scope, "j1", job, Long), "PutJob running")
	job.State, job.Status, job.Body = server.JobSucceeded, 201, append([]byte(`{"url":"x"}`), binary...)
	mustNoError(t, s.PutJob(ctx, scope, "j1", job, Long), "PutJob succeeded")
	got, ok := getJob(t, s, scope, "j1")
	mustTrue(t, ok, "the ended job is not found")
	sameJob(t, job, got, "ended job")
}

// jobEndIsFinal: once a job has ended, no put replaces it, an end or a running state: each
// is refused with ErrJobEnded, and the first end stays.
func jobEndIsFinal(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	ctx := context.Background()
	job := sampleJob()
	mustNoError(t, s.PutJob(ctx, scope, "j1", job, Long), "PutJob running")
	failed := job
	failed.State, failed.Status, failed.Body = server.JobFailed, 500, []byte(`{"error":{"code":"internal_error"}}`)
	mustNoError(t, s.PutJob(ctx, scope, "j1", failed, Long), "PutJob failed")
	succeeded := job
	succeeded.State, succeeded.Status, succeeded.Body = server.JobSucceeded, 200, []byte(`{"url":"late"}`)
	for _, late := range []server.Job{succeeded, failed, job} {
		checkErrorIs(t, s.PutJob(ctx, scope, "j1", late, Long), server.ErrJobEnded, "PutJob %s over an ended job", late.State)
	}
	got, ok := getJob(t, s, scope, "j1")
	mustTrue(t, ok, "the ended job is not found")
	sameJob(t, failed, got, "the first end")
}

// jobConcurrentEnds: of ends put at once over one running job, exactly one is stored, the
// others refused with ErrJobEnded, and the job read is that one.
func jobConcurrentEnds(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutJob(ctx, scope, "j1", sampleJob(), Long), "PutJob running")
	const n = 16
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		stored []int
		other  []error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			end := sampleJob()
			end.State, end.Status, end.Body = server.JobSucceeded, 200, fmt.Appendf(nil, `{"end":%d}`, i)
			err := s.PutJob(ctx, scope, "j1", end, Long)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				stored = append(stored, i)
			case !errors.Is(err, server.ErrJobEnded):
				other = append(other, err)
			}
		}()
	}
	wg.Wait()
	checkEqual(t, 0, len(other), "errors other than ErrJobEnded: %v", other)
	mustTrue(t, len(stored) == 1, "ends stored: %v, want exactly one", stored)
	got, _ := getJob(t, s, scope, "j1")
	checkEqual(t, fmt.Sprintf(`{"end":%d}`, stored[0]), string(got.Body), "the job read is the end that was stored")
}

func jobExpired(t *testing.T, s server.JobStore, advance func(time.Duration)) {
	mustNoError(t, s.PutJob(context.Background(), scope, "j1", sampleJob(), Short), "PutJob")
	advance(Past)
	_, ok := getJob(t, s, scope, "j1")
	checkFalse(t, ok, "a job is found after its TTL")
}

// jobCopied: neither the caller's bytes after a put nor those a get returned are the store's.
func jobCopied(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	job := sampleJob()
	job.Body = []byte(`{"a":1}`)
	mustNoError(t, s.PutJob(context.Background(), scope, "j1", job, Long), "PutJob")
	job.Body[2] = 'X'
	got, _ := getJob(t, s, scope, "j1")
	checkEqual(t, `{"a":1}`, string(got.Body), "the store kept the caller's bytes")
	if len(got.Body) > 2 {
		got.Body[2] = 'Y'
	}
	again, _ := getJob(t, s, scope, "j1")
	checkEqual(t, `{"a":1}`, string(again.Body), "a get returned the store's own bytes")
}

// jobScopesApart: one scope's job is not found under another, with the same id.
func jobScopesApart(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	ctx := context.Background()
	mustNoError(t, s.PutJob(ctx, scope, "j1", sampleJob(), Long), "PutJob")
	_, ok := getJob(t, s, otherScope, "j1")
	checkFalse(t, ok, "another scope finds the job")
	other := sampleJob()
	other.Operation = "other"
	mustNoError(t, s.PutJob(ctx, otherScope, "j1", other, Long), "PutJob in the other scope")
	got, _ := getJob(t, s, scope, "j1")
	checkEqual(t, "export_invoices", got.Operation, "the other scope's put replaced this scope's job")
}

func jobCancelledContext(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	checkError(t, s.PutJob(ctx, scope, "j1", sampleJob(), Long), "PutJob with a cancelled context")
	_, _, err := s.GetJob(ctx, scope, "j1")
	checkError(t, err, "GetJob with a cancelled context")
	_, ok := getJob(t, s, scope, "j1")
	checkFalse(t, ok, "a put with a cancelled context stored the job")
}

func fillJobs(t *testing.T, s server.JobStore, sc string, ttl time.Duration) {
	t.Helper()
	for i := range quota {
		mustNoError(t, s.PutJob(context.Background(), sc, fmt.Sprint("j", i), sampleJob(), ttl), "job %d of %d", i, quota)
	}
}

// jobQuotaPerScope: a full scope refuses a new job with ErrStoreFull, keeps every live one,
// and another scope is not affected.
func jobQuotaPerScope(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	fillJobs(t, s, scope, Long)
	requireFull(t, s.PutJob(context.Background(), scope, "extra", sampleJob(), Long), "PutJob")
	for i := range quota {
		_, ok := getJob(t, s, scope, fmt.Sprint("j", i))
		checkTrue(t, ok, "job %d was forgotten to make room", i)
	}
	_, ok := getJob(t, s, scope, "extra")
	checkFalse(t, ok, "the refused job was stored")
	mustNoError(t, s.PutJob(context.Background(), otherScope, "extra", sampleJob(), Long), "another scope's job")
}

// jobEndNeedsNoRoom: in a full scope, a job's end still replaces its running state.
func jobEndNeedsNoRoom(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	fillJobs(t, s, scope, Long)
	job := sampleJob()
	job.State, job.Status, job.Body = server.JobFailed, 500, []byte(`{"error":{}}`)
	mustNoError(t, s.PutJob(context.Background(), scope, "j0", job, Long), "the end of a job in a full scope")
	got, _ := getJob(t, s, scope, "j0")
	checkEqual(t, server.JobFailed, got.State, "the end was not stored")
}

func jobQuotaFreedByExpiry(t *testing.T, s server.JobStore, advance func(time.Duration)) {
	fillJobs(t, s, scope, Short)
	advance(Past)
	mustNoError(t, s.PutJob(context.Background(), scope, "after", sampleJob(), Long), "PutJob once the others expired")
}

// jobQuotaConcurrent: concurrent puts of new jobs in one scope never go past its quota.
func jobQuotaConcurrent(t *testing.T, s server.JobStore, _ func(time.Duration)) {
	const n = 4 * quota
	var (
		wg sync.WaitGroup
		mu sync.Mutex
		ok int
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.PutJob(context.Background(), scope, fmt.Sprint("c", i), sampleJob(), Long) == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	checkEqual(t, quota, ok, "puts that succeeded in a scope whose quota is %d", quota)
}
