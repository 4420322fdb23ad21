package operator_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/sirupsen/logrus"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	demov1 "github.com/lariat-dev/lariat/examples/api/demo/v1"
	"github.com/lariat-dev/lariat/examples/webapp/operator"
	"github.com/lariat-dev/lariat/internal/browsertest"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestDashboardInABrowser opens the operator's dashboard in a real headless
// Chromium and watches the sample WebApps converge, a WebApp wait for one
// that does not exist, and a Deployment deleted behind the operator's back
// come back, live, without a reload.
func TestDashboardInABrowser(t *testing.T) {
	ctx := t.Context()
	ns := controlplanetest.Namespace(t, cp.Config())
	log := logrus.New()
	log.SetLevel(logrus.ErrorLevel)
	op, _ := startOperator(t, operator.Options{Config: cp.Config(), Namespace: ns, Logger: log,
		NodePorts: operator.PortRange{First: 31800, Last: 31849}})
	srv := httptest.NewServer(op.Handler())
	t.Cleanup(srv.Close)
	page := browsertest.Start(t)
	if err := chromedp.Do(page, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	browsertest.Wait[bool](t, page, "the page to follow the operator", `window.lariatDashboard && window.lariatDashboard.connected`)

	apps := []*demov1.WebApp{
		{ObjectMeta: metav1.ObjectMeta{Name: "database", Namespace: ns}, Spec: demov1.WebAppSpec{Image: "postgres:17", Replicas: ptr.To[int32](1), Port: 5432}},
		{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: ns}, Spec: demov1.WebAppSpec{Image: "api", Replicas: ptr.To[int32](1), Port: 8080, DependsOn: []string{"database"}}},
		{ObjectMeta: metav1.ObjectMeta{Name: "frontend", Namespace: ns}, Spec: demov1.WebAppSpec{Image: "nginx", Replicas: ptr.To[int32](1), Port: 80, DependsOn: []string{"api"}}},
	}
	for _, app := range apps {
		if _, err := op.WebApps().Create(ctx, app); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("the samples' values converge with their states", func(t *testing.T) {
		var keys []string
		for _, app := range apps {
			keys = append(keys, operator.ConfigMapKey(ns, app.Name), operator.DeploymentKey(ns, app.Name),
				operator.ServiceKey(ns, app.Name), operator.AvailableKey(ns, app.Name))
		}
		states := nodeStates(keys)
		want := strings.Repeat("CONFIGURED ", len(keys))
		got := browsertest.Wait[string](t, page, "every sample value CONFIGURED in the graph",
			fmt.Sprintf(`(s => s === %q && s)(%s)`, want, states))
		// What the page shows is what the scheduler says.
		for _, k := range keys {
			if st := op.Scheduler().GetValueStatus(k).State.String(); st != "CONFIGURED" {
				t.Errorf("the scheduler has %s %s, the page CONFIGURED", k, st)
			}
		}
		if n := browsertest.Eval[int](t, page, `document.querySelectorAll("#graph g.node").length`); n != len(keys) {
			t.Errorf("the graph draws %d values, want %d (%s)", n, len(keys), got)
		}
		if n := browsertest.Eval[int](t, page, `document.querySelectorAll("#graph path.edge").length`); n == 0 {
			t.Error("the graph draws no dependency edges")
		}
		browsertest.Screenshot(t, page, "dashboard-graph")
	})

	t.Run("a WebApp that waits shows PENDING with its reason", func(t *testing.T) {
		cache := &demov1.WebApp{ObjectMeta: metav1.ObjectMeta{Name: "cache", Namespace: ns},
			Spec: demov1.WebAppSpec{Image: "redis", Replicas: ptr.To[int32](1), Port: 6379, DependsOn: []string{"redis"}}}
		if _, err := op.WebApps().Create(ctx, cache); err != nil {
			t.Fatal(err)
		}
		key, missing := operator.DeploymentKey(ns, "cache"), operator.AvailableKey(ns, "redis")
		browsertest.Wait[bool](t, page, key+" PENDING in the graph", nodeIs(key, "PENDING"))
		// Listed first, with what it waits for.
		first := browsertest.Eval[string](t, page, `document.querySelector("#attention .row").dataset.state`)
		if first != "PENDING" {
			t.Errorf("the first value listed is %s, want a PENDING one", first)
		}
		row := browsertest.Eval[string](t, page, fmt.Sprintf(`document.querySelector('#attention .row[data-key=%q]').textContent`, key))
		if !strings.Contains(row, missing) {
			t.Errorf("the list's row of %s does not say it waits for %s: %q", key, missing, row)
		}
		browsertest.Click(t, page, fmt.Sprintf(`#graph g.node[data-key=%q]`, key))
		reason := browsertest.Wait[string](t, page, "the detail of "+key,
			fmt.Sprintf(`document.querySelector('#detail h2[data-key=%q]') && [...document.querySelectorAll("#detail .reason")].map(e => e.textContent).join("; ")`, key))
		if !strings.Contains(reason, "waits for "+missing) {
			t.Errorf("the detail of %s says %q, want that it waits for %s", key, reason, missing)
		}
		browsertest.Screenshot(t, page, "dashboard-pending")
	})

	t.Run("a Deployment deleted behind the operator's back is repaired live", func(t *testing.T) {
		key := operator.DeploymentKey(ns, "api")
		browsertest.Click(t, page, fmt.Sprintf(`#graph g.node[data-key=%q]`, key))
		browsertest.Wait[bool](t, page, "the detail of "+key, fmt.Sprintf(`!!document.querySelector('#detail h2[data-key=%q]')`, key))
		// A reload would forget this mark and load the graph again.
		loads := browsertest.Eval[int](t, page, `window.noReload = true; window.lariatDashboard.graphLoads`)
		kube := controlplanetest.Clientset(cp.Config())
		if err := kube.AppsV1().Deployments(ns).Delete(ctx, "api", metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
		repair := "repair " + key
		txn := browsertest.Wait[string](t, page, "the repair in the transactions",
			fmt.Sprintf(`[...document.querySelectorAll("#txns li")].map(e => e.textContent).find(s => s.includes(%q) && s.includes(%q))`, repair, "CREATE "+key))
		browsertest.Wait[bool](t, page, "the repair in the value's timeline",
			fmt.Sprintf(`[...document.querySelectorAll("#detail table.timeline td")].some(e => e.textContent.includes(%q))`, repair))
		browsertest.Wait[bool](t, page, key+" CONFIGURED again", nodeIs(key, "CONFIGURED"))
		if !browsertest.Eval[bool](t, page, `window.noReload === true`) {
			t.Error("the page was reloaded")
		}
		if n := browsertest.Eval[int](t, page, `window.lariatDashboard.graphLoads`); n != loads {
			t.Errorf("the page loaded the graph again (%d loads, %d before): the repair did not arrive live", n, loads)
		}
		if d, err := kube.AppsV1().Deployments(ns).Get(ctx, "api", metav1.GetOptions{}); err != nil {
			t.Errorf("the Deployment is not back: %v (the page showed %q)", err, txn)
		} else if d.DeletionTimestamp != nil {
			t.Errorf("the Deployment is being deleted: %+v", d.ObjectMeta)
		}
		if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="activity"]`))); err != nil {
			t.Fatal(err)
		}
		browsertest.Screenshot(t, page, "dashboard-activity")
		if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="controllers"]`))); err != nil {
			t.Fatal(err)
		}
		browsertest.Wait[bool](t, page, "the controllers view", `document.querySelectorAll("#controllers tr[data-kind]").length > 0`)
		// Waiting and handling are shown as percentiles, p50 / p90 / p99
		// in order, for the WebApps the operator handled.
		pcts := browsertest.Eval[[]string](t, page, `[...document.querySelectorAll("#controllers tr[data-kind] td.pcts")].map((td) => td.textContent)`)
		dur := `(> )?[0-9.]+ (ms|s)`
		shape := regexp.MustCompile(`^` + dur + ` / ` + dur + ` / ` + dur + `$`)
		if len(pcts) == 0 {
			t.Error("the controllers view shows no percentiles")
		}
		for _, p := range pcts {
			if !shape.MatchString(p) {
				t.Errorf("controllers view: %q is not p50 / p90 / p99", p)
			}
		}
		browsertest.Screenshot(t, page, "dashboard-controllers")
	})

	t.Run("time travel draws the graph after a past transaction", func(t *testing.T) {
		if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#tabs button[data-tab="graph"]`))); err != nil {
			t.Fatal(err)
		}
		// A past transaction after which api's Deployment waited (it is
		// CONFIGURED now): the page must draw that past, not the present.
		api := operator.DeploymentKey(ns, "api")
		seqs := browsertest.Eval[[]uint64](t, page, `window.lariatDashboard.travelSeqs`)
		index, seq := -1, uint64(0)
		want := map[string]string{}
		for i, s := range seqs {
			snap, err := op.Scheduler().GraphSnapshotAt(s)
			if err != nil {
				continue
			}
			states := map[string]string{}
			for _, st := range snap.Values {
				states[st.Key] = st.State.String()
			}
			if states[api] == "PENDING" {
				index, seq, want = i, s, states
				break
			}
		}
		if index < 0 {
			t.Fatalf("no retained transaction after which %s was PENDING among %v", api, seqs)
		}
		browsertest.Eval[chromedp.Void](t, page, fmt.Sprintf(`(e => { e.value = %d; e.dispatchEvent(new Event("input")); })(document.getElementById("travel"))`, index))
		drawn := browsertest.Wait[map[string]string](t, page, fmt.Sprintf("the graph after transaction %d", seq),
			fmt.Sprintf(`document.getElementById("travel-label").textContent.includes("#%d ") && Object.fromEntries([...document.querySelectorAll("#graph g.node")].map(n => [n.dataset.key, n.dataset.state]))`, seq))
		if fmt.Sprint(drawn) != fmt.Sprint(want) || drawn[api] != "PENDING" {
			t.Errorf("after transaction %d the page draws %v, the scheduler's snapshot has %v", seq, drawn, want)
		}
		browsertest.Screenshot(t, page, "dashboard-time-travel")
		if err := chromedp.Do(page, chromedp.Click(chromedp.CSS(`#now`))); err != nil {
			t.Fatal(err)
		}
		live := len(op.Scheduler().ValueStatuses(nil))
		browsertest.Wait[bool](t, page, "the live graph again", fmt.Sprintf(`document.querySelectorAll("#graph g.node").length === %d && document.getElementById("now").hidden`, live))
	})
}

// nodeStates is a JavaScript expression: the states the graph draws for
// keys, each followed by a space ("none" for a key not drawn).
func nodeStates(keys []string) string {
	b, _ := json.Marshal(keys)
	return fmt.Sprintf(`%s.map(k => { const n = document.querySelector('#graph g.node[data-key="' + k + '"]'); return (n ? n.dataset.state : "none") + " "; }).join("")`, b)
}

// nodeIs is a JavaScript expression: whether the graph draws key in state.
func nodeIs(key, state string) string {
	return fmt.Sprintf(`(n => !!n && n.dataset.state === %q)(document.querySelector('#graph g.node[data-key=%q]'))`, state, key)
}
