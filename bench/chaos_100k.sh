#!/bin/sh
# The chaos harness at scale: about 100,000 crash scenarios over the three workloads, on one
# machine (2 cores: --jobs 3), every count added up at the end. Resumable: run it again with the
# same OUT folder and it goes on from the scenarios already done (listed from the reference counts
# the first run saved in OUT/chaos-W.reference.json).
#
#   sh bench/chaos_100k.sh OUT [JOBS]
#
# synthetic: 94,600 kills at random events, every named point (with and without a second kill
# during recovery), a full disk at every write point, 200 damaged ledgers and 200 code changes
# (about 95,360 scenarios: the named points and their counts come from a reference run);
# fleet10 (10 workers): 3,000 random kills and the same families, 50 variants (3,490); scan:
# 1,000 random kills and the same, 50 variants (1,694): about 100,500 in all, the scan's share small because its scenarios cost four times the synthetic ones'. The
# scenario ids, seeds and replay commands are in OUT/*.jsonl and in what each command prints.
set -e
out=${1:?usage: sh bench/chaos_100k.sh OUT [JOBS]}
jobs=${2:-3}
here=$(dirname "$0")
mkdir -p "$out"
start=$(date +%s)
python "$here/chaos.py" --workload synthetic --random 94600 --variants 200 --jobs "$jobs" --out "$out/chaos-synthetic.jsonl"
python "$here/chaos.py" --workload fleet10 --random 3000 --variants 50 --jobs "$jobs" --out "$out/chaos-fleet10.jsonl"
python "$here/chaos.py" --workload scan --random 1000 --variants 50 --jobs "$jobs" --out "$out/chaos-scan.jsonl"
echo "all: $(( $(date +%s) - start )) s"
python "$here/chaos.py" --sum "$out"/chaos-*.jsonl
