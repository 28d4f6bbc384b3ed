#!/usr/bin/env bash
# jobtap plugins as Flux builds them, loaded by slurmctld: one compiled as an
# unlinked module (only `pkg-config --cflags`, as flux-core builds its
# -module plugins, with -Wall -Werror) deciding on jobs, naming them in
# Flux's F58 and counting them in Flux's metrics, and one that unsubscribes
# from a job inside its job.event.* callback, as flux-core's subscribe test
# plugin does.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"

cat >"$work/module.c" <<'C'
#include <string.h>
#include <flux/core.h>
#include <flux/jobtap.h>

static int validate (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    json_t *name = NULL;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN,
                                "{s:{s:{s:{s?{s?o}}}}}", "jobspec",
                                "attributes", "system", "job", "name",
                                &name) < 0)
        return -1;
    if (name && !strcmp (json_string_value (name), "module-no"))
        return flux_jobtap_reject_job (p, args, "a module plugin says no");
    /* flux-core's test plugins raise exceptions with an empty text: a
     * format check on this call would fail this -Werror build */
    if (name && !strcmp (json_string_value (name), "module-exception"))
        return flux_jobtap_raise_exception (p, FLUX_JOBTAP_CURRENT_JOB,
                                            "test", 0, "");
    return 0;
}

static int new_job (flux_plugin_t *p, const char *topic,
                    flux_plugin_arg_t *args, void *arg)
{
    static ssize_t count;
    flux_jobid_t id, back = 0;
    char f58[32];
    flux_t *h = flux_jobtap_get_flux (p);
    (void)topic;
    (void)arg;
    if (flux_plugin_arg_unpack (args, FLUX_PLUGIN_ARG_IN, "{s:I}", "id", &id) < 0
        || flux_job_id_encode (id, "f58", f58, sizeof (f58)) < 0
        || flux_job_id_parse (f58, &back) < 0)
        return -1;
    flux_stats_count (h, "new.count", ++count);
    flux_log (h, LOG_INFO, "module: job %ju is %s, %s back", (uintmax_t)id,
              f58, back == id ? "parsed" : "NOT parsed");
    return 0;
}

int flux_plugin_init (flux_plugin_t *p)
{
    flux_stats_set_prefix (flux_jobtap_get_flux (p), "flux.job.%s", "module");
    if (flux_plugin_add_handler (p, "job.new", new_job, NULL) < 0)
        return -1;
    return flux_plugin_add_handler (p, "job.validate", validate, NULL);
}
C
cflags=$(PKG_CONFIG_PATH=$JOBTAP_BUILD_DIR/meson-uninstalled pkg-config --cflags slurm-jobtap 2>&1)
ok $? "pkg-config --cflags slurm-jobtap works" || diag "$cflags"
# shellcheck disable=SC2086
out=$(cc -shared -fPIC -Wall -Werror -o "$work/module.so" "$work/module.c" $cflags 2>&1)
ok $? "a plugin builds as an unlinked module" || diag "$out"
unlike "$(readelf -d "$work/module.so" | grep NEEDED)" 'slurm-jobtap|jansson' \
	"it links neither libslurm-jobtap nor jansson"

printf '[job-manager]\nplugins = [\n  { load = "%s" },\n  { load = "%s" },\n]\n' \
	"$work/module.so" "$JOBTAP_BUILD_DIR/test/integration/unsubscribe.so" >"$work/jobtap.conf"
cluster_start --jobtap-conf "$work/jobtap.conf" || bail_out "cluster did not start"
ctld=${CLUSTER_PIDS[1]}

out=$(sbatch -o /dev/null -J module-no -t 5 --wrap true 2>&1)
ok $((!$?)) "the module plugin rejects a job"
like "$out" "^sbatch: error: a module plugin says no" "sbatch shows its message"

ids=()
for i in 1 2 3; do ids+=("$(sbatch --parsable -o /dev/null -J "sub$i" -t 5 --wrap true)"); done
for id in "${ids[@]}"; do
	cluster_wait_for 30 sh -c "squeue -h -j $id -t CD -o %T | grep -q COMPLETED"
	is "$(squeue -h -j "$id" -t all -o %T)" COMPLETED "job $id, accepted by the module plugin, completes"
	is "$(cluster_log | grep -c "unsubscribe: job $id heard ")" 2 \
		"the subscriber heard two events of job $id, then unsubscribed inside the second"
done
like "$(cluster_log | grep "unsubscribe: job ${ids[0]} heard " | sed 's/.* heard //' | tr '\n' ' ')" \
	'^validate depend $' "the events it heard are validate and depend"
# Flux's F58: base 58 after an f (an ƒ where slurmctld's locale is UTF-8)
f58=$(python3 -c 'import sys
a = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
n, s = int(sys.argv[1]), ""
while True:
    n, r = divmod(n, 58)
    s = a[r] + s
    if not n: break
print(s)' "${ids[2]}")
like "$(cluster_log | grep "module: job ${ids[2]} is ")" \
	"module: job ${ids[2]} is (f|ƒ)$f58, parsed back\$" \
	"the module names job ${ids[2]} in F58 ($f58) and parses it back"
ok "$(kill -0 "$ctld"; echo $?)" "slurmctld is alive"

cluster_finish
done_testing
