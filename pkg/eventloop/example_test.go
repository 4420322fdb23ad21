package eventloop_test

import (
	"context"
	"fmt"
	"io"

	"github.com/sirupsen/logrus"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	"github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

// podEvent is a user-defined blocking update event.
type podEvent struct {
	eventloop.Result // Done and Wait
	name             string
}

func (e *podEvent) GetName() string                   { return "Add Pod" }
func (e *podEvent) String() string                    { return "Add Pod " + e.name }
func (e *podEvent) Method() eventloop.EventMethodType { return eventloop.Update }
func (e *podEvent) IsBlocking() bool                  { return true }
func (e *podEvent) TransactionType() eventloop.UpdateTransactionType {
	return eventloop.RevertOnFailure
}
func (e *podEvent) Direction() eventloop.UpdateDirectionType { return eventloop.Forward }

// podHandler desires one value per pod.
type podHandler struct{ pods []string }

func (h *podHandler) String() string                    { return "pods" }
func (h *podHandler) HandlesEvent(eventloop.Event) bool { return true }
func (h *podHandler) Update(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
	if pod, ok := ev.(*podEvent); ok {
		h.pods = append(h.pods, pod.name)
		txn.Put("pod/"+pod.name, "connected")
		return "connected " + pod.name, nil
	}
	return "", nil
}
func (h *podHandler) Resync(_ eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
	for _, p := range h.pods {
		txn.Put("pod/"+p, "connected")
	}
	return nil
}
func (h *podHandler) Revert(ev eventloop.Event) error {
	h.pods = h.pods[:len(h.pods)-1]
	return nil
}

func Example() {
	logger := logrus.New()
	logger.SetOutput(io.Discard)
	committer := eventlooptest.NewCommitter() // a KV scheduler in production
	loop, err := eventloop.New(eventloop.Options{
		Handlers:  []eventloop.EventHandler{&podHandler{}},
		Committer: committer,
		Logger:    logrus.NewEntry(logger),
	})
	if err != nil {
		panic(err)
	}
	ctx := context.Background()
	if err := loop.Start(ctx); err != nil {
		panic(err)
	}
	defer loop.Stop(ctx)

	// Pushed before the startup resync: held until it has run.
	pod := &podEvent{name: "web-1"}
	if err := loop.PushEvent(pod); err != nil {
		panic(err)
	}
	if err := loop.PushEvent(eventlooptest.NewResync("startup")); err != nil {
		panic(err)
	}
	if err := pod.Wait(ctx); err != nil {
		panic(err)
	}
	for _, rec := range loop.History().Records() {
		fmt.Printf("#%d %s (%s)\n", rec.SeqNum, rec.Name, rec.Method)
	}
	fmt.Println(committer.State())
	// Output:
	// #0 startup (FullResync)
	// #1 Add Pod (Update)
	// map[pod/web-1:connected]
}
