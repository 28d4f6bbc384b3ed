#!/usr/bin/env bash
# The control socket under bad input and load, in a real slurmctld:
# malformed and oversized requests get a clear error, a client that sends
# nothing is closed after the timeout without holding anything up, and 32
# clients calling a service at once during 4 streams of submissions all get
# their answer while every submission is taken.
. "$(dirname "$0")/../lib/tap.sh"
. "$(dirname "$0")/../lib/cluster.sh"

jobtap=$JOBTAP_BUILD_DIR/src/jobtap/jobtap
conf=$(mktemp)
cat >"$conf" <<TOML
[job-manager]
plugins = [ { load = "$JOBTAP_BUILD_DIR/test/integration/bank-priority.so" } ]
TOML
cluster_start --jobtap-conf "$conf" || bail_out "cluster did not start"
rm -f "$conf"
sock=$CLUSTER_DIR/state/jobtap.sock
export JOBTAP_CONTROL_SOCKET=$sock
"$jobtap" rpc bank-priority.rec_update '{"data": [{"userid": 0, "bank": "root", "fairshare": 0.5}]}' >/dev/null

# A raw client: sends BYTES (after a 4-byte length, which LENGTH overrides)
# and prints the response object, or "closed".
raw() {
	python3 - "$sock" "$@" <<'PY'
import json, socket, struct, sys
path, body = sys.argv[1], sys.argv[2].encode()
length = int(sys.argv[3]) if len(sys.argv) > 3 else len(body)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.settimeout(20)
s.connect(path)
s.sendall(struct.pack(">I", length) + body)
head = b""
while len(head) < 4:
    chunk = s.recv(4 - len(head))
    if not chunk:
        print("closed"); sys.exit(0)
    head += chunk
n = struct.unpack(">I", head)[0]
data = b""
while len(data) < n:
    chunk = s.recv(n - len(data))
    if not chunk:
        break
    data += chunk
print(json.dumps(json.loads(data), sort_keys=True))
PY
}

out=$(raw '{"op": "list"')
like "$out" '"errnum": 71' "malformed JSON is answered with EPROTO"
like "$out" '"error": "malformed request: ' "and says so"
out=$(raw '{"op": "list"}' $((2 * 1024 * 1024)))
like "$out" '"errnum": 90' "a request over the 1 MiB limit is answered with EMSGSIZE"
out=$(raw '{"op": "dance"}')
like "$out" '"errnum": 22' "an unknown op is answered with EINVAL"
out=$(raw '{"op": "rpc", "topic": "kvs.lookup", "payload": {}}')
like "$out" '"errnum": 38' "a broker service that does not exist here: ENOSYS"

# A client that connects and sends nothing.
python3 - "$sock" <<'PY' >"$CLUSTER_DIR/silent.out" 2>&1 &
import socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
start = time.time()
s.settimeout(30)
print("closed after %d s" % int(s.recv(1) == b"" and time.time() - start))
PY
silent=$!
sleep 0.5
start=$SECONDS
id=$(sbatch --parsable -o /dev/null -t 5 --wrap true 2>&1)
like "$id" '^[0-9]+$' "with a silent client connected, sbatch is taken"
is "$("$jobtap" list)" "bank-priority.so" "and the socket answers others"
ok $((SECONDS - start > 3)) "at once"
wait "$silent"
like "$(cat "$CLUSTER_DIR/silent.out")" '^closed after [4-9] s$' "the silent client is closed after the timeout"

# 32 service calls at once during 4 streams of 25 submissions.
streams=()
for s in 1 2 3 4; do
	(for i in $(seq 25); do sbatch --parsable -o /dev/null -t 5 -J "s$s" --wrap true || echo FAILED; done \
		>"$CLUSTER_DIR/stream.$s") &
	streams+=($!)
done
callers=()
for c in $(seq 32); do
	("$jobtap" rpc job-manager.bank-priority.reprioritize '{}' >"$CLUSTER_DIR/call.$c" 2>&1; echo "rc=$?" >>"$CLUSTER_DIR/call.$c") &
	callers+=($!)
done
wait "${callers[@]}" "${streams[@]}"
is "$(cat "$CLUSTER_DIR"/call.* | grep -c '^rc=0$')" 32 "all 32 concurrent service calls succeed"
is "$(cat "$CLUSTER_DIR"/stream.* | grep -cE '^[0-9]+$')" 100 "all 100 submissions of the 4 streams are taken"
is "$(squeue -h -n s1,s2,s3,s4 -t all -o %i | wc -l)" 100 "and Slurm has every one of them"
ok $(kill -0 "${CLUSTER_PIDS[1]}"; echo $?) "slurmctld is alive"

cluster_finish
done_testing
