package apply

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/lariat-dev/lariat/pkg/client"
)

// inventory is what a set's inventory ConfigMap records: the kinds the set
// holds, by group and kind only (a version is just a view of an object, and
// a set may move between versions of one kind), and for each kind the
// namespaces its objects are in, so pruning lists only there and works with
// RBAC that covers only those namespaces. The namespace "" stands for
// cluster-scoped objects, and for "anywhere" where an old inventory did not
// record namespaces.
type inventory map[schema.GroupKind]map[string]bool

// add records that the set holds an object of gk in namespace.
func (inv inventory) add(gk schema.GroupKind, namespace string) {
	if inv[gk] == nil {
		inv[gk] = map[string]bool{}
	}
	inv[gk][namespace] = true
}

func (a *Applier) inventoryClient() (*client.Client, error) {
	return a.clients.ForResourceKind(corev1.SchemeGroupVersion.WithResource("configmaps"), "ConfigMap", true)
}

func inventoryName(id *setIdentity) string { return "lariat-set-" + id.hash[:20] }

// legacyInventoryName names the inventory a set had under legacyHash.
func legacyInventoryName(legacyHash string) string { return "lariat-set-" + legacyHash[:20] }

// readInventory reads the set's inventory, and the inventories written
// under its legacy hashes (one per version its owner may have been read
// through), whether or not the set's own exists: a first Apply after the
// upgrade that failed has written the set's inventory already, and the
// legacy ones must still be found and go. It returns the kinds of them all,
// the names of the legacy inventories that exist, which are deleted once
// the set was applied and pruned in full (their kinds are then in the
// set's inventory, or pruned), and the version read of each inventory that
// exists, by name: the precondition of its deletion (see deleteInventory).
func (a *Applier) readInventory(ctx context.Context, id *setIdentity) (inventory, []string, map[string]metav1.Preconditions, error) {
	read := map[string]metav1.Preconditions{}
	inv, err := a.readInventoryNamed(ctx, id.invNamespace, inventoryName(id), read)
	if err != nil {
		return nil, nil, nil, err
	}
	inv = orEmpty(inv)
	var legacyNames []string
	for _, hash := range id.legacyHashes {
		name := legacyInventoryName(hash)
		legacy, err := a.readInventoryNamed(ctx, id.invNamespace, name, read)
		if err != nil {
			return nil, nil, nil, err
		}
		if legacy != nil {
			inv = inv.union(legacy)
			legacyNames = append(legacyNames, name)
		}
	}
	return inv, legacyNames, read, nil
}

// readInventoryNamed returns nil (and no error) when the ConfigMap does not
// exist, and records the UID and resourceVersion it read in read.
func (a *Applier) readInventoryNamed(ctx context.Context, namespace, name string, read map[string]metav1.Preconditions) (inventory, error) {
	c, err := a.inventoryClient()
	if err != nil {
		return nil, err
	}
	cm := &corev1.ConfigMap{}
	err = c.Get(ctx, namespace, name, cm, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read inventory: %w", err)
	}
	read[name] = metav1.Preconditions{UID: &cm.UID, ResourceVersion: &cm.ResourceVersion}
	return parseInventory(cm.Data[inventoryKinds]), nil
}

// recordedOwnerUID returns the UID of the owner the set's inventory was
// last written for (its AnnotationOwnerUID), "" when there is no inventory
// or it records none.
func (a *Applier) recordedOwnerUID(ctx context.Context, id *setIdentity) (types.UID, error) {
	c, err := a.inventoryClient()
	if err != nil {
		return "", err
	}
	cm := &corev1.ConfigMap{}
	err = c.Get(ctx, id.invNamespace, inventoryName(id), cm, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read inventory: %w", err)
	}
	return types.UID(cm.Annotations[AnnotationOwnerUID]), nil
}

// readAs returns the version of inventory name that readInventory read, nil
// if none existed.
func readAs(read map[string]metav1.Preconditions, name string) *metav1.Preconditions {
	if p, ok := read[name]; ok {
		return &p
	}
	return nil
}

func orEmpty(inv inventory) inventory {
	if inv == nil {
		return inventory{}
	}
	return inv
}

func (a *Applier) writeInventory(ctx context.Context, id *setIdentity, inv inventory) error {
	c, err := a.inventoryClient()
	if err != nil {
		return err
	}
	cm := &corev1.ConfigMap{
		TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
		ObjectMeta: metav1.ObjectMeta{
			Name: inventoryName(id), Namespace: id.invNamespace,
			Labels:      map[string]string{LabelInventory: id.hash},
			Annotations: map[string]string{AnnotationOwner: id.ownerDesc, AnnotationSetID: id.id},
		},
		Data: map[string]string{inventoryKinds: inv.format()},
	}
	if id.ownerUID != "" {
		// The owner the inventory was last written for: an owner created
		// again under the set's name rewrites it even when its kinds are
		// the same, so a late deletion pass of the gone owner, whose
		// delete is conditional on the version it read, leaves it.
		cm.Annotations[AnnotationOwnerUID] = string(id.ownerUID)
	}
	body, err := json.Marshal(cm)
	if err != nil {
		return err
	}
	force := true
	err = c.Patch(ctx, id.invNamespace, cm.Name, types.ApplyPatchType, body, &corev1.ConfigMap{},
		metav1.PatchOptions{FieldManager: a.opts.FieldManager, Force: &force})
	if err != nil {
		return fmt.Errorf("write inventory: %w", err)
	}
	return nil
}

// deleteInventory deletes an inventory this pass read as read (its UID
// and resourceVersion), only as it was read: an inventory written since
// (an owner created again under the set's name applied its set while a
// late deletion pass of the gone owner ran) records objects this pass
// never judged, and stays, as does one created since this pass found none
// (read nil).
func (a *Applier) deleteInventory(ctx context.Context, namespace, name string, read *metav1.Preconditions) error {
	if read == nil {
		return nil // none when read: one there now is someone else's
	}
	c, err := a.inventoryClient()
	if err != nil {
		return err
	}
	err = c.Delete(ctx, namespace, name, metav1.DeleteOptions{Preconditions: read})
	if err != nil && !apierrors.IsNotFound(err) && !apierrors.IsConflict(err) {
		return fmt.Errorf("delete inventory: %w", err)
	}
	return nil
}

// format writes one line per kind, "group/Kind" ("/ConfigMap" for the core
// group) followed by the kind's namespaces separated by spaces (none for
// cluster-scoped kinds), sorted.
func (inv inventory) format() string {
	lines := make([]string, 0, len(inv))
	for _, gk := range inv.kinds() {
		fields := []string{gk.Group + "/" + gk.Kind}
		for _, ns := range slices.Sorted(maps.Keys(inv[gk])) {
			if ns != "" {
				fields = append(fields, ns)
			}
		}
		lines = append(lines, strings.Join(fields, " "))
	}
	return strings.Join(lines, "\n")
}

// parseInventory reads what format writes, and the lines of inventories
// written before identities dropped the version ("group/version/Kind",
// whose version it ignores) and before namespaces were recorded (such
// kinds are recorded as being anywhere).
func parseInventory(data string) inventory {
	inv := inventory{}
	for _, line := range strings.Split(data, "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		parts := strings.Split(fields[0], "/")
		var gk schema.GroupKind
		switch {
		case len(parts) == 2 && parts[1] != "":
			gk = schema.GroupKind{Group: parts[0], Kind: parts[1]}
		case len(parts) == 3 && parts[1] != "" && parts[2] != "":
			gk = schema.GroupKind{Group: parts[0], Kind: parts[2]}
		default:
			continue
		}
		if len(fields) == 1 {
			inv.add(gk, "")
		}
		for _, ns := range fields[1:] {
			inv.add(gk, ns)
		}
	}
	return inv
}

// kinds returns the inventory's kinds sorted, so pruning runs in a stable
// order.
func (inv inventory) kinds() []schema.GroupKind {
	return slices.SortedFunc(maps.Keys(inv), func(a, b schema.GroupKind) int {
		return strings.Compare(a.Group+"/"+a.Kind, b.Group+"/"+b.Kind)
	})
}

// union returns the kinds and namespaces of both inventories.
func (inv inventory) union(other inventory) inventory {
	out := make(inventory, len(inv)+len(other))
	for _, from := range []inventory{inv, other} {
		for gk, namespaces := range from {
			for ns := range namespaces {
				out.add(gk, ns)
			}
		}
	}
	return out
}
