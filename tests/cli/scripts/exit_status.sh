#!/bin/sh
# vtime exec returns the command's own exit status, and 128+N when a signal N killed it.
vtime=$1
"$vtime" exec -- sh -c 'sleep 1; exit 7'; echo "rc=$?"
"$vtime" exec -- sh -c 'kill -9 $$'; echo "rc=$?"
