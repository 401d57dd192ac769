package abi

// ReloopSection is the name of the custom section that the module build's
// rewriter (internal/reloop) appends to a module it rewrote, followed by one
// byte of format ('1'). The rewriter leaves a module carrying it alone, and
// the host's fuel instrumentation counts every loop of such a module on its
// back edges.
const ReloopSection = "toxgate:reloop"
