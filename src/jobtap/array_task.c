/* A job array's task to its record id, through squeue (array_task.h). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "array_task.h"

static bool digits (const char *s, size_t n)
{
    if (n == 0 || n > 10)
        return false;
    for (size_t i = 0; i < n; i++)
        if (!isdigit ((unsigned char)s[i]))
            return false;
    return true;
}

bool array_task_syntax (const char *text)
{
    const char *u = strchr (text, '_');
    return u && digits (text, (size_t)(u - text))
           && digits (u + 1, strlen (u + 1));
}

/* squeue's output (stdout and stderr together), at most size-1 bytes;
 * its exit status, or -1. */
static int run_squeue (const char *text, char *out, size_t size)
{
    int fd[2];
    if (pipe (fd) < 0)
        return -1;
    pid_t pid = fork ();
    if (pid < 0) {
        close (fd[0]);
        close (fd[1]);
        return -1;
    }
    if (pid == 0) {
        dup2 (fd[1], STDOUT_FILENO);
        dup2 (fd[1], STDERR_FILENO);
        close (fd[0]);
        close (fd[1]);
        /* %A: the id of the record the task is in; every state, so an
         * ended task is found while Slurm still lists it */
        execlp ("squeue", "squeue", "-h", "-t", "all", "-o", "%A", "-j", text,
                (char *)NULL);
        fprintf (stderr, "cannot run squeue: %s", strerror (errno));
        _exit (127);
    }
    close (fd[1]);
    size_t len = 0;
    ssize_t n;
    while ((n = read (fd[0], out + len, size - 1 - len)) != 0) {
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            break;
        len += (size_t)n;
        if (len == size - 1) {
            char sink[256]; /* the rest is not needed, but squeue must end */
            while (read (fd[0], sink, sizeof (sink)) > 0)
                ;
            break;
        }
    }
    out[len] = '\0';
    close (fd[0]);
    int status;
    while (waitpid (pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED (status) ? WEXITSTATUS (status) : -1;
}

int array_task_record_id (const char *text,
                          unsigned long long *id,
                          jobtap_host_error_t *err)
{
    char out[512];

    if (!array_task_syntax (text)) {
        errprintf (err, "%s is not ARRAYID_TASKID", text);
        return -1;
    }
    int rc = run_squeue (text, out, sizeof (out));
    out[strcspn (out, "\n")] = '\0';
    char *end;
    errno = 0;
    unsigned long long v = strtoull (out, &end, 10);
    if (rc != 0 || errno || end == out || *end) {
        errprintf (err, "squeue does not know job %s%s%s", text,
                   out[0] ? ": " : "", out);
        return -1;
    }
    *id = v;
    return 0;
}
