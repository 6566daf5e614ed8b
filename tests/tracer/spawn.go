// A static Go program that starts dynamic programs (coreutils' sleep, through os/exec: fork and
// execve from a traced process) and waits for them: their virtual time is the same clock. Last, a
// pipe that a child writes to while a 10 s timer is pending: Go's poller waits in epoll with that
// timeout, and the pipe's data must end the wait at once (a notified epoll wait the controller
// lets run when the descriptor is ready, docs/tracer.md), not at the timer.
package main

import (
	"fmt"
	"os/exec"
	"strings"
	"time"
)

func main() {
	start := time.Now()
	for _, d := range []string{"1.5", "0.25"} {
		if err := exec.Command("sleep", d).Run(); err != nil {
			fmt.Println("sleep failed:", err)
			return
		}
		fmt.Printf("sleep %s done at %.6f\n", d, time.Since(start).Seconds())
	}
	out, err := exec.Command("date", "-u", "+%T").Output()
	if err != nil {
		fmt.Println("date failed:", err)
		return
	}
	fmt.Printf("date says %s", out)

	// The child lives on after writing: no SIGCHLD (which ends the wait too) until it is killed.
	cmd := exec.Command("sh", "-c", "sleep 0.5; echo ready; exec sleep 100")
	pipe, err := cmd.StdoutPipe()
	if err == nil {
		err = cmd.Start()
	}
	if err != nil {
		fmt.Println("sh failed:", err)
		return
	}
	got := make(chan string)
	go func() {
		b := make([]byte, 16)
		n, _ := pipe.Read(b)
		got <- strings.TrimSpace(string(b[:n]))
	}()
	select {
	case s := <-got:
		fmt.Printf("pipe said %s at %.6f\n", s, time.Since(start).Seconds())
	case <-time.After(10 * time.Second):
		fmt.Printf("timed out at %.6f\n", time.Since(start).Seconds())
	}
	cmd.Process.Kill()
	cmd.Wait()
}
