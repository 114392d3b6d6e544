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

// CBORGate is kube-apiserver's alpha gate (KEP-4222) that stores custom
// resources in etcd as CBOR and serves CBOR to a client that asks for it.
// No client here asks: client-go's ClientsPreferCBOR makes
// controller-runtime's clients, which register no CBOR serializer, fail
// ("no serializers registered for application/cbor"), so the run's
// processes speak JSON and the gate changes storage alone.
const CBORGate = "CBORServingAndStorage=true"
