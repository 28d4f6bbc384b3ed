/* `jobtap job` as text (job_print.h). */
#include <stdint.h>
#include <time.h>

#include "array_id.h"
#include "job_print.h"

/* RFC 21 state bits, as jobtap_host_job_info gives them. */
static const char *state_name (json_int_t state)
{
    switch (state) {
    case 1: return "NEW";
    case 2: return "DEPEND";
    case 4: return "PRIORITY";
    case 8: return "SCHED";
    case 16: return "RUN";
    case 32: return "CLEANUP";
    case 64: return "INACTIVE";
    default: return "?";
    }
}

static void print_compact (FILE *out, json_t *o)
{
    char *s = json_dumps (o, JSON_COMPACT | JSON_ENCODE_ANY);
    fputs (s ? s : "?", out);
    free (s);
}

/* An array of strings as "a, b", or "(none)". */
static void print_list (FILE *out, const char *label, json_t *a)
{
    size_t i;
    json_t *v;

    fprintf (out, "%-13s ", label);
    if (json_array_size (a) == 0)
        fputs ("(none)", out);
    json_array_foreach (a, i, v)
    {
        if (i > 0)
            fputs (", ", out);
        if (json_is_string (v))
            fputs (json_string_value (v), out);
        else
            print_compact (out, v);
    }
    fputc ('\n', out);
}

static void print_event (FILE *out, json_t *entry)
{
    double t = 0.;
    const char *name = "?";
    json_t *context = NULL;
    char when[64] = "?";

    (void)json_unpack (entry, "{s?F s?s s?o}", "timestamp", &t, "name", &name,
                       "context", &context);
    time_t secs = (time_t)t;
    struct tm tm;
    if (localtime_r (&secs, &tm))
        strftime (when, sizeof (when), "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf (out, "  %s.%03d %s", when, (int)((t - (double)secs) * 1000.),
             name);
    if (context && json_object_size (context) > 0) {
        fputc (' ', out);
        print_compact (out, context);
    }
    fputc ('\n', out);
}

void job_print (FILE *out, json_t *job)
{
    json_int_t id = 0, userid = -1, state = 0, urgency = -1, priority = -1;
    json_t *deps = NULL, *flags = NULL, *annotations = NULL, *events = NULL;
    size_t i;
    json_t *entry;

    (void)json_unpack (job, "{s?I s?I s?I s?I s?I s?o s?o s?o s?o}", "id", &id,
                       "userid", &userid, "state", &state, "urgency",
                       &urgency, "priority", &priority, "dependencies", &deps,
                       "flags", &flags, "annotations", &annotations,
                       "eventlog", &events);
    if (array_id_is_task ((uint64_t)id))
        fprintf (out, "%-13s %u_%u (%jd)\n", "JobId",
                 array_id_array ((uint64_t)id), array_id_task ((uint64_t)id),
                 (intmax_t)id);
    else
        fprintf (out, "%-13s %jd\n", "JobId", (intmax_t)id);
    fprintf (out, "%-13s %jd\n", "UserId", (intmax_t)userid);
    fprintf (out, "%-13s %s\n", "State", state_name (state));
    fprintf (out, "%-13s %jd\n", "Urgency", (intmax_t)urgency);
    if (state == 4) /* PRIORITY: a plugin withholds it */
        fprintf (out, "%-13s unavailable\n", "Priority");
    else if (priority < 0)
        fprintf (out, "%-13s (not assigned)\n", "Priority");
    else
        fprintf (out, "%-13s %jd\n", "Priority", (intmax_t)priority);
    print_list (out, "Dependencies", deps);
    print_list (out, "Flags", flags);
    fprintf (out, "%-13s ", "Annotations");
    if (json_object_size (annotations) == 0)
        fputs ("(none)", out);
    else
        print_compact (out, annotations);
    fputc ('\n', out);
    fprintf (out, "Events%s\n",
             json_array_size (events) ? ":" : "        (none kept)");
    json_array_foreach (events, i, entry)
        print_event (out, entry);
}
