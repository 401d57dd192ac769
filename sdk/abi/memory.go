package abi

// DefaultMaxMemoryPages is the most linear memory, in 64 KiB pages (128 MiB),
// a module's manifest may ask for in Limits.MemoryPages unless the host is
// configured otherwise: the one default of the gateway's
// modules.max_memory_pages, the module host and its runtime. It lives here,
// beside the manifest it bounds, so that the configuration names it without
// linking the runtime.
const DefaultMaxMemoryPages = 2048
