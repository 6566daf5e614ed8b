// A static Go program that starts dynamic programs (coreutils' sleep, through os/exec: fork and
// execve from a traced process) and waits for them: their virtual time is the same clock.
package main

import (
	"fmt"
	"os/exec"
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
}
