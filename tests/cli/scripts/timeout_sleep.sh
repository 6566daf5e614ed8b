#!/bin/sh
# timeout(1) arms a POSIX timer, forks sleep(1) and kills it at exactly 5 s: exit status 124.
a=$(date +%s%N); timeout 5 sleep 100; r=$?; b=$(date +%s%N); echo "rc=$r elapsed=$((b - a))"
