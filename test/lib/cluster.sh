# A private Slurm cluster (one node, or more with --nodes) for tests and the demo. Sourced.
#
#   cluster_start [--conf LINES] [--jobtap-conf FILE] [--no-jobtap]
#                 [--file NAME TEXT]  another config file beside slurm.conf
#                 [--plugstack TEXT]  SPANK plugins: plugstack.conf, named by
#                 PlugStackConfig; a relative plugin (spank_jobtap.so) is found
#                 in PluginDir, which holds the build's staged copies
#                 [--ctld-daemon]  slurmctld daemonized, as in production
#                 (24.11's reconfigure starts it anew: cluster_ctld_pid follows)
#                 [--backup-net]  room for a backup controller: see below
#                 [--accounting]  slurmdbd and a private MariaDB beside it
#                 (test/lib/accounting.sh); the cluster, account "jobtap"
#                 and root are added
#                 [--nodes N]  N nodes (default 1): beside the first
#                 ($CLUSTER_NODE), twin1 to twin<N-1>, each another slurmd
#                 on the same address with a port of its own (a
#                 heterogeneous job needs a node per component;
#                 test/slurm-testsuite/run starts nine)
#                 [--node-conf TEXT]  every node's resources (default
#                 "CPUs=2"), e.g. "CPUs=4 RealMemory=4000 Gres=gpu:1"
#   ...           SLURM_CONF is exported; sbatch, squeue, sprio... talk to it
#   cluster_stop  [--failed]
#   cluster_public_copy FILE  a copy other users may run (the clone may sit
#                 in a directory only root can enter); prints its path
#
# Everything lives in one temp dir: munged with its own key and socket,
# slurmctld and slurmd on free loopback ports, state, spool and logs, and a
# copy of the build's plugins (lib/). PluginDir is that copy first, then
# Slurm's own. Teardown cancels the cluster's jobs, then ends only the daemons
# it started, by pid. On failure the dir is kept and the log tails are printed.
#
# A backup controller (--backup-net, then cluster_backup_start, which
# starts it in standby, and cluster_takeover_by_backup): the
# backup must look like another host to Slurm. It runs in its own UTS
# namespace (hostname $CLUSTER_BACKUP_HOST, its SlurmctldHost) and its own
# network namespace, joined to ours by a veth pair: the primary, slurmd and
# the clients use our end's address, the backup the other end's. (Sharing
# one address, the backup would answer its own pings as the primary and
# never take over.) It shares StateSaveLocation and everything else but
# /run, where the pid file is.
#
# Environment: JOBTAP_BUILD_DIR (default: <top>/build; "installed" runs the
# plugins installed in Slurm's PluginDir instead), CLUSTER_KEEP=1 keeps
# the dir even on success, CLUSTER_DEBUG (SlurmctldDebug level, default debug).

CLUSTER_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
CLUSTER_BUILD=${JOBTAP_BUILD_DIR:-$CLUSTER_TOP/build}
CLUSTER_DIR=
CLUSTER_NODE=$(hostname -s)
CLUSTER_PIDS=()
CLUSTER_ADDR=127.0.0.1 # the primary slurmctld's and slurmd's address
CLUSTER_BACKUP_HOST=jtbackup
CLUSTER_BACKUP_ADDR=
CLUSTER_VETH=

_cluster_say() { printf 'cluster: %s\n' "$*" >&2; }

# A TCP port no socket uses, below the kernel's ephemeral range (where
# client connections could take it between our check and the bind).
_cluster_free_port() {
	local port tries=0 low
	low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null)
	[ "${low:-0}" -gt 12000 ] 2>/dev/null || low=32768
	while [ $tries -lt 200 ]; do
		port=$((10000 + RANDOM % (low - 10000)))
		if [ -z "$(ss -Htan "sport = :$port" 2>/dev/null)" ] &&
			[[ " ${_cluster_ports[*]:-} " != *" $port "* ]]; then
			_cluster_ports+=("$port")
			echo "$port"
			return 0
		fi
		tries=$((tries + 1))
	done
	return 1
}

# Copy the build's shared objects into the cluster's dir, world-readable.
# Slurm's client commands stat every PluginDir entry and the tests run some of
# them as nobody, who cannot enter a build tree under a private directory (a
# clone in a mode 0700 mktemp -d dir, or under /root). The copies keep their
# paths relative to the build dir, so that their $ORIGIN run paths and the
# runtime's search for jobtap-lua.so beside itself find the copies. Symlinks
# would not do: nobody cannot follow them into the tree, and a library loaded
# through a link takes $ORIGIN from the link's dir.
_cluster_stage_plugins() {
	local so rel
	[ "$CLUSTER_BUILD" = installed ] && return 0
	for so in "$CLUSTER_BUILD"/src/*/*.so* "$CLUSTER_BUILD"/lua/*.so; do
		[ -f "$so" ] || continue # also skips the *.so.p object dirs
		rel=${so#"$CLUSTER_BUILD"/}
		mkdir -p "$CLUSTER_DIR/lib/${rel%/*}" &&
			cp -P "$so" "$CLUSTER_DIR/lib/$rel" || return 1
	done
	chmod -R a+rX "$CLUSTER_DIR/lib"
}

# Slurm's PluginDir entries: every staged dir holding one of our plugins, then
# the directory of Slurm's own plugins.
_cluster_plugindir() {
	local dirs="" so
	for so in "$CLUSTER_DIR"/lib/src/*/*_jobtap.so; do
		[ -e "$so" ] && dirs="$dirs${dirs:+:}$(dirname "$so")"
	done
	local slurm_dir
	slurm_dir=$(dirname "$(find /usr/lib /usr/lib64 -name libslurmfull.so -print -quit 2>/dev/null)")
	echo "$dirs${dirs:+:}$slurm_dir"
}

# The value of KEY in the generated slurm.conf ("" when unset).
cluster_conf_value() {
	sed -n "s/^$1=//Ip" "$CLUSTER_DIR/slurm.conf" | tail -n 1
}

cluster_public_copy() {
	mkdir -p "$CLUSTER_DIR/bin" && chmod 755 "$CLUSTER_DIR/bin" &&
		install -m 755 "$1" "$CLUSTER_DIR/bin/" &&
		echo "$CLUSTER_DIR/bin/$(basename "$1")"
}

cluster_log() { cat "$CLUSTER_DIR/log/slurmctld.log"; }

# Print the tail of every log, for a failing test.
cluster_dump_logs() {
	local f
	for f in "$CLUSTER_DIR"/log/*; do
		[ -s "$f" ] || continue
		# A daemon's .out repeats its .log; show it only when the log is empty.
		case "$f" in *.out) [ -s "${f%.out}.log" ] && continue ;; esac
		printf '# ---- %s (last 40 lines) ----\n' "$f"
		tail -n 40 "$f" | sed 's/^/# /'
	done
	_cluster_backtraces
}

# Where a daemon crashed: the faulting thread's stack from each core the
# cluster's daemons left (gdb reads which program from the core itself).
_cluster_backtraces() {
	local core exe
	command -v gdb >/dev/null || return 0
	while IFS= read -r core; do
		exe=$(gdb -batch -c "$core" 2>/dev/null |
			sed -n "s/^Core was generated by \`\([^ ']*\).*/\1/p")
		[ -x "$exe" ] || continue
		printf '# ---- %s: %s crashed; its backtrace ----\n' "$core" "$exe"
		timeout 60 gdb -batch -ex 'echo @@bt\n' -ex 'bt 40' "$exe" "$core" 2>&1 |
			awk '/^Program terminated/ { print } /^@@bt/ { bt = 1; next } bt' | sed 's/^/# /'
	done < <(find "$CLUSTER_DIR" -name 'core*' -type f 2>/dev/null)
}

# The Slurm release the cluster runs, as major * 100 + minor (2411), for
# tests whose expectations differ by release.
cluster_slurm_release() {
	/usr/sbin/slurmctld -V | awk '{ split($2, v, "."); print v[1] * 100 + v[2] }'
}

_cluster_write_conf() {
	local extra=$1 jobtap=$2 ctld_port slurmd_port twin_ports=() i port
	ctld_port=$(_cluster_free_port) && slurmd_port=$(_cluster_free_port) ||
		{ _cluster_say "no free port"; return 1; }
	for ((i = 1; i < _cluster_nodes; i++)); do
		port=$(_cluster_free_port) || { _cluster_say "no free port"; return 1; }
		twin_ports+=("$port")
	done
	local defaults
	defaults=$(
		cat <<EOF
ClusterName=jobtaptest
SlurmctldHost=$CLUSTER_NODE($CLUSTER_ADDR)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$CLUSTER_DIR/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$CLUSTER_DIR/state
SlurmdSpoolDir=$CLUSTER_DIR/spool
SlurmctldPidFile=$CLUSTER_DIR/run/slurmctld.pid
SlurmdPidFile=$CLUSTER_DIR/run/slurmd.pid
SlurmctldLogFile=$CLUSTER_DIR/log/slurmctld.log
SlurmdLogFile=$CLUSTER_DIR/log/slurmd.log
SlurmctldDebug=${CLUSTER_DEBUG:-debug}
SlurmdDebug=info
PluginDir=$(_cluster_plugindir)
MailProg=/bin/true
MpiDefault=none
ProctrackType=proctrack/pgid
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MinJobAge=600
EOF
		if [ "$jobtap" = 1 ]; then
			cat <<EOF
JobSubmitPlugins=jobtap
PriorityType=priority/multifactor
PrioritySiteFactorPlugin=site_factor/jobtap
PrEpPlugins=prep/script,prep/jobtap
EOF
		fi
		echo "NodeName=$CLUSTER_NODE NodeAddr=$CLUSTER_ADDR $_cluster_node_conf State=UNKNOWN"
		if [ "$_cluster_nodes" -gt 1 ]; then
			# twin1...: other slurmds on the same address, each on a port
			# of its own, each slurmd's files by node name (%n)
			cat <<EOF
SlurmdSpoolDir=$CLUSTER_DIR/spool/%n
SlurmdPidFile=$CLUSTER_DIR/run/slurmd-%n.pid
SlurmdLogFile=$CLUSTER_DIR/log/slurmd-%n.log
EOF
			for i in "${!twin_ports[@]}"; do
				echo "NodeName=twin$((i + 1)) NodeAddr=$CLUSTER_ADDR Port=${twin_ports[i]} $_cluster_node_conf State=UNKNOWN"
			done
		fi
		echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
	)
	if [ -n "$CLUSTER_BACKUP_ADDR" ]; then
		# after the primary's; a short timeout, as tests wait for it
		defaults="$defaults
SlurmctldHost=$CLUSTER_BACKUP_HOST($CLUSTER_BACKUP_ADDR)
SlurmctldTimeout=6"
	fi
	# A key given in the extra lines replaces the default one.
	local line key
	while IFS= read -r line; do
		key=${line%%=*}
		[ -n "$line" ] && [ "$key" != "$line" ] &&
			grep -qi "^$key=" <<<"$extra" && continue
		printf '%s\n' "$line"
	done <<<"$defaults" >"$CLUSTER_DIR/slurm.conf"
	[ -n "$extra" ] && printf '%s\n' "$extra" >>"$CLUSTER_DIR/slurm.conf"
	# Since 24.11 slurmd sets up cgroups even with proctrack/pgid; the
	# cluster must not touch the machine's (and a chroot has none).
	if [ "$(cluster_slurm_release)" -ge 2411 ]; then
		echo "CgroupPlugin=disabled" >"$CLUSTER_DIR/cgroup.conf"
	fi
	return 0
}

# Run a daemon with core dumps on (the same pid: the subshell execs it), so
# that a crash leaves a core in its working directory (slurmctld's and
# slurmd's: their log directory) for cluster_dump_logs' backtrace.
cluster_exec_dumpable() {
	ulimit -S -c unlimited 2>/dev/null
	exec "$@"
}

# Start a daemon in the foreground of a background job and remember its pid.
_cluster_spawn() {
	local name=$1
	shift
	(cluster_exec_dumpable "$@") >"$CLUSTER_DIR/log/$name.out" 2>&1 &
	CLUSTER_PIDS+=("$!")
	echo "$!" >"$CLUSTER_DIR/run/$name.pid"
}

_cluster_alive() { kill -0 "$1" 2>/dev/null; }

# Plugins that Slurm failed to load are only logged (site_factor carries on
# silently): turn that into a loud failure.
_cluster_check_plugins() {
	local log=$CLUSTER_DIR/log/slurmctld.log bad
	bad=$(grep -E "cannot create (job_submit|site_factor|prep) context|Couldn't (find|load) specified plugin name for (job_submit|site_factor|prep|priority)" "$log")
	if [ -n "$bad" ]; then
		_cluster_say "slurmctld failed to load a plugin:"
		printf '%s\n' "$bad" >&2
		return 1
	fi
	local want=""
	case ",$(cluster_conf_value JobSubmitPlugins)," in
	*,jobtap,* | *,job_submit/jobtap,*) want="job_submit/jobtap" ;;
	esac
	[ "$(cluster_conf_value PrioritySiteFactorPlugin)" = site_factor/jobtap ] &&
		want="$want site_factor/jobtap"
	case ",$(cluster_conf_value PrEpPlugins)," in
	*,jobtap,* | *,prep/jobtap,*) want="$want prep/jobtap" ;;
	esac
	local p
	for p in $want; do
		grep -q "$p: init: loaded" "$log" ||
			{ _cluster_say "slurmctld did not log that $p loaded"; return 1; }
	done
	return 0
}

# Wait until COMMAND succeeds, up to SECONDS: polled at once, after 0.1,
# 0.2 and 0.4 s more, then every 0.5 s (a poll is a few processes, and
# making processes is much of a loaded test machine's CPU).
cluster_wait_for() {
	local seconds=$1 pause=0.1
	shift
	local deadline=$((SECONDS + seconds))
	while ! "$@" >/dev/null 2>&1; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep "$pause"
		case $pause in 0.1) pause=0.2 ;; 0.2) pause=0.4 ;; *) pause=0.5 ;; esac
	done
	return 0
}

# Every node idle (sinfo -N lists a node once per partition).
_cluster_node_idle() {
	local states
	states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u) || return 1
	[ "$(grep -c ' idle$' <<<"$states")" -eq "${_cluster_nodes:-1}" ]
}

# Start the cluster; a port taken between our check and the daemon's bind
# (another cluster starting at the same moment) gets one more try.
cluster_start() {
	local attempt
	for attempt in 1 2 3; do
		_cluster_start_once "$@" && return 0
		[ -n "${_cluster_bind_failed:-}" ] || return 1
		_cluster_say "a port was taken meanwhile; starting again (attempt $((attempt + 1)))"
	done
	return 1
}

_cluster_start_once() {
	local extra="" jobtap_conf="" jobtap=1 ctld_daemon=0 files=() plugstack=""
	local backup_net=0 accounting=0
	_cluster_bind_failed=""
	_cluster_nodes=1 _cluster_node_conf="CPUs=2"
	while [ $# -gt 0 ]; do
		case "$1" in
		--conf) extra=$2; shift 2 ;;
		--jobtap-conf) jobtap_conf=$2; shift 2 ;;
		--no-jobtap) jobtap=0; shift ;;
		--ctld-daemon) ctld_daemon=1; shift ;;
		--file) files+=("$2" "$3"); shift 3 ;;
		--plugstack) plugstack=$2; shift 2 ;;
		--backup-net) backup_net=1; shift ;;
		--accounting) accounting=1; shift ;;
		--nodes) _cluster_nodes=$2; shift 2 ;;
		--node-conf) _cluster_node_conf=$2; shift 2 ;;
		*) _cluster_say "unknown option $1"; return 1 ;;
		esac
	done
	[[ "$_cluster_nodes" =~ ^[1-9][0-9]*$ ]] || { _cluster_say "--nodes: a number of nodes, not '$_cluster_nodes'"; return 1; }
	# --conf's NodeName lines replace every default one, the twins too
	if [ "$_cluster_nodes" -gt 1 ] && grep -qi '^NodeName=' <<<"$extra"; then
		_cluster_say "--conf NodeName=... replaces all $_cluster_nodes nodes; give their resources with --node-conf"
		return 1
	fi
	CLUSTER_DIR=$(mktemp -d "${TMPDIR:-/tmp}/jobtap-cluster.XXXXXX")
	# A test that dies half-way must not leave daemons behind.
	trap '_cluster_on_exit' EXIT
	CLUSTER_PIDS=()
	CLUSTER_BACKUP_PID=
	_cluster_ports=()
	mkdir -p "$CLUSTER_DIR"/{state,spool,log,run,munge}
	chmod 711 "$CLUSTER_DIR" # munged wants its socket reachable
	chmod 711 "$CLUSTER_DIR/munge"
	dd if=/dev/urandom of="$CLUSTER_DIR/munge/munge.key" bs=1024 count=1 2>/dev/null
	chmod 400 "$CLUSTER_DIR/munge/munge.key"
	_cluster_stage_plugins || { _cluster_say "cannot copy the plugins"; cluster_stop --failed; return 1; }
	# Named in slurm.conf, so that every daemon and client reads this one
	# (not the machine's /etc/slurm/plugstack.conf) whatever its SLURM_CONF.
	if [ -n "$plugstack" ]; then
		files+=(plugstack.conf "$plugstack")
		extra="$extra${extra:+$'\n'}PlugStackConfig=$CLUSTER_DIR/plugstack.conf"
	fi
	CLUSTER_ADDR=127.0.0.1 CLUSTER_BACKUP_ADDR=
	if [ "$backup_net" = 1 ]; then
		cluster_backup_net || { _cluster_say "cannot make the backup's network"; cluster_stop --failed; return 1; }
	fi
	if [ "$accounting" = 1 ]; then
		. "$CLUSTER_TOP/test/lib/accounting.sh"
		accounting_prepare || { cluster_stop --failed; return 1; }
		extra="$ACCOUNTING_SLURM_CONF${extra:+$'\n'}$extra"
	fi
	_cluster_write_conf "$extra" "$jobtap" || { cluster_stop --failed; return 1; }
	local i
	for ((i = 0; i < ${#files[@]}; i += 2)); do
		printf '%s\n' "${files[i + 1]}" >"$CLUSTER_DIR/${files[i]}"
	done
	if [ -n "$jobtap_conf" ]; then
		cp "$jobtap_conf" "$CLUSTER_DIR/jobtap.conf"
	fi
	export SLURM_CONF=$CLUSTER_DIR/slurm.conf

	# --force: munged refuses to run as root otherwise.
	_cluster_spawn munged /usr/sbin/munged -F --force \
		--socket="$CLUSTER_DIR/munge/munge.sock" \
		--key-file="$CLUSTER_DIR/munge/munge.key" \
		--pid-file="$CLUSTER_DIR/run/munged-self.pid" \
		--seed-file="$CLUSTER_DIR/munge/seed" \
		--log-file="$CLUSTER_DIR/log/munged.log"
	cluster_wait_for 10 test -S "$CLUSTER_DIR/munge/munge.sock" ||
		{ _cluster_say "munged did not start"; cluster_stop --failed; return 1; }
	if [ "$accounting" = 1 ]; then
		accounting_start || { cluster_stop --failed; return 1; }
	fi

	CLUSTER_CTLD_DAEMON=$ctld_daemon
	if [ "$ctld_daemon" = 1 ]; then
		# It forks and the parent exits once the daemon runs; the pid file
		# names the daemon (the pid file is SlurmctldPidFile).
		/usr/sbin/slurmctld -i -f "$SLURM_CONF" >"$CLUSTER_DIR/log/slurmctld.out" 2>&1
		cluster_wait_for 15 test -s "$CLUSTER_DIR/run/slurmctld.pid"
		CLUSTER_PIDS+=("$(cat "$CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)")
	else
		_cluster_spawn slurmctld /usr/sbin/slurmctld -D -i -f "$SLURM_CONF"
	fi
	[ "$_cluster_nodes" -gt 1 ] && mkdir -p "$CLUSTER_DIR/spool/$CLUSTER_NODE"
	_cluster_spawn slurmd /usr/sbin/slurmd -D -f "$SLURM_CONF" -N "$CLUSTER_NODE"
	for ((i = 1; i < _cluster_nodes; i++)); do
		mkdir -p "$CLUSTER_DIR/spool/twin$i"
		_cluster_spawn "twin$i" /usr/sbin/slurmd -D -f "$SLURM_CONF" -N "twin$i"
	done

	local ctld_pid=${CLUSTER_PIDS[1]} slurmd_pid=${CLUSTER_PIDS[2]}
	local deadline=$((SECONDS + 60))
	until _cluster_node_idle; do
		if grep -qs 'Address already in use' "$CLUSTER_DIR"/log/*.log; then
			_cluster_bind_failed=1
			cluster_stop
			return 1
		fi
		if ! _cluster_alive "$ctld_pid"; then
			_cluster_say "slurmctld exited during start-up"
			cluster_stop --failed
			return 1
		fi
		if ! _cluster_alive "$slurmd_pid"; then
			_cluster_say "slurmd exited during start-up"
			cluster_stop --failed
			return 1
		fi
		if [ $SECONDS -ge $deadline ]; then
			_cluster_say "the nodes did not all become idle within 60 s: $(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u | tr '\n' ' ')"
			cluster_stop --failed
			return 1
		fi
		sleep 0.2
	done
	_cluster_check_plugins || { cluster_stop --failed; return 1; }
	return 0
}

# The running slurmctld's pid. A daemonized slurmctld that `scontrol
# reconfigure` started anew (24.11) has a new pid, in its pid file; only a
# live slurmctld named there is followed.
cluster_ctld_pid() {
	local pid
	if [ "${CLUSTER_CTLD_DAEMON:-0}" = 1 ] && ! _cluster_alive "${CLUSTER_PIDS[1]}"; then
		pid=$(cat "$CLUSTER_DIR/run/slurmctld.pid" 2>/dev/null)
		[ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmctld ] &&
			CLUSTER_PIDS[1]=$pid
	fi
	echo "${CLUSTER_PIDS[1]}"
}

# Start slurmctld again in the foreground of a background job, its output
# appended to slurmctld.out, and remember its pid (for a test that stopped
# it: cluster_restart_slurmctld, t0950's kills).
cluster_spawn_slurmctld() {
	(cluster_exec_dumpable /usr/sbin/slurmctld -D -f "$SLURM_CONF") >>"$CLUSTER_DIR/log/slurmctld.out" 2>&1 &
	CLUSTER_PIDS[1]=$!
	echo "$!" >"$CLUSTER_DIR/run/slurmctld.pid"
}

# Restart slurmctld only (state is kept), e.g. to test recovery; --kill:
# with SIGKILL, as a crash would.
cluster_restart_slurmctld() {
	local pid=${CLUSTER_PIDS[1]} signal=TERM
	[ "${1:-}" = --kill ] && signal=KILL
	kill -s "$signal" "$pid" 2>/dev/null
	_cluster_wait_exit "$pid" 20
	mv "$CLUSTER_DIR/log/slurmctld.out" "$CLUSTER_DIR/log/slurmctld.out.1" 2>/dev/null
	cluster_spawn_slurmctld
	cluster_wait_for 30 _cluster_node_idle_or_busy
}

# A veth pair for a backup controller (cluster_start --backup-net): our
# end, up, gets the primary's address (CLUSTER_ADDR); the other end waits
# here until cluster_backup_start moves it into the backup's network
# namespace with CLUSTER_BACKUP_ADDR. A /30 in 10.0.0.0/8 that no address
# or route here is in, and a link name no other link has (tests in other
# pid namespaces, scripts/release-root's, share this network).
cluster_backup_net() {
	local tries=0 a b name
	while :; do
		a=$((RANDOM % 200 + 20)) b=$((RANDOM % 256))
		name=jtctld$(printf '%05d' $RANDOM)
		! ip -4 addr show | grep -q " 10\.$a\.$b\." &&
			! ip -4 route show table all | grep -q "10\.$a\.$b\." &&
			! ip link show "$name" >/dev/null 2>&1 &&
			! ip link show "${name}b" >/dev/null 2>&1 && break
		tries=$((tries + 1))
		[ $tries -lt 50 ] || return 1
	done
	CLUSTER_VETH=$name
	CLUSTER_ADDR=10.$a.$b.1
	CLUSTER_BACKUP_ADDR=10.$a.$b.2
	ip link add "$CLUSTER_VETH" type veth peer name "${CLUSTER_VETH}b" &&
		ip addr add "$CLUSTER_ADDR/30" dev "$CLUSTER_VETH" &&
		ip link set "$CLUSTER_VETH" up
}

_cluster_other_netns() {
	local theirs
	theirs=$(readlink "/proc/$1/ns/net" 2>/dev/null) &&
		[ "$theirs" != "$(readlink /proc/$$/ns/net)" ]
}

# Start the backup controller (SlurmctldHost $CLUSTER_BACKUP_HOST) in its
# own namespaces: UTS (its hostname), network (the veth's other end) and
# mount, with a /run of its own (a tmpfs on $CLUSTER_DIR/run) as another
# host has: a slurmctld kills the live one its pid file names. It logs to
# log/slurmctld-backup.log; returns once it idles in standby.
cluster_backup_start() {
	local ready=$CLUSTER_DIR/backup-net-ready pid propagation=private
	[ -n "$CLUSTER_BACKUP_ADDR" ] || { _cluster_say "no backup network (cluster_start --backup-net)"; return 1; }
	CLUSTER_BACKUP_LOG=$CLUSTER_DIR/log/slurmctld-backup.log
	# In a chroot / is no mount point and its propagation cannot change;
	# scripts/release-root's mounts are private already.
	mountpoint -q / || propagation=unchanged
	# The shell sets the hostname and /run, then waits for its network
	# before it becomes slurmctld (same pid: unshare and the shell exec).
	unshare --uts --net --mount --propagation "$propagation" /bin/sh -c \
		'hostname "$1" && mount -t tmpfs tmpfs "$2/run" &&
		while [ ! -e "$3" ]; do sleep 0.1; done && shift 3 && exec "$@"' \
		backup "$CLUSTER_BACKUP_HOST" "$CLUSTER_DIR" "$ready" \
		/usr/sbin/slurmctld -D -f "$SLURM_CONF" -L "$CLUSTER_BACKUP_LOG" \
		>"$CLUSTER_DIR/log/slurmctld-backup.out" 2>&1 &
	pid=$!
	CLUSTER_BACKUP_PID=$pid
	CLUSTER_PIDS+=("$pid")
	# Moved before unshare has made the namespace, the link would stay in
	# ours and the backup would wait for ever.
	cluster_wait_for 20 _cluster_other_netns "$pid" ||
		{ _cluster_say "the backup has no network namespace of its own"; return 1; }
	ip link set "${CLUSTER_VETH}b" netns "$pid" &&
		nsenter -t "$pid" -n sh -c "ip link set lo up &&
			ip addr add $CLUSTER_BACKUP_ADDR/30 dev ${CLUSTER_VETH}b &&
			ip link set ${CLUSTER_VETH}b up" &&
		touch "$ready" || { _cluster_say "cannot give the backup its network"; return 1; }
	cluster_wait_for 30 grep -q 'slurmctld running in background mode' "$CLUSTER_BACKUP_LOG" ||
		{ _cluster_say "the backup did not start in standby"; return 1; }
}

# The backup controller takes over: the primary is killed with SIGKILL, as
# a crash would (the backup is started first if it is not running). The
# backup pings it, and takes over once it has not answered for
# SlurmctldTimeout (6 s). Returns once it has and the node answers it;
# from then on cluster_ctld_pid and teardown's scancel use the backup.
cluster_takeover_by_backup() {
	local primary=${CLUSTER_PIDS[1]}
	kill -s KILL "$primary" 2>/dev/null
	_cluster_wait_exit "$primary" 20 || { _cluster_say "the primary slurmctld did not die"; return 1; }
	if [ -z "${CLUSTER_BACKUP_PID:-}" ]; then
		cluster_backup_start || return 1
	fi
	CLUSTER_PIDS[1]=$CLUSTER_BACKUP_PID # the controller is this one now
	cluster_wait_for 90 grep -q "BackupController1 $CLUSTER_BACKUP_HOST taking over" "$CLUSTER_BACKUP_LOG" ||
		{ _cluster_say "the backup did not take over"; return 1; }
	cluster_wait_for 60 _cluster_node_idle_or_busy ||
		{ _cluster_say "the node does not answer the backup"; return 1; }
}

_cluster_node_idle_or_busy() {
	sinfo -h -n "$CLUSTER_NODE" -o %T 2>/dev/null | grep -Eq '^(idle|mixed|allocated)$'
}

_cluster_no_active_jobs() {
	[ -z "$(timeout 10 squeue -h -t R,CG,CF,S -o %i 2>/dev/null)" ]
}

_cluster_wait_exit() {
	local pid=$1 seconds=$2
	local deadline=$((SECONDS + seconds))
	while _cluster_alive "$pid"; do
		[ $SECONDS -ge $deadline ] && return 1
		sleep 0.1
	done
	return 0
}

# Stop these pids, last first: SIGTERM, then SIGKILL after SECONDS.
_cluster_stop_pids() {
	local seconds=$1 i pid
	shift
	local pids=("$@")
	for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
		pid=${pids[i]}
		_cluster_alive "$pid" || continue
		kill "$pid" 2>/dev/null
		if ! _cluster_wait_exit "$pid" "$seconds"; then
			_cluster_say "pid $pid did not stop on SIGTERM; sending SIGKILL"
			kill -9 "$pid" 2>/dev/null
			_cluster_wait_exit "$pid" 5
		fi
	done
}

_cluster_on_exit() {
	[ -n "$CLUSTER_DIR" ] && cluster_stop --failed
}

# End of a test file: keep the logs when any assertion failed.
cluster_finish() {
	if tap_failed; then cluster_stop --failed; else cluster_stop; fi
}

cluster_stop() {
	local failed=0
	[ "${1:-}" = --failed ] && failed=1
	[ -n "$CLUSTER_DIR" ] || return 0
	[ ${#CLUSTER_PIDS[@]} -ge 2 ] && cluster_ctld_pid >/dev/null
	# Jobs first, through slurmctld: their slurmstepd outlive slurmd.
	if [ ${#CLUSTER_PIDS[@]} -ge 2 ] && _cluster_alive "${CLUSTER_PIDS[1]}"; then
		# (bounded: a slurmctld that takes connections and never answers
		# must not hold the teardown; its daemons are ended by pid below)
		local jobs
		jobs=$(timeout 20 squeue -h -o %i 2>/dev/null)
		if [ -n "$jobs" ]; then
			# shellcheck disable=SC2086
			timeout 60 scancel $jobs 2>/dev/null
			cluster_wait_for 30 _cluster_no_active_jobs
		fi
	fi
	_cluster_stop_pids 15 "${CLUSTER_PIDS[@]}"
	CLUSTER_PIDS=()
	declare -F accounting_stop >/dev/null && accounting_stop
	# Its backup end goes with the backup's namespace; before a takeover
	# both ends are here.
	if [ -n "$CLUSTER_VETH" ]; then
		ip link del "$CLUSTER_VETH" 2>/dev/null
		CLUSTER_VETH=
	fi
	if [ "$failed" = 1 ] || [ -n "${CLUSTER_KEEP:-}" ]; then
		[ "$failed" = 1 ] && cluster_dump_logs >&2
		_cluster_say "logs kept in $CLUSTER_DIR"
	else
		rm -rf "$CLUSTER_DIR"
	fi
	CLUSTER_DIR=
	unset SLURM_CONF
}
