package cache_test

import (
	"testing"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv2StreamNoWatchListKindDoesNotSayItStreams: a kind that opts out
// of watch-list (Options.NoWatchList) lists its first list; with
// StreamInitialList set too (a default for every kind, NoWatchList for
// one), its handlers are given nothing early ("Only lists by watch-list
// stream"). StreamsInitialList must say so: it "reports whether the
// informer hands (or, not started yet, will hand) the objects of its
// first list to handlers as they arrive", and pkg/controller starts a
// kind's workers before the sync on its word. It says true.
func TestAdv2StreamNoWatchListKindDoesNotSayItStreams(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{
		Default: cache.Options{Namespace: ns, StreamInitialList: true, NoWatchList: true},
	})
	informer, err := f.ForKind(configMapGVK)
	if err != nil {
		t.Fatal(err)
	}
	if informer.(cache.StreamReader).StreamsInitialList() {
		t.Error("StreamsInitialList of a kind with NoWatchList, not started yet: true; it lists, and will hand its handlers nothing early")
	}
}
