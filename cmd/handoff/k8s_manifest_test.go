package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	k8sjson "sigs.k8s.io/json"
)

const k8sManifest = "../../docs/k8s-sweep-job.yaml"

// k8sObject is one decoded document of a manifest: a Job or a
// PersistentVolumeClaim.
type k8sObject struct {
	job *batchv1.Job
	pvc *corev1.PersistentVolumeClaim
}

// decodeK8sManifest decodes every document of a multi-document manifest
// into the Kubernetes API type its apiVersion and kind name, strictly: a
// field the type does not have (a misspelt or wrongly cased name), a value
// of the wrong type, a bad quantity or a duplicate key is an error naming
// the document and the field. This is the check `kubectl apply` makes
// with server-side field validation.
func decodeK8sManifest(text []byte) ([]k8sObject, error) {
	dec := yaml.NewDecoder(bytes.NewReader(text))
	var objs []k8sObject
	for i := 1; ; i++ {
		var doc map[string]any
		if err := dec.Decode(&doc); errors.Is(err, io.EOF) {
			return objs, nil
		} else if err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
		raw, err := json.Marshal(doc)
		if err != nil {
			return nil, fmt.Errorf("document %d: %v", i, err)
		}
		var obj k8sObject
		var target any
		switch kind := fmt.Sprint(doc["apiVersion"], " ", doc["kind"]); kind {
		case "batch/v1 Job":
			obj.job = &batchv1.Job{}
			target = obj.job
		case "v1 PersistentVolumeClaim":
			obj.pvc = &corev1.PersistentVolumeClaim{}
			target = obj.pvc
		default:
			return nil, fmt.Errorf("document %d: unexpected apiVersion and kind %q", i, kind)
		}
		strict, err := k8sjson.UnmarshalStrict(raw, target,
			k8sjson.DisallowUnknownFields, k8sjson.DisallowDuplicateFields)
		if err == nil && len(strict) > 0 {
			err = errors.Join(strict...)
		}
		if err != nil {
			return nil, fmt.Errorf("document %d (%s): %v", i, doc["kind"], err)
		}
		objs = append(objs, obj)
	}
}

// TestK8sManifestSchema decodes docs/k8s-sweep-job.yaml strictly into the
// batch/v1 Job and core/v1 PersistentVolumeClaim types, and checks what
// SCALE-OUT.md promises of it: an Indexed sweep Job whose completions,
// parallelism and SHARDS agree, and a merge Job on the same image.
func TestK8sManifestSchema(t *testing.T) {
	text, err := os.ReadFile(k8sManifest)
	if err != nil {
		t.Fatal(err)
	}
	objs, err := decodeK8sManifest(text)
	if err != nil {
		t.Fatalf("%s: %v", k8sManifest, err)
	}
	jobs := map[string]*batchv1.Job{}
	pvcs := 0
	for _, o := range objs {
		if o.job != nil {
			jobs[o.job.Name] = o.job
		} else {
			pvcs++
		}
	}
	sweep, merge := jobs["handoff-sweep"], jobs["handoff-merge"]
	if sweep == nil || merge == nil || pvcs != 1 || len(objs) != 3 {
		t.Fatalf("want the handoff-sweep and handoff-merge Jobs and one claim, got %d objects", len(objs))
	}
	checkSweepJob(t, sweep)
	img := sweep.Spec.Template.Spec.Containers[0].Image
	if got := merge.Spec.Template.Spec.Containers[0].Image; got != img {
		t.Errorf("merge image %q, sweep image %q", got, img)
	}
}

// checkSweepJob checks the sweep Job's shape: Indexed, completions =
// parallelism = SHARDS, never restarted in place.
func checkSweepJob(t *testing.T, job *batchv1.Job) {
	t.Helper()
	s := job.Spec
	if s.CompletionMode == nil || *s.CompletionMode != batchv1.IndexedCompletion {
		t.Errorf("completionMode %v, want Indexed", s.CompletionMode)
	}
	if s.Completions == nil || s.Parallelism == nil || *s.Completions != *s.Parallelism {
		t.Fatalf("completions %v and parallelism %v must be set and equal", s.Completions, s.Parallelism)
	}
	shards := ""
	for _, e := range s.Template.Spec.Containers[0].Env {
		if e.Name == "SHARDS" {
			shards = e.Value
		}
	}
	if shards != fmt.Sprint(*s.Completions) {
		t.Errorf("SHARDS %q, completions %d", shards, *s.Completions)
	}
	if s.Template.Spec.RestartPolicy != corev1.RestartPolicyNever {
		t.Errorf("restartPolicy %q, want Never (a retry is a new pod that resumes)", s.Template.Spec.RestartPolicy)
	}
}

// TestK8sManifestRejectsMisspeltFields checks that the strict decoding
// TestK8sManifestSchema relies on fails on a misspelt field at any depth,
// a wrongly cased one, a value of the wrong type and a bad quantity.
func TestK8sManifestRejectsMisspeltFields(t *testing.T) {
	text, err := os.ReadFile(k8sManifest)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{"backoffLimitPerIndex: 3", "backoffLimitPerIndx: 3", `unknown field "spec.backoffLimitPerIndx"`},
		{"completionMode: Indexed", "completionmode: Indexed", `unknown field "spec.completionmode"`},
		{"restartPolicy: Never\n      containers:", "restartPolicy: Never\n      container:", `unknown field "spec.template.spec.container"`},
		{"mountPath: /results}", "mountpath: /results}", `unknown field "spec.template.spec.containers[0].volumeMounts[1].mountpath"`},
		{"accessModes: [ReadWriteMany]", "accesModes: [ReadWriteMany]", `unknown field "spec.accesModes"`},
		{"completions: 8", "completions: eight", "cannot unmarshal string"},
		{"memory: 8Gi}", "memory: 8 GiB}", "quantities must match"},
	} {
		bad := strings.Replace(string(text), tc.from, tc.to, 1)
		if bad == string(text) {
			t.Fatalf("%q is not in %s", tc.from, k8sManifest)
		}
		_, err := decodeK8sManifest([]byte(bad))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s → %s: error %v, want one with %q", tc.from, tc.to, err, tc.want)
		}
	}
}
