package filehttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"toxgate/catalog/filestore"
	"toxgate/gateway/catalogclient"
	"toxgate/gateway/httpcore"
	"toxgate/gateway/pluginhost"
)

// Download serves GET and HEAD /dataset/{id}/resource/{resource_id}/download[/{filename}]:
// the plugin authorizes the caller as for resource_show (an unknown resource
// and one the caller may not read both answer 404, as CKAN does), then the
// bytes stream from the file store with ETag (the SHA-256), Last-Modified,
// Content-Disposition and single-range Range requests; with files.download
// redirect, a file in the bucket is a 302 to a presigned URL instead.
// ?version= (a dataset version's id or name) serves the file the resource
// had in that version.
func (h *Handler) Download(ctx *fasthttp.RequestCtx, caller pluginhost.Identity) {
	dataset, _ := ctx.UserValue("id").(string)
	resID, _ := ctx.UserValue("resource_id").(string)
	notFound := func() {
		h.m.downloads.WithLabelValues("not_found").Inc()
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "Resource not found", "")
	}
	q := map[string]string{"id": resID}
	if v := ctx.QueryArgs().Peek("version"); len(v) > 0 {
		q["version"] = string(v) // the file as of that dataset version
	}
	arg, _ := json.Marshal(q)
	resp, err := h.plugins.CallInternal("resource_file", h.plugins.SiteURL(ctx), caller, arg)
	if err != nil {
		h.m.downloads.WithLabelValues("failed").Inc()
		ctx.Response.Header.Set("Retry-After", "1")
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the catalog is temporarily unavailable; please retry", "")
		return
	}
	var env struct {
		Result struct {
			FileID      string `json:"file_id"`
			Filename    string `json:"filename"`
			PackageID   string `json:"package_id"`
			PackageName string `json:"package_name"`
		}
	}
	if catalogclient.Decode(resp.Status, resp.Body, &env.Result) != nil ||
		(dataset != env.Result.PackageID && dataset != env.Result.PackageName) {
		notFound()
		return
	}
	info, err := h.store.Stat(ctx, env.Result.FileID)
	if errors.Is(err, filestore.ErrNotFound) {
		notFound()
		return
	}
	if err != nil {
		h.m.downloads.WithLabelValues("failed").Inc()
		ctx.Response.Header.Set("Retry-After", "1")
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the file store is unavailable; please retry", "")
		return
	}
	if url, ok, err := h.store.PresignGet(ctx, info, env.Result.Filename); ok {
		// files.download: redirect. The caller is authorized; the URL
		// carries a signature that expires (files.s3.presign_ttl), and
		// the bucket answers Range and conditional requests itself.
		h.m.downloads.WithLabelValues("redirect").Inc()
		ctx.Response.Header.Set("Cache-Control", "no-store")
		ctx.Response.Header.Set("Location", url) // verbatim: the signature covers the query
		ctx.SetStatusCode(fasthttp.StatusFound)
		return
	} else if err != nil {
		h.m.downloads.WithLabelValues("failed").Inc()
		ctx.Response.Header.Set("Retry-After", "1")
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the file store is unavailable; please retry", "")
		return
	}
	etag := `"` + info.SHA256 + `"`
	modified := info.Touched.UTC().Truncate(time.Second)
	hdr := &ctx.Response.Header
	hdr.Set("ETag", etag)
	hdr.Set("Last-Modified", modified.Format(time.RFC1123[:len(time.RFC1123)-3]+"GMT"))
	hdr.Set("Accept-Ranges", "bytes")
	hdr.Set("Cache-Control", "private, no-cache")
	hdr.Set("X-Content-Type-Options", "nosniff")
	name := env.Result.Filename
	hdr.Set("Content-Disposition", `attachment; filename="`+strings.ReplaceAll(name, `"`, "")+`"; filename*=UTF-8''`+url.PathEscape(name))
	if notModified(ctx, etag, modified) {
		h.m.downloads.WithLabelValues("not_modified").Inc()
		ctx.SetStatusCode(fasthttp.StatusNotModified)
		return
	}
	ctx.SetContentType(info.Mimetype)
	off, n, partial, ok := byteRange(ctx, info.Size, etag)
	if !ok {
		h.m.downloads.WithLabelValues("unsatisfiable").Inc()
		hdr.Set("Content-Range", "bytes */"+strconv.FormatInt(info.Size, 10))
		httpcore.WriteError(ctx, fasthttp.StatusRequestedRangeNotSatisfiable, "range_not_satisfiable",
			"the range is outside the file's "+strconv.FormatInt(info.Size, 10)+" bytes", "Range")
		ctx.Response.Header.Set("Content-Type", "application/json")
		return
	}
	outcome := "full"
	if partial {
		outcome = "partial"
		ctx.SetStatusCode(fasthttp.StatusPartialContent)
		hdr.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", off, off+n-1, info.Size))
	}
	h.m.downloads.WithLabelValues(outcome).Inc()
	if ctx.IsHead() {
		hdr.SetContentLength(int(n))
		return
	}
	r, err := h.store.Open(context.Background(), info, off, n)
	if errors.Is(err, filestore.ErrBytesMissing) {
		h.m.downloads.WithLabelValues("not_found").Inc()
		ctx.Logger().Printf("download of %s: %v", info.ID, err)
		httpcore.WriteError(ctx, fasthttp.StatusNotFound, "not_found", "the file's bytes are missing from the file store", "")
		return
	}
	if err != nil {
		httpcore.WriteError(ctx, fasthttp.StatusServiceUnavailable, "unavailable", "the file store is unavailable; please retry", "")
		return
	}
	ctx.SetBodyStream(&sendReader{r: r, conn: ctx, d: h.cfg.WriteTimeout, sent: h.m.downBytes}, int(n))
}

// notModified applies If-None-Match, then If-Modified-Since.
func notModified(ctx *fasthttp.RequestCtx, etag string, modified time.Time) bool {
	if inm := string(ctx.Request.Header.Peek("If-None-Match")); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
			if t == etag || t == "*" {
				return true
			}
		}
		return false
	}
	if ims := string(ctx.Request.Header.Peek("If-Modified-Since")); ims != "" {
		if t, err := time.Parse(time.RFC1123, ims); err == nil && !modified.After(t) {
			return true
		}
	}
	return false
}

// byteRange reads a single "bytes=" range (RFC 9110): it returns the
// offset, length and whether the answer is partial; ok is false for a range
// that cannot be satisfied. Several ranges, other units, a malformed header
// or an If-Range that does not match get the whole file.
func byteRange(ctx *fasthttp.RequestCtx, size int64, etag string) (off, n int64, partial, ok bool) {
	spec := string(ctx.Request.Header.Peek("Range"))
	if spec == "" {
		return 0, size, false, true
	}
	if ir := string(ctx.Request.Header.Peek("If-Range")); ir != "" && ir != etag {
		return 0, size, false, true
	}
	spec, found := strings.CutPrefix(spec, "bytes=")
	if !found || strings.Contains(spec, ",") {
		return 0, size, false, true
	}
	first, last, found := strings.Cut(strings.TrimSpace(spec), "-")
	if !found {
		return 0, size, false, true
	}
	if first == "" { // suffix: the last n bytes
		k, err := strconv.ParseInt(last, 10, 64)
		if err != nil || k < 0 {
			return 0, size, false, true
		}
		if k == 0 || size == 0 {
			return 0, 0, false, false
		}
		k = min(k, size)
		return size - k, k, true, true
	}
	a, err := strconv.ParseInt(first, 10, 64)
	if err != nil || a < 0 {
		return 0, size, false, true
	}
	if a >= size {
		return 0, 0, false, false
	}
	b := size - 1
	if last != "" {
		if b, err = strconv.ParseInt(last, 10, 64); err != nil || b < a {
			return 0, size, false, true
		}
		b = min(b, size-1)
	}
	return a, b - a + 1, true, true
}

// sendReader streams a download, giving the client d for every piece it
// takes, so a large download may last as long as the client keeps reading.
type sendReader struct {
	r    *filestore.Reader
	conn interface{ Conn() net.Conn }
	d    time.Duration
	sent interface{ Add(float64) }
}

func (s *sendReader) Read(p []byte) (int, error) {
	if s.d > 0 {
		_ = s.conn.Conn().SetWriteDeadline(time.Now().Add(s.d))
	}
	n, err := s.r.Read(p)
	s.sent.Add(float64(n))
	return n, err
}

// Close ends the store's cursor (fasthttp closes the body stream when done).
func (s *sendReader) Close() error { return s.r.Close() }

// sendfileChunk is how many bytes one sendfile call may send before the
// write deadline is set again: a slow reader gets server.write_timeout per
// chunk, as it gets it per read buffer on the copying path.
const sendfileChunk = 8 << 20

// SupportsBodyWriteTo tells fasthttp to call WriteTo: when the bytes are a
// local file and the connection is plain TCP, the kernel sends them
// (sendfile) instead of a copy through user space.
func (s *sendReader) SupportsBodyWriteTo() bool {
	_, _, _, isFile := s.r.OSFile()
	_, isTCP := s.conn.Conn().(*net.TCPConn)
	return isFile && isTCP
}

// WriteTo sends the file section on the connection with sendfile, in
// chunks of sendfileChunk, each with its write deadline. w is fasthttp's
// buffered writer holding the response header, which is flushed first.
func (s *sendReader) WriteTo(w io.Writer) (int64, error) {
	f, off, n, _ := s.r.OSFile()
	tcp, _ := s.conn.Conn().(*net.TCPConn)
	if fl, ok := w.(interface{ Flush() error }); ok {
		if err := fl.Flush(); err != nil {
			return 0, err
		}
	}
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return 0, fmt.Errorf("download: seek: %w", err)
	}
	var sent int64
	for sent < n {
		if s.d > 0 {
			_ = tcp.SetWriteDeadline(time.Now().Add(s.d))
		}
		k, err := tcp.ReadFrom(&io.LimitedReader{R: f, N: min(sendfileChunk, n-sent)})
		sent += k
		s.sent.Add(float64(k))
		if err != nil {
			return sent, err
		}
		if k == 0 {
			return sent, io.ErrUnexpectedEOF
		}
	}
	return sent, nil
}

var (
	_ io.ReadCloser         = (*sendReader)(nil)
	_ fasthttp.BodyWriterTo = (*sendReader)(nil)
)
