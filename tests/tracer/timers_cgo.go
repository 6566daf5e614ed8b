// Built into timers_cgo only: a C call makes the program a dynamically linked cgo program, which
// loads the shim as well as being traced (its C code goes through libc, its runtime does not).
package main

// #include <unistd.h>
import "C"

func init() { _ = C.getpid() }
