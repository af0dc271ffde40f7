#define _GNU_SOURCE
#include "CMHDShim.h"

#include <pthread.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

struct CMHDShim_Daemon {
    struct MHD_Daemon *mhd;
    CMHDShim_LogFunction log_function;
    void *log_cls;
};

/* MHD_OPTION_EXTERNAL_LOGGER target: formats and forwards one line. `cls` is the shim handle,
   which outlives the MHD daemon (freed after MHD_stop_daemon returns). */
static void shim_log(void *cls, const char *format, va_list ap) {
    CMHDShim_Daemon *d = (CMHDShim_Daemon *) cls;
    char line[1024];
    int n = vsnprintf(line, sizeof line, format, ap);
    if (n < 0) return;
    size_t len = strlen(line);
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
    if (d->log_function != NULL) d->log_function(d->log_cls, line);
}

/* MHD_OPTION_UNESCAPE_CALLBACK that keeps the text as sent. */
static size_t shim_identity_unescape(void *cls, struct MHD_Connection *c, char *s) {
    (void) cls; (void) c;
    return strlen(s);
}

CMHDShim_Daemon *CMHDShim_start_daemon(const CMHDShim_Config *config, int *error_number) {
    *error_number = 0;
    struct sockaddr_in addr;
    memset(&addr, 0, sizeof addr);
    addr.sin_family = AF_INET;
    addr.sin_port = htons(config->port);
    if (config->bind_address == NULL || inet_pton(AF_INET, config->bind_address, &addr.sin_addr) != 1) {
        *error_number = EINVAL;
        return NULL;
    }

    CMHDShim_Daemon *d = calloc(1, sizeof *d);
    if (d == NULL) { *error_number = ENOMEM; return NULL; }
    d->log_function = config->log_function;
    d->log_cls = config->log_cls;

    struct MHD_OptionItem ops[16];
    size_t i = 0;
    if (config->log_function != NULL) {
        /* Must come first so start-up errors use it too. */
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_EXTERNAL_LOGGER, (intptr_t) shim_log, d };
    }
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_SOCK_ADDR, 0, &addr };
    if (config->thread_pool_size > 1)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_THREAD_POOL_SIZE, config->thread_pool_size, NULL };
    if (config->connection_memory_limit > 0)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_MEMORY_LIMIT, (intptr_t) config->connection_memory_limit, NULL };
    if (config->connection_limit > 0)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_LIMIT, config->connection_limit, NULL };
    if (config->per_ip_connection_limit > 0)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_PER_IP_CONNECTION_LIMIT, config->per_ip_connection_limit, NULL };
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_CONNECTION_TIMEOUT, config->connection_timeout_seconds, NULL };
    if (config->listen_backlog > 0)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_LISTEN_BACKLOG_SIZE, config->listen_backlog, NULL };
    if (config->completed_callback != NULL)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_NOTIFY_COMPLETED, (intptr_t) config->completed_callback, config->completed_callback_cls };
    if (config->raw_url)
        ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_UNESCAPE_CALLBACK, (intptr_t) shim_identity_unescape, NULL };
    ops[i++] = (struct MHD_OptionItem) { MHD_OPTION_END, 0, NULL };

    unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_ALLOW_SUSPEND_RESUME
                       | MHD_USE_ITC | MHD_USE_ERROR_LOG;
    errno = 0;
    d->mhd = MHD_start_daemon(flags, 0, NULL, NULL,
                              config->access_handler, config->access_handler_cls,
                              MHD_OPTION_ARRAY, ops,
                              MHD_OPTION_END);
    if (d->mhd == NULL) {
        *error_number = errno != 0 ? errno : EIO;
        free(d);
        return NULL;
    }
    return d;
}

struct MHD_Daemon *CMHDShim_daemon_mhd(CMHDShim_Daemon *daemon) {
    return daemon->mhd;
}

uint16_t CMHDShim_daemon_bind_port(CMHDShim_Daemon *daemon) {
    const union MHD_DaemonInfo *info = MHD_get_daemon_info(daemon->mhd, MHD_DAEMON_INFO_BIND_PORT);
    return info == NULL ? 0 : info->port;
}

void CMHDShim_stop_daemon(CMHDShim_Daemon *daemon) {
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

int CMHDShim_stop_listening(int listen_fd) {
    return shutdown(listen_fd, SHUT_RDWR);
}

void CMHDShim_set_current_thread_name(const char *name) {
    char buffer[16];
    strncpy(buffer, name, sizeof buffer - 1);
    buffer[sizeof buffer - 1] = '\0';
    (void) pthread_setname_np(pthread_self(), buffer);
}
