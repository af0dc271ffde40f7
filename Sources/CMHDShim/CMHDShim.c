#define _GNU_SOURCE
#include "CMHDShim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

/* One open connection, for the request-head deadline: from NOTIFY_STARTED to NOTIFY_CLOSED, linked
   in the daemon's list under `heads_lock`, and reachable through MHD's socket context. */
typedef struct ShimConnection {
    struct ShimConnection *prev, *next;
    int fd;
    /* When the deadline for the head now awaited starts (monotonic ms): the connection's start; on a
       kept-alive connection, the end of the previous request plus the idle timeout (an idle connection
       is the idle timeout's to close; one trickling its next head gets the deadline after that). 0
       while a request is between its head and its completion (the head is in: no deadline). */
    atomic_llong awaiting_since_ms;
    int shut_down; /* the watchdog shut its socket down (under heads_lock) */
} ShimConnection;

struct CMHDShim_Daemon {
    struct MHD_Daemon *mhd;
    int listen_fd;                 /* -1 once closed */
    uint16_t port;
    unsigned int connection_limit; /* 0 = none */
    /* Connections handed to MHD and not yet closed: +1 before MHD_add_connection, -1 when it refuses
       one or on MHD_CONNECTION_NOTIFY_CLOSED. MHD's own per-worker counters lag behind hand-overs
       from this thread, so the accept thread enforces the limit with this exact count instead. */
    atomic_uint open_connections;
    pthread_t acceptor;
    int acceptor_running;
    atomic_int stopping;
    CMHDShim_LogFunction log_function;
    void *log_cls;

    /* Request-head deadline (0 = none): open connections, and the watchdog thread closing those whose
       head is late. The CLOSED notification unlinks a connection under `heads_lock` before MHD closes
       its fd, and the watchdog shuts sockets down only under the same lock, so it never touches a
       descriptor number that was reused by another connection. */
    unsigned int head_timeout_ms;
    long long keep_alive_grace_ms; /* the idle timeout, in ms */
    pthread_mutex_t heads_lock;
    pthread_cond_t heads_wake;
    ShimConnection *heads;
    pthread_t watchdog;
    int watchdog_running;
    atomic_ulong head_timeouts;

    MHD_AccessHandlerCallback access_handler;
    void *access_handler_cls;
    MHD_RequestCompletedCallback completed_callback;
    void *completed_callback_cls;
};

static long long shim_now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void shim_logf(CMHDShim_Daemon *d, const char *format, ...) {
    if (d->log_function == NULL) return;
    char line[512];
    va_list ap;
    va_start(ap, format);
    vsnprintf(line, sizeof line, format, ap);
    va_end(ap);
    d->log_function(d->log_cls, line);
}

/* MHD_OPTION_EXTERNAL_LOGGER target: formats and forwards one line. `cls` is the shim handle, which
   outlives the MHD daemon (freed after MHD_stop_daemon returns). */
static void shim_mhd_log(void *cls, const char *format, va_list ap) {
    CMHDShim_Daemon *d = (CMHDShim_Daemon *) cls;
    char line[1024];
    if (vsnprintf(line, sizeof line, format, ap) < 0) return;
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (d->log_function != NULL) d->log_function(d->log_cls, line);
}

/* MHD_OPTION_UNESCAPE_CALLBACK that keeps the text as sent. */
static size_t shim_identity_unescape(void *cls, struct MHD_Connection *c, char *s) {
    (void) cls; (void) c;
    return strlen(s);
}

unsigned int CMHDShim_daemon_current_connections(CMHDShim_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon->mhd, MHD_DAEMON_INFO_CURRENT_CONNECTIONS);
    return info == NULL ? 0 : info->num_connections;
}

/* MHD_OPTION_NOTIFY_CONNECTION target; `cls` is the shim handle (outlives the MHD daemon). MHD calls
   CLOSED before it closes the connection's socket. */
static void shim_connection_notified(void *cls, struct MHD_Connection *c, void **socket_context,
                                     enum MHD_ConnectionNotificationCode code) {
    CMHDShim_Daemon *d = (CMHDShim_Daemon *) cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        if (d->head_timeout_ms == 0) return;
        const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        ShimConnection *sc = calloc(1, sizeof *sc);
        if (sc == NULL || info == NULL) { free(sc); return; } /* no deadline for it; the idle timeout remains */
        sc->fd = info->connect_fd;
        atomic_init(&sc->awaiting_since_ms, shim_now_ms());
        pthread_mutex_lock(&d->heads_lock);
        sc->next = d->heads;
        if (d->heads != NULL) d->heads->prev = sc;
        d->heads = sc;
        pthread_mutex_unlock(&d->heads_lock);
        *socket_context = sc;
        return;
    }
    if (code != MHD_CONNECTION_NOTIFY_CLOSED) return;
    atomic_fetch_sub(&d->open_connections, 1);
    ShimConnection *sc = *socket_context;
    if (sc == NULL) return;
    pthread_mutex_lock(&d->heads_lock);
    if (sc->prev != NULL) sc->prev->next = sc->next; else d->heads = sc->next;
    if (sc->next != NULL) sc->next->prev = sc->prev;
    pthread_mutex_unlock(&d->heads_lock);
    *socket_context = NULL;
    free(sc);
}

/* The connection's ShimConnection, or NULL (no deadline configured, or none recorded). */
static ShimConnection *shim_connection_of(CMHDShim_Daemon *d, struct MHD_Connection *c) {
    if (d->head_timeout_ms == 0 || c == NULL) return NULL;
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return info == NULL ? NULL : (ShimConnection *) info->socket_context;
}

/* The access handler MHD calls: on a request's first call its head is complete, so the deadline stops;
   then the configured handler. */
static enum MHD_Result shim_access(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                   const char *version, const char *upload_data, size_t *upload_data_size,
                                   void **req_cls) {
    CMHDShim_Daemon *d = (CMHDShim_Daemon *) cls;
    if (*req_cls == NULL) {
        ShimConnection *sc = shim_connection_of(d, c);
        if (sc != NULL) atomic_store(&sc->awaiting_since_ms, 0);
    }
    return d->access_handler(d->access_handler_cls, c, url, method, version, upload_data, upload_data_size, req_cls);
}

/* The request-completed callback MHD calls: a kept-alive connection now awaits its next head, whose
   deadline starts once the idle timeout has passed; then the configured callback. */
static void shim_completed(void *cls, struct MHD_Connection *c, void **req_cls, enum MHD_RequestTerminationCode toe) {
    CMHDShim_Daemon *d = (CMHDShim_Daemon *) cls;
    ShimConnection *sc = shim_connection_of(d, c);
    if (sc != NULL) atomic_store(&sc->awaiting_since_ms, shim_now_ms() + d->keep_alive_grace_ms);
    if (d->completed_callback != NULL) d->completed_callback(d->completed_callback_cls, c, req_cls, toe);
}

/* The watchdog: every tenth of the deadline (10–250 ms), shuts down the socket of each connection whose
   head is late. MHD then reads end-of-file, closes the connection and sends CLOSED; the client sees
   the connection end. Holding `heads_lock` while calling shutdown(2) is what keeps the fd valid. */
static void *shim_watchdog_loop(void *arg) {
    CMHDShim_Daemon *d = arg;
    CMHDShim_set_current_thread_name("http-head-timer");
    long long step = d->head_timeout_ms / 10;
    if (step < 10) step = 10;
    if (step > 250) step = 250;
    pthread_mutex_lock(&d->heads_lock);
    while (!atomic_load(&d->stopping)) {
        long long now = shim_now_ms();
        for (ShimConnection *sc = d->heads; sc != NULL; sc = sc->next) {
            long long since = atomic_load(&sc->awaiting_since_ms);
            if (sc->shut_down || since == 0 || now - since < (long long) d->head_timeout_ms) continue; /* may be < 0 */
            sc->shut_down = 1;
            atomic_fetch_add(&d->head_timeouts, 1); /* counted before the client can see the close */
            (void) shutdown(sc->fd, SHUT_RDWR);
        }
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += (long) (step % 1000) * 1000000L;
        until.tv_sec += step / 1000 + until.tv_nsec / 1000000000L;
        until.tv_nsec %= 1000000000L;
        (void) pthread_cond_timedwait(&d->heads_wake, &d->heads_lock, &until);
    }
    pthread_mutex_unlock(&d->heads_lock);
    return NULL;
}

unsigned long CMHDShim_daemon_head_timeouts(CMHDShim_Daemon *daemon) {
    return atomic_load(&daemon->head_timeouts);
}

/* Waits while `connection_limit` connections are open, so further clients stay in the listen
   backlog (as they do when MHD accepts by itself). After 100 ms it re-reads MHD's own count, which
   repairs the count should MHD ever drop a handed-over connection without a CLOSED notification. */
static void shim_wait_below_limit(CMHDShim_Daemon *d) {
    unsigned int waited_ms = 0;
    while (d->connection_limit > 0 && !atomic_load(&d->stopping)) {
        unsigned int open = atomic_load(&d->open_connections);
        if (open < d->connection_limit) return;
        usleep(1000);
        if (++waited_ms % 100 == 0) {
            unsigned int current = CMHDShim_daemon_current_connections(d);
            if (current < open) atomic_compare_exchange_strong(&d->open_connections, &open, current);
        }
    }
}

/* The accept thread: hands every new connection to MHD until CMHDShim_stop_accepting. */
static void *shim_accept_loop(void *arg) {
    CMHDShim_Daemon *d = arg;
    CMHDShim_set_current_thread_name("http-accept");
    int low_resources_logged = 0;
    while (!atomic_load(&d->stopping)) {
        shim_wait_below_limit(d);
        if (atomic_load(&d->stopping)) break;
        struct sockaddr_storage addr;
        socklen_t len = sizeof addr;
        int fd = accept4(d->listen_fd, (struct sockaddr *) &addr, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            int e = errno;
            if (atomic_load(&d->stopping) || e == EINVAL || e == EBADF) break; /* socket shut down */
            if (e == EINTR || e == ECONNABORTED || e == EAGAIN || e == EPROTO) continue;
            if (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM) {
                if (!low_resources_logged) {
                    shim_logf(d, "accept failed: %s; retrying every 10 ms", strerror(e));
                    low_resources_logged = 1;
                }
                usleep(10000);
                continue;
            }
            shim_logf(d, "accept failed: %s", strerror(e));
            usleep(1000);
            continue;
        }
        low_resources_logged = 0;
        /* MHD owns fd from here, and closes it itself when it refuses it (per-IP limit, no memory);
           refusals are synchronous and come without STARTED/CLOSED notifications. */
        atomic_fetch_add(&d->open_connections, 1);
        if (MHD_add_connection(d->mhd, fd, (struct sockaddr *) &addr, len) != MHD_YES)
            atomic_fetch_sub(&d->open_connections, 1);
    }
    return NULL;
}

static int shim_listen(const CMHDShim_Config *config, CMHDShim_Daemon *d) {
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(config->port);
    if (config->bind_address == NULL || inet_pton(AF_INET, config->bind_address, &addr.sin_addr) != 1) return EINVAL;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) return errno;
    int one = 1;
    (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    int backlog = config->listen_backlog > 0 ? (int) config->listen_backlog : SOMAXCONN;
    if (bind(fd, (struct sockaddr *) &addr, sizeof addr) != 0 || listen(fd, backlog) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    socklen_t len = sizeof addr;
    if (getsockname(fd, (struct sockaddr *) &addr, &len) != 0) {
        int e = errno;
        close(fd);
        return e;
    }
    d->listen_fd = fd;
    d->port = ntohs(addr.sin_port);
    return 0;
}

/* Stops and joins the watchdog (needs `stopping` set or sets it; idempotent). */
static void shim_stop_watchdog(CMHDShim_Daemon *d) {
    if (!d->watchdog_running) return;
    atomic_store(&d->stopping, 1);
    pthread_mutex_lock(&d->heads_lock);
    pthread_cond_signal(&d->heads_wake);
    pthread_mutex_unlock(&d->heads_lock);
    pthread_join(d->watchdog, NULL);
    d->watchdog_running = 0;
}

CMHDShim_Daemon *CMHDShim_start_daemon(const CMHDShim_Config *config, int *error_number) {
    *error_number = 0;
    CMHDShim_Daemon *d = calloc(1, sizeof *d);
    if (d == NULL) { *error_number = ENOMEM; return NULL; }
    d->listen_fd = -1;
    d->connection_limit = config->connection_limit;
    d->log_function = config->log_function;
    d->log_cls = config->log_cls;
    d->access_handler = config->access_handler;
    d->access_handler_cls = config->access_handler_cls;
    d->completed_callback = config->completed_callback;
    d->completed_callback_cls = config->completed_callback_cls;
    d->head_timeout_ms = config->head_timeout_ms;
    d->keep_alive_grace_ms = (long long) config->connection_timeout_seconds * 1000;
    pthread_mutex_init(&d->heads_lock, NULL);
    pthread_cond_init(&d->heads_wake, NULL);
    atomic_init(&d->stopping, 0);
    atomic_init(&d->open_connections, 0);
    atomic_init(&d->head_timeouts, 0);

    int e = shim_listen(config, d);
    if (e != 0) { free(d); *error_number = e; return NULL; }

    struct MHD_OptionItem ops[16];
    size_t i = 0;
    if (config->log_function != NULL) {
        /* Must come first so start-up errors use it too. */
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t) shim_mhd_log, d };
    }
    if (config->thread_pool_size > 1)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_THREAD_POOL_SIZE, config->thread_pool_size, NULL };
    if (config->connection_memory_limit > 0)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t) config->connection_memory_limit, NULL };
    if (config->connection_limit > 0) {
        /* MHD splits its limit evenly over the pool's workers and refuses a connection whose worker is
           full. The accept thread enforces the real total, so give MHD room for any spread. */
        unsigned int workers = config->thread_pool_size > 1 ? config->thread_pool_size : 1;
        unsigned long long mhd_limit = (unsigned long long) config->connection_limit * workers;
        if (mhd_limit > 0x7fffffffULL) mhd_limit = 0x7fffffffULL;
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_LIMIT, (intptr_t) mhd_limit, NULL };
    }
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_NOTIFY_CONNECTION, (intptr_t) shim_connection_notified, d };
    if (config->per_ip_connection_limit > 0)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_PER_IP_CONNECTION_LIMIT, config->per_ip_connection_limit, NULL };
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout_seconds, NULL };
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) shim_completed, d };
    if (config->raw_url)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t) shim_identity_unescape, NULL };
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_END, 0, NULL };

    /* poll(2), not epoll: libmicrohttpd 0.9.75's MHD_epoll drains events with
       `while (MAX_EVENTS == num_events) epoll_wait(..., timeout)`, so a worker whose call returned exactly 128
       events calls epoll_wait again with the full connection timeout while the edge-triggered events it already
       took wait in its ready list: at the end of a burst of connections (1,000 clients reconnecting after a
       restart) 128 x k requests sat unread until the 10 s head watchdog closed them, in about 1 burst in 8
       (scripts/repro_open_stall.py: 5 of 24 rounds with epoll, 0 of 24 with poll). Each worker polls its own
       connections; upgraded WebSocket sockets leave libmicrohttpd's set. */
    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_ALLOW_SUSPEND_RESUME
                       | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET | MHD_ALLOW_UPGRADE;
    errno = 0;
    d->mhd = MHD_start_daemon(flags, 0, NULL, NULL,
                              shim_access, d,
                              MHD_OPTION_ARRAY, ops,
                              MHD_OPTION_END);
    if (d->mhd == NULL) {
        *error_number = errno != 0 ? errno : EIO;
        close(d->listen_fd);
        free(d);
        return NULL;
    }
    if (d->head_timeout_ms > 0) {
        e = pthread_create(&d->watchdog, NULL, shim_watchdog_loop, d);
        if (e != 0) {
            MHD_stop_daemon(d->mhd);
            close(d->listen_fd);
            free(d);
            *error_number = e;
            return NULL;
        }
        d->watchdog_running = 1;
    }
    e = pthread_create(&d->acceptor, NULL, shim_accept_loop, d);
    if (e != 0) {
        shim_stop_watchdog(d);
        MHD_stop_daemon(d->mhd);
        close(d->listen_fd);
        free(d);
        *error_number = e;
        return NULL;
    }
    d->acceptor_running = 1;
    return d;
}

struct MHD_Daemon *CMHDShim_daemon_mhd(CMHDShim_Daemon *daemon) {
    return daemon->mhd;
}

uint16_t CMHDShim_daemon_bind_port(CMHDShim_Daemon *daemon) {
    return daemon->port;
}

void CMHDShim_stop_accepting(CMHDShim_Daemon *daemon) {
    atomic_store(&daemon->stopping, 1);
    if (daemon->listen_fd >= 0) {
        /* On Linux, shutdown(2) on a listening socket stops listening (pending and new connections
           get RST) and wakes a blocked accept(2) with EINVAL. */
        (void) shutdown(daemon->listen_fd, SHUT_RDWR);
    }
    if (daemon->acceptor_running) {
        pthread_join(daemon->acceptor, NULL);
        daemon->acceptor_running = 0;
    }
    if (daemon->listen_fd >= 0) {
        close(daemon->listen_fd);
        daemon->listen_fd = -1;
    }
}

void CMHDShim_stop_daemon(CMHDShim_Daemon *daemon) {
    CMHDShim_stop_accepting(daemon);
    shim_stop_watchdog(daemon);
    MHD_stop_daemon(daemon->mhd);
    pthread_cond_destroy(&daemon->heads_wake);
    pthread_mutex_destroy(&daemon->heads_lock);
    free(daemon);
}

int CMHDShim_connection_client_address(struct MHD_Connection *connection, char *buffer, size_t buffer_size) {
    if (buffer_size == 0) return -1;
    buffer[0] = '\0';
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
    if (info == NULL || info->client_addr == NULL) return -1;
    const struct sockaddr *sa = info->client_addr;
    const void *src;
    if (sa->sa_family == AF_INET) src = &((const struct sockaddr_in *) sa)->sin_addr;
    else if (sa->sa_family == AF_INET6) src = &((const struct sockaddr_in6 *) sa)->sin6_addr;
    else return -1;
    if (inet_ntop(sa->sa_family, src, buffer, (socklen_t) buffer_size) == NULL) { buffer[0] = '\0'; return -1; }
    return 0;
}

void CMHDShim_set_current_thread_name(const char *name) {
    char buffer[16];
    strncpy(buffer, name, sizeof buffer - 1);
    buffer[sizeof buffer - 1] = '\0';
    (void) pthread_setname_np(pthread_self(), buffer);
}

enum MHD_Result CMHDShim_upgrade_close(struct MHD_UpgradeResponseHandle *urh) {
    return MHD_upgrade_action(urh, MHD_UPGRADE_ACTION_CLOSE);
}

int CMHDShim_connection_fd(struct MHD_Connection *connection) {
    const union MHD_ConnectionInfo *info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CONNECTION_FD);
    return info == NULL ? -1 : info->connect_fd;
}

int CMHDShim_socket_peer_hung_up(int fd) {
    struct pollfd p = { .fd = fd, .events = POLLRDHUP, .revents = 0 };
    if (poll(&p, 1, 0) < 0) return -1;
    if (p.revents & (POLLHUP | POLLERR)) return 1;
    if (!(p.revents & POLLRDHUP)) return 0;
    /* A FIN behind bytes the engine has yet to read: not yet (it reads them, then sees the FIN). */
    int unread = 0;
    if (ioctl(fd, FIONREAD, &unread) < 0) return -1;
    return unread == 0;
}
