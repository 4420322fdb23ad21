package dashboard_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/sirupsen/logrus"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/lariat-dev/lariat/pkg/dashboard"
	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

const adv2HandlerPin = "Hunter2handler4711"

// secretPrinter fails every update with an error that prints the Secret
// it handled, as fmt.Errorf("apply %v: %w", obj, err) does.
type secretPrinter struct{ putter }

func (secretPrinter) String() string { return "secret-printer" }
func (secretPrinter) Update(eventloop.Event, eventloop.UpdateOperations) (string, error) {
	obj := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "db", Namespace: "prod"}, StringData: map[string]string{"pin": adv2HandlerPin}}
	return "", fmt.Errorf("apply %v: the object has been modified", obj)
}

// TestAdv2AHandlersErrorThatPrintsASecretIsShownAsWritten: an event's
// handler errors are scrubbed only when mentionsSensitive finds a redacted
// key prefix or `Secret "` in them; a Secret printed with %v
// (`&Secret{ObjectMeta:..., StringData:map[string]string{pin: ...,},}`)
// has neither, so the events view (and the stream) show its data as
// written, though "no view shows Secret data".
func TestAdv2AHandlersErrorThatPrintsASecretIsShownAsWritten(t *testing.T) {
	s, _ := adv2Scheduler(t, "db/")
	cfg := eventloop.DefaultConfig()
	cfg.EventLogLevel = logrus.DebugLevel
	loop := startLoop(t, s, &cfg, secretPrinter{})
	put := eventlooptest.NewUpdate("put db/x")
	put.Blocking = true
	if err := loop.PushEvent(put); err != nil {
		t.Fatal(err)
	}
	_ = put.Wait(t.Context())
	srv := serveDashboard(t, dashboard.Options{Scheduler: s, Loop: loop})
	body := get(t, srv.URL+"/ui/api/events", nil)
	if !strings.Contains(body, "has been modified") {
		t.Fatalf("the handler's error is not on the events view at all: %s", body)
	}
	if i := strings.Index(body, adv2HandlerPin); i >= 0 {
		t.Errorf("GET /ui/api/events shows the Secret's data: ...%s...", body[max(0, i-60):min(len(body), i+30)])
	}
}
