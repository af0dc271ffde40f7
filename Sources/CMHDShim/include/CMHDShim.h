#ifndef CMHDSHIM_H
#define CMHDSHIM_H

/*
 * Fixed-arity wrappers around libmicrohttpd 0.9.75 for Swift, which cannot import its variadic calls
 * (MHD_start_daemon, MHD_get_daemon_info, MHD_get_connection_info). Every symbol is prefixed
 * `CMHDShim_`. See notes/http-and-infra.md §4.
 *
 * The shim owns the listening socket and an accept thread that hands connections to MHD with
 * MHD_add_connection (the daemon runs with MHD_USE_NO_LISTEN_SOCKET). Reason: MHD_quiesce_daemon on an
 * epoll daemon with internal threads races with MHD's own event loop and can abort the process with
 * "Failed to remove listen FD from epoll set" (reproduced with 0.9.75 under load, about once per
 * 1000-2000 quiesces). Stopping our own accept thread has no such race.
 */

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

/** Receives one formatted libmicrohttpd or shim error-log line (no trailing newline). */
typedef void (*CMHDShim_LogFunction)(void *cls, const char *message);

/** Everything `CMHDShim_start_daemon` needs; zero means "MHD default" unless stated. */
typedef struct CMHDShim_Config {
    /** IPv4 dotted quad to bind, e.g. "127.0.0.1" or "0.0.0.0". Required. */
    const char *bind_address;
    /** TCP port; 0 lets the kernel pick one (read it back with CMHDShim_daemon_bind_port). */
    uint16_t port;
    /** Event (epoll) threads; values <= 1 mean one internal polling thread, no pool. */
    unsigned int thread_pool_size;
    /** Per-connection memory pool in bytes (MHD_OPTION_CONNECTION_MEMORY_LIMIT). */
    size_t connection_memory_limit;
    /** Total connections; 0 = MHD's default. At the limit the accept thread waits, so further clients
        queue in the listen backlog. */
    unsigned int connection_limit;
    /** Connections per client IP; 0 = unlimited. Over it, MHD closes the new connection. */
    unsigned int per_ip_connection_limit;
    /** Idle timeout in seconds; 0 = none. */
    unsigned int connection_timeout_seconds;
    /** Deadline in milliseconds for a whole request head (request line and headers), counted from
        the connection's start, or on a kept-alive connection from the end of the previous request
        plus `connection_timeout_seconds` (an idle connection is the idle timeout's to close), and not
        restarted by arriving bytes (unlike the idle timeout); 0 = none. A connection whose head is
        late has its socket shut down by a watchdog thread, and MHD closes it. */
    unsigned int head_timeout_ms;
    /** listen(2) backlog; 0 = SOMAXCONN. */
    unsigned int listen_backlog;
    /** Keep the URL path and query arguments exactly as sent (no %XX decoding by MHD; `+` in
        arguments still becomes a space). */
    int raw_url;

    MHD_AccessHandlerCallback access_handler;
    void *access_handler_cls;
    MHD_RequestCompletedCallback completed_callback;
    void *completed_callback_cls;
    /** Optional; when NULL, MHD's errors go to stderr in MHD's own format. */
    CMHDShim_LogFunction log_function;
    void *log_cls;
} CMHDShim_Config;

/** A started daemon plus the shim's listening socket, accept thread and logger target. */
typedef struct CMHDShim_Daemon CMHDShim_Daemon;

/**
 * Binds and listens on `bind_address:port`, starts MHD with flags INTERNAL_POLLING_THREAD | EPOLL |
 * ALLOW_SUSPEND_RESUME | ITC | ERROR_LOG | NO_LISTEN_SOCKET | ALLOW_UPGRADE (WebSocket) and the options in `config` (passed as
 * one MHD_OPTION_ARRAY), then starts the accept thread.
 *
 * @return the daemon, or NULL with `*error_number` set to an errno value (EINVAL for a bad
 *         address, EADDRINUSE, EACCES, ...; EIO when MHD failed without saying why).
 */
CMHDShim_Daemon *CMHDShim_start_daemon(const CMHDShim_Config *config, int *error_number);

/** The underlying `struct MHD_Daemon *` (valid until CMHDShim_stop_daemon). */
struct MHD_Daemon *CMHDShim_daemon_mhd(CMHDShim_Daemon *daemon);

/** The bound TCP port (from getsockname(2) on the listening socket). */
uint16_t CMHDShim_daemon_bind_port(CMHDShim_Daemon *daemon);

/** How many connections were closed because their request head missed `head_timeout_ms`. */
unsigned long CMHDShim_daemon_head_timeouts(CMHDShim_Daemon *daemon);

/** Connections MHD currently manages (MHD_DAEMON_INFO_CURRENT_CONNECTIONS). */
unsigned int CMHDShim_daemon_current_connections(CMHDShim_Daemon *daemon);

/**
 * Stops accepting: shuts the listening socket down (so the kernel refuses new connections at once),
 * joins the accept thread and closes the socket. Connections already handed to MHD are unaffected.
 * Idempotent; call from one thread at a time.
 */
void CMHDShim_stop_accepting(CMHDShim_Daemon *daemon);

/** CMHDShim_stop_accepting, MHD_stop_daemon, then frees the handle. */
void CMHDShim_stop_daemon(CMHDShim_Daemon *daemon);

/**
 * Writes the peer address of `connection` as text ("127.0.0.1", "::1") into `buffer`.
 * @return 0 on success, -1 when unknown (buffer then holds "").
 */
int CMHDShim_connection_client_address(struct MHD_Connection *connection, char *buffer, size_t buffer_size);

/**
 * The socket of `connection` (MHD_CONNECTION_INFO_CONNECTION_FD), or -1. MHD closes it only after the
 * request-completed callback of its last request.
 */
int CMHDShim_connection_fd(struct MHD_Connection *connection);

/**
 * Whether the peer of socket `fd` has hung up: sent its FIN (POLLRDHUP) with no byte left unread
 * behind it (FIONREAD), or reset the connection (POLLHUP, POLLERR). Does not wait. @return 1 when it
 * has, 0 when not (or when bytes before the FIN are still to be read), -1 when poll(2) or ioctl(2) fails.
 */
int CMHDShim_socket_peer_hung_up(int fd);

/** Names the calling thread (pthread_setname_np, a GNU extension Swift does not see); cut to 15 bytes. */
void CMHDShim_set_current_thread_name(const char *name);

/**
 * MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE): ends an upgraded connection (MHD closes the socket;
 * never close(2) it yourself). Call once per upgraded connection, from any thread.
 * @return MHD_YES or MHD_NO.
 */
enum MHD_Result CMHDShim_upgrade_close(struct MHD_UpgradeResponseHandle *urh);

#endif /* CMHDSHIM_H */
