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

// Package hubapi is what the edge hub, the agent and kubectl edge share:
// the join token and the Secret that holds it, the hub's wire types and
// the pinned CA hash. It has no server code, so that the agent links only
// this much of the hub.
package hubapi

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"regexp"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// A join token is <id>.<secret>, as kubeadm's bootstrap tokens are: the id
// names the Secret that holds it, the secret proves the holder was given
// it. The Secret keeps only a hash of the secret half, so a reader of
// Secrets cannot join a device with what it reads.
var tokenPattern = regexp.MustCompile(`^([a-z0-9]{6})\.([a-z0-9]{16})$`)

const (
	// SecretTypeJoinToken is the type of the Secrets that hold join tokens.
	SecretTypeJoinToken corev1.SecretType = "edge.edgeplane.io/join-token"
	// LabelJoinNode on a join token's Secret names the node it joins.
	LabelJoinNode = "edge.edgeplane.io/join-node"

	// Keys of a join token's Secret.
	keyNode       = "node"
	keySecretHash = "secret-sha256"
	keyExpiration = "expiration"
	keyUsedAt     = "used-at"

	// tokenAlphabet is what ids and secrets are drawn from.
	tokenAlphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
)

// JoinSecretName is the name of the Secret of token id.
func JoinSecretName(id string) string { return "edgeplane-join-" + id }

// Token is a parsed join token.
type Token struct{ ID, Secret string }

func (t Token) String() string { return t.ID + "." + t.Secret }

// ParseToken parses <id>.<secret>.
func ParseToken(s string) (Token, error) {
	m := tokenPattern.FindStringSubmatch(s)
	if m == nil {
		return Token{}, fmt.Errorf("a join token is 6 and 16 lowercase letters or digits joined by a dot (abcdef.0123456789abcdef)")
	}
	return Token{ID: m[1], Secret: m[2]}, nil
}

// NewToken draws a token from crypto/rand.
func NewToken() (Token, error) {
	out := make([]byte, 0, 22)
	b := make([]byte, 64)
	for len(out) < cap(out) {
		if _, err := rand.Read(b); err != nil {
			return Token{}, err
		}
		for _, c := range b {
			// Bytes past the last whole multiple of the alphabet's size
			// are dropped, so every character is equally likely.
			if int(c) < 256-256%len(tokenAlphabet) && len(out) < cap(out) {
				out = append(out, tokenAlphabet[int(c)%len(tokenAlphabet)])
			}
		}
	}
	return Token{ID: string(out[:6]), Secret: string(out[6:])}, nil
}

// JoinSecret is the Secret in namespace that lets the holder of t join node
// until expires.
func JoinSecret(t Token, namespace, node string, expires time.Time) *corev1.Secret {
	sum := sha256.Sum256([]byte(t.Secret))
	return &corev1.Secret{
		ObjectMeta: metav1.ObjectMeta{Name: JoinSecretName(t.ID), Namespace: namespace, Labels: map[string]string{LabelJoinNode: node}},
		Type:       SecretTypeJoinToken,
		Data: map[string][]byte{
			keyNode:       []byte(node),
			keySecretHash: []byte(hex.EncodeToString(sum[:])),
			keyExpiration: []byte(expires.UTC().Format(time.RFC3339)),
		},
	}
}

// JoinRefusal is why a join was refused: a reason a script can match and
// a sentence a person can act on.
type JoinRefusal struct {
	Reason  string
	Message string
}

func (r *JoinRefusal) Error() string { return r.Message }

// Reasons a join is refused.
const (
	RefusedTokenMalformed = "TokenMalformed"
	RefusedTokenUnknown   = "TokenUnknown"
	RefusedTokenInvalid   = "TokenInvalid"
	RefusedTokenExpired   = "TokenExpired"
	RefusedTokenUsed      = "TokenUsed"
	RefusedWrongNode      = "WrongNode"
	RefusedNodeMissing    = "NodeMissing"
	RefusedBadRequest     = "BadRequest"
)

// CheckToken says whether secret s admits t for node want (empty: any) at
// now, and the node it joins. It changes nothing: the caller marks the
// token used.
func CheckToken(s *corev1.Secret, t Token, want string, now time.Time) (string, *JoinRefusal) {
	if s == nil || s.Type != SecretTypeJoinToken {
		return "", &JoinRefusal{RefusedTokenUnknown, fmt.Sprintf("join token %s is not known to the hub: it was never issued, or was deleted after it expired", t.ID)}
	}
	sum := sha256.Sum256([]byte(t.Secret))
	if subtle.ConstantTimeCompare([]byte(hex.EncodeToString(sum[:])), s.Data[keySecretHash]) != 1 {
		return "", &JoinRefusal{RefusedTokenInvalid, fmt.Sprintf("join token %s: the secret half does not match; copy the whole token printed by kubectl edge node add", t.ID)}
	}
	node := string(s.Data[keyNode])
	if Used(s) {
		return node, &JoinRefusal{RefusedTokenUsed, fmt.Sprintf("join token %s was already used at %s; each token joins one device once: issue a new one with kubectl edge node token %s", t.ID, s.Data[keyUsedAt], node)}
	}
	exp, err := time.Parse(time.RFC3339, string(s.Data[keyExpiration]))
	if err != nil || !now.Before(exp) {
		return node, &JoinRefusal{RefusedTokenExpired, fmt.Sprintf("join token %s expired at %s; issue a new one with kubectl edge node token %s", t.ID, string(s.Data[keyExpiration]), node)}
	}
	if want != "" && want != node {
		return node, &JoinRefusal{RefusedWrongNode, fmt.Sprintf("join token %s joins node %s, not %s", t.ID, node, want)}
	}
	return node, nil
}

// MarkUsed returns a copy of s marked used at now.
func MarkUsed(s *corev1.Secret, now time.Time) *corev1.Secret {
	s = s.DeepCopy()
	s.Data[keyUsedAt] = []byte(now.UTC().Format(time.RFC3339))
	return s
}

// Used says whether a join token's Secret was used to join.
func Used(s *corev1.Secret) bool { return len(s.Data[keyUsedAt]) > 0 }

// Expired says whether a join token's Secret is past its expiration at now,
// so that it can be deleted.
func Expired(s *corev1.Secret, now time.Time) bool {
	exp, err := time.Parse(time.RFC3339, string(s.Data[keyExpiration]))
	return err != nil || !now.Before(exp)
}
