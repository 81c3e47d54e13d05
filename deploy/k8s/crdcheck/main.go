// Command crdcheck decodes the custom resources of rendered manifests into their projects'
// own Go API types, strictly: an unknown field (a typo, a field at the wrong level) or a
// value of the wrong type fails, which the Kubernetes schemas of kubernetes-validate
// cannot check for CRDs. Reads multi-document YAML from the files named (or stdin),
// prints "ok <apiVersion> <kind> <name>" per object checked and "skip ..." for kinds it
// does not know; exits 1 on the first decoding error.
package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"

	monitoringv1 "github.com/prometheus-operator/prometheus-operator/pkg/apis/monitoring/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	gatewayv1 "sigs.k8s.io/gateway-api/apis/v1"
	sigsyaml "sigs.k8s.io/yaml"
)

// typeMeta is what every document is read as first, to choose its Go type.
type typeMeta struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
}

// known maps apiVersion/kind to a fresh value of its Go type.
var known = map[string]func() any{
	"gateway.networking.k8s.io/v1/HTTPRoute":  func() any { return &gatewayv1.HTTPRoute{} },
	"gateway.networking.k8s.io/v1/Gateway":    func() any { return &gatewayv1.Gateway{} },
	"monitoring.coreos.com/v1/PrometheusRule": func() any { return &monitoringv1.PrometheusRule{} },
	"monitoring.coreos.com/v1/PodMonitor":     func() any { return &monitoringv1.PodMonitor{} },
	"monitoring.coreos.com/v1/ServiceMonitor": func() any { return &monitoringv1.ServiceMonitor{} },
}

func check(r io.Reader, source string) error {
	docs := yaml.NewYAMLReader(bufio.NewReader(r))
	for {
		doc, err := docs.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if len(bytes.TrimSpace(doc)) == 0 {
			continue
		}
		var meta typeMeta
		if err := sigsyaml.Unmarshal(doc, &meta); err != nil {
			return fmt.Errorf("%s: %w", source, err)
		}
		if meta.Kind == "" {
			continue
		}
		newObj, ok := known[meta.APIVersion+"/"+meta.Kind]
		if !ok {
			fmt.Printf("skip %s %s %s\n", meta.APIVersion, meta.Kind, meta.Metadata.Name)
			continue
		}
		if err := sigsyaml.UnmarshalStrict(doc, newObj()); err != nil {
			return fmt.Errorf("%s: %s %s: %w", source, meta.Kind, meta.Metadata.Name, err)
		}
		fmt.Printf("ok %s %s %s\n", meta.APIVersion, meta.Kind, meta.Metadata.Name)
	}
}

func main() {
	var err error
	if len(os.Args) < 2 {
		err = check(os.Stdin, "stdin")
	}
	for _, path := range os.Args[1:] {
		f, openErr := os.Open(path)
		if openErr != nil {
			err = openErr
			break
		}
		err = check(f, path)
		f.Close()
		if err != nil {
			break
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "crdcheck:", err)
		os.Exit(1)
	}
}
