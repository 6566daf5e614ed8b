// Go's randomness under vtime (tracer_cases.py go_random): map iteration order, select among
// ready channels, a goroutine on a thread of its own, and crypto/rand's bytes, printed. Natively
// every run prints something else (Go seeds these from AT_RANDOM and the time-stamp counter, and
// crypto/rand reads getrandom); under vtime the same.
package main

import (
	"crypto/rand"
	"fmt"
	"runtime"
	"strings"
)

func order() string {
	m := map[int]bool{}
	for i := 0; i < 20; i++ {
		m[i] = true
	}
	var keys []string
	for k := range m {
		keys = append(keys, fmt.Sprint(k))
	}
	return strings.Join(keys, " ")
}

func selects() string {
	a, b := make(chan int, 40), make(chan int, 40)
	for i := 0; i < 40; i++ {
		a <- i
		b <- i
	}
	var s strings.Builder
	for i := 0; i < 40; i++ {
		select {
		case <-a:
			s.WriteByte('a')
		case <-b:
			s.WriteByte('b')
		}
	}
	return s.String()
}

func main() {
	fmt.Println("map:", order())
	fmt.Println("select:", selects())
	// A locked goroutine runs on a new thread (M), which seeds its own generator.
	done := make(chan string)
	go func() {
		runtime.LockOSThread()
		done <- order() + " / " + selects()
	}()
	fmt.Println("new thread:", <-done)
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	fmt.Printf("crypto/rand: %x\n", b)
}
