package filehttp

import (
	"bytes"
	"errors"
	"io"
	"mime/multipart"
	"strings"
	"testing"

	"toxgate/catalog/ckan"
)

const testBoundary = "xYzZY"

// form builds a multipart body of the given parts: a name with a value, or
// with a file when the name ends in "@file".
func form(t testing.TB, parts ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	mw := multipart.NewWriter(&buf)
	if err := mw.SetBoundary(testBoundary); err != nil {
		t.Fatal(err)
	}
	for _, p := range parts {
		if name, ok := strings.CutSuffix(p[0], "@file"); ok {
			w, _ := mw.CreateFormFile(name, "f.csv")
			w.Write([]byte(p[1]))
			continue
		}
		mw.WriteField(p[0], p[1])
	}
	mw.Close()
	return buf.Bytes()
}

// readAll runs a fieldReader over body to its end, discarding files, and
// returns the form, the names of the file parts and the first error.
func readAll(body []byte, fixed map[string]string, limit int64) (map[string][]string, []string, error) {
	fr := newFieldReader(&cappedReader{r: bytes.NewReader(body), n: limit}, testBoundary, fixed)
	var files []string
	for {
		part, err := fr.next()
		if err != nil {
			return fr.form, files, err
		}
		if part == nil {
			return fr.form, files, nil
		}
		files = append(files, part.FormName())
		if _, err := io.Copy(io.Discard, part); err != nil {
			return fr.form, files, err
		}
	}
}

func TestFieldReader(t *testing.T) {
	// The fields before the file are known when the file part comes.
	fr := newFieldReader(bytes.NewReader(form(t, [2]string{"package_id", "p1"}, [2]string{"name", "n"}, [2]string{"upload@file", "a,b\n"}, [2]string{"format", "CSV"})), testBoundary, nil)
	part, err := fr.next()
	if err != nil || part == nil || part.FormName() != "upload" || fr.form.Get("package_id") != "p1" || fr.form.Get("name") != "n" || fr.form.Has("format") {
		t.Fatalf("at the file: %v %v %v", part, err, fr.form)
	}
	io.Copy(io.Discard, part)
	if part, err := fr.next(); part != nil || err != nil || fr.form.Get("format") != "CSV" {
		t.Fatalf("after the file: %v %v %v", part, err, fr.form)
	}

	for _, c := range []struct {
		name  string
		body  []byte
		fixed map[string]string
		limit int64
		want  string // in the error; "" for none
	}{
		{"too many parts", form(t, manyParts(MaxParts+1)...), nil, 1 << 30, "more than 1000 parts"},
		{"as many parts as allowed", form(t, manyParts(MaxParts)...), nil, 1 << 30, ""},
		{"fields past the slack", form(t, [2]string{"notes", strings.Repeat("n", FormSlack)}), nil, 1 << 30, "exceed"},
		{"query string agrees", form(t, [2]string{"package_id", "p1"}), map[string]string{"package_id": "p1"}, 1 << 30, ""},
		{"query string differs", form(t, [2]string{"package_id", "p2"}), map[string]string{"package_id": "p1"}, 1 << 30, "Differs from the package_id of the query string"},
		{"body past the cap", form(t, [2]string{"upload@file", strings.Repeat("x", 5000)}), nil, 4000, errBodyTooLarge.Error()},
		{"truncated body", form(t, [2]string{"name", "n"})[:20], nil, 1 << 30, "malformed"},
	} {
		got, _, err := readAll(c.body, c.fixed, c.limit)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (err == nil || !strings.Contains(errText(err), c.want)):
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
		if c.fixed != nil && c.want == "" && len(got["package_id"]) != 1 {
			t.Errorf("%s: package_id %v, want the query string's once", c.name, got["package_id"])
		}
	}
}

func manyParts(n int) [][2]string {
	out := make([][2]string, n)
	for i := range out {
		out[i] = [2]string{"", ""}
	}
	return out
}

func errText(err error) string {
	var ce *ckan.Error
	if errors.As(err, &ce) {
		return ce.Error() + " " + ce.Message
	}
	return err.Error()
}

// Any body is read within the bounds: at most MaxParts parts, FormSlack
// bytes of fields and the cap of the body, without a panic.
func FuzzFieldReader(f *testing.F) {
	f.Add(form(f, [2]string{"package_id", "p1"}, [2]string{"upload@file", "a,b\n1,2\n"}, [2]string{"format", "CSV"}), "")
	f.Add(form(f, [2]string{"upload@file", "x"}, [2]string{"id", "r1"}), "r1")
	f.Add(form(f, manyParts(30)...), "")
	f.Add([]byte("--"+testBoundary+"\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nv\r\n--"+testBoundary+"--\r\n"), "p")
	f.Add([]byte("--"+testBoundary+"\r\n\r\n\r\n--"+testBoundary+"\r\n"), "")
	f.Fuzz(func(t *testing.T, body []byte, fixed string) {
		var fx map[string]string
		if fixed != "" {
			fx = map[string]string{"package_id": fixed}
		}
		const limit = 1 << 16
		cr := &cappedReader{r: bytes.NewReader(body), n: limit}
		fr := newFieldReader(cr, testBoundary, fx)
		for {
			part, err := fr.next()
			if err != nil || part == nil {
				break
			}
			if _, err := io.Copy(io.Discard, part); err != nil {
				break
			}
		}
		if fr.parts > MaxParts+1 || fr.bytes > FormSlack+limit {
			t.Fatalf("read %d parts, %d bytes of fields", fr.parts, fr.bytes)
		}
		if fx != nil && len(fr.form["package_id"]) != 1 {
			t.Fatalf("package_id of the query string replaced or repeated: %v", fr.form["package_id"])
		}
	})
}

// A user's uploads take slots up to the cap; others are not counted with it.
func TestUserSlots(t *testing.T) {
	s := newUserSlots(2)
	if !s.acquire("a") || !s.acquire("a") || s.acquire("a") || !s.acquire("b") {
		t.Fatal("cap of 2 per user")
	}
	s.release("a")
	if !s.acquire("a") || s.acquire("a") {
		t.Fatal("a released slot is taken again, once")
	}
	s.release("a")
	s.release("a")
	s.release("b")
	if len(s.busy) != 0 {
		t.Fatalf("slots left: %v", s.busy)
	}
	if none := newUserSlots(0); !none.acquire("a") || !none.acquire("a") || !none.acquire("a") {
		t.Fatal("no cap")
	}
}
