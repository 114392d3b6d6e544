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

package edgeservice

import (
	"k8s.io/apimachinery/pkg/types"
)

// unplaced are the services placement left short of instances. What frees
// room (a service deleted or made smaller, a node given more room or
// running fewer containers) wakes them: nothing about them changed, so
// no other event would.
type unplaced struct {
	set *lockedMap[types.NamespacedName, struct{}]
}

func newUnplaced() *unplaced {
	return &unplaced{set: new(lockedMap[types.NamespacedName, struct{}])}
}

// mark records whether a service is short of instances. A nil set, of a
// reconciler built without SetupWithManager, records nothing.
func (u *unplaced) mark(key types.NamespacedName, short bool) {
	switch {
	case u == nil:
	case short:
		u.set.set(key, struct{}{})
	default:
		u.set.drop(key)
	}
}

// keys lists the services short of instances.
func (u *unplaced) keys() []types.NamespacedName {
	if u == nil {
		return nil
	}
	return u.set.keys()
}
