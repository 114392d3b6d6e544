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
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

const (
	defaultPageSize = 10
	maxPageSize     = 1000
	maxPageNum      = 1 << 30
	// maxBody bounds request bodies.
	maxBody = 1 << 20
	// maxIDs bounds the ids of one list query.
	maxIDs = 1000
)

// page is a parsed pageNum and pageSize; size -1 means every item.
type page struct {
	num, size int
}

// parsePage reads pageNum (default 1) and pageSize (default 10, at most
// 1000, or -1 for all). Bad values are refused, never clamped.
func parsePage(q url.Values) (page, *apiError) {
	p := page{num: 1, size: defaultPageSize}
	fields := map[string]string{}
	// An empty value, as form serialisers send for an empty field, means
	// not given.
	if v, ok := single(q, "pageNum", fields); ok && v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			fields["pageNum"] = "must be a whole number"
		case n < 1 || n > maxPageNum:
			fields["pageNum"] = fmt.Sprintf("must be between 1 and %d", maxPageNum)
		default:
			p.num = n
		}
	}
	if v, ok := single(q, "pageSize", fields); ok && v != "" {
		n, err := strconv.Atoi(v)
		switch {
		case err != nil:
			fields["pageSize"] = "must be a whole number"
		case n != -1 && (n < 1 || n > maxPageSize):
			fields["pageSize"] = fmt.Sprintf("must be between 1 and %d, or -1 for all", maxPageSize)
		default:
			p.size = n
		}
	}
	if len(fields) > 0 {
		return p, badFields(fields)
	}
	return p, nil
}

// single returns a query parameter given at most once.
func single(q url.Values, name string, fields map[string]string) (string, bool) {
	vs, ok := q[name]
	if !ok {
		return "", false
	}
	if len(vs) > 1 {
		fields[name] = "must be given once"
		return "", false
	}
	return vs[0], true
}

// bounds returns the slice bounds of the page within n items.
func (p page) bounds(n int) (int, int) {
	if p.size < 0 {
		return 0, n
	}
	start := (p.num - 1) * p.size
	if start >= n {
		return n, n
	}
	return start, min(n, start+p.size)
}

// pageOf is the data of a list response.
type pageOf[T any] struct {
	List     []T `json:"list"`
	Total    int `json:"total"`
	PageNum  int `json:"pageNum"`
	PageSize int `json:"pageSize"`
}

func paginate[T any](items []T, p page) pageOf[T] {
	start, end := p.bounds(len(items))
	return pageOf[T]{List: append(make([]T, 0, end-start), items[start:end]...), Total: len(items), PageNum: p.num, PageSize: p.size}
}

// parseIDs reads a list of ids given as name[]=a&name[]=b, name=a or
// both. Empty values are refused.
func parseIDs(q url.Values, name string) ([]string, *apiError) {
	ids := append(append([]string(nil), q[name+"[]"]...), q[name]...)
	if len(ids) == 0 {
		return nil, badField(name, "is required: give at least one id as "+name+"[]=<id>")
	}
	if len(ids) > maxIDs {
		return nil, badField(name, fmt.Sprintf("must hold at most %d ids", maxIDs))
	}
	for i, id := range ids {
		if strings.TrimSpace(id) == "" {
			return nil, badField(fmt.Sprintf("%s[%d]", name, i), "must not be empty")
		}
	}
	return ids, nil
}

// parseBool reads a boolean parameter that defaults to false.
func parseBool(q url.Values, name string) (bool, *apiError) {
	fields := map[string]string{}
	v, ok := single(q, name, fields)
	if len(fields) > 0 {
		return false, badFields(fields)
	}
	if !ok || v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, badField(name, "must be true or false")
	}
	return b, nil
}

// decodeBody reads a JSON body of at most maxBody bytes into v. A body over
// the limit is a 413 whatever it holds; an object that gives a key twice,
// or in two spellings that differ only in case (which encoding/json would
// settle silently, last one wins), is a 400.
func decodeBody(r *http.Request, v any) *apiError {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || mt != "application/json" {
		return errorf(http.StatusUnsupportedMediaType, "The body must be JSON, sent with Content-Type: application/json.")
	}
	data, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxBody))
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return errorf(http.StatusRequestEntityTooLarge, "The body is larger than %d bytes.", maxBody)
	case err != nil:
		return errorf(http.StatusBadRequest, "The body could not be read: %v.", err)
	}
	if key := repeatedKey(data); key != "" {
		return badField(key, "is given more than once (keys are matched without regard to case)")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	if err := dec.Decode(v); err != nil {
		var typeErr *json.UnmarshalTypeError
		switch {
		case errors.As(err, &typeErr) && typeErr.Field != "":
			return badField(typeErr.Field, "must be of type "+typeErr.Type.String())
		case errors.Is(err, io.EOF):
			return errorf(http.StatusBadRequest, "The body is empty; a JSON object is expected.")
		}
		return errorf(http.StatusBadRequest, "The body is not valid JSON: %v.", err)
	}
	if dec.More() {
		return errorf(http.StatusBadRequest, "The body must hold exactly one JSON object.")
	}
	return nil
}

// repeatedKey returns the first key that an object of the JSON document
// gives twice, comparing keys without regard to case, as encoding/json
// matches them to fields; "" when there is none or the document is not
// valid JSON (decoding then says why). Any error ends the walk: the
// decoder does not advance past bad input, so a loop that went on would
// spin on it forever.
func repeatedKey(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	// walk reads one value; done is true once the walk must end, with
	// the repeated key or on an error.
	var walk func() (key string, done bool)
	walk = func() (string, bool) {
		tok, err := dec.Token()
		if err != nil {
			return "", true
		}
		switch tok {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				k, err := dec.Token()
				if err != nil {
					return "", true
				}
				key, _ := k.(string)
				if seen[strings.ToLower(key)] {
					return key, true
				}
				seen[strings.ToLower(key)] = true
				if key, done := walk(); done {
					return key, true
				}
			}
			if _, err := dec.Token(); err != nil {
				return "", true
			}
		case json.Delim('['):
			for dec.More() {
				if key, done := walk(); done {
					return key, true
				}
			}
			if _, err := dec.Token(); err != nil {
				return "", true
			}
		}
		return "", false
	}
	key, _ := walk()
	return key
}
