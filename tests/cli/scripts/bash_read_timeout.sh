#!/bin/bash
# read -t on a pipe that stays open (its writer sleeps 1000 s) times out at exactly 7 s (status > 128).
exec 3< <(sleep 1000)
s=$(date +%s); read -r -t 7 <&3; r=$?; echo "rc=$r elapsed=$(( $(date +%s) - s ))"
