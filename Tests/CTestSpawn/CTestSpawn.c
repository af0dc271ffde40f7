#define _GNU_SOURCE 1
#include "CTestSpawn.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

/* Adds the file action that gives the child `fd` as descriptor `target`. */
static int set_stream(posix_spawn_file_actions_t *actions, int fd, int target) {
    if (fd == CTESTSPAWN_NULL)
        return posix_spawn_file_actions_addopen(actions, target, "/dev/null", O_RDWR, 0);
    if (fd == CTESTSPAWN_INHERIT || fd == target)
        return 0; /* glibc's dup2 action onto itself would keep a close-on-exec flag; the parent's own 0-2 have none */
    return posix_spawn_file_actions_adddup2(actions, fd, target);
}

int ctestspawn_spawn(const char *path, char *const argv[], char *const envp[],
                     int stdin_fd, int stdout_fd, int stderr_fd, pid_t *pid) {
    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int rc = posix_spawn_file_actions_init(&actions);
    if (rc != 0) return rc;
    rc = posix_spawnattr_init(&attr);
    if (rc != 0) { posix_spawn_file_actions_destroy(&actions); return rc; }

    if (rc == 0) rc = set_stream(&actions, stdin_fd, 0);
    if (rc == 0) rc = set_stream(&actions, stdout_fd, 1);
    if (rc == 0) rc = set_stream(&actions, stderr_fd, 2);
    /* After the dup2s (actions run in order): nothing else reaches the child. */
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);

    sigset_t none, defaults;
    sigemptyset(&none);
    sigemptyset(&defaults);
    int reset[] = {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD, SIGUSR1, SIGUSR2, SIGALRM};
    for (unsigned i = 0; i < sizeof reset / sizeof reset[0]; i++) sigaddset(&defaults, reset[i]);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &defaults);
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attr, argv, envp ? envp : environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&actions);
    return rc;
}
