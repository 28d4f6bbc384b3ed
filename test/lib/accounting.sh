# shellcheck shell=bash
# Accounting for the private cluster of cluster.sh: a private MariaDB and a
# slurmdbd, both in the cluster's dir. Sourced by cluster.sh for
# `cluster_start --accounting`; not used on its own.
#
#   accounting_prepare  (cluster.sh, before slurm.conf is written) picks the
#                       ports, writes slurmdbd.conf and sets
#                       ACCOUNTING_SLURM_CONF, the lines slurm.conf needs
#   accounting_start    (after munged is up) starts mariadbd and slurmdbd,
#                       then adds the cluster, an account and the users
#   accounting_stop     (cluster_stop) ends the two daemons, by pid
#
# MariaDB (Debian's mariadb-server-core): mariadb-install-db makes a data dir
# in $CLUSTER_DIR/db; mariadbd runs as root (--user=root) on its own unix
# socket and a free loopback port, and an init file gives slurmdbd its
# database user. slurmdbd listens on another free loopback port. The clients
# and slurmctld reach it through AccountingStorageHost/Port, authenticating
# with the cluster's private munged: AccountingStoragePass names its socket.
#
# Environment: ACCOUNTING_USERS, more users to add to the account (root and
# the caller always are).

ACCOUNTING_PIDS=()
ACCOUNTING_SLURM_CONF=
ACCOUNTING_ACCOUNT=jobtap
_accounting_db_port=
_accounting_dbd_port=

_accounting_say() { printf 'accounting: %s\n' "$*" >&2; }

# What accounting needs on this machine; prints what is missing.
accounting_missing() {
	local c
	for c in /usr/sbin/mariadbd /usr/bin/mariadb-install-db /usr/bin/my_print_defaults /usr/sbin/slurmdbd; do
		[ -x "$c" ] || echo "$c"
	done
	# slurmdbd's MySQL plugin is a package of its own in some releases
	[ -n "$(find /usr/lib /usr/lib64 -path '*slurm*' -name accounting_storage_mysql.so -print -quit 2>/dev/null)" ] ||
		echo accounting_storage_mysql.so
}

accounting_prepare() {
	local missing
	missing=$(accounting_missing)
	if [ -n "$missing" ]; then
		_accounting_say "missing: ${missing//$'\n'/ } (scripts/bootstrap installs them)"
		return 1
	fi
	ACCOUNTING_PIDS=()
	_accounting_db_port=$(_cluster_free_port) && _accounting_dbd_port=$(_cluster_free_port) ||
		{ _accounting_say "no free port"; return 1; }
	mkdir -p "$CLUSTER_DIR/db"
	# slurmdbd refuses a slurmdbd.conf others may read
	(
		umask 077
		cat >"$CLUSTER_DIR/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$CLUSTER_DIR/munge/munge.sock
DbdAddr=127.0.0.1
DbdHost=$CLUSTER_NODE
DbdPort=$_accounting_dbd_port
SlurmUser=root
PidFile=$CLUSTER_DIR/run/slurmdbd.pid
LogFile=$CLUSTER_DIR/log/slurmdbd.log
DebugLevel=info
PluginDir=$(_cluster_plugindir)
StorageType=accounting_storage/mysql
StorageHost=127.0.0.1
StoragePort=$_accounting_db_port
StorageUser=slurm
StoragePass=jobtap
StorageLoc=slurm_acct_db
EOF
		# The database user slurmdbd connects as (TCP, loopback only), and
		# its database: left to slurmdbd, 24.11 with Debian 13's MariaDB
		# 11.8 client library fails its first query (5027 "Number of
		# columns in result ... exceeds maximum allowed") on the handle
		# whose first connect found no database.
		cat >"$CLUSTER_DIR/db/init.sql" <<EOF
CREATE DATABASE IF NOT EXISTS slurm_acct_db;
CREATE USER IF NOT EXISTS 'slurm'@'127.0.0.1' IDENTIFIED BY 'jobtap';
GRANT ALL ON *.* TO 'slurm'@'127.0.0.1';
EOF
	)
	# shellcheck disable=SC2034 # read by cluster.sh
	ACCOUNTING_SLURM_CONF="AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$_accounting_dbd_port
AccountingStoragePass=$CLUSTER_DIR/munge/munge.sock"
}

_accounting_spawn() {
	local name=$1
	shift
	"$@" >"$CLUSTER_DIR/log/$name.out" 2>&1 &
	ACCOUNTING_PIDS+=("$!")
	echo "$!" >"$CLUSTER_DIR/run/$name.pid"
}

accounting_start() {
	local db=$CLUSTER_DIR/db
	# Small logs and no fsync per commit: a test database, thrown away.
	local opts=(--no-defaults --datadir="$db/data" --user=root
		--innodb-log-file-size=16M --innodb-buffer-pool-size=64M
		--innodb-lock-wait-timeout=900)
	mariadb-install-db "${opts[@]}" --auth-root-authentication-method=socket \
		--skip-test-db >"$CLUSTER_DIR/log/mariadb-install-db.log" 2>&1 ||
		{ _accounting_say "mariadb-install-db failed"; return 1; }
	_accounting_spawn mariadbd /usr/sbin/mariadbd "${opts[@]}" \
		--socket="$db/mariadb.sock" --port="$_accounting_db_port" \
		--bind-address=127.0.0.1 --skip-name-resolve \
		--pid-file="$CLUSTER_DIR/run/mariadbd-self.pid" \
		--log-error="$CLUSTER_DIR/log/mariadbd.log" \
		--innodb-flush-log-at-trx-commit=0 --init-file="$db/init.sql"
	local pid=${ACCOUNTING_PIDS[0]}
	local deadline=$((SECONDS + 30))
	until grep -qs 'ready for connections' "$CLUSTER_DIR/log/mariadbd.log"; do
		if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
			_accounting_say "mariadbd did not start"
			return 1
		fi
		sleep 0.1
	done
	_accounting_spawn slurmdbd /usr/sbin/slurmdbd -D
	pid=${ACCOUNTING_PIDS[1]}
	# It makes its tables on the first start; sacctmgr answers once it is up.
	deadline=$((SECONDS + 60))
	until sacctmgr -n show cluster >/dev/null 2>&1; do
		if ! kill -0 "$pid" 2>/dev/null || [ $SECONDS -ge $deadline ]; then
			_accounting_say "slurmdbd did not start"
			return 1
		fi
		sleep 0.2
	done
	local cluster users
	cluster=$(sed -n 's/^ClusterName=//Ip' "$SLURM_CONF" | tail -n 1)
	# shellcheck disable=SC2086 # a list of names
	users=$(printf '%s\n' root "$(id -un)" ${ACCOUNTING_USERS:-} | sort -u | paste -sd, -)
	{
		sacctmgr -i add cluster "$cluster" &&
			sacctmgr -i add account "$ACCOUNTING_ACCOUNT" Cluster="$cluster" Description=tests Organization=jobtap &&
			sacctmgr -i add user "$users" Account="$ACCOUNTING_ACCOUNT" Cluster="$cluster" DefaultAccount="$ACCOUNTING_ACCOUNT"
	} >"$CLUSTER_DIR/log/sacctmgr.out" 2>&1 ||
		{ _accounting_say "sacctmgr could not add the cluster, account and users"; cat "$CLUSTER_DIR/log/sacctmgr.out" >&2; return 1; }
}

# slurmdbd first (it may still write), then mariadbd; each by its pid.
accounting_stop() {
	_cluster_stop_pids 30 "${ACCOUNTING_PIDS[@]}"
	ACCOUNTING_PIDS=()
}
