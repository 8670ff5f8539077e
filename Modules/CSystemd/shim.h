// What Swift needs of libsystemd: readiness notification and the journal's native protocol.
// Neither function is variadic (sd_notifyf and sd_journal_send are, and are not used).
#include <sys/uio.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-journal.h>
