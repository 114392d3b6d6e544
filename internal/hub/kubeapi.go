/*
Copyright 2026 The edgeplane Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package hub

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strconv"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/scheme"
)

// agentFieldManager is the field manager of an agent's status reports
// (agent.FieldOwner): the hub writes them under it and no other, so that
// a node can never write as the controller.
const agentFieldManager = "edge-agent"

// maxBody bounds a node's request body: a report of 2,048 containers.
const maxBody = 3 << 20

// serveAPI answers an authenticated node's request of the Kubernetes-API
// subset: its Lease from memory, its assignment and node from the
// informers, its report forwarded to the API server.
func (h *Hub) serveAPI(w http.ResponseWriter, r *http.Request, node string, req request) {
	switch req.resource {
	case resLeases:
		h.serveLease(w, r, node, req)
	case resAssignments:
		if req.verb == "watch" {
			h.watchAssignment(w, r, node)
			return
		}
		a := &edgev1alpha1.NodeAssignment{}
		err := h.cache.Get(r.Context(), client.ObjectKey{Name: node}, a)
		switch {
		case req.verb == "get":
			h.writeObject(w, http.StatusOK, a, err)
		case apierrors.IsNotFound(err):
			h.writeObject(w, http.StatusOK, &edgev1alpha1.NodeAssignmentList{ListMeta: metav1.ListMeta{ResourceVersion: "0"}}, nil)
		default:
			list := &edgev1alpha1.NodeAssignmentList{}
			if err == nil {
				list.ResourceVersion, list.Items = a.ResourceVersion, []edgev1alpha1.NodeAssignment{*a}
			}
			h.writeObject(w, http.StatusOK, list, err)
		}
	case resNodes:
		h.serveNode(w, r, node, req)
	case resSecrets:
		s := &corev1.Secret{}
		err := h.cache.Get(r.Context(), client.ObjectKey{Namespace: req.namespace, Name: node}, s)
		h.writeObject(w, http.StatusOK, s, err)
	}
}

// serveLease takes a node's heartbeat: the Lease the agent renews lives in
// the hub's memory, and only the node's transitions reach the API server.
func (h *Hub) serveLease(w http.ResponseWriter, r *http.Request, node string, req request) {
	if req.verb == "get" {
		at, ok := h.live.lastBeat(node)
		if !ok {
			h.writeStatus(w, apierrors.NewNotFound(coordinationv1.Resource("leases"), node))
			return
		}
		h.writeObject(w, http.StatusOK, h.lease(node, at), nil)
		return
	}
	in := &coordinationv1.Lease{}
	if err := decodeBody(r, in); err != nil {
		h.writeStatus(w, err)
		return
	}
	if in.Name != node {
		h.refuse(w, "Forbidden", apierrors.NewForbidden(coordinationv1.Resource("leases"), in.Name, fmt.Errorf("node %s may renew only its own Lease", node)))
		return
	}
	at := h.live.beat(r.Context(), node)
	code := http.StatusOK
	if req.verb == "create" {
		code = http.StatusCreated
	}
	h.writeObject(w, code, h.lease(node, at), nil)
}

// lease is the Lease a node's agent sees: its own, renewed at its last
// heartbeat here.
func (h *Hub) lease(node string, at time.Time) *coordinationv1.Lease {
	renew := metav1.NewMicroTime(at)
	dur := int32(h.o.GracePeriod / time.Second)
	return &coordinationv1.Lease{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: h.o.LeaseNamespace, ResourceVersion: strconv.FormatInt(at.UnixNano(), 10)},
		Spec:       coordinationv1.LeaseSpec{HolderIdentity: &node, LeaseDurationSeconds: &dur, RenewTime: &renew},
	}
}

// serveNode serves the node its EdgeNode and forwards its status report.
func (h *Hub) serveNode(w http.ResponseWriter, r *http.Request, node string, req request) {
	switch req.verb {
	case "get":
		// Rare (an agent reads its node only when it may not create
		// it): from the API server unless the cache holds whole nodes.
		n := &edgev1alpha1.EdgeNode{}
		var err error
		if h.o.FullNodes {
			err = h.cache.Get(r.Context(), client.ObjectKey{Name: node}, n)
		} else {
			ctx, cancel := context.WithTimeout(r.Context(), forwardTimeout)
			err = h.api.Get(ctx, client.ObjectKey{Name: node}, n)
			cancel()
		}
		h.writeObject(w, http.StatusOK, n, err)
	case "create":
		// Nodes are made by kubectl edge node add, before their token:
		// the agent's registration finds its node there.
		h.writeStatus(w, apierrors.NewAlreadyExists(edgev1alpha1.GroupVersion.WithResource("edgenodes").GroupResource(), node))
	case "patch":
		h.forwardReport(w, r, node)
	}
}

// forwardReport sends a node's status report on to the API server, as
// the node's agent would: a server-side apply of the agent's own fields.
// A report that sets anything else is refused.
func (h *Hub) forwardReport(w http.ResponseWriter, r *http.Request, node string) {
	if ct := r.Header.Get("Content-Type"); ct != string(types.ApplyPatchType) {
		h.refuse(w, "Invalid", &apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusUnsupportedMediaType,
			Reason: metav1.StatusReasonUnsupportedMediaType, Message: fmt.Sprintf("a node reports by server-side apply (%s), not %q", types.ApplyPatchType, ct)}})
		return
	}
	if fm := r.URL.Query().Get("fieldManager"); fm != agentFieldManager {
		h.refuse(w, "Invalid", apierrors.NewBadRequest(fmt.Sprintf("a node reports as field manager %s, not %q", agentFieldManager, fm)))
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
	if err != nil {
		h.writeStatus(w, apierrors.NewRequestEntityTooLargeError(err.Error()))
		return
	}
	report, unknown, err := decodeReport(body)
	if err != nil {
		h.refuse(w, "Invalid", apierrors.NewBadRequest("the report is not an EdgeNode: "+err.Error()))
		return
	}
	if unknown != nil {
		// A newer agent than the CRD: kube-apiserver drops what it does
		// not know, as it would with a warning.
		h.log.V(1).Info("A report holds fields the EdgeNode CRD does not know; they are dropped", "node", node, "error", unknown.Error())
	}
	if err := agentFields(node, body, report); err != nil {
		h.refuse(w, "Forbidden", apierrors.NewForbidden(edgev1alpha1.GroupVersion.WithResource("edgenodes").GroupResource(), node, err))
		return
	}
	f := h.reports.submit(node, body)
	select {
	case <-f.done:
		out, _ := f.out.(*edgev1alpha1.EdgeNode)
		h.writeObject(w, http.StatusOK, out, f.err)
	case <-r.Context().Done():
		// The agent stopped waiting; its retry joins the write.
	}
}

// writeReport is the one write of a node's report: a server-side apply
// of the agent's fields as the agent. The agent reads nothing of the
// object a report returns but its outcome, so kube-apiserver answers with
// the node's metadata alone, and the device is sent that without
// managedFields: a few hundred bytes over its link, not the whole node.
func (h *Hub) writeReport(ctx context.Context, node string, body []byte) (any, error) {
	out := &edgev1alpha1.EdgeNode{ObjectMeta: metav1.ObjectMeta{Name: node}}
	h.metrics.forwarded.WithLabelValues("edgenodes/status").Inc()
	err := h.meta.Patch(ctx, out, client.RawPatch(types.ApplyPatchType, body), reportOptions, "status")
	out.ManagedFields = nil
	return out, err
}

// reportOptions apply a report as the agent, and skip kube-apiserver's
// strict second parse of it (apply bodies are parsed as YAML, once more
// when fields are checked): more than a quarter of what a report's apply
// cost it (docs/benchmarks.md). The hub has decoded the report against
// the types the CRD is generated from, and says itself when a report
// holds fields they do not know.
var reportOptions = metav1.PatchOptions{FieldManager: agentFieldManager, Force: ptr.To(true), FieldValidation: metav1.FieldValidationIgnore}

// forwardTimeout bounds a forwarded write: longer than the agent's own
// deadline (10 s), so that the agent's retry finds it under way.
const forwardTimeout = 20 * time.Second

// decodeReport decodes a report, and says which field of it the EdgeNode
// type lacks, if one does.
func decodeReport(body []byte) (report *edgev1alpha1.EdgeNode, unknown, err error) {
	report = &edgev1alpha1.EdgeNode{}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if unknown = dec.Decode(report); unknown == nil {
		return report, nil, nil
	}
	report = &edgev1alpha1.EdgeNode{}
	return report, unknown, json.Unmarshal(body, report)
}

// agentFields says whether a report sets only what an agent owns: its
// node's nodeInfo, bootTime, containers, their counts and the
// RuntimeReady condition. raw is the report as sent, so that a field the
// types would drop is seen too.
func agentFields(node string, raw []byte, n *edgev1alpha1.EdgeNode) error {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return err
	}
	for k := range top {
		if k != "apiVersion" && k != "kind" && k != "metadata" && k != "status" {
			return fmt.Errorf("a report sets status alone, not %s", k)
		}
	}
	var meta map[string]json.RawMessage
	if err := json.Unmarshal(top["metadata"], &meta); err != nil {
		return fmt.Errorf("metadata: %w", err)
	}
	for k := range meta {
		if k != "name" {
			return fmt.Errorf("a report sets no metadata but the node's name, not %s", k)
		}
	}
	switch {
	case n.Name != node:
		return fmt.Errorf("node %s may report only its own status, not %q's", node, n.Name)
	case n.Status.Status != "" || n.Status.ObservedGeneration != 0:
		return fmt.Errorf("a node's state and observedGeneration are the controller's")
	}
	for _, c := range n.Status.Conditions {
		if c.Type != edgev1alpha1.ConditionRuntimeReady {
			return fmt.Errorf("condition %s is the controller's; a node reports %s alone", c.Type, edgev1alpha1.ConditionRuntimeReady)
		}
	}
	return nil
}

// decodeBody reads an object of at most maxBody bytes in the encoding its
// Content-Type names: client-go sends built-in kinds as protobuf.
func decodeBody(r *http.Request, into runtime.Object) error {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxBody+1))
	if err != nil {
		return apierrors.NewBadRequest(err.Error())
	}
	if len(body) > maxBody {
		return apierrors.NewRequestEntityTooLargeError("a node's request body is at most 3 MiB")
	}
	mediaType, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil {
		mediaType = runtime.ContentTypeJSON
	}
	info, ok := runtime.SerializerInfoForMediaType(codecs.SupportedMediaTypes(), mediaType)
	if !ok {
		return apierrors.NewBadRequest(fmt.Sprintf("the hub reads JSON or protobuf, not %s", mediaType))
	}
	if _, _, err := info.Serializer.Decode(body, nil, into); err != nil {
		return apierrors.NewBadRequest("the body is not the object: " + err.Error())
	}
	return nil
}

// codecs decode what nodes send.
var codecs = serializer.NewCodecFactory(scheme.Scheme)

// encode writes obj as JSON with its kind and apiVersion: the cache's
// objects have no type meta, and client-go's decoder needs it.
func encode(obj runtime.Object) ([]byte, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme.Scheme)
	if err != nil {
		return nil, err
	}
	obj = obj.DeepCopyObject()
	obj.GetObjectKind().SetGroupVersionKind(gvk)
	return json.Marshal(obj)
}

// writeObject writes obj, or err as a Status when there is one.
func (h *Hub) writeObject(w http.ResponseWriter, code int, obj runtime.Object, err error) {
	if err != nil {
		h.writeStatus(w, err)
		return
	}
	b, err := encode(obj)
	if err != nil {
		h.writeStatus(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// writeStatus writes err as a Kubernetes Status, as kube-apiserver does,
// so that client-go reads the reason.
func (h *Hub) writeStatus(w http.ResponseWriter, err error) {
	var st apierrors.APIStatus
	if !errors.As(err, &st) {
		st = apierrors.NewInternalError(err)
	}
	s := st.Status()
	s.Kind, s.APIVersion = "Status", "v1"
	b, _ := json.Marshal(s)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(int(s.Code))
	_, _ = w.Write(b)
}

// refuse writes a refusal of a node's request and counts it.
func (h *Hub) refuse(w http.ResponseWriter, reason string, err error) {
	h.metrics.refusals.WithLabelValues(reason).Inc()
	h.writeStatus(w, err)
}

// watchAssignment streams the changes of the node's assignment from the
// relay, starting from the resourceVersion the agent has, or with the
// initial events when it asks for them (client-go's watch-list).
func (h *Hub) watchAssignment(w http.ResponseWriter, r *http.Request, node string) {
	q := r.URL.Query()
	flusher, ok := w.(http.Flusher)
	if !ok {
		h.writeStatus(w, apierrors.NewInternalError(fmt.Errorf("the connection cannot stream")))
		return
	}
	timeout := watchTimeout
	if s, err := strconv.Atoi(q.Get("timeoutSeconds")); err == nil && s > 0 && time.Duration(s)*time.Second < timeout {
		timeout = time.Duration(s) * time.Second
	}
	// Registered before the current state is read: a change between the
	// two arrives as an event, never falls between them.
	wt := h.relay.add(node)
	defer h.relay.remove(node, wt)
	current := &edgev1alpha1.NodeAssignment{}
	err := h.cache.Get(r.Context(), client.ObjectKey{Name: node}, current)
	if err != nil && !apierrors.IsNotFound(err) {
		h.writeStatus(w, err)
		return
	}
	if err != nil {
		current = nil
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	sent := q.Get("resourceVersion")
	send := func(typ watch.EventType, obj runtime.Object) bool {
		b, err := encode(obj)
		if err != nil {
			return false
		}
		if err := enc.Encode(metav1.WatchEvent{Type: string(typ), Object: runtime.RawExtension{Raw: b}}); err != nil {
			return false
		}
		flusher.Flush()
		return true
	}
	initial := q.Get("sendInitialEvents") == "true"
	switch {
	case initial:
		rv := "0"
		if current != nil {
			rv = current.ResourceVersion
			if !send(watch.Added, current) {
				return
			}
		}
		bookmark := &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{ResourceVersion: rv,
			Annotations: map[string]string{metav1.InitialEventsAnnotationKey: "true"}}}
		if !send(watch.Bookmark, bookmark) {
			return
		}
		sent = rv
	case current != nil && current.ResourceVersion != sent:
		// The agent's copy is older than the hub's: it gets the hub's at
		// once, and no relist from kube-apiserver.
		if !send(watch.Modified, current) {
			return
		}
		sent = current.ResourceVersion
	case current == nil && sent != "" && sent != "0":
		gone := &edgev1alpha1.NodeAssignment{ObjectMeta: metav1.ObjectMeta{Name: node, ResourceVersion: sent}}
		if !send(watch.Deleted, gone) {
			return
		}
		sent = "0"
	}
	end := time.NewTimer(timeout)
	defer end.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-end.C:
			return
		case <-wt.gone:
			return
		case e := <-wt.events:
			if e.obj.ResourceVersion == sent && e.typ != watch.Deleted {
				continue
			}
			if !send(e.typ, e.obj) {
				return
			}
			sent = e.obj.ResourceVersion
			h.metrics.relayLag.Observe(time.Since(e.at).Seconds())
		}
	}
}

// watchTimeout ends a watch after a while, as kube-apiserver does: the
// agent watches again from where it was, served from the hub's cache.
const watchTimeout = 30 * time.Minute
