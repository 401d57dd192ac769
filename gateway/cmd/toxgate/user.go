package main

import (
	"fmt"
	"io"
)

// userCommand administers accounts: toxgate user create|list|set-roles|disable.
func userCommand(cfgPath string, args []string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "toxgate user: not available yet")
	return 2
}
