/* bench-throughput: submit batch jobs to the cluster named by SLURM_CONF
 * from several client threads through libslurm, and time it.
 *
 *   bench-throughput [-n JOBS] [-t THREADS] [-l MINUTES] [-p PARTITION] [-s] [-q]
 *
 * -p names the jobs' partition (by default they name none). -s waits,
 * after the last submission, until the last accepted job has a priority
 * (priority > 0) or has left PENDING, so any work left to the shim's agent
 * is inside the measured time too. Prints one line of key=value pairs:
 *   jobs=N accepted=A rejected=R threads=T submit_s=S settle_s=S2
 *   submit_rate=A/S rate=A/S2 first_id=I last_id=J
 * -q prints nothing but that line. */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>

/* Slurm 25.11 names a job by a slurm_step_id_t in the submit response, and
 * 26.05 in slurm_load_job's argument too. */
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(25, 11, 0)
#define SUBMITTED_JOB_ID(resp) ((resp)->step_id.job_id)
#else
#define SUBMITTED_JOB_ID(resp) ((resp)->job_id)
#endif

static int load_job (job_info_msg_t **msg, uint32_t id)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
    slurm_step_id_t step_id = SLURM_STEP_ID_INITIALIZER;
    step_id.job_id = id;
    return slurm_load_job (msg, step_id, SHOW_ALL);
#else
    return slurm_load_job (msg, id, SHOW_ALL);
#endif
}

static int njobs = 1000;
static int nthreads = 4;
static uint32_t minutes = 10;
static char *partition; /* -p; NULL: none named */
static atomic_int next_job;
static atomic_int accepted, rejected;
static atomic_uint first_id = UINT32_MAX, last_id;
static char *env_vars[] = {"PATH=/usr/bin:/bin", "BENCH=1", NULL};
static const char *first_error;

static double now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A small but realistic batch job: name, script, output, cwd, time limit,
 * environment; no partition unless -p names one, so the policies' default
 * applies. */
static void fill (job_desc_msg_t *d, int n, char *name, size_t len)
{
    slurm_init_job_desc_msg (d);
    snprintf (name, len, "bench-%d", n);
    d->name = name;
    d->script = "#!/bin/sh\ntrue\n";
    d->std_out = "/dev/null";
    d->work_dir = "/tmp";
    d->time_limit = minutes;
    d->partition = partition;
    d->min_nodes = 1;
    d->user_id = getuid ();
    d->group_id = getgid ();
    d->environment = env_vars;
    d->env_size = 2;
}

static void *submitter (void *arg)
{
    (void)arg;
    for (;;) {
        int n = atomic_fetch_add (&next_job, 1);
        if (n >= njobs)
            break;
        job_desc_msg_t d;
        char name[32];
        submit_response_msg_t *resp = NULL;
        fill (&d, n, name, sizeof (name));
        if (slurm_submit_batch_job (&d, &resp) == SLURM_SUCCESS && resp) {
            uint32_t id = SUBMITTED_JOB_ID (resp), cur;
            atomic_fetch_add (&accepted, 1);
            cur = atomic_load (&last_id);
            while (id > cur && !atomic_compare_exchange_weak (&last_id, &cur, id))
                ;
            cur = atomic_load (&first_id);
            while (id < cur && !atomic_compare_exchange_weak (&first_id, &cur, id))
                ;
        } else {
            atomic_fetch_add (&rejected, 1);
            if (!first_error)
                first_error = slurm_strerror (errno);
        }
        slurm_free_submit_response_response_msg (resp);
    }
    return NULL;
}

/* True once job 'id' left its creation hold (or was never held). */
static int released (uint32_t id)
{
    job_info_msg_t *msg = NULL;
    int done = 0;
    if (load_job (&msg, id) != SLURM_SUCCESS || !msg)
        return 0;
    if (msg->record_count == 1)
        done = msg->job_array[0].priority > 0 ||
               msg->job_array[0].job_state != JOB_PENDING;
    slurm_free_job_info_msg (msg);
    return done;
}

int main (int argc, char **argv)
{
    int opt, settle = 0, quiet = 0;
    while ((opt = getopt (argc, argv, "n:t:l:p:sq")) != -1) {
        switch (opt) {
        case 'n': njobs = atoi (optarg); break;
        case 't': nthreads = atoi (optarg); break;
        case 'l': minutes = (uint32_t)atoi (optarg); break;
        case 'p': partition = optarg; break;
        case 's': settle = 1; break;
        case 'q': quiet = 1; break;
        default:
            fprintf (stderr, "usage: %s [-n JOBS] [-t THREADS] [-l MINUTES] [-p PARTITION] [-s] [-q]\n",
                     argv[0]);
            return 2;
        }
    }
    if (njobs < 1 || nthreads < 1 || nthreads > 256) {
        fprintf (stderr, "bad -n or -t\n");
        return 2;
    }
    slurm_init (NULL);
    pthread_t th[256];
    double t0 = now ();
    for (int i = 0; i < nthreads; i++)
        if (pthread_create (&th[i], NULL, submitter, NULL) != 0) {
            perror ("pthread_create");
            return 1;
        }
    for (int i = 0; i < nthreads; i++)
        pthread_join (th[i], NULL);
    double t1 = now (), t2 = t1;
    if (settle && accepted > 0) {
        /* Bounded: the agent settles a few thousand jobs in well under 60 s. */
        while (!released (last_id) && now () - t1 < 60.)
            usleep (2000);
        t2 = now ();
    }
    if (!quiet && rejected > 0)
        fprintf (stderr, "bench-throughput: %d rejected, first: %s\n",
                 (int)rejected, first_error ? first_error : "?");
    printf ("jobs=%d accepted=%d rejected=%d threads=%d submit_s=%.4f settle_s=%.4f "
            "submit_rate=%.1f rate=%.1f first_id=%u last_id=%u\n",
            njobs, (int)accepted, (int)rejected, nthreads, t1 - t0, t2 - t0,
            accepted / (t1 - t0), accepted / (t2 - t0),
            accepted ? (unsigned)first_id : 0, (unsigned)last_id);
    slurm_fini ();
    return accepted == njobs ? 0 : 1;
}
