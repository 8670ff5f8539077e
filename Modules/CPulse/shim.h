// The part of libpulse the AudioPulse medium uses: the blocking "simple" API (one stream per
// dedicated thread), error strings, and introspection (a device's sample rate).
#ifndef NEARBY_CPULSE_SHIM_H
#define NEARBY_CPULSE_SHIM_H
#include <pulse/pulseaudio.h>
#include <pulse/simple.h>
#include <pulse/error.h>
#endif
