/* src/jobtap/load_conf.c: `jobtap load`'s KEY=VALUE pairs as
 * `flux jobtap load` reads them (dotted keys nest). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>

#include "load_conf.h"
#include "tap.h"

/* The conf of the pairs as compact JSON with sorted keys, or
 * "error: <why>". */
static const char *conf_of (int n, char *const *pairs)
{
    static char out[1024];
    jobtap_host_error_t err;
    json_t *conf = load_conf_from_pairs (n, pairs, &err);
    if (!conf) {
        snprintf (out, sizeof (out), "error: %s", err.text);
        return out;
    }
    char *s = json_dumps (conf, JSON_COMPACT | JSON_SORT_KEYS);
    snprintf (out, sizeof (out), "%s", s ? s : "?");
    free (s);
    json_decref (conf);
    return out;
}

int main (void)
{
    is (conf_of (0, NULL), "{}", "no pairs: an empty conf");
    {
        char *p[] = {"max-nodes=64", "names=[\"a\",\"b\"]", "queue=batch"};
        is (conf_of (3, p), "{\"max-nodes\":64,\"names\":[\"a\",\"b\"],\"queue\":\"batch\"}",
            "JSON values are JSON, others strings");
    }
    {
        char *p[] = {"foo.test=1"};
        is (conf_of (1, p), "{\"foo\":{\"test\":1}}",
            "a dotted key nests, as flux jobtap load does");
    }
    {
        char *p[] = {"a.b.c=x", "a.b.d=2", "a.e=true"};
        is (conf_of (3, p), "{\"a\":{\"b\":{\"c\":\"x\",\"d\":2},\"e\":true}}",
            "pairs under one path share its objects");
    }
    {
        char *p[] = {"a={\"x\":1}", "a.y=2"};
        is (conf_of (2, p), "{\"a\":{\"x\":1,\"y\":2}}",
            "a dotted key adds to an object a JSON value made");
    }
    {
        char *p[] = {"a.b=1", "a=2"};
        is (conf_of (2, p), "{\"a\":2}", "a later pair replaces an earlier one");
    }
    {
        char *p[] = {"a=1", "a.b=2"};
        is (conf_of (2, p), "error: a.b: a is not an object",
            "a key under a value that is not an object: an error");
    }
    {
        char *p[] = {"a..b=1"};
        is (conf_of (1, p), "error: a..b has an empty key part",
            "an empty key part: an error");
    }
    {
        char *p[] = {".a=1"};
        is (conf_of (1, p), "error: .a has an empty key part", "a leading dot too");
    }
    {
        char *p[] = {"novalue"};
        is (conf_of (1, p), "error: novalue is not KEY=VALUE", "no '=': an error");
    }
    {
        char *p[] = {"=1"};
        is (conf_of (1, p), "error: =1 is not KEY=VALUE", "no key: an error");
    }
    {
        char *p[] = {"url=http://x/?a=b"};
        is (conf_of (1, p), "{\"url\":\"http://x/?a=b\"}",
            "the value is everything after the first '='");
    }
    done_testing ();
}
