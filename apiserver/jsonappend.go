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

package apiserver

import (
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	edgev1alpha1 "github.com/edgeplane/edgeplane/api/v1alpha1"
)

// jsonAppender is data that writes its own JSON. Container pages do: they
// are the facade's largest answers, and encoding/json's reflection was half
// of their cost. The output is byte for byte what encoding/json writes; the
// tests and a fuzz test hold it to that.
type jsonAppender interface {
	appendJSON(b []byte) []byte
}

// containerPage is a page of joined instances, each rendered as a
// Container while it is written: no list of Containers is built.
type containerPage struct {
	page pageOf[instance]
	now  time.Time
}

func (p *containerPage) appendJSON(b []byte) []byte {
	return appendPage(b, p.page.List == nil, len(p.page.List), p.page.Total, p.page.PageNum, p.page.PageSize, func(b []byte, i int) []byte {
		c := toContainer(p.page.List[i], p.now)
		return c.appendJSON(b)
	})
}

// appendPage writes a page of n items, each written by item.
func appendPage(b []byte, null bool, n, total, num, size int, item func(b []byte, i int) []byte) []byte {
	b = append(b, `{"list":`...)
	if null {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i := range n {
			if i > 0 {
				b = append(b, ',')
			}
			b = item(b, i)
		}
		b = append(b, ']')
	}
	b = append(b, `,"total":`...)
	b = strconv.AppendInt(b, int64(total), 10)
	b = append(b, `,"pageNum":`...)
	b = strconv.AppendInt(b, int64(num), 10)
	b = append(b, `,"pageSize":`...)
	b = strconv.AppendInt(b, int64(size), 10)
	return append(b, '}')
}

func (c *container) appendJSON(b []byte) []byte {
	b = strField(b, `{"id":`, c.ID)
	b = strField(b, `,"taskId":`, c.TaskID)
	b = strField(b, `,"name":`, c.Name)
	b = ptrField(b, `,"status":`, c.Status)
	b = intField(b, `,"uptime":`, c.Uptime)
	b = timeField(b, `,"startedTime":`, c.StartedTime)
	b = timeField(b, `,"createdTime":`, c.CreatedTime)
	b = intField(b, `,"taskCreatedTime":`, c.TaskCreatedTime)
	b = strField(b, `,"deployStatus":`, c.DeployStatus)
	b = ptrField(b, `,"failedMessage":`, c.FailedMessage)
	b = intField(b, `,"restartCnt":`, int64(c.RestartCnt))
	b = intField(b, `,"deployNum":`, int64(c.DeployNum))
	b = appendFloat(append(b, `,"cpuUsage":{"total":`...), c.CPUUsage.Total)
	b = append(b, `,"cores":`...)
	if c.CPUUsage.Cores == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, f := range c.CPUUsage.Cores {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendFloat(b, f)
		}
		b = append(b, ']')
	}
	b = intField(append(b, '}'), `,"memoryLimit":`, c.MemoryLimit)
	b = intField(b, `,"memoryUsage":`, c.MemoryUsage)
	b = intField(b, `,"memoryMaxUsage":`, c.MemoryMaxUsage)
	b = intField(b, `,"sizeUsage":`, c.SizeUsage)
	b = intField(b, `,"sizeLimit":`, c.SizeLimit)
	b = strField(b, `,"serviceId":`, c.ServiceID)
	b = strField(b, `,"serviceName":`, c.ServiceName)
	b = strField(b, `,"nodeId":`, c.NodeID)
	b = strField(b, `,"address":`, c.Address)
	b = strField(b, `,"nodeName":`, c.NodeName)
	b = strField(b, `,"nodeArch":`, c.NodeArch)
	b = strField(b, `,"imageId":`, c.ImageID)
	b = strField(b, `,"imageName":`, c.ImageName)
	b = strField(b, `,"imageVersion":`, c.ImageVersion)
	b = strField(b, `,"imageOS":`, c.ImageOS)
	b = strField(b, `,"imageArch":`, c.ImageArch)
	b = append(b, `,"imagePull":`...)
	if p := c.ImagePull; p == nil {
		b = append(b, "null"...)
	} else {
		b = strField(append(b, '{'), `"image":`, p.Image)
		b = strconv.AppendBool(append(b, `,"queued":`...), p.Queued)
		b = intField(b, `,"bytesDone":`, p.BytesDone)
		b = intField(b, `,"bytesTotal":`, p.BytesTotal)
		b = append(b, '}')
	}
	b = intField(b, `,"revision":`, c.Revision)
	return append(b, '}')
}

// nodePage is a page of nodes, each rendered as a node list item while
// it is written.
type nodePage struct {
	page  pageOf[*edgev1alpha1.EdgeNode]
	basic bool
	now   time.Time
	s     *Server
}

func (p *nodePage) appendJSON(b []byte) []byte {
	return appendPage(b, p.page.List == nil, len(p.page.List), p.page.Total, p.page.PageNum, p.page.PageSize, func(b []byte, i int) []byte {
		n := p.s.node(p.page.List[i], p.basic, p.now)
		return n.appendJSON(b)
	})
}

func (n *node) appendJSON(b []byte) []byte {
	b = strField(b, `{"id":`, n.ID)
	b = strField(b, `,"name":`, n.Name)
	b = strField(b, `,"type":`, n.Type)
	b = strField(b, `,"arch":`, n.Arch)
	// The optional fields are all set or, for basic items, all unset.
	if n.Address != nil {
		b = strField(b, `,"address":`, *n.Address)
	}
	if n.Status != nil {
		b = strField(b, `,"status":`, *n.Status)
	}
	if n.TLS != nil {
		b = strconv.AppendBool(append(b, `,"tls":`...), *n.TLS)
	}
	for _, f := range []struct {
		key string
		v   *int32
	}{{`,"containerTotal":`, n.ContainerTotal}, {`,"containerRunning":`, n.ContainerRunning}, {`,"containerManagedTotal":`, n.ContainerManagedTotal}, {`,"containerManagedRunning":`, n.ContainerManagedRunning}} {
		if f.v != nil {
			b = intField(b, f.key, int64(*f.v))
		}
	}
	if n.UpTime != nil {
		b = appendFloat(append(b, `,"upTime":`...), *n.UpTime)
	}
	if n.CreatedTime != nil {
		b = strField(b, `,"createdTime":`, *n.CreatedTime)
	}
	if n.AppTotal != nil {
		b = intField(b, `,"appTotal":`, int64(*n.AppTotal))
	}
	if n.AppRunning != nil {
		b = intField(b, `,"appRunning":`, int64(*n.AppRunning))
	}
	if n.RuntimeReady != nil {
		b = append(b, `,"runtimeReady":`...)
		if *n.RuntimeReady == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendBool(b, **n.RuntimeReady)
		}
	}
	return append(b, '}')
}

// strField, intField, ptrField and timeField write a key (with its comma
// and colon) and a value as encoding/json does.
func strField(b []byte, key, v string) []byte { return appendString(append(b, key...), v) }

func intField(b []byte, key string, v int64) []byte {
	return strconv.AppendInt(append(b, key...), v, 10)
}

func ptrField(b []byte, key string, v *string) []byte {
	if v == nil {
		return append(append(b, key...), "null"...)
	}
	return strField(b, key, *v)
}

// timeField writes RFC 3339 in UTC, as metav1.Time does; null when unset
// or zero.
func timeField(b []byte, key string, t *metav1.Time) []byte {
	b = append(b, key...)
	if t == nil || t.IsZero() {
		return append(b, "null"...)
	}
	return append(t.UTC().AppendFormat(append(b, '"'), time.RFC3339), '"')
}

const hexDigits = "0123456789abcdef"

// plain marks the ASCII bytes a JSON string carries as they are.
var plain = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString quotes s as encoding/json does by default: HTML characters,
// control characters, U+2028 and U+2029 escaped, invalid UTF-8 as U+FFFD.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := plainBlocks(s); i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if plain[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}

// plainBlocks is how many leading bytes of s are plain, in whole blocks
// of eight: most strings are plain, and are skipped eight bytes at a time.
func plainBlocks(s string) int {
	i := 0
	for i+8 <= len(s) && plain8(s[i:i+8]) {
		i += 8
	}
	return i
}

// plain8 reports whether the 8 bytes of s are all plain ASCII, testing
// them at once: no byte is below 0x20, from 0x80, or one of " \ < > &.
func plain8(s string) bool {
	const ones, high = 0x0101010101010101, 0x8080808080808080
	_ = s[7]
	w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
	// (x - ones) & ^x & high has a high bit set where x has a zero byte;
	// (w - ones*n) & ^w & high where w has a byte below n. Both are exact
	// about whether there is one, once no byte is from 0x80.
	q, bs, lt, gt, amp := w^(ones*'"'), w^(ones*'\\'), w^(ones*'<'), w^(ones*'>'), w^(ones*'&')
	return (w|(w-ones*0x20)&^w|(q-ones)&^q|(bs-ones)&^bs|(lt-ones)&^lt|(gt-ones)&^gt|(amp-ones)&^amp)&high == 0
}

// appendFloat writes f as encoding/json does: the shortest form, with an
// exponent only below 1e-6 or from 1e21. The facade's floats are finite.
func appendFloat(b []byte, f float64) []byte {
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return append(b, "null"...) // not reachable from a report; never invalid JSON
	}
	// Agents report tenths; strconv's shortest form costs several times
	// more. Below 1e12 a float is exactly one such decimal or none.
	if f != 0 && math.Abs(f) < 1e12 {
		if k := math.Round(f * 10); k/10 == f {
			n := int64(k)
			if n < 0 {
				b, n = append(b, '-'), -n
			}
			if b = strconv.AppendInt(b, n/10, 10); n%10 != 0 {
				b = append(b, '.', byte('0'+n%10))
			}
			return b
		}
	}
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// clean up e-09 to e-9
		if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}
