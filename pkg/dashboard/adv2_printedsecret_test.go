package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/kubedescriptor"
)

// TestAdv2AnErrorThatPrintsTheSecretShowsItsData: "No view shows Secret
// data". The error of a Secret's value is scrubbed of its quoted strings
// and field-error values only; a Go error that prints the object with %v
// (fmt.Errorf("create %v: %w", obj, err), common in descriptors and
// handlers) carries the Secret as its generated String() writes it,
// `StringData:map[string]string{pin: 918273645,}`, neither quoted nor a
// field error: it is shown as written on the graph, the value's detail
// and the transactions.
func TestAdv2AnErrorThatPrintsTheSecretShowsItsData(t *testing.T) {
	const pin = "Hunter2pin918273"
	prefix := kubedescriptor.KeyPrefix(schema.GroupKind{Kind: "Secret"})
	key := prefix + "prod/db"
	s, sb := adv2Scheduler(t, prefix)
	obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "prod"}, StringData: map[string]string{"pin": pin}}
	sb.FailNext("create", key, fmt.Errorf("create %v: the server is currently unable to handle the request", obj))
	_, _ = s.StartNBTransaction().SetValue(key, obj).Commit(t.Context())
	srv := serveDashboard(t, dashboard.Options{Scheduler: s})
	if body := get(t, srv.URL+"/ui/api/txns", nil); !strings.Contains(body, "unable to handle") {
		t.Fatalf("the create's error is not in the transactions at all: %s", body)
	}
	checkViewsHide(t, srv, key, pin, "the Secret's data")
}
