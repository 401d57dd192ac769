// Command goprog exercises the shapes of Go code that reloop rewrites: loops,
// switches, goto, deep recursion (stack growth), panics and recover,
// goroutines that block in loops (the wasm stack unwinds and functions resume
// in the middle), maps, sorting and formatting. It prints one line per check;
// the test compares the output of the module as Go built it and as reloop
// rewrote it, and a few lines with values known in advance.
package main

import (
	"fmt"
	"runtime"
	"sort"
	"strconv"
	"strings"
)

func fib(n int) int {
	if n < 2 {
		return n
	}
	return fib(n-1) + fib(n-2)
}

// deep recurses with a big frame so that the goroutine stack is grown (and
// copied) many times.
func deep(n int) int {
	var pad [256]byte
	pad[n%256] = byte(n)
	if n == 0 {
		return int(pad[0])
	}
	return deep(n-1) + int(pad[n%256])
}

func sieve(n int) int {
	composite := make([]bool, n+1)
	count := 0
	for i := 2; i <= n; i++ {
		if composite[i] {
			continue
		}
		count++
		for j := i * i; j <= n; j += i {
			composite[j] = true
		}
	}
	return count
}

func classify(s string) int {
	total := 0
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z':
			total += 1
		case r >= 'A' && r <= 'Z':
			total += 10
		case r >= '0' && r <= '9':
			total += 100
		case r == ' ':
			total += 1000
		default:
			total += 10000
		}
	}
	return total
}

// tangled has a loop with two entries, which Go may compile as irreducible
// control flow.
func tangled(start bool, limit int) int {
	i := 0
	if start {
		goto b
	}
a:
	i++
b:
	i += 2
	if i%7 == 3 {
		goto a
	}
	if i < limit {
		goto a
	}
	return i
}

func safeDiv(a, b int) (q int, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("recovered: %v", r)
		}
	}()
	return a / b, nil
}

// pipeline passes values through unbuffered channels: each send and receive
// blocks inside a loop, so the wasm stack unwinds and resumes there.
func pipeline(n int) int {
	src, sq := make(chan int), make(chan int)
	go func() {
		for i := 1; i <= n; i++ {
			src <- i
		}
		close(src)
	}()
	go func() {
		for v := range src {
			if v%3 == 0 {
				runtime.Gosched()
			}
			sq <- v * v
		}
		close(sq)
	}()
	sum := 0
	for v := range sq {
		sum += v
	}
	return sum
}

func words() string {
	text := "the quick brown fox jumps over the lazy dog the end"
	counts := map[string]int{}
	for _, w := range strings.Fields(text) {
		counts[w]++
	}
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if counts[keys[i]] != counts[keys[j]] {
			return counts[keys[i]] > counts[keys[j]]
		}
		return keys[i] < keys[j]
	})
	var b strings.Builder
	for _, k := range keys {
		b.WriteString(k + "=" + strconv.Itoa(counts[k]) + " ")
	}
	return b.String()
}

func main() {
	fmt.Println("fib", fib(25))
	fmt.Println("deep", deep(5000))
	fmt.Println("sieve", sieve(100000))
	fmt.Println("classify", classify("Hello World 2026, toxgate!"))
	fmt.Println("tangled", tangled(true, 1000), tangled(false, 1000))
	q, err := safeDiv(7, 0)
	fmt.Println("safeDiv", q, err)
	q, err = safeDiv(7, 2)
	fmt.Println("safeDiv", q, err)
	fmt.Println("pipeline", pipeline(2000))
	fmt.Println("words", words())
	fmt.Printf("floats %.6g %v %s\n", 1.0/3, 2.5e-8, strconv.FormatFloat(123456.789, 'e', 4, 64))
}
