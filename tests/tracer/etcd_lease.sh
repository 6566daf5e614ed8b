#!/bin/sh
# Debian's etcd under `vtime exec`: a lease granted with TTL 60 s keeps its key at virtual 50 s
# and has lost it at virtual 70 s. usage: vtime exec -- sh etcd_lease.sh DATADIR CLIENT_PORT PEER_PORT
# etcd and etcdctl are Go programs started by this (dynamic) shell: the shim hands them to the
# tracer when it executes them.
dir=$1
client=http://127.0.0.1:$2
peer=http://127.0.0.1:$3
etcd --name vt --data-dir "$dir/data" --listen-client-urls "$client" --advertise-client-urls "$client" \
     --listen-peer-urls "$peer" --initial-advertise-peer-urls "$peer" --initial-cluster "vt=$peer" \
     --log-level error >"$dir/etcd.log" 2>&1 &
etcd_pid=$!
ctl() { ETCDCTL_API=3 etcdctl --endpoints="$client" "$@"; }
# Time only moves once every process is idle, so after this sleep etcd has started and elected
# itself leader whatever the real-time races of its start-up: the first check finds it ready.
sleep 3
ready=no
for i in $(seq 100); do
  if ctl endpoint health >/dev/null 2>&1; then ready=yes; break; fi
  sleep 0.2
done
echo "etcd ready: $ready"
lease=$(ctl lease grant 60 | awk '{print $2}')
ctl put --lease="$lease" lease-key held >/dev/null
echo "put with a 60 s lease at $(date -u +%T)"
sleep 50
echo "at $(date -u +%T): lease-key=$(ctl get lease-key --print-value-only)"
sleep 20
echo "at $(date -u +%T): lease-key=$(ctl get lease-key --print-value-only)"
kill "$etcd_pid"
wait "$etcd_pid" 2>/dev/null
echo "etcd exited"
