package identity

import "github.com/valyala/fasthttp"

func newHeader(k, v string) *fasthttp.RequestHeader {
	var h fasthttp.RequestHeader
	h.Set(k, v)
	return &h
}
