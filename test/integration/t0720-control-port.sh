#!/usr/bin/env bash
# The control port (TCP) in a real slurmctld: each request travels sealed
# in a munge credential, as Slurm's own RPCs do. The jobtap command reaches
# it with --host; root is the owner and an ordinary user is a user there
# too; a request without a credential, with a tampered one, one made with
# another munge key (forged), an expired or a replayed one is refused with
# EPERM and a clear reason, in the answer and in slurmctld's log; an
# oversized request is refused by the command before it is sent; a port
# that is taken leaves the local socket working. Off by default (t0700).
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
work=$(mktemp -d)
chmod 755 "$work"
other_munged=""
cleanup() {
	[ -z "$other_munged" ] || kill "$other_munged" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

port=$(_cluster_free_port) || bail_out "no free port"
cat >"$work/jobtap.conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/bank-priority.so" } ]
[slurm-jobtap]
control-port = $port
control-address = "127.0.0.1"
TOML
cluster_start --jobtap-conf "$work/jobtap.conf" || bail_out "cluster did not start"
# the trap above was replaced by the cluster's: chain ours
trap 'cleanup; _cluster_on_exit' EXIT
munge_socket=$CLUSTER_DIR/munge/munge.sock
jobtap_public=$(cluster_public_copy "$jobtap") || bail_out "cannot copy jobtap"

as_nobody() { (cd / && setpriv --reuid=nobody --regid=nogroup --clear-groups "$@"); }
nobody=$(id -u nobody)

like "$(cluster_log)" "jobtap: control port 127.0.0.1:$port \\(requests sealed with munge\\)" \
	"slurmctld says where the control port listens"

out=$("$jobtap" --host 127.0.0.1 list 2>&1)
is "$out" "bank-priority.so" "jobtap --host HOST lists the plugins (the port from jobtap.conf)"
out=$("$jobtap" --host "127.0.0.1:$port" rpc bank-priority.rec_update \
	"{\"data\": [{\"userid\": $nobody, \"bank\": \"physics\", \"fairshare\": 0.5}]}" 2>&1)
ok $? "root calls the owner-only rec_update over TCP (HOST:PORT)" || diag "$out"
like "$("$jobtap" --host 127.0.0.1 query bank-priority.so)" '"bank": "physics"' \
	"and the data arrived"

out=$(as_nobody "$jobtap_public" --host 127.0.0.1 rpc \
	bank-priority.rec_update "{\"data\": [{\"userid\": $nobody, \"fairshare\": 1.0}]}" 2>&1)
rc=$?
is "$rc" 1 "an ordinary user's rec_update over TCP fails"
is "$out" "jobtap: rpc bank-priority.rec_update: rec_update is for the owner" \
	"refused by the plugin's owner check: the credential named the user"
out=$(as_nobody "$jobtap_public" --host 127.0.0.1 remove all 2>&1)
like "$out" "Request requires owner credentials" "and jobtap remove needs the owner"

# A raw client: sends the frame of BODY to the port, prints the answer
# (sorted JSON) or "closed"; with a second BODY, sends it on the same
# connection after the first answer.
raw() {
	python3 - "$port" "$@" <<'PY'
import json, socket, struct, sys
port, bodies = int(sys.argv[1]), sys.argv[2:]
s = socket.create_connection(("127.0.0.1", port), timeout=20)
def recv(n):
    data = b""
    while len(data) < n:
        chunk = s.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data
for body in bodies:
    try:
        s.sendall(struct.pack(">I", len(body)) + body.encode())
        head = recv(4)
    except (BrokenPipeError, ConnectionResetError):
        head = None
    if head is None:
        print("closed"); break
    print(json.dumps(json.loads(recv(struct.unpack(">I", head)[0])), sort_keys=True))
PY
}
seal() { munge -S "${2:-$munge_socket}" -s "$1" ${3:+-t "$3"}; }

out=$(raw '{"op": "list"}' '{"op": "list"}')
like "$out" '"errnum": 1, "error": "authentication failed: a request over TCP must be sealed in a munge credential"' \
	"a request without a credential is refused with EPERM"
like "$out" 'closed$' "and the connection is closed"

cred=$(seal '{"op": "list"}')
out=$(raw "{\"munge\": \"$cred\"}" "{\"munge\": \"$cred\"}")
like "$out" '^\{"ok": true, "result": \["bank-priority.so"\]\}' "a request sealed with the site's munge key is answered"
like "$out" '"error": "authentication failed: munge: Replayed credential"' \
	"the same credential again is refused as replayed"

cred=$(seal '{"op": "list"}')
tampered=${cred:0:40}$(tr 'A-Za-z' 'B-ZAb-za' <<<"${cred:40:8}")${cred:48}
out=$(raw "{\"munge\": \"$tampered\"}")
like "$out" '"errnum": 1, "error": "authentication failed: munge: ' "a tampered credential is refused with EPERM"
diag "$out"

# Another munge key: a credential as a forger with his own munged makes it.
dd if=/dev/urandom of="$work/other.key" bs=1024 count=1 2>/dev/null
chmod 400 "$work/other.key"
/usr/sbin/munged -F --force --socket="$work/other.sock" --key-file="$work/other.key" \
	--pid-file="$work/other.pid" --seed-file="$work/other.seed" \
	--log-file="$work/other.log" &
other_munged=$!
cluster_wait_for 10 test -S "$work/other.sock"
cred=$(seal '{"op": "remove", "name": "all"}' "$work/other.sock")
out=$(raw "{\"munge\": \"$cred\"}")
is "$out" '{"errnum": 1, "error": "authentication failed: munge: Invalid credential", "ok": false}' \
	"a credential made with another munge key is refused as invalid"
is "$("$jobtap" list)" "bank-priority.so" "and did nothing"

cred=$(seal '{"op": "list"}' "$munge_socket" 1)
sleep 3
out=$(raw "{\"munge\": \"$cred\"}")
is "$out" '{"errnum": 1, "error": "authentication failed: munge: Expired credential", "ok": false}' \
	"an expired credential is refused"
like "$(cluster_log)" "jobtap: control: request from 127.0.0.1 port [0-9]+ refused: authentication failed: munge: Expired credential" \
	"slurmctld's log names the peer and the reason"

out=$(raw '{"munge": ')
like "$out" '"errnum": 71, "error": "malformed request: ' "malformed JSON over TCP is answered with EPROTO"

out=$(python3 -c 'print("{\"x\": \"%s\"}" % ("a" * 600000))' |
	"$jobtap" --host 127.0.0.1 rpc bank-priority.rec_update - 2>&1)
rc=$?
is "$rc" 1 "an rpc over the TCP size limit fails"
like "$out" "^jobtap: rpc bank-priority.rec_update: request of [0-9]+ bytes is larger than the limit of 524288 bytes over TCP$" \
	"in the command, which says the limit"

out=$("$jobtap" --host 127.0.0.1 --socket /x list 2>&1)
like "$out" "^jobtap: --socket and --host exclude each other" "--socket and --host together are a usage error"
out=$("$jobtap" --host "127.0.0.1:$((port + 1))" list 2>&1)
like "$out" "^jobtap: cannot connect to slurmctld's jobtap control port 127.0.0.1:$((port + 1)): Connection refused" \
	"a port nobody serves is named in the error"

id=$(sbatch --parsable -o /dev/null -t 5 --wrap true 2>&1)
like "$id" '^[0-9]+$' "slurmctld still takes submissions"

# A taken port: the local socket goes on without it.
ctld_port=$(cluster_conf_value SlurmctldPort)
sed -i "s/^control-port = .*/control-port = $ctld_port/" "$CLUSTER_DIR/jobtap.conf"
scontrol reconfigure >/dev/null 2>&1
cluster_wait_for 30 sh -c "grep -q 'jobtap: control port not available' '$CLUSTER_DIR/log/slurmctld.log'"
like "$(cluster_log)" "jobtap: control port not available \\(jobtap --host will not work\\): control port 127.0.0.1:$ctld_port: Address already in use" \
	"a taken port is logged with the reason"
cluster_wait_for 30 sh -c "JOBTAP_CONTROL_SOCKET= '$jobtap' list >/dev/null 2>&1"
is "$(JOBTAP_CONTROL_SOCKET='' "$jobtap" list 2>&1)" "bank-priority.so" "and the local socket still answers"

cluster_finish
done_testing
