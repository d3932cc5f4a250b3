package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/remedy-go/remedy/client"
	"github.com/remedy-go/remedy/internal/testkit/redistest"
	"github.com/remedy-go/remedy/redispacer"
)

// pacingChildEnv carries a child's configuration, as JSON; a test binary started with it set
// runs TestPacingChild as one process of remedy-redis-2proc, and nothing else.
const pacingChildEnv = "REMEDY_BENCH_PACING_CHILD"

// launchLead is how long after runPacing starts a contender whose calls are made in other
// processes those calls begin: time for redis-server and each process to start, build its
// client and reach Redis, so that every caller begins at one instant, as in one process. It
// took about 150 ms on a machine of two cores, 450 ms under the race detector; a child that is
// not ready in time fails the run rather than begin late.
const launchLead = time.Second

// childSeq spaces the numbers the children give their requests: child i numbers its own
// i*childSeq+1, i*childSeq+2, …, so that no two requests of the run share a number, in the
// server's records (keyed by seqHeader) or in the children's.
const childSeq = 1_000_000

// pacingProcesses is how many processes remedy-redis-2proc splits the callers between.
const pacingProcesses = 2

// pacingChild is the configuration of one child process.
type pacingChild struct {
	URL, Redis  string
	Start       int64 // Unix ns, by the wall clock the processes share: the server's start, when the calls begin
	Scale       pacingScale
	First, Last int    // the callers the child runs, as makeCalls takes them
	Seq         int64  // the child numbers its requests from Seq+1
	Result      string // where the child writes its pacingChildResult
}

// pacingChildResult is what a child reports.
type pacingChildResult struct {
	Sent      []sentRecord
	Completed int
	Errors    []string      // the first few failures
	End       int64         // Unix ns: when its last call returned
	Late      time.Duration // how long after Start the child was ready to call; 0 when it was ready before
}

// twoProcessPacingContender is remedy-redis across two processes: this test binary started
// twice in a child mode (TestPacingChild), each process running half of the callers through a
// remedy client with a redispacer.Pacer of its own, on one throwaway redis-server. Nothing is
// shared but Redis and the server — not the runtime, not a connection — so it is the fleet
// that remedy-redis stands for in one process. It skips when redis-server is not installed
// (unless REMEDY_REQUIRE_REDIS=1).
func twoProcessPacingContender() pacingContender {
	return pacingContender{name: "remedy-redis-2proc", elsewhere: func(tb testing.TB, scale pacingScale, base string, start time.Time) callsElsewhere {
		tb.Helper()
		addr := redistest.Start(tb)
		dir := tb.TempDir()
		results := make([]pacingChildResult, pacingProcesses)
		var wg sync.WaitGroup
		for i := range pacingProcesses {
			cfg := pacingChild{URL: base, Redis: addr, Start: start.UnixNano(), Scale: scale,
				First: i * scale.Callers / pacingProcesses, Last: (i + 1) * scale.Callers / pacingProcesses,
				Seq: int64(i) * childSeq, Result: filepath.Join(dir, fmt.Sprintf("child%d.json", i))}
			wg.Go(func() {
				if err := runPacingChild(cfg, &results[i]); err != nil {
					tb.Errorf("child %d: %v", i, err)
				}
			})
		}
		wg.Wait()
		if tb.Failed() {
			tb.FailNow()
		}
		var r callsElsewhere
		for i, res := range results {
			if res.Late > 0 {
				tb.Errorf("child %d was ready %v after the calls were to begin: longer than launchLead allows", i, res.Late)
			}
			r.Sent = append(r.Sent, res.Sent...)
			r.Completed += res.Completed
			r.Errors = append(r.Errors, res.Errors...)
			if end := time.Unix(0, res.End); end.After(r.End) {
				r.End = end
			}
		}
		return r
	}}
}

// runPacingChild runs this test binary as the child cfg describes and reads what it reports.
func runPacingChild(cfg pacingChild, res *pacingChildResult) error {
	b, err := json.Marshal(cfg)
	if err != nil {
		return err
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPacingChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), pacingChildEnv+"="+string(b))
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	b, err = os.ReadFile(cfg.Result)
	if err != nil {
		return fmt.Errorf("%w\n%s", err, out)
	}
	return json.Unmarshal(b, res)
}

// TestPacingChild is one process of remedy-redis-2proc (twoProcessPacingContender); it does
// nothing unless pacingChildEnv is set. Its client is one of remedy-redis's, its watch a
// watchTransport of its own on the parent's clock: both processes run on one machine, so the
// wall clock the parent's start is passed in is the same in each.
func TestPacingChild(t *testing.T) {
	cfgJSON := os.Getenv(pacingChildEnv)
	if cfgJSON == "" {
		t.Skip("run by remedy-redis-2proc")
	}
	var cfg pacingChild
	if err := json.Unmarshal([]byte(cfgJSON), &cfg); err != nil {
		t.Fatal(err)
	}
	start := time.Unix(0, cfg.Start)
	// An http.Transport as httptest's server gives its client, which the watch wraps in one process.
	watch := &watchTransport{next: &http.Transport{}, start: start, sent: map[int64]*sent{}}
	watch.seq.Store(cfg.Seq)
	rdb := redis.NewClient(&redis.Options{Addr: cfg.Redis, ContextTimeoutEnabled: true})
	defer rdb.Close()
	// One connection open, to know that Redis answers before the start; the others open as the
	// callers need them, as they do in one process.
	if err := rdb.Ping(context.Background()).Err(); err != nil {
		t.Fatal(err)
	}
	own := tracePacer{Pacer: redispacer.New(rdb, redispacer.Options{}), start: start, watch: watch}
	rc, err := client.New(client.WithHTTPClient(&http.Client{Transport: watch}), client.WithBaseURL(cfg.URL),
		client.WithPacer(own), client.WithOperations(client.Operation{Name: "create_order", Path: "/v1/orders"}))
	if err != nil {
		t.Fatal(err)
	}

	var res pacingChildResult
	wait := time.Until(start)
	res.Late = max(-wait, 0)
	time.Sleep(wait)
	res.Completed, res.Errors = makeCalls(cfg.Scale, cfg.First, cfg.Last, func(ctx context.Context, _ int) error {
		_, err := rc.Call(ctx, "create_order", orderArgs)
		return err
	})
	res.End = time.Now().UnixNano()

	watch.mu.Lock()
	for seq, s := range watch.sent {
		res.Sent = append(res.Sent, sentRecord{Seq: seq, At: s.at, Decided: s.decided, Returned: s.returned, Known: s.known})
	}
	watch.mu.Unlock()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg.Result, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
