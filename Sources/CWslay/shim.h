/* wslay 1.1 (Debian libwslay-dev): RFC 6455 framing, no I/O of its own. Debian ships no libwslay.pc,
 * so the target links by name (module.modulemap) instead of through pkg-config. */
#include <wslay/wslay.h>
