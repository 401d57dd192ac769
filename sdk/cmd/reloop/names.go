package main

import (
	"encoding/binary"
	"errors"
)

// funcNames returns the names of a module's function bodies, by index in the
// code section, from the "name" custom section (empty when there is none).
func funcNames(wasm []byte) (map[int]string, error) {
	names := map[int]string{}
	imported := 0
	for i := 8; i < len(wasm); {
		id := wasm[i]
		size, p, err := uvarint(wasm, i+1)
		if err != nil {
			return nil, err
		}
		end := p + int(size)
		if end > len(wasm) {
			return nil, errors.New("section past the end of the module")
		}
		sec := wasm[p:end]
		switch id {
		case 2: // imports: count the functions
			n, q, err := uvarint(sec, 0)
			if err != nil {
				return nil, err
			}
			for ; n > 0; n-- {
				for range 2 { // module and field names
					l, r, err := uvarint(sec, q)
					if err != nil {
						return nil, err
					}
					q = r + int(l)
				}
				if q >= len(sec) {
					return nil, errors.New("truncated import")
				}
				kind := sec[q]
				q++
				switch kind {
				case 0: // function: type index
					imported++
					_, q, err = uvarint(sec, q)
				case 1: // table: reftype, limits
					q++
					q, err = skipLimits(sec, q)
				case 2: // memory: limits
					q, err = skipLimits(sec, q)
				case 3: // global: type, mutability
					q += 2
				}
				if err != nil {
					return nil, err
				}
			}
		case 0:
			l, q, err := uvarint(sec, 0)
			if err != nil || q+int(l) > len(sec) || string(sec[q:q+int(l)]) != "name" {
				break
			}
			q += int(l)
			for q < len(sec) {
				sub := sec[q]
				sz, r, err := uvarint(sec, q+1)
				if err != nil {
					return nil, err
				}
				if sub == 1 && r+int(sz) <= len(sec) {
					body := sec[r : r+int(sz)]
					n, s, err := uvarint(body, 0)
					if err != nil {
						return nil, err
					}
					for ; n > 0; n-- {
						var idx, nl uint64
						if idx, s, err = uvarint(body, s); err != nil {
							return nil, err
						}
						if nl, s, err = uvarint(body, s); err != nil || s+int(nl) > len(body) {
							return nil, errors.New("bad function name")
						}
						names[int(idx)-imported] = string(body[s : s+int(nl)])
						s += int(nl)
					}
				}
				q = r + int(sz)
			}
		}
		i = end
	}
	return names, nil
}

func skipLimits(b []byte, q int) (int, error) {
	if q >= len(b) {
		return 0, errors.New("truncated limits")
	}
	flag := b[q]
	_, q, err := uvarint(b, q+1)
	if err == nil && flag&1 != 0 {
		_, q, err = uvarint(b, q)
	}
	return q, err
}

func uvarint(b []byte, i int) (uint64, int, error) {
	if i >= len(b) {
		return 0, 0, errors.New("truncated LEB128")
	}
	v, n := binary.Uvarint(b[i:])
	if n <= 0 {
		return 0, 0, errors.New("bad LEB128")
	}
	return v, i + n, nil
}
