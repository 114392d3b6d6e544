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

import "testing"

func TestDNATRules(t *testing.T) {
	for _, tc := range []struct {
		name    string
		targets []string
		want    string
	}{
		{"one target takes every connection", []string{"127.0.0.1:1"},
			"*nat\n-F C\n-A C -p tcp -j DNAT --to-destination 127.0.0.1:1\nCOMMIT\n"},
		{"two share evenly", []string{"127.0.0.1:1", "127.0.0.1:2"},
			"*nat\n-F C\n-A C -p tcp -m statistic --mode random --probability 0.50000 -j DNAT --to-destination 127.0.0.1:1\n-A C -p tcp -j DNAT --to-destination 127.0.0.1:2\nCOMMIT\n"},
		{"three: a third, half the rest, the rest", []string{"a:1", "b:2", "c:3"},
			"*nat\n-F C\n-A C -p tcp -m statistic --mode random --probability 0.33333 -j DNAT --to-destination a:1\n-A C -p tcp -m statistic --mode random --probability 0.50000 -j DNAT --to-destination b:2\n-A C -p tcp -j DNAT --to-destination c:3\nCOMMIT\n"},
		{"none: the chain is emptied", nil, "*nat\n-F C\nCOMMIT\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := dnatRules("C", tc.targets); got != tc.want {
				t.Errorf("dnatRules(%v) =\n%s\nwant\n%s", tc.targets, got, tc.want)
			}
		})
	}
}
