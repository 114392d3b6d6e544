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

package main

import "os"

// CBORGate is kube-apiserver's alpha gate (KEP-4222) that stores custom
// resources in etcd as CBOR and serves CBOR to a client that asks for it.
const CBORGate = "CBORServingAndStorage=true"

// turnOnCBOR sets client-go's CBOR gates for every process the run starts
// from here on (they inherit the environment). A client-go client built
// from its content defaults then asks for CBOR; controller-runtime's typed
// clients keep their JSON codec.
func turnOnCBOR() error {
	for _, gate := range []string{"KUBE_FEATURE_ClientsAllowCBOR", "KUBE_FEATURE_ClientsPreferCBOR"} {
		if err := os.Setenv(gate, "true"); err != nil {
			return err
		}
	}
	return nil
}
