// Waits by running: a loop on time.Since for 100 ms, as Go programs poll a deadline. Under the
// default CPU-time model (`calls`) each clock read past a burst costs virtual time, paid by the
// injected clock code with sleeps of one quantum, so the loop ends at exactly 100 ms.
package main

import (
	"fmt"
	"time"
)

func main() {
	start := time.Now()
	for time.Since(start) < 100*time.Millisecond {
	}
	fmt.Printf("spun until %.6f\n", time.Since(start).Seconds())
}
