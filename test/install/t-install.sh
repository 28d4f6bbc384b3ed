#!/usr/bin/env bash
# Install into a scratch DESTDIR and check the layout, then build a jobtap
# plugin against the installed headers with nothing but pkg-config.
. "$(dirname "$0")/../lib/tap.sh"

dest=$(mktemp -d)
trap 'rm -rf "$dest"' EXIT
out=$(DESTDIR=$dest meson install -C "$JOBTAP_BUILD_DIR" --no-rebuild --quiet 2>&1)
ok $? "meson install into DESTDIR succeeds" || diag "$out"

for so in job_submit_jobtap.so site_factor_jobtap.so; do
	test -f "$dest$JOBTAP_PLUGINDIR/$so"
	ok $? "$so is installed in Slurm's PluginDir ($JOBTAP_PLUGINDIR)"
	rpath=$(readelf -d "$dest$JOBTAP_PLUGINDIR/$so" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
	is "$rpath" "$JOBTAP_LIBDIR:$JOBTAP_LIBDIR/slurm-jobtap" \
		"$so finds libslurm-jobtap and the private adapter library through its RUNPATH"
	unlike "$(readelf -d "$dest$JOBTAP_PLUGINDIR/$so" | grep NEEDED)" 'libslurm\.so|libslurmfull' \
		"$so does not link libslurm"
done
so=prep_jobtap.so
test -f "$dest$JOBTAP_PLUGINDIR/$so"
ok $? "$so is installed in Slurm's PluginDir"
rpath=$(readelf -d "$dest$JOBTAP_PLUGINDIR/$so" | sed -n 's/.*(RUNPATH).*\[\(.*\)\]/\1/p')
is "$rpath" "$JOBTAP_LIBDIR/slurm-jobtap" "$so finds the adapter library (which it opens in slurmctld) through its RUNPATH"
unlike "$(readelf -d "$dest$JOBTAP_PLUGINDIR/$so" | grep NEEDED)" 'libslurm|jobtap' \
	"$so links none of them: slurmd loads it too, where the adapter cannot be"
so=spank_jobtap.so
test -f "$dest$JOBTAP_PLUGINDIR/$so"
ok $? "$so (--setattr) is installed in Slurm's PluginDir"
unlike "$(readelf -d "$dest$JOBTAP_PLUGINDIR/$so" | grep NEEDED)" 'libslurm|jobtap' \
	"$so links none of them: sbatch, srun and salloc load it on submit hosts"
test -e "$dest$JOBTAP_LIBDIR/libslurm-jobtap.so.0"
ok $? "libslurm-jobtap.so.0 is installed in $JOBTAP_LIBDIR"
out=$(bash "$(dirname "$0")/../unit/t-exports.sh" "$dest$JOBTAP_LIBDIR/libslurm-jobtap.so.0" \
	"$(cd "$(dirname "$0")/../.." && pwd)" 2>&1)
unlike "$out" "^not ok" "the installed library exports exactly the public headers' functions (t-exports.sh)" ||
	diag "$out"
test -e "$dest$JOBTAP_LIBDIR/slurm-jobtap/libslurm-jobtap-adapter.so"
ok $? "the Slurm adapter library is installed in the private $JOBTAP_LIBDIR/slurm-jobtap"
for h in core.h jobtap.h; do
	test -f "$dest$JOBTAP_INCLUDEDIR/slurm-jobtap/flux/$h"
	ok $? "flux/$h is installed in the private include dir"
done
test -f "$dest$JOBTAP_LIBDIR/pkgconfig/slurm-jobtap.pc"
ok $? "slurm-jobtap.pc is installed"
for f in jobtap.conf slurm.conf.fragment plugstack.conf.fragment examples/limits.lua; do
	test -f "$dest$JOBTAP_DATADIR/conf/$f"
	ok $? "conf/$f is installed in $JOBTAP_DATADIR/conf"
done

# A jobtap plugin as a Flux site has it: only <flux/core.h> and <flux/jobtap.h>.
cat >"$dest/plugin.c" <<'C'
#include <flux/core.h>
#include <flux/jobtap.h>

static int validate (flux_plugin_t *p, const char *topic,
                     flux_plugin_arg_t *args, void *arg)
{
    return flux_jobtap_reject_job (p, args, "no");
}

int flux_plugin_init (flux_plugin_t *p)
{
    return flux_plugin_add_handler (p, "job.validate", validate, NULL);
}
C
flags=$(PKG_CONFIG_SYSROOT_DIR=$dest PKG_CONFIG_PATH=$dest$JOBTAP_LIBDIR/pkgconfig \
	pkg-config --cflags --libs slurm-jobtap 2>&1)
ok $? "pkg-config --cflags --libs slurm-jobtap works" || diag "$flags"
# shellcheck disable=SC2086
out=$(cc -shared -fPIC -Wall -Werror -o "$dest/plugin.so" "$dest/plugin.c" $flags 2>&1)
ok $? "a jobtap plugin builds against the installed headers with pkg-config flags" || diag "$out"

done_testing
