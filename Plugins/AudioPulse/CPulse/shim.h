// The part of libpulse the AudioPulse medium uses: the blocking "simple" API (one stream per
// dedicated thread) and error strings.
#ifndef NEARBY_CPULSE_SHIM_H
#define NEARBY_CPULSE_SHIM_H
#include <pulse/simple.h>
#include <pulse/error.h>
#endif
