#!/bin/sh
# expect.sh RC REGEX -- COMMAND...: runs COMMAND, and passes when its exit status is RC and its
# combined output matches the extended regular expression REGEX (each line of REGEX separated
# by '&&' must match somewhere). Prints the output either way, so a failure explains itself.
want_rc=$1; regex=$2; shift 3
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
if [ "$rc" != "$want_rc" ]; then echo "FAIL: exit status $rc, expected $want_rc"; exit 1; fi
old_ifs=$IFS; IFS='&'
for pat in $(printf '%s' "$regex" | sed 's/&&/\&/g'); do
  IFS=$old_ifs
  if ! printf '%s\n' "$out" | grep -Eq -- "$pat"; then echo "FAIL: output does not match /$pat/"; exit 1; fi
done
echo "PASS"
