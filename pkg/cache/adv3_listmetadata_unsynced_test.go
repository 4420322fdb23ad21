package cache_test

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/ptr"

	"github.com/lariat-dev/lariat/pkg/cache"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
)

// TestAdv3ListMetadataOfAKindThatCannotListIsNotEmpty: cache.ListMetadata
// is Lariat's cheap read of a kind's objects (counting per label value,
// collecting label values) and says an error means the answer would be
// partial. Of a metadata-only or compact kind that cannot list (its CRD
// missing, a list forbidden), which GetFull and pkg/generic's reads
// answer with a NotSyncedError, it answers "no objects" and no error.
func TestAdv3ListMetadataOfAKindThatCannotListIsNotEmpty(t *testing.T) {
	ns := controlplanetest.Namespace(t, cp.Config())
	missing := schema.GroupVersionKind{Group: "missing.lariat.dev", Version: "v1", Kind: "Absent"}
	for _, kind := range []cache.KindOptions{{MetadataOnly: ptr.To(true)}, {Compact: ptr.To(true)}} {
		f := newCacheFactory(t, cp.Config(), &cache.SharedCacheFactoryOptions{Default: cache.Options{Namespace: ns},
			Kinds: map[schema.GroupVersionKind]cache.KindOptions{missing: kind}})
		informer, err := f.ForKind(missing)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		defer cancel()
		if err := f.Start(ctx); err != nil {
			t.Fatal(err)
		}
		controlplanetest.Eventually(t, time.Minute, "a list failure recorded", func() bool {
			return f.WatchHealth()[missing].LastError != nil
		})
		if _, err := f.GetFull(ctx, missing, ns, "x"); !cache.IsNotSynced(err) {
			t.Fatalf("GetFull of the kind: %v, want NotSynced (the premise)", err)
		}
		metas, err := cache.ListMetadata(informer.GetStore())
		if err == nil {
			t.Errorf("cache.ListMetadata of %s (metadata-only %v, compact %v), which never listed: %d objects and no error, want an error",
				cache.KindLabel(missing), kind.MetadataOnly != nil, kind.Compact != nil, len(metas))
		}
	}
}
