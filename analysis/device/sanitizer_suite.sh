#!/usr/bin/env bash
# The bundled suite on a lent one-GPU machine, cuda backend, compute-sanitizer after the trials
# (cuset.evaluate.sanitizer): do the references stay correct, are the planted missing_sync bugs
# caught, what does the sanitizer cost per candidate. ~10 minutes; see analysis/device/README.md.
#
#     bash analysis/device/sanitizer_suite.sh              # on the device: rows.jsonl, table.md, summary.txt, log under $OUT
#     DRY=1 bash analysis/device/sanitizer_suite.sh        # here: the task order and the commands, nothing run
#
# Tasks go in one suite run, in this order, so that a cut at the deadline keeps the first: the
# tasks with a missing_sync bug and L1-hardsigmoid (its off-by-one write passed on the GPU), then
# level 3, then the rest. Rows are written as each task finishes.
# Needs the machine's python3 with CUDA torch, compute-sanitizer, and the tree-sitter wheels carried
# in .whl/ (README.md); no weights, no network.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sanitizer-suite}
PY=${PY:-python3}
WORKERS=${WORKERS:-16}
BUDGET_S=${BUDGET_S:-480}     # the suite run's deadline (SIGINT, then SIGKILL 20 s later)
TIMEOUT_S=${TIMEOUT_S:-240}   # per check: build + trials; each sanitizer tool gets 4x (cuset.evaluate.sanitizer)
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1

order() {  # the task ids, most wanted first
  PYTHONPATH="$PWD" $PY - <<'PY'
from cuset.evaluate.suite import load_suite
tasks = load_suite()
first = [t.id for t in tasks if t.id == "L1-hardsigmoid" or any(w.bug == "missing_sync" for w in t.wrong)]
third = [t.id for t in tasks if t.level == 3 and t.id not in first]
print(" ".join(first + third + [t.id for t in tasks if t.id not in first + third]))
PY
}

if [ -n "${DRY:-}" ]; then
  PY=${PY/python3/.venv/bin/python}
  ORDER=$(order) || exit 1
  echo "order ($(wc -w <<<"$ORDER") tasks): $ORDER"
  echo "would run: timeout -s INT -k 20 $BUDGET_S $PY -m cuset.evaluate.suite --verify --backend cuda --workers $WORKERS" \
       "--timeout $TIMEOUT_S --task ... --json $OUT/rows.jsonl"
  exit 0
fi

# the machine, and whether compute-sanitizer instruments its GPU at all (a gVisor runtime refuses it)
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; uname -r
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available())'
  command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null || echo "compute-sanitizer: not on PATH"
  compute-sanitizer --version 2>/dev/null | tail -1
} 2>&1 | tee "$OUT/machine.txt"

# the evaluator's packages, offline: the carried tree-sitter wheels, and this checkout on the
# interpreter's path (a .pth file: the sandboxed checks get no PYTHONPATH)
if ls .whl/*.whl >/dev/null 2>&1; then
  $PY -m pip install -q --no-index --no-deps --no-compile --no-cache-dir .whl/*.whl 2>&1 | tail -2
fi
SITE=$($PY -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
echo "$PWD" > "$SITE/cuset-checkout.pth"
$PY -c 'import tree_sitter, tree_sitter_cuda, safetensors, cuset.evaluate.check' 2>&1 | tee -a "$OUT/machine.txt" || {
  echo "the evaluator does not import: carry .whl (analysis/device/README.md)" | tee -a "$OUT/machine.txt"; exit 1; }
$PY - <<'PY' 2>&1 | tee -a "$OUT/machine.txt"
import time
from cuset.evaluate import sanitizer
t0 = time.perf_counter()
exe, verdict, note = sanitizer.availability()
print(f"sanitizer: {exe} {verdict or 'usable'} {note} (probe {time.perf_counter() - t0:.1f} s)")
raise SystemExit(0 if exe else 3)
PY
[ "${PIPESTATUS[0]}" = 0 ] || { echo "compute-sanitizer cannot run here: stopping before the suite" | tee -a "$OUT/machine.txt"; exit 1; }

ORDER=$(order)
args=(); for t in $ORDER; do args+=(--task "$t"); done
echo "order: $ORDER" | tee "$OUT/log"
timeout -s INT -k 20 "$BUDGET_S" $PY -m cuset.evaluate.suite --verify --backend cuda --workers "$WORKERS" --timeout "$TIMEOUT_S" \
    "${args[@]}" --json "$OUT/rows.jsonl" 2>&1 | tee -a "$OUT/log"
echo "suite run ended: ${PIPESTATUS[0]} (124/130/137: cut at the deadline)" | tee -a "$OUT/log"

$PY -m cuset.evaluate.suite --rows "$OUT/rows.jsonl" --markdown "$OUT/table.md" 2>&1 | tee -a "$OUT/log"
$PY - "$OUT/rows.jsonl" <<'PY' | tee "$OUT/summary.txt"
import json, statistics, sys
rows = [json.loads(line) for line in open(sys.argv[1]) if line.strip()]
refs = [r for r in rows if r["solution"] == "reference"]
sync = [r for r in rows if r.get("bug") == "missing_sync"]
bugs = [r for r in rows if r["solution"] != "reference"]
ran = [float(r["sanitizer_s"]) for r in rows if r.get("sanitizer_s")]
print(f"rows {len(rows)} of 98 (49 references, 49 planted bugs)")
print(f"references correct {sum(r['status'] == 'correct' for r in refs)} of {len(refs)} run (49 in the suite)")
print(f"missing_sync caught {sum(r['status'] != 'correct' for r in sync)} of {len(sync)} run "
      "(9 in the suite; on 2026-12-04 without the sanitizer 2 of the 8 that ran)")
for r in sync:
    print(f"  {r['task']:24s} {r['status']:13s} sanitizer {r.get('sanitizer')} {r.get('sanitizer_s') or 0:.0f} s  {r['message'][:160]}")
print(f"planted bugs not passed as correct {sum(r['status'] != 'correct' for r in bugs)} of {len(bugs)} run")
if ran:
    print(f"sanitizer ran over {len(ran)} candidates: extra seconds per candidate mean {statistics.mean(ran):.1f}, "
          f"median {statistics.median(ran):.1f}, max {max(ran):.1f}")
for r in refs:
    if r["status"] != "correct":
        print(f"  reference not correct: {r['task']} {r['status']} {r['message'][:200]}")
PY
