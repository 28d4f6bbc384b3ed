/* The runtime's jansson pool must never replace allocator hooks that
 * another library in the process installed first: this program sets its
 * own, then loads libslurm-jobtap (whose constructor installs the pool)
 * and checks that its hooks are still the ones jansson uses. */
#include <dlfcn.h>
#include <stdlib.h>

#include <jansson.h>

#include "tap.h"

static int mine;

static void *my_malloc (size_t n)
{
    mine++;
    return malloc (n);
}

static void my_free (void *p)
{
    free (p);
}

int main (void)
{
    json_malloc_t m;
    json_free_t f;

    setenv ("SLURM_JOBTAP_JSON_POOL", "1", 1); /* on, even under valgrind */
    json_set_alloc_funcs (my_malloc, my_free);
    void *lib = dlopen (JOBTAP_LIB, RTLD_NOW | RTLD_GLOBAL);
    ok (lib != NULL, "libslurm-jobtap loads: %s", lib ? "ok" : dlerror ());
    json_get_alloc_funcs (&m, &f);
    ok (m == my_malloc && f == my_free,
        "the library left the hooks another library installed first");
    typedef void (*scope_f) (void);
    scope_f begin = lib ? (scope_f)dlsym (lib, "jobtap_host_json_pool_begin")
                        : NULL;
    scope_f end = lib ? (scope_f)dlsym (lib, "jobtap_host_json_pool_end")
                      : NULL;
    if (begin && end) {
        int before = mine;
        begin ();
        json_t *o = json_pack ("{s:i}", "a", 1);
        end ();
        ok (mine > before, "blocks made inside a scope still come from those hooks");
        json_decref (o);
    }
    done_testing ();
}
