"""Figures from results JSON only (never from live objects), saved as PNG.

    from lab.experiments import load_results
    from lab.plots import all_figures
    all_figures(load_results("results"), "results/figures")

- reward_curve: mean reward per training step with its spread (± one std across the group)
- status_over_steps: the status mix of the training batches over steps
- gflops_distribution: GFLOPS of ok samples per experiment (log axis) with the OpenBLAS
  and textbook-baseline lines
- status_breakdown: status shares per experiment
- metrics_table: pass@k and speedup@k per experiment (a table, also returned as rows)
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

from lab.reward import STATUSES  # noqa: E402

_STATUS_COLORS = dict(zip(STATUSES, sns.color_palette("tab10", len(STATUSES))))


def reward_curve(results: dict, out: Path) -> Path | None:
    runs = {name: r["train_log"] for name, r in results.items() if r["train_log"]}
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    for name, log in runs.items():
        steps = [row["step"] for row in log]
        mean = [row["reward"] for row in log]
        std = [row.get("reward_std", 0.0) for row in log]
        ax.plot(steps, mean, label=name)
        ax.fill_between(steps, [m - s for m, s in zip(mean, std)], [m + s for m, s in zip(mean, std)], alpha=0.2)
    ax.set(xlabel="training step", ylabel="reward (mean ± std of the batch)", title="Reward during GRPO")
    ax.legend()
    return _save(fig, out / "reward_curve.png")


def status_over_steps(results: dict, out: Path) -> Path | None:
    runs = {name: r["train_log"] for name, r in results.items() if r["train_log"]}
    if not runs:
        return None
    fig, axes = plt.subplots(1, len(runs), figsize=(7 * len(runs), 4), squeeze=False)
    for ax, (name, log) in zip(axes[0], runs.items()):
        steps = [row["step"] for row in log]
        totals = [sum(row["status_counts"].values()) or 1 for row in log]
        shares = {s: [row["status_counts"].get(s, 0) / t for row, t in zip(log, totals)] for s in STATUSES}
        shares = {s: v for s, v in shares.items() if any(v)}
        ax.stackplot(steps, *shares.values(), labels=list(shares), colors=[_STATUS_COLORS[s] for s in shares])
        ax.set(xlabel="training step", ylabel="share of the batch", title=f"Status mix during training: {name}",
               ylim=(0, 1))
        ax.legend(loc="lower left", fontsize=8)
    return _save(fig, out / "status_over_steps.png")


def gflops_distribution(results: dict, out: Path) -> Path | None:
    rows = [(name, s["gflops"]) for name, r in results.items() for s in r["samples"] if s["status"] == "ok"]
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    names = list(results)
    sns.stripplot(x=[g for _, g in rows], y=[n for n, _ in rows], hue=[n for n, _ in rows], order=names,
                  hue_order=names, ax=ax, alpha=0.6, jitter=0.25, legend=False)
    ax.set_xscale("log")
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())  # major decades only: readable labels
    blas = next((r["metrics"]["openblas_gflops"] for r in results.values() if r["metrics"].get("openblas_gflops")),
                None)
    base = [s["baseline_gflops"] for r in results.values() for s in r["samples"] if s.get("baseline_gflops")]
    if blas:
        ax.axvline(blas, color="black", linestyle="--", label=f"OpenBLAS ({blas:.0f} GFLOPS)")
    if base:
        mid = sorted(base)[len(base) // 2]
        ax.axvline(mid, color="gray", linestyle=":", label=f"textbook baseline ({mid:.1f} GFLOPS)")
    ax.set(xlabel="GFLOPS of correct samples (log scale)", title="What each experiment's policy writes")
    ax.legend(fontsize=8)
    return _save(fig, out / "gflops_distribution.png")


def status_breakdown(results: dict, out: Path) -> Path | None:
    if not results:
        return None
    fig, ax = plt.subplots(figsize=(7, 0.6 * len(results) + 1.5))
    names = list(results)
    left = [0.0] * len(names)
    for status in STATUSES:
        shares = [r["metrics"]["status_counts"].get(status, 0) / max(1, r["metrics"]["n_samples"])
                  for r in results.values()]
        if any(shares):
            ax.barh(names, shares, left=left, color=_STATUS_COLORS[status], label=status)
            left = [a + b for a, b in zip(left, shares)]
    ax.set(xlabel="share of samples", xlim=(0, 1), title="Status of evaluation samples")
    ax.legend(fontsize=8, loc="lower right")
    return _save(fig, out / "status_breakdown.png")


def metrics_rows(results: dict) -> list[dict]:
    rows = []
    for name, r in results.items():
        m = r["metrics"]
        rows.append({"experiment": name, "pass@1": m["pass_at_1"], "mean GFLOPS (ok)": m["mean_gflops_ok"],
                     "best GFLOPS": m["best_gflops"], "expected speedup": m["expected_speedup"],
                     "expected speedup (ok)": m["expected_speedup_ok"],
                     **{f"speedup@{k}": v for k, v in m["speedup_at_k"].items()},
                     "best / OpenBLAS": m["fraction_of_openblas_best"]})
    return rows


def metrics_table(results: dict, out: Path) -> Path | None:
    rows = metrics_rows(results)
    if not rows:
        return None
    cols = list(rows[0])
    fig, ax = plt.subplots(figsize=(1.4 * len(cols), 0.45 * len(rows) + 0.8))
    ax.axis("off")
    cells = [[f"{v:.3g}" if isinstance(v, float) else ("—" if v is None else str(v)) for v in row.values()]
             for row in rows]
    table = ax.table(cellText=cells, colLabels=cols, loc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    return _save(fig, out / "metrics_table.png")


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def all_figures(results: dict, out: str | Path) -> list[Path]:
    out = Path(out)
    figs = [reward_curve(results, out), status_over_steps(results, out), gflops_distribution(results, out),
            status_breakdown(results, out), metrics_table(results, out)]
    return [f for f in figs if f is not None]
