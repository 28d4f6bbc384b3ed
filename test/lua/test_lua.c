/* The Lua host (jobtap-lua.so) driven through the runtime's host API. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "find_json.h"
#include "tap.h"
#include "util.h"

/* What "at once" means here: far below what an unbounded call takes
 * (Lua's plain find on these strings: 9 s; the loops: unbounded), with
 * room for valgrind and the sanitizers on a loaded machine. */
#define BOUNDED_SECONDS 5.0

static jobtap_host_error_t err;
static uint64_t next_id = 100;

/* The host start () gives the runtime. */
static const struct jobtap_host_ops *start_ops = &test_ops;

/* Write policy 'name' and a config loading it with 'conf' (TOML inline
 * table text or NULL); start the runtime.  Returns 0 or -1 (err set). */
static int start (const char *name, const char *lua, const char *conf)
{
    char text[4096];
    test_reset ();
    write_config (name, lua);
    snprintf (text, sizeof (text),
              "[job-manager]\nplugins = [ { load = \"%s\"%s%s } ]\n", name,
              conf ? ", conf = " : "", conf ? conf : "");
    if (jobtap_host_init (start_ops, NULL) < 0)
        bail_out ("init failed");
    if (jobtap_host_load_config (write_config ("jobtap.conf", text), &err)
        < 0) {
        jobtap_host_fini ();
        return -1;
    }
    return 0;
}

static void stop (void)
{
    jobtap_host_fini ();
}

/* Submit and (if accepted) create a job.  Returns its id, 0 if rejected
 * (message in err).  *updates if non-NULL gets the submit updates. */
static uint64_t submit (json_t *jobspec, int urgency, json_t **updates)
{
    uint64_t token, id = next_id++;
    json_t *u = NULL;
    int rc = jobtap_host_submit (jobspec, 1000, urgency, 1.0, 0, &u, &token,
                                 &err);
    if (rc < 0) {
        json_decref (jobspec);
        return 0;
    }
    if (updates)
        *updates = u;
    else
        json_decref (u);
    if (jobtap_host_job_new (token, id, 1000, urgency, 1.0, NULL, &err) < 0)
        bail_out ("job_new: %s", err.text);
    json_decref (jobspec);
    return id;
}

static json_t *js_named (const char *name)
{
    return jobspec_make ("{s:{s:s} s:f s:s}", "job", "name", name, "duration",
                         60.0, "queue", "batch");
}

static char *actions (void)
{
    static char *s;
    free (s);
    s = actions_str ();
    return s;
}

static void test_basics (void)
{
    const char *lua =
        "local jobtap = require 'jobtap'\n"
        "local seen = {}\n"
        "jobtap.on ('job.validate', function (job, topic)\n"
        "  assert (topic == 'job.validate')\n"
        "  jobtap.log_info ('validate %s %s %d %d %s %s %g %d', job.name,\n"
        "    job.state, job.userid, job.urgency, job.queue, type (job.jobspec),\n"
        "    job.duration, job.ncores)\n"
        "  if job.name == 'big' then return false, 'too big' end\n"
        "  if job.name == 'rej' then job:reject ('no way') return end\n"
        "  if job.name == 'rej0' then job:reject () return end\n"
        "  if job.name == 'num' then return 7 end\n"
        "  if job.name == 'upd' then\n"
        "    job:update { ['attributes.system.queue'] = 'debug',\n"
        "                 ['attributes.system.constraints'] =\n"
        "                    { properties = jobtap.array { 'a' } } }\n"
        "  end\n"
        "  job.data.validated = job.name\n"
        "end)\n"
        "jobtap.on ('job.state.*', function (job, topic)\n"
        "  jobtap.log_debug ('%s %s %s', topic, job.state,\n"
        "                    tostring (job.data.validated))\n"
        "  if topic == 'job.state.priority' then\n"
        "    job:set_priority (jobtap.conf.base + job.urgency)\n"
        "  end\n"
        "  seen.last = job\n"
        "end)\n"
        "jobtap.on ('job.new', function (job)\n"
        "  if job.name == 'stale' then return seen.last.id end\n"
        "end)\n";
    json_t *updates = NULL;
    uint64_t id;

    ok (start ("basic.lua", lua, "{ base = 1000 }") == 0,
        "a .lua entry loads the Lua host: %s", err.text);
    json_t *list = jobtap_host_plugin_list (false);
    char *s = json_dumps (list, JSON_COMPACT);
    is (s, "[\"basic.lua\"]", "its list name is the script's basename");
    free (s);
    json_decref (list);

    id = submit (js_named ("plain"), 16, NULL);
    ok (id != 0, "a plain job is accepted");
    ok (log_find ("basic.lua: validate plain NEW 1000 16 batch table 60 0")
            != NULL,
        "job fields: name, state, userid, urgency, queue, jobspec, duration, "
        "ncores");
    ok (log_find ("basic.lua: job.state.priority PRIORITY plain") != NULL,
        "job.data set at validate is there in job.state.priority");
    like (actions (), "priority 1[0-9]* 1016", "set_priority with conf.base");

    ok (submit (js_named ("big"), 16, NULL) == 0, "return false, msg rejects");
    is (err.text, "too big", "with msg");
    ok (submit (js_named ("rej"), 16, NULL) == 0, "job:reject rejects");
    is (err.text, "no way", "with its message");
    ok (submit (js_named ("rej0"), 16, NULL) == 0, "job:reject() rejects");
    is (err.text, "rejected by policy 'basic.lua'", "with a default message");
    ok (submit (js_named ("num"), 16, NULL) == 0,
        "a wrong return value rejects");
    is (err.text,
        "job rejected: policy 'basic.lua' failed; contact your administrator",
        "with a message that leaks nothing");
    ok (log_find ("basic.lua: job.validate: job \\(at submit\\) [0-9]+: "
                  "handler returned a number")
            != NULL,
        "the log says what was wrong");

    id = submit (js_named ("upd"), 16, &updates);
    ok (id != 0, "a job with updates is accepted");
    s = json_dumps (updates, JSON_COMPACT | JSON_SORT_KEYS);
    is (s,
        "{\"attributes.system.constraints\":{\"properties\":[\"a\"]},"
        "\"attributes.system.queue\":\"debug\"}",
        "job:update gives the jobspec updates (arrays kept)");
    free (s);
    json_decref (updates);

    test_reset ();
    id = submit (js_named ("stale"), 16, NULL);
    ok (id != 0, "a job whose policy uses a stale job object is accepted");
    ok (log_find ("job.new: job [0-9]+: .*job object used outside of its "
                  "callback")
            != NULL,
        "the stale use is a logged error (job.new failures do not reject)");
    stop ();
}

/* The fields read from one jobspec node, with and without the node. */
static void test_spec_fields (void)
{
    const char *lua =
        "local jobtap = require 'jobtap'\n"
        "jobtap.on ('job.validate', function (job)\n"
        "  jobtap.log_info ('fields %s %s %s %s %s %s %s', tostring (job.name),\n"
        "    tostring (job.duration), tostring (job.queue),\n"
        "    tostring (job.bank), tostring (job.project), tostring (job.cwd),\n"
        "    tostring (job.duration == job.duration))\n"
        "  -- tables are compared by reference: equal only if cached\n"
        "  jobtap.log_info ('cached %s %s', tostring (job.jobspec == job.jobspec),\n"
        "    tostring (job.slurm == job.slurm))\n"
        "end)\n";

    ok (start ("fields.lua", lua, NULL) == 0, "fields policy loads: %s",
        err.text);
    ok (submit (jobspec_make ("{s:{s:s} s:f s:s s:s s:s s:s}", "job", "name",
                              "full", "duration", 90.5, "queue", "short",
                              "bank", "b1", "project", "p1", "cwd", "/tmp"),
                16, NULL) != 0,
        "a job with every field is accepted");
    ok (log_find ("fields.lua: fields full 90.5 short b1 p1 /tmp true")
            != NULL,
        "name, duration, queue, bank, project and cwd read from the jobspec");
    ok (log_find ("fields.lua: cached true true") != NULL,
        "an args field and a computed field are each converted once per "
        "callback, then read from the job's cache");
    ok (submit (jobspec_make (NULL), 16, NULL) != 0,
        "a job with none of them is accepted");
    ok (log_find ("fields.lua: fields nil 0 nil nil nil nil true") != NULL,
        "... duration is 0 when absent, the others nil");
    stop ();
}

static int submit_source (json_t *jobspec)
{
    char *t = json_dumps (jobspec, JSON_COMPACT);
    uint64_t token;
    int rc = jobtap_host_submit_from_source (t, strlen (t), 1000, 16, 1.0, 0,
                                             NULL, &token, &err);
    json_decref (jobspec);
    if (rc == 0)
        jobtap_host_submit_abort (token);
    return rc;
}

/* The same fields read from a jobspec not made yet: told by the host, no
 * tree made; job.jobspec whole makes it. */
static void test_spec_fields_told (void)
{
    struct jobtap_host_ops ops = test_ops;
    const char *lua =
        "local jobtap = require 'jobtap'\n"
        "jobtap.on ('job.validate', function (job)\n"
        "  jobtap.log_info ('fields %s %s %s %s %s %s', tostring (job.name),\n"
        "    tostring (job.duration), tostring (job.queue),\n"
        "    tostring (job.bank), tostring (job.project), tostring (job.cwd))\n"
        "  if job.queue == 'whole' then\n"
        "    jobtap.log_info ('version %s', tostring (job.jobspec.version))\n"
        "  end\n"
        "end)\n";

    ops.jobspec_rebuild = recipe_rebuild;
    ops.jobspec_find = recipe_find;
    start_ops = &ops;
    ok (start ("told.lua", lua, NULL) == 0, "told: policy loads: %s",
        err.text);
    recipe_rebuilds = 0;
    ok (submit_source (jobspec_make ("{s:{s:s} s:f s:s s:s s:s s:s}", "job",
                                     "name", "full", "duration", 90.5,
                                     "queue", "short", "bank", "b1",
                                     "project", "p1", "cwd", "/tmp"))
                == 0
            && log_find ("told.lua: fields full 90.5 short b1 p1 /tmp"),
        "told: the six fields read as from the tree");
    isint (recipe_rebuilds, 0, "told: no jobspec made for them");
    ok (submit_source (jobspec_make (NULL)) == 0
            && log_find ("told.lua: fields nil 0 nil nil nil nil")
            && recipe_rebuilds == 0,
        "told: absent ones as from the tree, still none made");
    ok (submit_source (jobspec_make ("{s:s}", "queue", "whole")) == 0
            && log_find ("told.lua: version 1") && recipe_rebuilds == 1,
        "told: job.jobspec whole makes the jobspec");
    stop ();
    start_ops = &test_ops;
}

static void test_priority_deps (void)
{
    const char *lua =
        "local jobtap = require 'jobtap'\n"
        "jobtap.on ('job.state.depend', function (job)\n"
        "  if job.name == 'wait' then job:add_dependency ('wait-for-go') end\n"
        "  if job.name == 'raise' then job:raise ('policy', 0, 'bad job') end\n"
        "end)\n"
        "jobtap.on ('job.state.priority', function (job)\n"
        "  if job.name == 'unavail' then job:priority_unavailable () end\n"
        "  if job.name == 'late' then job:add_dependency ('too-late') end\n"
        "end)\n"
        "jobtap.on ('job.new', function (job)\n"
        "  if job.name == 'go' then\n"
        "    assert (jobtap.dependency_remove (jobtap.state.waiter,\n"
        "                                     'wait-for-go'))\n"
        "    assert (jobtap.reprioritize (jobtap.state.unavail, 42))\n"
        "    local j = jobtap.lookup (jobtap.state.unavail)\n"
        "    jobtap.log_info ('lookup %s %s', j.state, j.jobspec.attributes.system.job.name)\n"
        "    job:post_event ('memo', { note = 'go' })\n"
        "  end\n"
        "  if job.name == 'wait' then jobtap.state.waiter = job.id end\n"
        "  if job.name == 'unavail' then jobtap.state.unavail = job.id end\n"
        "end)\n";
    uint64_t w, u, g, r;

    ok (start ("deps.lua", lua, NULL) == 0, "deps.lua loads: %s", err.text);
    w = submit (js_named ("wait"), 16, NULL);
    like (actions (), "hold [0-9]+ jobtap: wait-for-go",
          "add_dependency holds the job with its description");
    test_reset ();
    u = submit (js_named ("unavail"), 16, NULL);
    like (actions (), "hold [0-9]+ jobtap: priority unavailable",
          "priority_unavailable holds the job");
    test_reset ();
    g = submit (js_named ("go"), 16, NULL);
    char want[256];
    snprintf (want, sizeof (want), "release %ju.*release %ju; priority %ju 42",
              (uintmax_t)w, (uintmax_t)u, (uintmax_t)u);
    like (actions (), want,
          "dependency_remove and reprioritize(id, prio) release both");
    ok (log_find ("lookup SCHED unavail") != NULL,
        "lookup gives a table with the state name and jobspec");
    json_t *info = jobtap_host_job_info (g);
    char *s = json_dumps (json_object_get (info, "eventlog"), JSON_COMPACT);
    like (s, "\"name\":\"memo\",\"context\":\\{\"note\":\"go\"\\}",
          "post_event adds to the eventlog");
    free (s);
    json_decref (info);
    test_reset ();
    r = submit (js_named ("raise"), 16, NULL);
    snprintf (want, sizeof (want), "cancel %ju policy bad job", (uintmax_t)r);
    like (actions (), want, "raise with severity 0 cancels the job");
    test_reset ();
    submit (js_named ("late"), 16, NULL);
    ok (log_find ("job.state.priority: job [0-9]+: .*add_dependency: "
                  "Invalid argument")
            != NULL,
        "a job:* method that fails raises \"name: error\" (logged)");
    stop ();
}

static double seconds (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_errors (void)
{
    const char *lua =
        "local jobtap = require 'jobtap'\n"
        "jobtap.on ('job.validate', function (job)\n"
        "  if job.name == 'boom' then error ('boom') end\n"
        "  if job.name == 'loop' then while true do end end\n"
        "  if job.name == 'ploop' then\n"
        "    while true do pcall (function () while true do end end) end\n"
        "  end\n"
        "  if job.name == 'exec' then os.execute ('true') end\n"
        "  if job.name == 'popen' then io.popen ('true') end\n"
        "  if job.name == 'loadlib' then package.loadlib ('x', 'y') end\n"
        "  if job.name == 'exit' then os.exit (1) end\n"
        "  if job.name == 'hook' then debug.sethook () end\n"
        "  if job.name == 'bin' then assert (load (string.dump (function () end))) end\n"
        "  if job.name == 'mem' then local s = string.rep ('x', 9 << 20) end\n"
        "  if job.name == 'alloc' then\n"
        "    local s = string.rep ('x', 1 << 12)\n"
        "    while true do local x = s .. s end\n"
        "  end\n"
        "  if job.name == 'palloc' then\n"
        "    local s = string.rep ('x', 1 << 17)\n"
        "    while true do pcall (function () local x = s .. s end) end\n"
        "  end\n"
        "  if job.name == 'pat' then\n"
        "    while true do\n"
        "      pcall (string.find, string.rep ('a', 30000), '.-.-.-.-b')\n"
        "    end\n"
        "  end\n"
        "  if job.name == 'ro' then job.name = 'x' end\n"
        "  if job.name == 'notjob' then job.update (io.stdout, {}) end\n"
        "  if job.name == 'mtjob' then getmetatable (job).__index ({}, 'name') end\n"
        "  if job.name == 'badupdate' then\n"
        "    job:update { ['attributes.system.x'] = { a = 1, b = { c = print } } }\n"
        "  end\n"
        "end)\n"
        "jobtap.on ('job.state.priority', function (job)\n"
        "  if job.name == 'late' then error ('late failure') end\n"
        "end)\n";
    const char *msg =
        "job rejected: policy 'err.lua' failed; contact your administrator";
    const char *names[] = { "boom", "loop", "ploop", "exec", "popen",
                            "loadlib", "exit", "hook", "bin", "mem",
                            "alloc", "palloc", "pat", "ro", "notjob",
                            "mtjob", "badupdate", NULL };
    const char *budget = "instruction limit of 10000 exceeded \\(memory "
                         "made counts, an instruction per 16 bytes; see "
                         "docs/lua.md\\)";
    const char *logs[] = {
        "err.lua:3: boom\nstack traceback:",
        "instruction limit of 10000 exceeded",
        "instruction limit of 10000 exceeded",
        "os.execute is disabled in jobtap policies",
        "io.popen is disabled in jobtap policies",
        "package.loadlib is disabled in jobtap policies",
        "os.exit is disabled in jobtap policies",
        "attempt to call a nil value \\(field 'sethook'\\)",
        "attempt to load a binary chunk",
        "not enough memory",
        /* memory a call makes counts against its budget; past it, a
         * big allocation fails and pcall cannot carry on */
        budget, budget,
        /* so do the steps of a pattern search */
        budget,
        "job fields are read-only",
        /* a method or field read on what is not a job: another userdata,
         * or a table through the job metatable */
        "bad argument #1 to 'update' \\(jobtap.job expected, got FILE\\*\\)",
        "bad argument #1 to .* \\(jobtap.job expected, got table\\)",
        /* what was converted before is freed (valgrind's leak check) */
        "cannot convert a function to JSON",
    };

    ok (start ("err.lua", lua,
               "{ lua = { instruction-limit = 10000, memory-limit-mb = 8 } }")
            == 0,
        "err.lua loads: %s", err.text);
    for (int i = 0; names[i]; i++) {
        test_reset ();
        double t0 = seconds ();
        ok (submit (js_named (names[i]), 16, NULL) == 0 && !strcmp (err.text,
                                                                  msg),
            "%s: rejected with the plain message", names[i]);
        ok (log_count (logs[i]) == 1, "%s: logged: %s", names[i], logs[i]);
        ok (seconds () - t0 < BOUNDED_SECONDS, "%s: in %.3f s", names[i],
            seconds () - t0);
    }
    test_reset ();
    uint64_t id = submit (js_named ("late"), 16, NULL);
    ok (id != 0, "an error after submit cannot reject");
    ok (log_count ("err.lua: job.state.priority: job [0-9]+: .*late failure")
            == 1,
        "it is logged with topic and job id");
    like (actions (), "priority [0-9]+ 16",
          "and the job continues with the default priority");
    stop ();

    /* on-error = accept, and unsafe functions on request */
    const char *lua2 =
        "local jobtap = require 'jobtap'\n"
        "jobtap.on ('job.validate', function (job)\n"
        "  if job.name == 'boom' then error ('boom') end\n"
        "  if job.name == 'exec' then\n"
        "    assert (os.execute () == true) -- a shell exists; runs nothing\n"
        "    assert (type (package.loadlib) == 'function')\n"
        "  end\n"
        "end)\n";
    ok (start ("lenient.lua", lua2,
               "{ lua = { on-error = 'accept', allow-exec = true, "
               "allow-loadlib = true } }")
            == 0,
        "lenient.lua loads: %s", err.text);
    ok (submit (js_named ("boom"), 16, NULL) != 0,
        "on-error = accept lets the job through");
    ok (log_count ("lenient.lua: job.validate: .*boom") == 1,
        "the error is logged");
    ok (submit (js_named ("exec"), 16, NULL) != 0,
        "allow-exec and allow-loadlib turn them on");
    stop ();

    ok (start ("bad.lua", "this is not lua", NULL) < 0,
        "a script that does not compile fails to load");
    like (err.text, "bad.lua:1: syntax error near 'is'",
          "the config error names the script line");
    ok (start ("bad2.lua", "error ('at load')", NULL) < 0,
        "a script that fails at load time fails to load");
    like (err.text, "bad2.lua:1: at load", "with its error");
    ok (start ("badconf.lua", "", "{ lua = { on-error = 'maybe' } }") < 0,
        "a bad lua setting fails the load");
    like (err.text, "lua.on-error must be \"reject\" or \"accept\"",
          "with a clear message");
}

/* Pattern functions: a costly search is refused with an error the
 * script can catch; a loop of them still ends at the budget. */
static void test_patterns (void)
{
    const char *lua =
        "local jobtap = require 'jobtap'\n"
        "local big = string.rep ('a', 30000)\n"
        "jobtap.on ('job.validate', function (job)\n"
        "  local n = job.name\n"
        "  if n == 'costly' then\n"
        "    return false, select (2, pcall (string.find, big, '.-.-.-.-b'))\n"
        "  elseif n == 'method' then\n"
        "    local ok, e = pcall (function () return big:match ('(.-)(.-)b') end)\n"
        "    return false, e\n"
        "  elseif n == 'ploop' then\n"
        "    while true do pcall (string.find, big, '.-.-.-.-b') end\n"
        "  elseif n:match ('^fi(n)e$') ~= 'n' or select (2, n:gsub ('%w', '')) ~= 4\n"
        "         or n:find ('in', 1, true) ~= 2 then\n"
        "    return false, 'wrong'\n"
        "  end\n"
        "  for w in ('a b c'):gmatch ('%a') do n = n .. w end\n"
        "  if n ~= 'fineabc' then return false, n end\n"
        "end)\n";

    ok (start ("pat.lua", lua, "{ lua = { pattern-step-limit = 20000 } }")
            == 0,
        "pat.lua loads: %s", err.text);
    ok (submit (js_named ("costly"), 16, NULL) == 0, "a costly search...");
    is (err.text,
        "pattern too costly: more than 20000 matching steps on a subject of "
        "30000 bytes",
        "...is refused with an error pcall catches");
    ok (submit (js_named ("method"), 16, NULL) == 0, "the same through s:match");
    is (err.text,
        "pat.lua:8: pattern too costly: more than 20000 matching steps on a "
        "subject of 30000 bytes",
        "with the line of the call");
    test_reset ();
    double t0 = seconds ();
    ok (submit (js_named ("ploop"), 16, NULL) == 0,
        "a loop of refused searches in pcall is ended");
    ok (log_count ("pat.lua: job.validate: .*instruction limit of 1000000 "
                   "exceeded")
            == 1,
        "by the instruction budget, which their steps are charged to");
    ok (seconds () - t0 < BOUNDED_SECONDS, "in %.3f s", seconds () - t0);
    ok (submit (js_named ("fine"), 16, NULL) != 0,
        "find, match, gmatch and gsub work as in Lua: %s", err.text);
    stop ();

    ok (start ("pat2.lua", lua, NULL) == 0, "without the setting...");
    ok (submit (js_named ("costly"), 16, NULL) == 0
            && !strcmp (err.text, "pattern too costly: more than 500000 "
                                  "matching steps on a subject of 30000 "
                                  "bytes"),
        "...the limit is 500000 steps: %s", err.text);
    stop ();
    ok (start ("pat3.lua", "", "{ lua = { pattern-step-limit = 5 } }") < 0,
        "a pattern-step-limit below 1000 fails the load");
    like (err.text, "lua.pattern-step-limit must be an integer >= 1000",
          "with a clear message");
}

static void test_reload (void)
{
    const char *v1 =
        "local jobtap = require 'jobtap'\n"
        "jobtap.state.n = (jobtap.state.n or 0)\n"
        "jobtap.on ('job.validate', function (job)\n"
        "  jobtap.state.n = jobtap.state.n + 1\n"
        "  job.data.v = 'v1'\n"
        "  return false, 'v1 ' .. jobtap.state.n\n"
        "end)\n";
    const char *v2 =
        "local jobtap = require 'jobtap'\n"
        "jobtap.on ('job.validate', function (job)\n"
        "  jobtap.state.n = jobtap.state.n + 1\n"
        "  if job.name == 'keep' then job.data.v = 'v2' return end\n"
        "  return false, 'v2 ' .. jobtap.state.n\n"
        "end)\n"
        "jobtap.on ('job.priority.get', function (job)\n"
        "  jobtap.log_info ('data %s', tostring (job.data.v))\n"
        "end)\n";

    ok (start ("rl.lua", v1, NULL) == 0, "rl.lua v1 loads: %s", err.text);
    submit (js_named ("x"), 16, NULL);
    is (err.text, "v1 1", "v1 runs");
    ok (jobtap_host_reload (&err) == 0 && log_count ("reloaded") == 0,
        "reload with an unchanged file does not reload");
    write_config ("rl.lua", v2);
    ok (jobtap_host_reload (&err) == 0, "reload succeeds");
    ok (log_count ("rl.lua: reloaded .*rl.lua") == 1, "the change is loaded");
    submit (js_named ("x"), 16, NULL);
    is (err.text, "v2 2", "v2 runs with jobtap.state carried over");
    uint64_t id = submit (js_named ("keep"), 16, NULL);
    ok (id != 0, "v2 accepts a job");
    write_config ("rl.lua", "syntax error here");
    ok (jobtap_host_reload (&err) < 0, "reload with a broken file is refused");
    like (err.text, "^rl.lua: reload failed, keeping the loaded version: "
                    "rl.lua:1: syntax error",
          "... with the policy's error");
    json_t *st = jobtap_host_config_status ();
    ok (json_is_false (json_object_get (json_object_get (st, "reload"), "ok")),
        "... which the config status shows");
    json_decref (st);
    ok (log_count ("rl.lua: reload failed") == 0,
        "... and the policy leaves the logging to the host");
    unlink (write_config ("rl.lua", ""));
    ok (jobtap_host_reload (&err) < 0, "reload with the file gone is refused");
    like (err.text, "^rl.lua: reload: .*rl.lua: No such file or directory; "
                    "keeping the loaded version$",
          "... and says so");
    write_config ("rl.lua", "syntax error here");
    submit (js_named ("x"), 16, NULL);
    is (err.text, "v2 4", "and v2 keeps running");
    /* job.data survives a successful swap */
    write_config ("rl.lua", v2);
    char more[4096];
    snprintf (more, sizeof (more), "%s-- changed\n", v2);
    write_config ("rl.lua", more);
    ok (jobtap_host_reload (&err) == 0 && log_count ("rl.lua: reloaded") == 2,
        "a second change reloads");
    test_reset ();
    jobtap_host_reprioritize_all ();
    ok (log_count ("rl.lua: data v2") == 1,
        "job.data set before the reload is there after it");
    stop ();
}

int main (void)
{
    test_basics ();
    test_spec_fields ();
    test_spec_fields_told ();
    test_priority_deps ();
    test_errors ();
    test_patterns ();
    test_reload ();
    test_reset ();
    json_decref (test_log);
    json_decref (test_actions);
    done_testing ();
    return 0;
}
