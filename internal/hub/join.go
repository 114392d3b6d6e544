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
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
	"github.com/edgeplane/edgeplane/internal/shared/hubapi"
)

// joinTimeout bounds a join's calls to the API server.
const joinTimeout = 15 * time.Second

// clockSkew is how far back a certificate's validity starts, so that a
// replica whose clock is a little behind the issuer's accepts it.
const clockSkew = time.Minute

// join takes a device's join request: a token bound to a node, used once,
// before it expires, buys a certificate of that node for the device's key.
func (h *Hub) join(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		h.writeStatus(w, apierrors.NewMethodNotSupported(edgev1alpha1.GroupVersion.WithResource("joins").GroupResource(), r.Method))
		return
	}
	if !h.joins.Allow() {
		// Joins are unauthenticated until the token is checked, and each
		// reads the API server: a flood of them is refused here.
		w.Header().Set("Retry-After", "1")
		h.refuseJoin(w, "", &hubapi.JoinRefusal{Reason: "TooManyRequests", Message: "the hub takes at most 200 joins a second; try again in a second"})
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), joinTimeout)
	defer cancel()
	req := hubapi.JoinRequest{}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if err != nil {
		h.refuseJoin(w, "", &hubapi.JoinRefusal{Reason: hubapi.RefusedBadRequest, Message: "the join request is not JSON: " + err.Error()})
		return
	}
	resp, node, refusal := h.admit(ctx, req)
	if refusal != nil {
		h.refuseJoin(w, node, refusal)
		return
	}
	h.metrics.joins.WithLabelValues("Joined").Inc()
	h.log.Info("A device joined", "node", node, "remote", r.RemoteAddr)
	h.event(node, corev1.EventTypeNormal, "Joined", "A device joined as this node from %s; its certificate is valid until %s.", r.RemoteAddr, resp.notAfter.UTC().Format(time.RFC3339))
	writeJSON(w, http.StatusOK, resp.JoinResponse)
}

type admitted struct {
	hubapi.JoinResponse
	notAfter time.Time
}

// admit checks a join request and, when it passes, marks the token used
// and issues the certificate. Marking is a compare-and-swap on the
// Secret's resourceVersion: of two devices racing with one token, one
// joins and the other is told the token was used.
func (h *Hub) admit(ctx context.Context, req hubapi.JoinRequest) (*admitted, string, *hubapi.JoinRefusal) {
	t, err := hubapi.ParseToken(req.Token)
	if err != nil {
		return nil, "", &hubapi.JoinRefusal{Reason: hubapi.RefusedTokenMalformed, Message: err.Error()}
	}
	csr, err := parseCSR(req.CSR)
	if err != nil {
		return nil, "", &hubapi.JoinRefusal{Reason: hubapi.RefusedBadRequest, Message: err.Error()}
	}
	want := req.Node
	if cn := csr.Subject.CommonName; cn != "" {
		if want != "" && want != cn {
			return nil, "", &hubapi.JoinRefusal{Reason: hubapi.RefusedBadRequest, Message: fmt.Sprintf("the request names node %s and its csr node %s", want, cn)}
		}
		want = cn
	}
	for attempt := 0; ; attempt++ {
		s := &corev1.Secret{}
		err := h.api.Get(ctx, client.ObjectKey{Namespace: h.o.Namespace, Name: hubapi.JoinSecretName(t.ID)}, s)
		if apierrors.IsNotFound(err) {
			s = nil
		} else if err != nil {
			return nil, "", &hubapi.JoinRefusal{Reason: "Unavailable", Message: "the hub cannot read the token now; try again: " + err.Error()}
		}
		now := h.o.Clock.Now()
		node, refusal := hubapi.CheckToken(s, t, want, now)
		if refusal != nil {
			return nil, node, refusal
		}
		n := &edgev1alpha1.EdgeNode{}
		if err := h.api.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
			if apierrors.IsNotFound(err) {
				return nil, "", &hubapi.JoinRefusal{Reason: hubapi.RefusedNodeMissing, Message: fmt.Sprintf("node %s, which token %s joins, no longer exists", node, t.ID)}
			}
			return nil, "", &hubapi.JoinRefusal{Reason: "Unavailable", Message: "the hub cannot read the node now; try again: " + err.Error()}
		}
		err = h.c.Update(ctx, hubapi.MarkUsed(s, now), fieldOwner)
		if apierrors.IsConflict(err) && attempt < 3 {
			continue // read again: used by another device, or edited
		}
		if err != nil {
			return nil, "", &hubapi.JoinRefusal{Reason: "Unavailable", Message: "the hub cannot mark the token used now; try again: " + err.Error()}
		}
		notBefore := now.Add(-clockSkew)
		if revoked, ok := revokedBefore(n); ok && notBefore.Before(revoked) {
			notBefore = revoked
		}
		cert, err := h.ca.nodeCertificate(node, csr, notBefore, h.o.CertValidity)
		if err != nil {
			return nil, node, &hubapi.JoinRefusal{Reason: "InternalError", Message: "the hub could not sign the certificate; issue a new token: " + err.Error()}
		}
		return &admitted{JoinResponse: hubapi.JoinResponse{Node: node, Certificate: string(cert), CACert: string(h.ca.certPEM), LeaseNamespace: h.o.LeaseNamespace},
			notAfter: notBefore.Add(h.o.CertValidity)}, node, nil
	}
}

// refuseJoin answers a refused join with a Status whose cause names the
// reason, counts it, and tells the node's Events when the token named one.
func (h *Hub) refuseJoin(w http.ResponseWriter, node string, r *hubapi.JoinRefusal) {
	code, reason := http.StatusUnauthorized, metav1.StatusReasonUnauthorized
	switch r.Reason {
	case hubapi.RefusedWrongNode, hubapi.RefusedNodeMissing:
		code, reason = http.StatusForbidden, metav1.StatusReasonForbidden
	case hubapi.RefusedBadRequest, hubapi.RefusedTokenMalformed:
		code, reason = http.StatusBadRequest, metav1.StatusReasonBadRequest
	case "Unavailable":
		code, reason = http.StatusServiceUnavailable, metav1.StatusReasonServiceUnavailable
	case "InternalError":
		code, reason = http.StatusInternalServerError, metav1.StatusReasonInternalError
	case "TooManyRequests":
		code, reason = http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests
	}
	h.metrics.joins.WithLabelValues(r.Reason).Inc()
	h.log.Info("A join was refused", "reason", r.Reason, "node", node, "message", r.Message)
	if node != "" && r.Reason != "Unavailable" && r.Reason != "TooManyRequests" {
		h.event(node, corev1.EventTypeWarning, "JoinRefused", "A device's join was refused (%s): %s", r.Reason, r.Message)
	}
	st := metav1.Status{TypeMeta: metav1.TypeMeta{Kind: "Status", APIVersion: "v1"}, Status: metav1.StatusFailure, Code: int32(code), Reason: reason,
		Message: r.Message, Details: &metav1.StatusDetails{Causes: []metav1.StatusCause{{Type: metav1.CauseType(r.Reason), Message: r.Message}}}}
	writeJSON(w, code, st)
}

// renew issues a new certificate for a new key of an authenticated node.
func (h *Hub) renew(w http.ResponseWriter, r *http.Request, node string) {
	req := hubapi.RenewRequest{}
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err == nil {
		err = json.Unmarshal(body, &req)
	}
	if r.Method != http.MethodPost || err != nil {
		h.refuse(w, "Invalid", apierrors.NewBadRequest("a renewal is a POST of {\"csr\": PEM}"))
		return
	}
	csr, err := parseCSR(req.CSR)
	if err == nil && csr.Subject.CommonName != "" && csr.Subject.CommonName != node {
		err = fmt.Errorf("node %s may renew only its own certificate, not %s's", node, csr.Subject.CommonName)
	}
	if err != nil {
		h.refuse(w, "Invalid", apierrors.NewBadRequest(err.Error()))
		return
	}
	n := h.node(node)
	notBefore := h.o.Clock.Now().Add(-clockSkew)
	if err := h.cache.Get(r.Context(), client.ObjectKey{Name: node}, n); err == nil {
		if revoked, ok := revokedBefore(n); ok && notBefore.Before(revoked) {
			notBefore = revoked
		}
	}
	cert, err := h.ca.nodeCertificate(node, csr, notBefore, h.o.CertValidity)
	if err != nil {
		h.writeStatus(w, apierrors.NewInternalError(err))
		return
	}
	h.metrics.renewals.Inc()
	h.log.V(1).Info("Renewed a node's certificate", "node", node)
	writeJSON(w, http.StatusOK, hubapi.RenewResponse{Certificate: string(cert)})
}

// event records an Event on node, as the cache has it (with its UID, so
// that kubectl describe finds it); nothing when the node is not there.
func (h *Hub) event(node, typ, reason, format string, args ...any) {
	n := h.node(node)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	if err := h.cache.Get(ctx, client.ObjectKey{Name: node}, n); err != nil {
		return
	}
	n.GetObjectKind().SetGroupVersionKind(edgev1alpha1.GroupVersion.WithKind("EdgeNode"))
	h.rec.Eventf(n, nil, typ, reason, "Join", format, args...)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_, _ = w.Write(b)
}
