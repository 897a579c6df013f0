#!/usr/bin/env bash
# The bundled suite on a lent one-GPU machine, the cuda backend with compute-sanitizer after the
# trials (cuset.evaluate.sanitizer): references still correct, the planted missing_sync bugs caught.
# Run through the device tool from the repository root (nothing over 64 MiB travels; no weights):
#     bash analysis/device/sanitizer_suite.sh            # writes rows.jsonl, table.md, log under $OUT
# Budget ~10 min: the tasks with missing_sync bugs and level 3 go first, each call of the suite is
# cut at its own time limit (rows are written as each task finishes, so a cut keeps what finished).
# Uses the machine's own python3 with its CUDA torch (a venv of CPU torch would see no GPU).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/sanitizer-suite}
mkdir -p "$OUT"
export PYTHONUNBUFFERED=1 PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
PY=${PY:-python3}
WORKERS=${WORKERS:-12}
FIRST_S=${FIRST_S:-330}   # the missing_sync tasks and level 3
REST_S=${REST_S:-200}     # the other tasks, as far as they get
{
  date -u; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  $PY -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "gpu", torch.cuda.is_available())'
  command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null || echo "compute-sanitizer: NOT FOUND"
  compute-sanitizer --version 2>/dev/null | tail -1
} 2>&1 | tee "$OUT/machine.txt"
$PY - <<'PY' >/dev/null 2>&1 || $PY -m pip install -q --no-deps tree-sitter tree-sitter-cuda safetensors pyyaml 2>&1 | tail -2
import tree_sitter, tree_sitter_cuda, safetensors, yaml
PY
# the tasks: missing_sync bugs and level 3 first, then the rest
$PY - >"$OUT/order.txt" <<'PY'
from cuset.evaluate.suite import load_suite
tasks = load_suite()
first = [t.id for t in tasks if t.level == 3 or t.id == "L1-hardsigmoid" or any(w.bug == "missing_sync" for w in t.wrong)]
print(" ".join(first))
print(" ".join(t.id for t in tasks if t.id not in first))
PY
FIRST=$(sed -n 1p "$OUT/order.txt"); REST=$(sed -n 2p "$OUT/order.txt")
echo "first: $FIRST" | tee -a "$OUT/log"
run() {  # run NAME SECONDS TASK...
  local name=$1 secs=$2; shift 2
  local args=(); for t in "$@"; do args+=(--task "$t"); done
  timeout --signal=INT "$secs" $PY -m cuset.evaluate.suite --verify --backend cuda --workers "$WORKERS" --timeout 300 \
      "${args[@]}" --json "$OUT/rows-$name.jsonl" 2>&1 | tee -a "$OUT/log"
}
run first "$FIRST_S" $FIRST
run rest "$REST_S" $REST
cat "$OUT"/rows-first.jsonl "$OUT"/rows-rest.jsonl 2>/dev/null > "$OUT/rows.jsonl"
$PY -m cuset.evaluate.suite --rows "$OUT/rows.jsonl" --markdown "$OUT/table.md" 2>&1 | tee -a "$OUT/log"
$PY - "$OUT/rows.jsonl" <<'PY' | tee "$OUT/summary.txt"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
refs = [r for r in rows if r["solution"] == "reference"]
sync = [r for r in rows if r.get("bug") == "missing_sync"]
ran = [float(r["sanitizer_s"]) for r in rows if r.get("sanitizer_s")]
print(f"rows {len(rows)}; references correct {sum(r['status'] == 'correct' for r in refs)}/{len(refs)}")
print(f"missing_sync caught {sum(r['status'] != 'correct' for r in sync)}/{len(sync)}: "
      + ", ".join(f"{r['task']} {r['status']}" for r in sync))
bugs = [r for r in rows if r["solution"] != "reference"]
print(f"planted bugs not passed as correct {sum(r['status'] != 'correct' for r in bugs)}/{len(bugs)}")
if ran:
    print(f"sanitizer runs over {len(ran)} candidates: extra s per candidate mean {statistics.mean(ran):.1f}, "
          f"median {statistics.median(ran):.1f}, max {max(ran):.1f}")
notes = sorted({str(r.get("sanitizer")) for r in rows if r.get("sanitizer")})
print("sanitizer notes:", "; ".join(notes)[:2000])
PY
