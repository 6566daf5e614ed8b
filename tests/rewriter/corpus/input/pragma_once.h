#pragma once
// A header with no #include of its own: the vtime include goes after #pragma once.

inline int pragma_once_nap() { return usleep(1); }
