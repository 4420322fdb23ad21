package lasso_test

import (
	"errors"
	"fmt"
	"testing"

	lassocache "github.com/rancher/lasso/pkg/cache"
	lassocontroller "github.com/rancher/lasso/pkg/controller"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/scheme"

	lasso "github.com/lariat-dev/lariat/compat/lasso"
	widgetv1 "github.com/lariat-dev/lariat/compat/lasso/testdata/wrangler/apis/widgets.lasso.lariat.dev/v1"
	"github.com/lariat-dev/lariat/compat/lasso/testdata/wrangler/generated/controllers/widgets.lasso.lariat.dev"
	"github.com/lariat-dev/lariat/pkg/controlplane/controlplanetest"
	"github.com/lariat-dev/lariat/pkg/crd"
)

// A wrangler controller of a kind outside the scheme is refused: Start
// fails with a *lasso.NotInSchemeError. Until then (wrangler operators
// create and read objects while they set up, before Start) its client must
// fail with an error too, the same one, not panic on the nil lasso client
// the adapter's error controller hands to wrangler's generated code: the
// doc of ForResourceKind says the controller returned meanwhile "does
// nothing", and Lariat does not panic on bad input.
func TestClientOfAKindOutsideTheSchemeFailsWithoutPanicking(t *testing.T) {
	if err := crd.Install(t.Context(), cp.Config(), crd.Type{GVK: widgetGVK, Status: true}.CRD()); err != nil {
		t.Fatal(err)
	}
	ns := controlplanetest.Namespace(t, cp.Config())
	shared, err := lasso.NewSharedControllerFactoryFromConfigWithOptions(cp.Config(), scheme.Scheme, &lassocontroller.SharedControllerFactoryOptions{
		CacheOptions: &lassocache.SharedCacheFactoryOptions{DefaultNamespace: ns},
	})
	if err != nil {
		t.Fatal(err)
	}
	factory, err := widgets.NewFactoryFromConfigWithOptions(cp.Config(), &widgets.FactoryOptions{SharedControllerFactory: shared})
	if err != nil {
		t.Fatal(err)
	}
	create := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("panicked: %v", r)
			}
		}()
		_, err = factory.Widgets().V1().Widget().Create(&widgetv1.Widget{ObjectMeta: metav1.ObjectMeta{Name: "w", Namespace: ns}})
		return err
	}
	err = create()
	var notInScheme *lasso.NotInSchemeError
	if !errors.As(err, &notInScheme) {
		t.Errorf("Create through the controller of a kind outside the scheme: %v, want a *lasso.NotInSchemeError", err)
	}
}
