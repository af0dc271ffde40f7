#ifndef CTESTSPAWN_H
#define CTESTSPAWN_H

/*
 * posix_spawn for the tests' child processes (PhotoWallTesting's `Child`), in C because Swift's Glibc
 * module does not import glibc's GNU extensions (posix_spawn_file_actions_addclosefrom_np needs
 * _GNU_SOURCE). Test support only: the product starts no processes.
 */

#include <sys/types.h>

/** `stdin_fd`/`stdout_fd`/`stderr_fd` value: the child keeps the parent's descriptor. */
#define CTESTSPAWN_INHERIT (-1)
/** `stdin_fd`/`stdout_fd`/`stderr_fd` value: the child gets /dev/null. */
#define CTESTSPAWN_NULL (-2)

/**
 * Starts `path` with `argv` (NULL-terminated, argv[0] included) and `envp` (NULL-terminated; NULL: this
 * process's environment). Descriptors 0, 1 and 2 of the child are what `stdin_fd`, `stdout_fd` and
 * `stderr_fd` are here when it is called (any descriptor, 0-2 included, or one of the two values above);
 * every other descriptor is closed in the child, whatever its close-on-exec flag and whichever thread
 * opened it. The child starts with no blocked signals and every signal's default action (an ignored
 * SIGPIPE or a blocked SIGTERM of the spawning thread is not passed on).
 * Returns 0 and sets `*pid`, or an errno value: EBADF for another negative descriptor (a closed handle's
 * -1), ENOENT for a missing executable, ...
 */
int ctestspawn_spawn(const char *path, char *const argv[], char *const envp[],
                     int stdin_fd, int stdout_fd, int stderr_fd, pid_t *pid);

#endif
