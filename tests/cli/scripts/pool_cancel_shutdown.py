# CPython bug gh-94440 (fixed in 3.11.4, present in Debian 12's 3.11.2), the issue's own four
# lines: a future submitted and cancelled at once is dropped by the pool's manager thread only
# after it consumed shutdown's wake-up, and shutdown(wait=True) then waits forever. A genuine
# deadlock of a program no one here wrote: vtime must name it at once, not hang.
import concurrent.futures

if __name__ == "__main__":
    ppe = concurrent.futures.ProcessPoolExecutor(1)
    ppe.submit(int).result()
    ppe.submit(int).cancel()
    ppe.shutdown(wait=True)
    print("shutdown returned")
