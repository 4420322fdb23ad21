package leader

import (
	"bytes"
	"io"
	"net/http"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/protobuf"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/scheme"
)

// TestPreconditionIsAddedToProtobufWrites: a protobuf update whose object
// has no resourceVersion gets the pass's, and protobuf DeleteOptions get
// it as their precondition (a UID precondition kept beside it); what
// carries a version of its own keeps it, and nothing else of the body
// changes.
func TestPreconditionIsAddedToProtobufWrites(t *testing.T) {
	uid := types.UID("u-1")
	for _, c := range []struct {
		name, method string
		in, want     runtime.Object
	}{
		{"update", "PUT",
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"x": "y"}}, Data: map[string]string{"a": "b"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", Labels: map[string]string{"x": "y"}, ResourceVersion: "7"}, Data: map[string]string{"a": "b"}}},
		{"update with its own version", "PUT",
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "9"}},
			&corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c", ResourceVersion: "9"}}},
		{"delete", "DELETE",
			&metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationForeground)},
			&metav1.DeleteOptions{PropagationPolicy: new(metav1.DeletePropagationForeground), Preconditions: &metav1.Preconditions{ResourceVersion: new("7")}}},
		{"delete with a UID precondition", "DELETE",
			&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}},
			&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid, ResourceVersion: new("7")}}},
		{"delete with its own version", "DELETE",
			&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: new("9")}},
			&metav1.DeleteOptions{Preconditions: &metav1.Preconditions{ResourceVersion: new("9")}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			pb := protobuf.NewSerializer(scheme.Scheme, scheme.Scheme)
			in, err := runtime.Encode(encoderV1(), c.in)
			if err != nil {
				t.Fatal(err)
			}
			req, err := http.NewRequest(c.method, "https://h/api/v1/namespaces/n/configmaps/c", bytes.NewReader(in))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/vnd.kubernetes.protobuf")
			out, err := withPrecondition(req, "7", "")
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(out.Body)
			got, _, err := pb.Decode(body, nil, nil)
			if err != nil {
				t.Fatalf("the body sent does not decode: %v", err)
			}
			want := c.want.DeepCopyObject()
			want.GetObjectKind().SetGroupVersionKind(got.GetObjectKind().GroupVersionKind())
			if !equalObjects(got, want) {
				t.Errorf("sent %#v, want %#v", got, want)
			}
		})
	}
}

// encoderV1 encodes as client-go does for the core group: protobuf, with
// the kind in the envelope.
func encoderV1() runtime.Encoder {
	return scheme.Codecs.EncoderForVersion(protobuf.NewSerializer(scheme.Scheme, scheme.Scheme), corev1.SchemeGroupVersion)
}

func equalObjects(a, b runtime.Object) bool {
	x, errA := runtime.Encode(encoderV1(), a)
	y, errB := runtime.Encode(encoderV1(), b)
	return errA == nil && errB == nil && bytes.Equal(x, y)
}
