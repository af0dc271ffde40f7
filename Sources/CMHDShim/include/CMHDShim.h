#ifndef CMHDSHIM_H
#define CMHDSHIM_H

/*
 * Fixed-arity wrappers around libmicrohttpd's variadic calls (MHD_start_daemon,
 * MHD_get_daemon_info, MHD_get_connection_info), which Swift cannot import.
 * Every symbol is prefixed `CMHDShim_`. See notes/http-and-infra.md §4.
 */

#include <microhttpd.h>
#include <stddef.h>
#include <stdint.h>

/** Receives one formatted libmicrohttpd error-log line (no trailing newline). */
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
    /** Total connections (MHD_OPTION_CONNECTION_LIMIT). */
    unsigned int connection_limit;
    /** Connections per client IP; 0 = unlimited. */
    unsigned int per_ip_connection_limit;
    /** Idle timeout in seconds; 0 = none. */
    unsigned int connection_timeout_seconds;
    /** listen(2) backlog. */
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

/** A started daemon plus the shim's own bookkeeping (the logger target). */
typedef struct CMHDShim_Daemon CMHDShim_Daemon;

/**
 * Starts a daemon with flags INTERNAL_POLLING_THREAD | EPOLL | ALLOW_SUSPEND_RESUME | ITC |
 * ERROR_LOG and the options in `config` (passed to MHD as one MHD_OPTION_ARRAY).
 *
 * @return the daemon, or NULL with `*error_number` set to an errno-style code
 *         (EINVAL for a bad address; otherwise errno after MHD failed, often EADDRINUSE).
 */
CMHDShim_Daemon *CMHDShim_start_daemon(const CMHDShim_Config *config, int *error_number);

/** The underlying `struct MHD_Daemon *` (valid until CMHDShim_stop_daemon). */
struct MHD_Daemon *CMHDShim_daemon_mhd(CMHDShim_Daemon *daemon);

/** MHD_get_daemon_info(MHD_DAEMON_INFO_BIND_PORT); 0 when unknown. */
uint16_t CMHDShim_daemon_bind_port(CMHDShim_Daemon *daemon);

/** MHD_stop_daemon, then frees the shim handle. */
void CMHDShim_stop_daemon(CMHDShim_Daemon *daemon);

/**
 * Writes the peer address of `connection` as text ("127.0.0.1", "::1") into `buffer`.
 * @return 0 on success, -1 when unknown (buffer then holds "").
 */
int CMHDShim_connection_client_address(struct MHD_Connection *connection, char *buffer, size_t buffer_size);

/**
 * Refuses new TCP connections on a listening socket that MHD_quiesce_daemon handed back, without
 * closing the descriptor (MHD's threads may still hold it until MHD_stop_daemon). On Linux,
 * shutdown(2) on a listening socket stops listening: pending and new connections get RST.
 * @return 0 or -1 with errno.
 */
int CMHDShim_stop_listening(int listen_fd);

/** Names the calling thread (pthread_setname_np, a GNU extension Swift does not see); cut to 15 bytes. */
void CMHDShim_set_current_thread_name(const char *name);

#endif /* CMHDSHIM_H */
