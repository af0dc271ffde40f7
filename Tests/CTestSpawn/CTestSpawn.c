#define _GNU_SOURCE 1
#include "CTestSpawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <unistd.h>

extern char **environ;

int ctestspawn_spawn(const char *path, char *const argv[], char *const envp[],
                     int stdin_fd, int stdout_fd, int stderr_fd, pid_t *pid) {
    int sources[3] = {stdin_fd, stdout_fd, stderr_fd};
    /* Copies, made here, of sources below 3: the dup2 actions run in order, so `stdout: a pipe, stderr: our
     * fd 1` would otherwise give the child's stderr the pipe that its fd 1 had just become. The copies are
     * close-on-exec, and closefrom(3) closes them in the child anyway. */
    int copies[3] = {-1, -1, -1};
    int rc = 0;
    for (int i = 0; i < 3 && rc == 0; i++) {
        if (sources[i] == CTESTSPAWN_INHERIT || sources[i] == CTESTSPAWN_NULL) continue;
        if (sources[i] < 0) { rc = EBADF; break; } /* e.g. a closed FileHandle's -1: never "inherit" by mistake */
        if (sources[i] < 3) {
            copies[i] = fcntl(sources[i], F_DUPFD_CLOEXEC, 3);
            if (copies[i] < 0) rc = errno;
            else sources[i] = copies[i];
        }
    }

    posix_spawn_file_actions_t actions;
    posix_spawnattr_t attr;
    int actions_ready = 0, attr_ready = 0;
    if (rc == 0) { rc = posix_spawn_file_actions_init(&actions); actions_ready = rc == 0; }
    if (rc == 0) { rc = posix_spawnattr_init(&attr); attr_ready = rc == 0; }

    for (int target = 0; target < 3 && rc == 0; target++) {
        if (sources[target] == CTESTSPAWN_NULL)
            rc = posix_spawn_file_actions_addopen(&actions, target, "/dev/null", O_RDWR, 0);
        else if (sources[target] != CTESTSPAWN_INHERIT)
            /* Every source is >= 3 here, so no action reads a descriptor an earlier one replaced. */
            rc = posix_spawn_file_actions_adddup2(&actions, sources[target], target);
    }
    /* After the dup2s (actions run in order): nothing else reaches the child. */
    if (rc == 0) rc = posix_spawn_file_actions_addclosefrom_np(&actions, 3);

    /* No blocked signal and every signal's default action: a child of a thread that blocks SIGTERM, or of
     * a process that ignores SIGPIPE, starts as a shell would start it. The standard signals and the
     * real-time ones, not glibc's own two between them (32 and 33, below SIGRTMIN). */
    sigset_t none, all;
    sigemptyset(&none);
    sigemptyset(&all);
    for (int sig = 1; sig < 32; sig++)
        if (sig != SIGKILL && sig != SIGSTOP) sigaddset(&all, sig);
    for (int sig = SIGRTMIN; sig <= SIGRTMAX; sig++) sigaddset(&all, sig);
    if (rc == 0) rc = posix_spawnattr_setsigmask(&attr, &none);
    if (rc == 0) rc = posix_spawnattr_setsigdefault(&attr, &all);
    if (rc == 0) rc = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);

    if (rc == 0) rc = posix_spawn(pid, path, &actions, &attr, argv, envp ? envp : environ);
    if (attr_ready) posix_spawnattr_destroy(&attr);
    if (actions_ready) posix_spawn_file_actions_destroy(&actions);
    for (int i = 0; i < 3; i++)
        if (copies[i] >= 0) close(copies[i]);
    return rc;
}
