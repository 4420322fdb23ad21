package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
	"github.com/lariat-dev/lariat/pkg/kvscheduler"
)

// TestGraphListsWhatWaitsFirstWithItsReason: an app whose database does
// not exist is PENDING, listed before the configured values, and says it
// waits for the database; once the database exists, the graph of the
// earlier transaction still shows it waiting (time travel).
func TestGraphListsWhatWaitsFirstWithItsReason(t *testing.T) {
	f := newFixture(t)
	_, srv := f.dashboard(t, dashboard.Options{OwnerOf: func(k string) string { return strings.SplitN(k, "/", 2)[1] }})
	f.put(t, "db/a", "v")
	f.put(t, "app/b", "v")
	var g dashboard.Graph
	get(t, srv.URL+"/ui/api/graph", &g)
	if len(g.Nodes) != 2 || g.Nodes[0].Key != "app/b" || g.Nodes[0].State != "PENDING" || g.Nodes[1].State != "CONFIGURED" {
		t.Fatalf("graph = %+v, want app/b PENDING first, then db/a CONFIGURED", g.Nodes)
	}
	pending := g.Nodes[0]
	if len(pending.Reasons) != 1 || pending.Reasons[0] != "database: waits for db/b (absent)" {
		t.Errorf("reasons = %q", pending.Reasons)
	}
	if len(pending.Deps) != 1 || pending.Deps[0].Key != "db/b" || pending.Deps[0].Met || pending.Owner != "b" {
		t.Errorf("app/b = %+v, want an unmet edge to db/b and owner b", pending)
	}
	waiting := f.s.TransactionHistory(zeroTime, zeroTime)
	seq := waiting[len(waiting)-1].SeqNum
	f.put(t, "db/b", "v")
	var now dashboard.Graph
	get(t, srv.URL+"/ui/api/graph", &now)
	for _, n := range now.Nodes {
		if n.State != "CONFIGURED" || len(n.Reasons) != 0 {
			t.Errorf("after db/b: %+v, want every value CONFIGURED", n)
		}
	}
	var past dashboard.Graph
	get(t, srv.URL+"/ui/api/graph?seq="+itoa(seq), &past)
	if past.Seq == nil || *past.Seq != seq || len(past.Nodes) != 2 || past.Nodes[0].Key != "app/b" || past.Nodes[0].State != "PENDING" {
		t.Errorf("graph after transaction %d = %+v, want app/b PENDING", seq, past)
	}
	var v dashboard.Value
	get(t, srv.URL+"/ui/api/value?key=app/b", &v)
	if v.Node.State != "CONFIGURED" || len(v.Timeline) == 0 || v.Timeline[0].What != "CREATE" || v.Desired != "v" {
		t.Errorf("value app/b = %+v, want CONFIGURED, its CREATE first in the timeline, desired v", v)
	}
}

// TestTheDashboardIsReadOnly: every method but GET and HEAD is refused,
// on every path, and nothing changes.
func TestTheDashboardIsReadOnly(t *testing.T) {
	f := newFixture(t)
	_, srv := f.dashboard(t, dashboard.Options{})
	for _, path := range []string{"/ui/", "/ui/api/graph", "/ui/api/stream", "/ui/api/value?key=db/a"} {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH"} {
			req, _ := http.NewRequestWithContext(t.Context(), method, srv.URL+path, strings.NewReader("{}"))
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: %s, want 405", method, path, resp.Status)
			}
		}
	}
}

// TestNoSecretDataInAnyView puts a Secret, an object of a kind marked
// sensitive and a value under a marked key prefix into the scheduler: no
// view the dashboard serves contains their data, and each still shows the
// object's name.
func TestNoSecretDataInAnyView(t *testing.T) {
	f := newFixture(t)
	marked := schema.GroupKind{Group: "example.com", Kind: "Credentials"}
	secrets := kubedescriptor.KeyPrefix(schema.GroupKind{Kind: "Secret"})
	objects := f.sb.Descriptor("objects", "")
	objects.KeySelector = func(k string) bool { return strings.Contains(k, "/Secret/") || strings.Contains(k, "/Credentials/") }
	objects.NBKeyPrefix = ""
	tokens := f.sb.Descriptor("tokens", "token/")
	for _, d := range []*kvscheduler.Descriptor{objects, tokens} {
		if err := f.s.RegisterDescriptor(t.Context(), d); err != nil {
			t.Fatal(err)
		}
	}
	secretKey := secrets + "ns/db-password"
	credKey := kubedescriptor.KeyPrefix(marked) + "ns/creds"
	f.put(t, secretKey, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db-password", Namespace: "ns",
		Annotations: map[string]string{"kubectl.kubernetes.io/last-applied-configuration": `{"data":{"password":"aHVudGVyMg=="}}`}},
		Data: map[string][]byte{"password": []byte("hunter2")}, StringData: map[string]string{"token": "hunter2"}})
	f.put(t, credKey, map[string]any{"apiVersion": "example.com/v1", "kind": "Credentials",
		"metadata": map[string]any{"name": "creds", "namespace": "ns"}, "spec": map[string]any{"key": "hunter2"}})
	f.put(t, "token/api", "hunter2")
	_, srv := f.dashboard(t, dashboard.Options{RedactKinds: []schema.GroupKind{marked}, RedactKeyPrefixes: []string{"token/"}})

	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	stream := make(chan string, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/ui/api/stream?txn=-1&event=-1", nil)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			stream <- ""
			return
		}
		defer resp.Body.Close()
		buf := make([]byte, 1<<20)
		n, _ := readUntil(resp.Body, buf, "db-password")
		stream <- string(buf[:n])
	}()
	views := map[string]string{}
	for _, path := range []string{"/ui/api/graph", "/ui/api/txns", "/ui/api/events", "/ui/api/value?key=" + secretKey,
		"/ui/api/value?key=" + credKey, "/ui/api/value?key=token/api", "/ui/api/graph?seq=1"} {
		views[path] = get(t, srv.URL+path, nil)
	}
	views["stream"] = <-stream
	for path, body := range views {
		if strings.Contains(body, "hunter2") || strings.Contains(body, "aHVudGVyMg") {
			t.Errorf("%s shows secret data: %s", path, body)
		}
	}
	for path, name := range map[string]string{"/ui/api/value?key=" + secretKey: "db-password", "/ui/api/value?key=" + credKey: "creds", "stream": "db-password"} {
		if !strings.Contains(views[path], name) {
			t.Errorf("%s does not name %s: %s", path, name, views[path])
		}
	}
}
