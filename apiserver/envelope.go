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
	"net/http"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// envelope is the body of every response of the contract.
type envelope struct {
	Status      int               `json:"status"`
	Message     string            `json:"message"`
	FieldErrors map[string]string `json:"fieldErrors"`
	Data        any               `json:"data"`
}

// apiError is a failure with its HTTP status, a readable sentence and,
// for bad input, the offending fields.
type apiError struct {
	status int
	msg    string
	fields map[string]string
	// retryAfter, when set, is sent as Retry-After, in seconds.
	retryAfter int
}

func (e *apiError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) *apiError {
	return &apiError{status: status, msg: fmt.Sprintf(format, args...)}
}

// badFields is a 400 naming each offending field.
func badFields(fields map[string]string) *apiError {
	return &apiError{status: http.StatusBadRequest, msg: "The request has invalid fields.", fields: fields}
}

func badField(field, msg string) *apiError { return badFields(map[string]string{field: msg}) }

func notFound(format string, args ...any) *apiError {
	return errorf(http.StatusNotFound, format, args...)
}

// fromKube turns an error of the API server into the envelope's terms.
func fromKube(err error) *apiError {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
		return ae
	case apierrors.IsAlreadyExists(err), apierrors.IsConflict(err):
		return errorf(http.StatusConflict, "Conflict: %s.", apierrors.ReasonForError(err))
	case apierrors.IsNotFound(err):
		return notFound("Not found: %v.", err)
	case apierrors.IsInvalid(err):
		fields := map[string]string{}
		var se apierrors.APIStatus
		if errors.As(err, &se) && se.Status().Details != nil {
			for _, c := range se.Status().Details.Causes {
				fields[c.Field] = c.Message
			}
		}
		return &apiError{status: http.StatusBadRequest, msg: fmt.Sprintf("The API server refused the object: %v.", err), fields: fields}
	case apierrors.IsForbidden(err):
		return errorf(http.StatusForbidden, "The facade may not do this: %v.", err)
	case apierrors.IsServiceUnavailable(err), apierrors.IsServerTimeout(err), apierrors.IsTimeout(err),
		apierrors.IsTooManyRequests(err), utilnet.IsConnectionRefused(err), utilnet.IsConnectionReset(err), isNetError(err):
		return errorf(http.StatusServiceUnavailable, "The Kubernetes API server is unavailable: %v.", err)
	}
	return errorf(http.StatusInternalServerError, "Internal error: %v.", err)
}

func isNetError(err error) bool {
	var ne interface{ Timeout() bool }
	return errors.As(err, &ne)
}

// bodies are response buffers reused across requests.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// writeJSON encodes the whole answer before sending it, so that it goes
// out with a Content-Length in as few writes as it takes, not in chunks.
func writeJSON(w http.ResponseWriter, e envelope) {
	buf := bodies.Get().(*bytes.Buffer)
	defer func() {
		if buf.Cap() <= maxPooledBody {
			buf.Reset()
			bodies.Put(buf)
		}
	}()
	if a, ok := e.Data.(jsonAppender); ok && e.FieldErrors == nil {
		b := strconv.AppendInt(append(buf.AvailableBuffer(), `{"status":`...), int64(e.Status), 10)
		b = appendString(append(b, `,"message":`...), e.Message)
		b = append(a.appendJSON(append(b, `,"fieldErrors":null,"data":`...)), "}\n"...)
		buf.Write(b)
	} else if err := json.NewEncoder(buf).Encode(e); err != nil {
		buf.Reset()
		_ = json.NewEncoder(buf).Encode(envelope{Status: http.StatusInternalServerError, Message: "The answer could not be encoded."})
		e.Status = http.StatusInternalServerError
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(buf.Len()))
	w.WriteHeader(e.Status)
	_, _ = w.Write(buf.Bytes())
}

// maxPooledBody keeps one huge answer from pinning its buffer.
const maxPooledBody = 1 << 20

func writeOK(w http.ResponseWriter, data any) {
	writeJSON(w, envelope{Status: http.StatusOK, Message: "success", Data: data})
}

func writeError(w http.ResponseWriter, err error) {
	e := fromKube(err)
	if len(e.fields) == 0 {
		e.fields = nil
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	writeJSON(w, envelope{Status: e.status, Message: e.msg, FieldErrors: e.fields})
}
