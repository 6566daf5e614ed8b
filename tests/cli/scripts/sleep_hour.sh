#!/bin/sh
# date(1) before and after sleep(1) for an hour: exactly 3600 s apart.
a=$(date +%s); sleep 3600; b=$(date +%s); echo "delta=$((b - a))"
