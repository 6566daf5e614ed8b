// Built into syscall_timers_cgo only, run first (the instants of the rest then count from its
// end): goroutines blocked in C calls while Go timers are due, a pthread condition variable that
// a Go timer signals (glibc's FUTEX_WAIT_BITSET, told from the Go runtime's own futex waits) and a
// sleep through libc (the shim's wait).
package main

// #include <pthread.h>
// #include <unistd.h>
// static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
// static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
// static int ready;
// static void cwait(void) { pthread_mutex_lock(&m); while (!ready) pthread_cond_wait(&c, &m); pthread_mutex_unlock(&m); }
// static void csignal(void) { pthread_mutex_lock(&m); ready = 1; pthread_cond_signal(&c); pthread_mutex_unlock(&m); }
import "C"

import (
	"fmt"
	"time"
)

func init() {
	cgoCases = func(at func() float64) {
		time.AfterFunc(300*time.Millisecond, func() { C.csignal() })
		C.cwait()
		fmt.Printf("a C condition variable a Go timer signals after 0.3 s: at %.6f\n", at())
		done := make(chan float64, 1)
		time.AfterFunc(500*time.Millisecond, func() { done <- at() })
		C.sleep(2)
		fmt.Printf("AfterFunc(0.5 s) during C's sleep(2) at %.6f; sleep done at %.6f\n", <-done, at())
	}
}
