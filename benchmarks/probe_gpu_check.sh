#!/usr/bin/env bash
# The runtime probe on a GPU machine, in one command. Prints what it checks and PASS/FAIL per check:
#   bash benchmarks/probe_gpu_check.sh            (from the repository root; uses .venv/bin/python if present)
# Needs a TensorFlow build that sees the GPU (tensorflow[and-cuda], not tensorflow-cpu).
set -u
cd "$(dirname "$0")/.."
PY=${PYTHON:-.venv/bin/python}
[ -x "$PY" ] || PY=python3
export TF_CPP_MIN_LOG_LEVEL=2
fails=0
check() {  # check NAME CONDITION-EXIT-STATUS
  if [ "$2" -eq 0 ]; then echo "PASS  $1"; else echo "FAIL  $1"; fails=$((fails + 1)); fi
}
json_field() { "$PY" -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2], {}, {'d': d}))" "$@"; }

command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
"$PY" -c "import tensorflow as tf; print('TensorFlow', tf.__version__, 'GPUs:', tf.config.list_physical_devices('GPU'))" 2>/dev/null
out=$(mktemp -d)

# 1. Default device: the step runs on the GPU and the report names it.
"$PY" -m tapelint probe tests/probe/scripts/correct_loop.py --format json > "$out/auto.json"; rc=$?
echo "      default device: $(json_field "$out/auto.json" "d['probe']['device']") ($(json_field "$out/auto.json" "d['probe']['gpus']"))"
check "correct loop on the default device: exit 0, device GPU:0" \
  $([ $rc -eq 0 ] && [ "$(json_field "$out/auto.json" "d['probe']['device']")" = "GPU:0" ] && echo 0 || echo 1)
# Its @tf.function step runs as a graph under the probe (host callbacks on the GPU's tensors), as without it.
check "correct loop: its tf.function ran as a graph" \
  $(json_field "$out/auto.json" "0 if any('ran as a graph' in n for n in d['probe']['notes']) else 1" 2>/dev/null || echo 1)

# 2. --device cpu hides the GPU; --device gpu runs there.
"$PY" -m tapelint probe tests/probe/scripts/correct_loop.py --device cpu --format json > "$out/cpu.json"; rc=$?
check "--device cpu: device CPU:0" $([ $rc -eq 0 ] && [ "$(json_field "$out/cpu.json" "d['probe']['device']")" = "CPU:0" ] && echo 0 || echo 1)
"$PY" -m tapelint probe tests/probe/scripts/correct_loop.py --device gpu --format json > "$out/gpu.json"; rc=$?
check "--device gpu: device GPU:0" $([ $rc -eq 0 ] && [ "$(json_field "$out/gpu.json" "d['probe']['device']")" = "GPU:0" ] && echo 0 || echo 1)

# 3. Memory growth: the probed script sees growth on, and TensorFlow holds megabytes, not the whole card.
"$PY" -m tapelint probe tests/probe/scripts/gpu_memory.py --steps 2 -- "$out/memory.json" > "$out/memory.txt"
cat "$out/memory.json" 2>/dev/null && echo
check "memory growth on, peak GPU memory under 1 GiB" \
  $(json_field "$out/memory.json" "0 if all(d['memory_growth']) and d['memory_growth'] and d.get('gpu_memory_peak_mb', 1e9) < 1024 else 1" 2>/dev/null || echo 1)

# 3b. --memory-limit caps the heap only (RLIMIT_DATA), so CUDA's reserved address space still fits.
"$PY" -m tapelint probe tests/probe/scripts/correct_loop.py --memory-limit 16000 --format json > "$out/limit.json"; rc=$?
check "--memory-limit 16000 on the GPU: exit 0, device GPU:0" \
  $([ $rc -eq 0 ] && [ "$(json_field "$out/limit.json" "d['probe']['device']")" = "GPU:0" ] && echo 0 || echo 1)

# 4. The seed-1 example, confirmed with numbers on the GPU.
"$PY" -m tapelint examples/ --probe examples/seed1_frozen_vgg_head.py > "$out/seed1.txt" 2> "$out/seed1.err"
grep -A1 " TL001 " "$out/seed1.txt"; cat "$out/seed1.err"
grep -A1 " TL001 " "$out/seed1.txt" | grep -q "probe: confirmed"
check "seed 1: TL001 confirmed" $?
grep -q "on GPU:0" "$out/seed1.err"
check "seed 1: the step ran on GPU:0" $?

# 5. The probe's own tests, and its overhead on this GPU: benchmarks/probe_overhead.py prints the user's own step
#    (eager, and as a @tf.function graph) beside the probed step; the target is <= 1.3x.
"$PY" -m pytest -x -q tests/probe --ignore tests/probe/test_program_set.py 2>&1 | tail -3  # program set: tests/probe/score.py (minutes)
check "pytest tests/probe" "${PIPESTATUS[0]}"
"$PY" benchmarks/probe_overhead.py --rounds 3 2>/dev/null | grep -v "^$"

rm -rf "$out"
echo "$fails check(s) failed"
exit $((fails > 0))
