package crd_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/lariat-dev/lariat/pkg/crd"
)

// An operator installs the CRDs the code generator wrote before it creates
// its factories. In a real operator the directory is embedded:
//
//	//go:embed crds
//	var manifests embed.FS
//	crds, err := crd.FromFS(manifests, "crds")
func ExampleInstall() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	crds, err := crd.FromFS(os.DirFS("../.."), "crds")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := crd.Install(ctx, cp.Config(), crds...); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(crds[0].Name, "is served")
	// Output: webapps.demo.lariat.dev is served
}
