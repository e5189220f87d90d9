#!/usr/bin/env bash
# Fuzzes each target for a while and reports, for each, how many inputs it
# ran and whether it found a crash:
#
#   hack/fuzz-long.sh <fuzztime> <log dir> <FuzzName:package>...
#
# <fuzztime> is go test's -fuzztime: a duration (10m) or a number of inputs
# (100000x). Every target runs even after another crashed; the script fails
# when any target crashed, could not run or does not exist. go test writes
# a crashing input to <package>/testdata/fuzz/<FuzzName>/, where plain
# go test then replays it; each target's whole output is kept in
# <log dir>/<FuzzName>.log. $FUZZ_PARALLEL, when set, is go test's -parallel
# (fuzzing workers per target; default GOMAXPROCS).
set -euo pipefail
if [[ $# -lt 3 ]]; then
  echo "usage: $0 <fuzztime> <log dir> <FuzzName:package>..." >&2
  exit 2
fi
fuzztime="$1"
logs="$2"
shift 2
mkdir -p "${logs}"

status=0
results=()
for target in "$@"; do
  name="${target%%:*}"
  pkg="${target#*:}"
  log="${logs}/${name}.log"
  echo "fuzz ${name} (${pkg}, ${fuzztime})"
  rc=0
  go test -run '^$' -fuzz="^${name}\$" -fuzztime="${fuzztime}" ${FUZZ_PARALLEL:+-parallel="${FUZZ_PARALLEL}"} "${pkg}" 2>&1 | tee "${log}" || rc=$?

  # go test reports "fuzz: elapsed: 3s, execs: 12345 (4115/sec), ..." every
  # few seconds and once at the end; the last count is the total.
  execs="$(grep -o 'execs: [0-9]*' "${log}" | tail -n 1 | cut -d ' ' -f 2 || true)"
  if [[ ${rc} -eq 0 ]] && grep -q 'no fuzz tests to fuzz' "${log}"; then
    outcome="no such fuzz test in ${pkg}"
    status=1
  elif [[ ${rc} -eq 0 ]]; then
    outcome="no crash"
  elif input="$(grep -o 'Failing input written to [^ ]*' "${log}" | tail -n 1 | cut -d ' ' -f 5)" && [[ -n ${input} ]]; then
    outcome="CRASH, input in ${pkg#./}/${input}"
    status=1
  else
    outcome="did not run to the end (go test exited ${rc}; see ${log})"
    status=1
  fi
  result="${name} (${pkg}): ${execs:-0} execs, ${outcome}"
  echo "${result}"
  results+=("${result}")
done

echo
echo "fuzz-long, ${fuzztime} per target:"
printf '  %s\n' "${results[@]}"
exit "${status}"
