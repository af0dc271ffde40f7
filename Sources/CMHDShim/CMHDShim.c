#define _GNU_SOURCE
#include "CMHDShim.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

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
};

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

/* MHD_OPTION_NOTIFY_CONNECTION target; `cls` is the shim handle (outlives the MHD daemon). */
static void shim_connection_notified(void *cls, struct MHD_Connection *c, void **socket_context,
                                     enum MHD_ConnectionNotificationCode code) {
    (void) c; (void) socket_context;
    CMHDShim_Daemon *d = (CMHDShim_Daemon *) cls;
    if (code == MHD_CONNECTION_NOTIFY_CLOSED) atomic_fetch_sub(&d->open_connections, 1);
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

CMHDShim_Daemon *CMHDShim_start_daemon(const CMHDShim_Config *config, int *error_number) {
    *error_number = 0;
    CMHDShim_Daemon *d = calloc(1, sizeof *d);
    if (d == NULL) { *error_number = ENOMEM; return NULL; }
    d->listen_fd = -1;
    d->connection_limit = config->connection_limit;
    d->log_function = config->log_function;
    d->log_cls = config->log_cls;
    atomic_init(&d->stopping, 0);
    atomic_init(&d->open_connections, 0);

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
    if (config->completed_callback != NULL)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) config->completed_callback, config->completed_callback_cls };
    if (config->raw_url)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t) shim_identity_unescape, NULL };
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_END, 0, NULL };

    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME
                       | MHD_USE_ITC | MHD_USE_ERROR_LOG | MHD_USE_NO_LISTEN_SOCKET;
    errno = 0;
    d->mhd = MHD_start_daemon(flags, 0, NULL, NULL,
                              config->access_handler, config->access_handler_cls,
                              MHD_OPTION_ARRAY, ops,
                              MHD_OPTION_END);
    if (d->mhd == NULL) {
        *error_number = errno != 0 ? errno : EIO;
        close(d->listen_fd);
        free(d);
        return NULL;
    }
    e = pthread_create(&d->acceptor, NULL, shim_accept_loop, d);
    if (e != 0) {
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
    MHD_stop_daemon(daemon->mhd);
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
