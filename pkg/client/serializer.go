package client

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
)

// unstructuredSerializer encodes and decodes kinds that are not in the
// scheme as *unstructured.Unstructured, including watch streams. client-go's
// dynamic client has the same thing, unexported.
type unstructuredSerializer struct {
	// watchEvents decodes the envelope of watch events (metav1.WatchEvent);
	// the objects inside are decoded as unstructured.
	watchEvents runtime.Serializer
}

// newUnstructuredSerializer builds the serializer with a scheme of its own
// for the watch envelope, rather than a package-level one.
func newUnstructuredSerializer() unstructuredSerializer {
	s := runtime.NewScheme()
	metav1.AddToGroupVersion(s, schema.GroupVersion{Version: "v1"})
	return unstructuredSerializer{watchEvents: json.NewSerializerWithOptions(json.DefaultMetaFactory, s, s, json.SerializerOptions{})}
}

func (u unstructuredSerializer) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{{
		MediaType:        runtime.ContentTypeJSON,
		MediaTypeType:    "application",
		MediaTypeSubType: "json",
		EncodesAsText:    true,
		Serializer:       unstructured.UnstructuredJSONScheme,
		StreamSerializer: &runtime.StreamSerializerInfo{
			EncodesAsText: true,
			Serializer:    u.watchEvents,
			Framer:        json.Framer,
		},
	}}
}

func (unstructuredSerializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (unstructuredSerializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}
