package e2e

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"toxgate/gateway/harness"
)

// A request with both Content-Length and Transfer-Encoding is refused with
// 400 and its connection closed, so that bytes a proxy in front framed
// differently are never read as a second request. A plain chunked request
// keeps its connection.
func TestRequestSmugglingRefused(t *testing.T) {
	g := harness.Start(t)
	addr := strings.TrimPrefix(g.URL, "http://")
	next := "GET /IsAlive HTTP/1.1\r\nHost: x\r\n\r\n"

	for name, head := range map[string]string{
		"CL then TE":        "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n",
		"TE then CL":        "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n",
		"lower-case names":  "content-length: 5\r\ntransfer-encoding: chunked\r\n",
		"CL 0 then TE":      "Content-Length: 0\r\nTransfer-Encoding: chunked\r\n",
		"TE with spaced CL": "Transfer-Encoding: chunked\r\nContent-Length:  5\r\n",
	} {
		t.Run(name, func(t *testing.T) {
			conn, br := dialRaw(t, addr)
			req := "POST /debug/slow?ms=0 HTTP/1.1\r\nHost: x\r\n" + head + "\r\n0\r\n\r\n" + next
			go conn.Write([]byte(req))
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("reading the answer: %v", err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Transfer-Encoding") {
				t.Fatalf("status %d %s, want 400 naming the headers", resp.StatusCode, body)
			}
			if !resp.Close {
				t.Errorf("answer without Connection: close: %v", resp.Header)
			}
			// The connection is closed: the pipelined request is never answered.
			if second, err := http.ReadResponse(br, nil); err == nil {
				t.Fatalf("the connection stayed open and answered the next request: %d", second.StatusCode)
			}
		})
	}

	t.Run("chunked alone", func(t *testing.T) {
		conn, br := dialRaw(t, addr)
		req := "POST /debug/slow?ms=0 HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n" + next
		go conn.Write([]byte(req))
		for i, want := range []int{200, 200} {
			resp, err := http.ReadResponse(br, nil)
			if err != nil {
				t.Fatalf("answer %d: %v", i+1, err)
			}
			io.ReadAll(resp.Body)
			if resp.StatusCode != want {
				t.Fatalf("answer %d: status %d, want %d", i+1, resp.StatusCode, want)
			}
		}
	})
}

// dialRaw opens a TCP connection to addr that fails reads after a deadline,
// so that a test never hangs on a server that keeps the connection open.
func dialRaw(t *testing.T, addr string) (net.Conn, *bufio.Reader) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	return conn, bufio.NewReader(conn)
}
