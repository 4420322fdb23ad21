package dashboard_test

import (
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/shard"
)

// TestAdv2ANilSharderIsAnswered: Options.ShardMember may return a nil
// *shard.Member (a replica between terms), and Member.Snapshot answers the
// zero snapshot for it; but a nil *shard.Sharder given as Options.Shard
// (an operator that builds its sharder only when sharded and passes the
// variable either way) is a non-nil interface, and Sharder.Snapshot
// dereferences it: GET /ui/api/replicas panics in the handler, net/http
// drops the connection, and the page's replicas view gets a network error
// that says nothing (the rules: no panic in library code for bad input).
func TestAdv2ANilSharderIsAnswered(t *testing.T) {
	var sharder *shard.Sharder // not sharded this time
	d, err := dashboard.New(dashboard.Options{Shard: sharder,
		ShardMember: func() dashboard.ShardMember { return (*shard.Member)(nil) }})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(d)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.Start()
	t.Cleanup(srv.Close)
	resp, err := http.Get(srv.URL + "/ui/api/replicas")
	if err != nil {
		t.Fatalf("GET /ui/api/replicas with a nil *shard.Sharder: no answer at all (the handler panicked): %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if len(body) == 0 {
		t.Fatalf("GET /ui/api/replicas: %s with an empty body", resp.Status)
	}
}
