package httpcore

import (
	"net"
	"net/netip"
	"strconv"
	"time"
)

// accessEntry is one request's access-log line.
type accessEntry struct {
	when      time.Time
	method    string
	path      []byte
	status    int
	bytes     int
	duration  time.Duration
	requestID string
	remote    netip.Addr
	remoteStr string // when remote is not an IP address
	route     string
}

// logRequest writes e as the line Handle writes for the record
// "request" with the attributes method, path, status, bytes, duration,
// request_id, remote and route (TestAccessLineMatchesHandle), without
// building a slog.Record: no attribute values to box, convert and resolve
// on the one log written on every request.
func (h *AccessHandler) logRequest(e *accessEntry) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := (*h.buf)[:0]
	if h.json {
		b = append(b, `{"time":"`...)
		b = e.when.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"request","method":`...)
		b = appendJSONString(b, e.method)
		b = append(b, `,"path":`...)
		b = appendJSONString(b, string(e.path)) // no allocation: the conversion does not escape
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(e.status), 10)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, int64(e.bytes), 10)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64(e.duration), 10)
		b = append(b, `,"request_id":`...)
		b = appendJSONString(b, e.requestID)
		b = append(b, `,"remote":"`...)
		if e.remote.IsValid() {
			b = e.remote.AppendTo(b)
			b = append(b, '"')
		} else {
			b = appendJSONString(b[:len(b)-1], e.remoteStr)
		}
		b = append(b, `,"route":`...)
		b = appendJSONString(b, e.route)
		b = append(b, "}\n"...)
	} else {
		b = append(b, "time="...)
		b = e.when.AppendFormat(b, "2006-01-02T15:04:05.000Z07:00")
		b = append(b, " level=INFO msg=request method="...)
		b = appendText(b, e.method)
		b = append(b, " path="...)
		b = appendText(b, string(e.path))
		b = append(b, " status="...)
		b = strconv.AppendInt(b, int64(e.status), 10)
		b = append(b, " bytes="...)
		b = strconv.AppendInt(b, int64(e.bytes), 10)
		b = append(b, " duration="...)
		b = append(b, e.duration.String()...)
		b = append(b, " request_id="...)
		b = appendText(b, e.requestID)
		b = append(b, " remote="...)
		if e.remote.IsValid() {
			b = e.remote.AppendTo(b)
		} else {
			b = appendText(b, e.remoteStr)
		}
		b = append(b, " route="...)
		b = appendText(b, e.route)
		b = append(b, '\n')
	}
	*h.buf = b
	_, err := h.w.Write(b)
	return err
}

// remoteAddr is the client's IP address without allocating, or (for a
// non-TCP address) its text.
func remoteAddr(a net.Addr) (netip.Addr, string) {
	if t, ok := a.(*net.TCPAddr); ok {
		if ip, ok := netip.AddrFromSlice(t.IP); ok {
			return ip.Unmap(), ""
		}
		return netip.Addr{}, t.IP.String()
	}
	return netip.Addr{}, a.String()
}
