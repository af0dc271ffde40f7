/* wslay 1.1 (Debian libwslay-dev): RFC 6455 framing, no I/O of its own. Debian ships no libwslay.pc,
 * so the target links by name (module.modulemap) instead of through pkg-config.
 * Also epoll(7) for the WebSocket loop that drives the wslay contexts: Swift's Glibc module leaves out
 * <sys/epoll.h>. */
#include <wslay/wslay.h>
#include <sys/epoll.h>
