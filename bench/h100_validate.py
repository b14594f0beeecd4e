#!/usr/bin/env python3
"""Predicts every row of bench/data/h100_ground_truth.csv (step time and peak memory measured on
one H100 with PyTorch 2.11 eager) with `tpu-doctor estimate --targets nvidia-h100`, and prints per
row and as medians the step-time and peak-memory errors, for all rows and for the compute-bound
ones (>= 2 TFLOP per step, where launch overhead no longer dominates).

With --fit it first refits the `eager-gpu` efficiency factors (data/calibration/eager-gpu.json) by
least squares on relative error over all measured rows: step time is linear in 1/matmul_eff,
1/conv_eff, 1/bandwidth_eff and the per-kernel overhead; peak memory is linear in the saved
activation share, the transient factor and a fixed term (docs/cost-model.md).

Usage: bench/h100_validate.py [--fit] [--binary build/tpu-doctor]
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
ONNX = {  # measured model -> the ONNX export of exactly that model (shared corpus README)
    "mlp_4096x3": "mlp_4096x3.onnx", "resnet50": "resnet50.onnx", "mobilenet_v3_large": "mobilenet_v3_large.onnx",
    "efficientnet_b0": "efficientnet_b0.onnx", "vit_b_16": "vit_b_16.onnx", "convnext_tiny": "convnext_tiny.onnx",
    "bert_base_s128": "bert_base_mlm.onnx", "gpt2_small_s1024": "gpt2_small_lm.onnx",
    "llama_1b_s1024": "llama_1b_dyn.onnx", "t5_small_enc_s512": "t5_small_encoder_dyn.onnx",
}
COMPUTE_BOUND_FLOPS = 2e12
# Bound on the host time of one pass of an eager step loop that no op accounts for (Python loop,
# zero_grad, synchronisation): a physical prior, so that a fit without tiny models stays sane.
MAX_STEP_OVERHEAD_US = 1000.0  # >= 2.5 ms of pure matmul at the measured 805 TFLOP/s


def estimate(binary, row, calibration=None):
    cmd = [binary, "estimate", os.path.join(ROOT, "testdata/models", ONNX[row["model"]]), "--batch", row["batch"],
           "--targets", "nvidia-h100", "--precision", row["precision"], "--optimizer", "adamw", "--format", "json"]
    if row["seq"]:
        cmd += ["--dim", "sequence=" + row["seq"]]
    if row["mode"] == "train":
        cmd.append("--train")
    if calibration:
        cmd += ["--calibration", calibration]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(out.stderr.strip())
    return json.loads(out.stdout)["estimates"][0]


def lstsq(rows, targets):
    """Minimises sum(((a.x) - t) / t)^2 via the normal equations (small, dense)."""
    n = len(rows[0])
    ata = [[0.0] * n for _ in range(n)]
    atb = [0.0] * n
    for a, t in zip(rows, targets):
        w = [v / t for v in a]
        for i in range(n):
            atb[i] += w[i]
            for j in range(n):
                ata[i][j] += w[i] * w[j]
    # Gaussian elimination with partial pivoting.
    m = [ata[i] + [atb[i]] for i in range(n)]
    for c in range(n):
        p = max(range(c, n), key=lambda r: abs(m[r][c]))
        m[c], m[p] = m[p], m[c]
        for r in range(n):
            if r != c and m[c][c]:
                f = m[r][c] / m[c][c]
                m[r] = [x - f * y for x, y in zip(m[r], m[c])]
    return [m[i][n] / m[i][i] if m[i][i] else 0.0 for i in range(n)]


def nonneg_lstsq(rows, targets):
    """lstsq with every coefficient >= 0: a negative one is pinned to 0 and the rest refitted."""
    active = list(range(len(rows[0])))
    while True:
        x = lstsq([[r[i] for i in active] for r in rows], targets)
        if all(v >= 0 for v in x):
            out = [0.0] * len(rows[0])
            for i, v in zip(active, x):
                out[i] = v
            return out
        active = [i for i, v in zip(active, x) if v >= 0] or active[:1]


def fit_memory(comps):
    mem_a, mem_t = [], []
    for row, c in comps:
        if row["mode"] == "train":
            mem_a.append([c["saved_bytes"], c["largest_tensor_bytes"], 1.0])
            mem_t.append(float(row["peak_mem_bytes"]) - c["state_bytes"])
    return nonneg_lstsq(mem_a, [max(t, 1.0) for t in mem_t])


def rel_errors(binary, rows, calibration, key):
    """|predicted - measured| / measured of step time ("time") or peak memory ("memory")."""
    out = []
    for row in rows:
        e = estimate(binary, row, calibration)
        pred, meas = ((e["step_time_ms"], float(row["step_ms_median"])) if key == "time"
                      else (e["peak_memory_bytes"], float(row["peak_mem_bytes"])))
        out.append(abs(pred - meas) / meas)
    return out


def fit(binary, rows, cv):
    cal_path = os.path.join(ROOT, "data/calibration/eager-gpu.json")
    comps = [(row, estimate(binary, row)["components"]) for row in rows]
    trial = os.path.join(ROOT, "build/bench/trial_calibration.json")
    os.makedirs(os.path.dirname(trial), exist_ok=True)
    # For each backward/forward ratio, fit the time factors by least squares, then score the
    # resulting calibration with the real (per-op max) model on every row.
    best = None
    for ratio in [1.5, 2.0, 2.5, 3.0]:
        write_calibration(cal_path, trial, len(rows), ratio, *fit_time(comps, ratio)[0], *fit_memory(comps))
        score = statistics.median(rel_errors(binary, rows, trial, "time"))
        print(f"backward ratio {ratio}: median |step-time error| {score * 100:.1f}%")
        if best is None or score < best[0]:
            best = (score, ratio)
    ratio = best[1]
    if cv:
        # Leave one model out: refit on the other nine models, predict the held-out one's rows.
        time_err, mem_err = [], []
        for model in sorted({r["model"] for r in rows}):
            train = [(r, c) for r, c in comps if r["model"] != model]
            held = [r for r in rows if r["model"] == model]
            write_calibration(cal_path, trial, len(train), ratio, *fit_time(train, ratio)[0], *fit_memory(train))
            t, m = rel_errors(binary, held, trial, "time"), rel_errors(binary, held, trial, "memory")
            print(f"  held out {model:<20} median |step-time error| {statistics.median(t) * 100:5.1f}%,"
                  f" peak memory {statistics.median(m) * 100:5.1f}%")
            time_err += t
            mem_err += m
        print(f"leave-one-model-out over {len(time_err)} rows: median |step-time error| "
              f"{statistics.median(time_err) * 100:.1f}%, peak memory {statistics.median(mem_err) * 100:.1f}%")
    write_calibration(cal_path, cal_path, len(rows), ratio, *fit_time(comps, ratio)[0], *fit_memory(comps))


def fit_time(comps, ratio):
    """Time factors for one backward ratio. An eager step is max(device, host): the device time is
    linear in 1/conv_eff, 1/depthwise_eff and the per-kernel gap; the host time in the per-pass and
    per-op overheads. The two are fitted alternately, each on the rows it bounds under the other's
    current fit (least squares on relative error, coefficients >= 0). Returns the factors and the
    median |error| of the surrogate."""
    device_a, host_a, time_t = [], [], []
    for row, c in comps:
        train = row["mode"] == "train"
        # The ratio fitted is the vector kernels'; a matmul's or convolution's backward is its two
        # gradient matmuls (the calibration's matrix_backward_ratio, 2; attention's 2.5 is
        # folded in with the matmuls here, the real model below scores it).
        mult = 1 + ratio if train else 1
        matrix_mult = 1 + 2.0 if train else 1
        kernels = c["forward_kernels"] + c["backward_kernels"] + c["parameter_tensors"]
        conv_peak = c["matrix_peak_flops"] * (2 if row["precision"] == "fp32" else 1)  # conv rate ignores precision
        # Convolutions run at most at the rate of matmuls: their column is fitted as the matmul
        # rate plus an extra >= 0 (inv_conv = inv_mm + a). Depthwise ones do their FLOPs at the
        # conv rate and move their bytes at their own share of the bandwidth, forward and (its own
        # ratio) backward: two columns, the forward bytes and the backward bytes.
        dw_seconds = c["depthwise_bytes"] / c["bandwidth"]
        device_a.append([matrix_mult * c["matmul_flops"] / c["matrix_peak_flops"],
                         matrix_mult * (c["conv_flops"] + c["depthwise_flops"]) / conv_peak,
                         dw_seconds, dw_seconds if train else 0.0,
                         (mult * c["vector_bytes"] + c["optimizer_bytes"]) / c["bandwidth"], kernels * 1e-6])
        host_a.append([(3 if train else 1) * 1e-6, (c["forward_kernels"] + c["backward_kernels"]) * 1e-6])
        time_t.append(float(row["step_ms_median"]) / 1e3)
    # The matmul efficiency is not fitted: it is the card's measured large-matmul rate over its
    # datasheet peak (h100_ceilings.json), a physical ceiling the other factors must live with;
    # nor is the bandwidth: the card's measured copy bandwidth over its datasheet.
    ceil = json.load(open(os.path.join(ROOT, "bench/data/h100_ceilings.json")))
    inv_mm = 989.0 / ceil["bf16_matmul_tflops"]
    inv_bw = 3350.0 / ceil["copy_gbps_read_plus_write"]
    fixed = [(a[0] + a[1]) * inv_mm + a[4] * inv_bw for a in device_a]
    # (inv_conv - inv_mm, 1 / depthwise bandwidth share forward, the same backward, gap_us),
    # (step_us, op_us)
    dev, host = [0.0, 0.0, 0.0, 0.0], [0.0, 0.0]

    def fitted(a):
        return a[1:4] + a[5:]

    def device_t(i):
        return fixed[i] + sum(a * v for a, v in zip(fitted(device_a[i]), dev))

    def host_t(i):
        return sum(a * v for a, v in zip(host_a[i], host))

    for _ in range(30):
        bound_by_host = [host_t(i) > device_t(i) for i in range(len(time_t))]
        dev_rows = [i for i in range(len(time_t)) if not bound_by_host[i] and time_t[i] > fixed[i]]
        host_rows = [i for i in range(len(time_t)) if bound_by_host[i] or time_t[i] <= fixed[i]]
        # Rows the device cannot explain teach the host overheads; the first pass assumes every
        # row whose device time falls short by more than half is host-bound.
        if all(v == 0 for v in host):
            host_rows = [i for i in range(len(time_t)) if device_t(i) < time_t[i] / 2]
            dev_rows = [i for i in range(len(time_t)) if i not in host_rows and time_t[i] > fixed[i]]
        if dev_rows:
            dev = nonneg_lstsq([fitted(device_a[i]) for i in dev_rows],
                               [time_t[i] - fixed[i] for i in dev_rows])
        if host_rows:
            host = nonneg_lstsq([host_a[i] for i in host_rows], [time_t[i] for i in host_rows])
            if host[0] > MAX_STEP_OVERHEAD_US:  # a loop pass is not more than this of pure overhead
                host = [MAX_STEP_OVERHEAD_US, nonneg_lstsq([[a[1]] for a in (host_a[i] for i in host_rows)],
                                                           [time_t[i] - host_a[i][0] * MAX_STEP_OVERHEAD_US
                                                            for i in host_rows])[0]]
    dw_ratio = dev[2] / dev[1] if dev[1] > 0 else ratio
    x = [inv_mm, inv_mm + dev[0], max(dev[1], inv_bw), dw_ratio, inv_bw, dev[3], host[0], host[1]]
    errs = [abs(max(device_t(i), host_t(i)) - t) / t for i, t in enumerate(time_t)]
    return x, statistics.median(errs)


def write_calibration(cal_path, out_path, n, ratio, inv_mm, inv_conv, inv_dw_bw, dw_ratio, inv_bw, overhead_us,
                      step_us, op_us, share, transient, fixed):
    cal = json.load(open(cal_path))
    # What other fits wrote into the source stays (bench/channels_last_fit.py's factor).
    source = cal.get("source", "")
    at = source.find("; usable memory")
    if at < 0:
        at = source.find("; channels-last convolutions:")
    kept = source[at:] if at >= 0 else ""
    cal.update({
        "matrix_efficiency": round(1 / inv_mm, 4), "conv_efficiency": round(1 / inv_conv, 4),
        "depthwise_efficiency": round(1 / inv_conv, 4),
        "depthwise_memory_efficiency": round(1 / inv_dw_bw, 4),
        "depthwise_backward_ratio": round(dw_ratio, 2),
        "memory_efficiency": round(1 / inv_bw, 4), "kernel_overhead_us": round(overhead_us, 3),
        "step_overhead_us": round(step_us, 1), "host_op_us": round(op_us, 2),
        "backward_ratio": round(ratio, 2),
        "saved_activation_share": round(share, 4), "transient_factor": round(transient, 4),
        "fixed_memory_bytes": round(fixed),
        "source": "fitted by bench/h100_validate.py --fit to %d H100 measurements (PyTorch 2.11 eager, "
                  "bench/data/h100_ground_truth.csv)" % n + kept,
    })
    with open(out_path, "w") as f:
        json.dump(cal, f, indent=2)
        f.write("\n")
    if out_path != cal_path:
        return
    print("fitted:", json.dumps({k: cal[k] for k in cal if k not in ("name", "source")}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--fit", action="store_true")
    ap.add_argument("--cv", action="store_true", help="with --fit: leave-one-model-out error")
    ap.add_argument("--binary", default=os.path.join(ROOT, "build/tpu-doctor"))
    args = ap.parse_args()
    rows = [r for r in csv.DictReader(open(os.path.join(ROOT, "bench/data/h100_ground_truth.csv")))
            if r["step_ms_median"] and not r["error"]]
    if args.fit:
        fit(args.binary, rows, args.cv)
        subprocess.run(["cmake", "--build", os.path.join(ROOT, "build")], check=True, capture_output=True)
    print(f"{'model':<20} {'mode':<5} {'prec':<4} {'batch':>5} {'meas ms':>9} {'pred ms':>9} {'err':>7}"
          f" {'meas GiB':>9} {'pred GiB':>9} {'err':>7}  bound")
    time_err, mem_err, time_cb, mem_cb = [], [], [], []
    for row in rows:
        e = estimate(args.binary, row)
        meas_ms, pred_ms = float(row["step_ms_median"]), e["step_time_ms"]
        meas_mem, pred_mem = float(row["peak_mem_bytes"]), e["peak_memory_bytes"]
        te, me = (pred_ms - meas_ms) / meas_ms, (pred_mem - meas_mem) / meas_mem
        cb = float(row["flops_per_step"]) >= COMPUTE_BOUND_FLOPS
        time_err.append(abs(te))
        mem_err.append(abs(me))
        if cb:
            time_cb.append(abs(te))
            mem_cb.append(abs(me))
        print(f"{row['model']:<20} {row['mode']:<5} {row['precision']:<4} {row['batch']:>5} {meas_ms:9.2f} {pred_ms:9.2f}"
              f" {te * 100:6.1f}% {meas_mem / 2**30:9.2f} {pred_mem / 2**30:9.2f} {me * 100:6.1f}%  {'compute' if cb else 'overhead'}")
    print(f"\nmedian |error|, all {len(time_err)} rows: step time {statistics.median(time_err) * 100:.1f}%,"
          f" peak memory {statistics.median(mem_err) * 100:.1f}%")
    print(f"median |error|, {len(time_cb)} compute-bound rows (>= 2 TFLOP/step): step time"
          f" {statistics.median(time_cb) * 100:.2f}%, peak memory {statistics.median(mem_cb) * 100:.2f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
