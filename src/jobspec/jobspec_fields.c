/* A job's fields in one block (jobspec_fields.h). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "jobspec_fields.h"

/* Tells a block made here from any other bytes handed back. */
#define FIELDS_MAGIC 0x6a736631u

/* The numbers of struct jobspec_fields; then the strings that are set
 * (bit i of 'present': string_members[i]), then argv's argc strings,
 * each with its NUL. */
struct block {
    uint32_t magic;
    uint32_t len;
    uint32_t present;
    uint32_t argc;
    uint64_t mem_mb;
    int64_t begin_time;
    uint32_t nodes, max_nodes, ntasks, time_limit, time_min;
    uint32_t array_job_id, array_task_id;
    int32_t nice;
    uint16_t cpus_per_task, tasks_per_node, mail_type;
    uint8_t exclusive, mem_per;
};

/* The string members of struct jobspec_fields. */
static const size_t string_members[] = {
    offsetof (struct jobspec_fields, partition),
    offsetof (struct jobspec_fields, account),
    offsetof (struct jobspec_fields, wckey),
    offsetof (struct jobspec_fields, work_dir),
    offsetof (struct jobspec_fields, name),
    offsetof (struct jobspec_fields, dependency),
    offsetof (struct jobspec_fields, features),
    offsetof (struct jobspec_fields, comment),
    offsetof (struct jobspec_fields, admin_comment),
    offsetof (struct jobspec_fields, qos),
    offsetof (struct jobspec_fields, reservation),
    offsetof (struct jobspec_fields, licenses),
    offsetof (struct jobspec_fields, tres_per_job),
    offsetof (struct jobspec_fields, tres_per_node),
    offsetof (struct jobspec_fields, tres_per_socket),
    offsetof (struct jobspec_fields, tres_per_task),
    offsetof (struct jobspec_fields, cpus_per_tres),
    offsetof (struct jobspec_fields, mem_per_tres),
    offsetof (struct jobspec_fields, std_out),
    offsetof (struct jobspec_fields, std_err),
    offsetof (struct jobspec_fields, mail_user),
    offsetof (struct jobspec_fields, array),
};
#define NSTRINGS (sizeof (string_members) / sizeof (string_members[0]))
_Static_assert (NSTRINGS <= 32, "a block's 'present' has a bit per string");
/* How many of the first string members jobspec_system_member reads for
 * attributes.system.<key>: they come first (partition to dependency), so
 * finding a member loads no more than it reads (test_jobspec_fields
 * checks the answers against the built jobspec). */
static size_t system_member_strings (const char *key)
{
    /* by the first letter: one compare a key (asked on every submission) */
    static const char *const by_last_string[] = {
        "queue", "bank", "project", "cwd", "job", "dependencies",
    };
    size_t i;
    switch (key[0]) {
    case 'q':
        i = 0;
        break;
    case 'b':
        i = 1;
        break;
    case 'p':
        i = 2;
        break;
    case 'c':
        i = 3;
        break;
    case 'j':
        i = 4;
        break;
    case 'd':
        i = 5;
        break;
    default:
        return 0; /* the members it does not read fields for */
    }
    return strcmp (key, by_last_string[i]) ? 0 : i + 1;
}

static const char **member (struct jobspec_fields *f, size_t i)
{
    return (const char **)((char *)f + string_members[i]);
}

static const char *member_of (const struct jobspec_fields *f, size_t i)
{
    return *(const char *const *)((const char *)f + string_members[i]);
}

/* argv up to argc or its first NULL, as jobspec_build reads it. */
static uint32_t argv_count (const struct jobspec_fields *f)
{
    uint32_t n = 0;
    while (f->argv && n < f->argc && f->argv[n])
        n++;
    return n;
}

static char *put_string (char *p, const char *s)
{
    size_t n = strlen (s) + 1;
    return (char *)memcpy (p, s, n) + n;
}

void *jobspec_fields_save (const struct jobspec_fields *f, size_t *len)
{
    uint32_t argc = argv_count (f), present = 0;
    size_t total = sizeof (struct block), lens[NSTRINGS];
    const char *strings[NSTRINGS];
    struct block *b;
    char *p;

    /* most members are NULL: the copy walks only the ones set (unrolled:
     * a test a member, without the walk's own count and table) */
#pragma GCC unroll 32
    for (size_t i = 0; i < NSTRINGS; i++) {
        if ((strings[i] = member_of (f, i))) {
            present |= 1u << i;
            lens[i] = strlen (strings[i]) + 1;
            total += lens[i];
        }
    }
    for (uint32_t i = 0; i < argc; i++)
        total += strlen (f->argv[i]) + 1;
    if (total > UINT32_MAX || !(b = malloc (total))) {
        errno = ENOMEM;
        return NULL;
    }
    *b = (struct block){
        .magic = FIELDS_MAGIC,
        .len = (uint32_t)total,
        .present = present,
        .argc = argc,
        .mem_mb = f->mem_mb,
        .begin_time = f->begin_time,
        .nodes = f->nodes,
        .max_nodes = f->max_nodes,
        .ntasks = f->ntasks,
        .time_limit = f->time_limit,
        .time_min = f->time_min,
        .array_job_id = f->array_job_id,
        .array_task_id = f->array_task_id,
        .nice = f->nice,
        .cpus_per_task = f->cpus_per_task,
        .tasks_per_node = f->tasks_per_node,
        .mail_type = f->mail_type,
        .exclusive = (uint8_t)f->exclusive,
        .mem_per = (uint8_t)f->mem_per,
    };
    p = (char *)(b + 1);
    for (uint32_t left = present; left; left &= left - 1) {
        int i = __builtin_ctz (left);
        p = (char *)memcpy (p, strings[i], lens[i]) + lens[i];
    }
    for (uint32_t i = 0; i < argc; i++)
        p = put_string (p, f->argv[i]);
    *len = total;
    return b;
}

/* The next string of the block at *p, which must end before end. */
static const char *take_string (const char **p, const char *end)
{
    const char *s = *p;
    const char *nul = s < end ? memchr (s, '\0', (size_t)(end - s)) : NULL;
    if (!nul)
        return NULL;
    *p = nul + 1;
    return s;
}

/* The fields of block into *f: the numbers, the first 'nstrings' string
 * members (borrowed from it; the others NULL), and with argv (room for
 * b->argc pointers) the arguments too. */
static int load (const struct block *b,
                 struct jobspec_fields *f,
                 size_t nstrings,
                 const char **argv)
{
    const char *p = (const char *)(b + 1), *end = (const char *)b + b->len;

    *f = (struct jobspec_fields){
        .nodes = b->nodes,
        .max_nodes = b->max_nodes,
        .ntasks = b->ntasks,
        .cpus_per_task = b->cpus_per_task,
        .tasks_per_node = b->tasks_per_node,
        .exclusive = (enum jobspec_exclusive)b->exclusive,
        .mem_per = (enum jobspec_memory)b->mem_per,
        .mem_mb = b->mem_mb,
        .time_limit = b->time_limit,
        .time_min = b->time_min,
        .mail_type = b->mail_type,
        .begin_time = b->begin_time,
        .nice = b->nice,
        .argc = argv ? b->argc : 0,
        .argv = argv && b->argc ? (char *const *)argv : NULL,
        .array_job_id = b->array_job_id,
        .array_task_id = b->array_task_id,
    };
    for (size_t i = 0; i < nstrings; i++) {
        if ((b->present & (1u << i))
            && !(*member (f, i) = take_string (&p, end)))
            return -1;
    }
    for (uint32_t i = 0; argv && i < b->argc; i++) {
        if (!(argv[i] = take_string (&p, end)))
            return -1;
    }
    return 0;
}

/* Whether block is one saved here, len bytes long. */
static bool block_valid (const struct block *b, size_t len)
{
    return b && len >= sizeof (*b) && b->magic == FIELDS_MAGIC && b->len == len
           && b->argc <= len;
}

json_t *jobspec_fields_build (const void *block, size_t len)
{
    const struct block *b = block;
    struct jobspec_fields f;
    const char *few[16], **argv = few;
    json_t *spec = NULL;

    if (!block_valid (b, len)) {
        errno = EINVAL;
        return NULL;
    }
    if (b->argc > sizeof (few) / sizeof (few[0])
        && !(argv = malloc (b->argc * sizeof (*argv)))) {
        errno = ENOMEM;
        return NULL;
    }
    if (load (b, &f, NSTRINGS, argv) < 0)
        errno = EINVAL;
    else if (!(spec = jobspec_build (&f)))
        errno = ENOMEM;
    if (argv != few)
        free (argv);
    return spec;
}

enum jobspec_member jobspec_fields_find (const void *block,
                                         size_t len,
                                         const char *const *path,
                                         int depth,
                                         json_t **value,
                                         struct jobspec_scalar *scalar)
{
    struct jobspec_fields f;

    *value = NULL;
    if (depth == 0)
        return JOBSPEC_MEMBER_OBJECT;
    if (depth == 1) {
        if (!strcmp (path[0], "version")) {
            if (!scalar)
                return (*value = json_integer (1)) ? JOBSPEC_MEMBER_VALUE
                                                   : JOBSPEC_MEMBER_UNKNOWN;
            *scalar = (struct jobspec_scalar){.type = JSON_INTEGER,
                                              .integer = 1};
            return JOBSPEC_MEMBER_SCALAR;
        }
        if (!strcmp (path[0], "attributes"))
            return JOBSPEC_MEMBER_OBJECT;
        if (!strcmp (path[0], "resources") || !strcmp (path[0], "tasks"))
            return JOBSPEC_MEMBER_UNKNOWN;
        return JOBSPEC_MEMBER_ABSENT;
    }
    if (strcmp (path[0], "attributes"))
        return JOBSPEC_MEMBER_UNKNOWN;
    if (depth == 2)
        return !strcmp (path[1], "system") ? JOBSPEC_MEMBER_OBJECT
                                           : JOBSPEC_MEMBER_ABSENT;
    if (strcmp (path[1], "system") || depth > 4 || !block_valid (block, len))
        return JOBSPEC_MEMBER_UNKNOWN;
    size_t strings = system_member_strings (depth == 3 ? path[2] : "job");
    /* each member that strings are counted for is made of the last of
     * them, and is absent without it: told without loading (every
     * submission asks for some, the dependencies, a policy's queue) */
    if (depth == 3 && strings
        && !(((const struct block *)block)->present & (1u << (strings - 1))))
        return JOBSPEC_MEMBER_ABSENT;
    if (depth == 3 && scalar && !strings && !strcmp (path[2], "duration")) {
        /* the member most read: one number of the block, nothing loaded */
        *scalar = (struct jobspec_scalar){
            .type = JSON_REAL,
            .real = jobspec_duration (
                ((const struct block *)block)->time_limit),
        };
        return JOBSPEC_MEMBER_SCALAR;
    }
    if (load (block, &f, strings, NULL) < 0)
        return JOBSPEC_MEMBER_UNKNOWN;
    if (depth == 3)
        return jobspec_system_member (&f, path[2], value, scalar);
    if (strcmp (path[2], "job") || !f.name || !f.name[0])
        return JOBSPEC_MEMBER_UNKNOWN;
    if (strcmp (path[3], "name"))
        return JOBSPEC_MEMBER_ABSENT;
    if (scalar && jobspec_text_as_is (f.name, false)) {
        *scalar = (struct jobspec_scalar){.type = JSON_STRING,
                                          .string = f.name};
        return JOBSPEC_MEMBER_SCALAR;
    }
    return (*value = json_string (f.name)) ? JOBSPEC_MEMBER_VALUE
                                           : JOBSPEC_MEMBER_UNKNOWN;
}
