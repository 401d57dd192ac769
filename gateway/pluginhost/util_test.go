package pluginhost

import (
	"runtime"
	"strconv"
)

func runtime_Gosched() { runtime.Gosched() }

func itoa(i int) string { return strconv.Itoa(i) }
