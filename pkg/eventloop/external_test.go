package eventloop_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"testing"

	"github.com/lariat-dev/lariat/pkg/eventloop"
	el "github.com/lariat-dev/lariat/pkg/eventloop/eventlooptest"
)

func (e *env) runExt(ev interface {
	eventloop.Event
	Wait(context.Context) error
}) {
	e.t.Helper()
	e.push(ev)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	if err := ev.Wait(ctx); err != nil {
		e.t.Fatalf("%s: %v", ev.GetName(), err)
	}
}

func (e *env) expectState(want string) {
	e.t.Helper()
	if got := fmt.Sprint(e.committer.State()); got != want {
		e.t.Fatalf("committed state %s, want %s", got, want)
	}
}

func extChange(source string, kvs map[string]any) *eventloop.ExternalConfigChange {
	return &eventloop.ExternalConfigChange{Source: source, Changes: kvs}
}

func TestExternalConfigOverridesAndRestores(t *testing.T) {
	e := newEnv(t, []string{"a"})
	e.h("a").OnResync = func(ev eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
		txn.Put("k1", "int1")
		txn.Put("k2", "int2")
		return nil
	}
	e.h("a").OnUpdate = func(ev eventloop.Event, txn eventloop.UpdateOperations) (string, error) {
		if ev.GetName() == "set-k1" {
			txn.Put("k1", "int1b")
		}
		return "", nil
	}
	e.startRunning()
	e.expectState("map[k1:int1 k2:int2]")

	e.runExt(extChange("ext", map[string]any{"k1": "ext1", "k3": "ext3"}))
	e.expectState("map[k1:ext1 k2:int2 k3:ext3]")

	// Handlers changing an overridden key do not win over the external value.
	if err := e.run(el.NewUpdate("set-k1")); err != nil {
		t.Fatal(err)
	}
	e.expectState("map[k1:ext1 k2:int2 k3:ext3]")

	// A resync keeps external values, and external-only keys.
	if err := e.run(el.NewResync("resync")); err != nil {
		t.Fatal(err)
	}
	e.expectState("map[k1:ext1 k2:int2 k3:ext3]")

	// Removing the external value restores the internal one (the latest put
	// by handlers), or deletes a key handlers never put.
	e.runExt(extChange("ext", map[string]any{"k1": nil, "k3": nil}))
	e.expectState("map[k1:int1 k2:int2]")

	// ExternalConfigResync replaces a source; an empty one removes it.
	e.runExt(&eventloop.ExternalConfigResync{Source: "file", Config: map[string]any{"k2": "file2", "k5": "file5"}})
	e.expectState("map[k1:int1 k2:file2 k5:file5]")
	e.runExt(&eventloop.ExternalConfigResync{Source: "file"})
	e.expectState("map[k1:int1 k2:int2]")
}

func TestExternalConfigPrecedence(t *testing.T) {
	t.Run("configured", func(t *testing.T) {
		e := newEnv(t, []string{"a"}, withConfig(func(c *eventloop.Config) {
			c.ExternalSourcePrecedence = []string{"z-high", "a-low"}
		}))
		e.startRunning()
		e.runExt(extChange("z-high", map[string]any{"k": "high"}))
		e.runExt(extChange("a-low", map[string]any{"k": "low"}))
		e.expectState("map[k:high]")
		e.runExt(extChange("z-high", map[string]any{"k": nil}))
		e.expectState("map[k:low]")
		e.runExt(extChange("z-high", map[string]any{"k": "high"}))
		e.expectState("map[k:high]")
		// Unlisted sources rank below listed ones.
		e.runExt(extChange("unlisted", map[string]any{"k": "unlisted"}))
		e.expectState("map[k:high]")
	})
	t.Run("by name", func(t *testing.T) {
		// Same result whatever the arrival order: the smaller name wins.
		for _, order := range [][]string{{"a", "b"}, {"b", "a"}} {
			e := newEnv(t, []string{"a"})
			e.startRunning()
			for _, src := range order {
				e.runExt(extChange(src, map[string]any{"k": "from-" + src}))
			}
			e.expectState("map[k:from-a]")
			if err := e.run(el.NewResync("resync")); err != nil {
				t.Fatal(err)
			}
			e.expectState("map[k:from-a]")
		}
	})
}

func TestExternalConfigMergeFunc(t *testing.T) {
	var calls []string
	merge := func(key string, below, above any, source string) (any, error) {
		calls = append(calls, fmt.Sprintf("%s/%s", key, source))
		out := map[string]string{}
		if below != nil {
			maps.Copy(out, below.(map[string]string))
		}
		maps.Copy(out, above.(map[string]string))
		return out, nil
	}
	e := newEnv(t, []string{"a"}, func(o *eventloop.Options) { o.Merge = merge })
	e.h("a").OnResync = func(ev eventloop.Event, _ any, _ int, txn eventloop.ResyncOperations) error {
		txn.Put("iface", map[string]string{"mtu": "1500", "name": "eth0"})
		return nil
	}
	e.startRunning()
	e.runExt(extChange("s1", map[string]any{"iface": map[string]string{"mtu": "9000"}}))
	e.runExt(extChange("s2", map[string]any{"iface": map[string]string{"mtu": "1400", "vlan": "7"}}))
	// s1 ranks above s2 (smaller name): internal, then s2, then s1.
	e.expectState("map[iface:map[mtu:9000 name:eth0 vlan:7]]")
	e.runExt(extChange("s1", map[string]any{"iface": nil}))
	e.expectState("map[iface:map[mtu:1400 name:eth0 vlan:7]]")
	e.runExt(extChange("s2", map[string]any{"iface": nil}))
	e.expectState("map[iface:map[mtu:1500 name:eth0]]")
	e.runExt(extChange("s1", map[string]any{"iface": map[string]string{"mtu": "9000"}}))

	bad := extChange("bad", map[string]any{"iface": "not a map"})
	e.push(bad)
	ctx, cancel := context.WithTimeout(context.Background(), patience)
	defer cancel()
	var pe *eventloop.PanicError
	if err := bad.Wait(ctx); !errors.As(err, &pe) {
		t.Fatalf("a panicking merge must fail the event: %v", err)
	}
	if recs := e.loop.History().Last(1); len(recs) != 1 || recs[0].Name != bad.GetName() || recs[0].TxnError == nil {
		t.Fatalf("a panicking merge must be recorded as the transaction error: %+v", recs)
	}
	e.expectState("map[iface:map[mtu:9000 name:eth0]]")
}
