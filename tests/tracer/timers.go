// Go's timer APIs under vtime: every line carries the virtual instant (time.Since the start) at
// which it was printed, and the expected instants are exact (timers_expected.txt). Built both
// static (CGO_ENABLED=0) and with cgo (timers_cgo.go adds a C call): Go's runtime reads the clock
// through the vDSO and waits with raw system calls either way.
package main

import (
	"context"
	"fmt"
	"sync"
	"time"
)

var start = time.Now()
var mu sync.Mutex

func say(format string, a ...any) {
	mu.Lock()
	defer mu.Unlock()
	fmt.Printf("%-40s at %.6f\n", fmt.Sprintf(format, a...), time.Since(start).Seconds())
}

func main() {
	var wg sync.WaitGroup
	for i := 1; i <= 3; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 1100 * time.Millisecond)
			say("sleeper %d", i)
		}(i)
	}
	t := time.NewTicker(700 * time.Millisecond)
	for k := 1; k <= 5; k++ {
		<-t.C
		say("tick %d", k)
	}
	t.Stop()
	<-time.After(1234 * time.Millisecond)
	say("time.After")
	ctx, cancel := context.WithTimeout(context.Background(), 2500*time.Millisecond)
	<-ctx.Done()
	say("context: %v", ctx.Err())
	cancel()
	tm := time.NewTimer(5 * time.Second)
	time.Sleep(500 * time.Millisecond)
	if !tm.Stop() {
		<-tm.C
	}
	tm.Reset(1500 * time.Millisecond)
	<-tm.C
	say("Timer.Reset")
	never := make(chan int)
	select {
	case <-never:
		say("impossible")
	case <-time.After(3 * time.Second):
		say("select timeout")
	}
	wg.Wait()
	// Computation takes no virtual time: a goroutine busy for a while does not delay the sleeper.
	done := make(chan int)
	go func() {
		x := 0
		for i := 0; i < 30_000_000; i++ {
			x += i % 7
		}
		done <- x
	}()
	time.Sleep(2766 * time.Millisecond)
	<-done
	say("wall clock %s", time.Now().UTC().Format(time.RFC3339Nano))
}
