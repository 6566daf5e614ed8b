/* C side of the demo: the libc clock and sleep, as older modules call them. */
#ifndef C_PROBE_H
#define C_PROBE_H

#ifdef __cplusplus
extern "C" {
#endif

long long c_monotonic_ns(void);
void c_nap_ns(long ns);

#ifdef __cplusplus
}
#endif

#endif
