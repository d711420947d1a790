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
- archive_heatmap: the technique archive of each trained experiment, cells coloured
  by their best GFLOPS (rows: 16 subsets of the loop-level techniques, columns: the
  8 subsets of openmp/packing/register_blocking)
- coverage_over_steps: archive coverage per training step, with the SQD stage
- technique_usage: share of correct evaluation samples using each technique
- comparison: GRPO-only vs GRPO+SQD across seeds (from comparison.json)
"""

from __future__ import annotations

import itertools
from pathlib import Path

import matplotlib
import matplotlib.ticker

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import seaborn as sns  # noqa: E402

import numpy as np  # noqa: E402

from lab.reward import STATUSES  # noqa: E402
from lab.sqd import descriptor  # noqa: E402
from lab.techniques import TECHNIQUES  # noqa: E402

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
    """One row per experiment; columns are the same for all (None where a metric is missing,
    e.g. speedup@10 of a run with fewer than 10 samples, or the archive of the baseline)."""
    ks = sorted({int(k) for r in results.values() for k in r["metrics"]["speedup_at_k"]})
    rows = []
    for name, r in results.items():
        m = r["metrics"]
        rows.append({"experiment": name, "pass@1": m["pass_at_1"], "mean GFLOPS (ok)": m["mean_gflops_ok"],
                     "best GFLOPS": m["best_gflops"], "expected speedup": m["expected_speedup"],
                     "expected speedup (ok)": m["expected_speedup_ok"],
                     **{f"speedup@{k}": m["speedup_at_k"].get(str(k)) for k in ks},
                     "best / OpenBLAS": m["fraction_of_openblas_best"],
                     "technique sets (ok)": m.get("distinct_technique_sets_ok"),
                     "archive coverage": (m.get("archive") or {}).get("coverage")})
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


# Heatmap axes: the 16 subsets of the loop-level techniques (rows) by the 8 subsets of
# the rest (columns); 16 x 8 = all 128 cells of the archive.
_ROW_TECHS, _COL_TECHS = TECHNIQUES[:4], TECHNIQUES[4:]
_SHORT = {"loop_reorder": "reorder", "cache_blocking": "block", "unrolling": "unroll", "simd": "simd",
          "openmp": "omp", "packing": "pack", "register_blocking": "regblock"}


def _subsets(techs) -> list[tuple[str, ...]]:
    return [c for k in range(len(techs) + 1) for c in itertools.combinations(techs, k)]


def _label(subset) -> str:
    return "+".join(_SHORT[t] for t in subset) or "none"


def _archived(results: dict) -> dict:
    return {name: r["metrics"]["archive"] for name, r in results.items() if r["metrics"].get("archive")}


def archive_heatmap(results: dict, out: Path) -> Path | None:
    runs = _archived(results)
    if not runs:
        return None
    rows, cols = _subsets(_ROW_TECHS), _subsets(_COL_TECHS)
    top = max((v for a in runs.values() for v in a["cells"].values()), default=1.0)
    fig, axes = plt.subplots(1, len(runs), figsize=(5.2 * len(runs), 6.5), squeeze=False)
    for ax, (name, archive) in zip(axes[0], runs.items()):
        grid = np.full((len(rows), len(cols)), np.nan)
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                grid[i, j] = archive["cells"].get(descriptor(set(r) | set(c)), np.nan)
        sns.heatmap(grid, ax=ax, cmap="viridis", vmin=0, vmax=top, annot=True, fmt=".0f", annot_kws={"size": 7},
                    xticklabels=[_label(c) for c in cols], yticklabels=[_label(r) for r in rows],
                    cbar_kws={"label": "best GFLOPS"}, linewidths=0.5, linecolor="white")
        ax.set_facecolor("#eeeeee")  # empty cells
        ax.set_title(f"{name}: {archive['cells_filled']} of 128 cells, QD score {archive['qd_score']:.0f}",
                     fontsize=10)
        ax.tick_params(axis="x", labelrotation=60, labelsize=8)
        ax.tick_params(axis="y", labelsize=8)
    return _save(fig, out / "archive_heatmap.png")


def coverage_over_steps(results: dict, out: Path) -> Path | None:
    runs = {name: r["train_log"] for name, r in results.items() if r["train_log"] and r["train_log"][0].get("archive")}
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    stage_ax = None
    for name, log in runs.items():
        problem = next(iter(log[0]["archive"]))
        steps = [row["step"] for row in log]
        line, = ax.plot(steps, [row["archive"][problem]["coverage"] for row in log], label=f"{name}: coverage")
        if log[0].get("stage"):
            stage_ax = stage_ax or ax.twinx()
            stage_ax.step(steps, [row["stage"][problem] for row in log], where="post", color=line.get_color(),
                          linestyle=":", label=f"{name}: SQD stage")
    ax.set(xlabel="training step", ylabel="archive coverage (share of 128 cells)", ylim=(0, None),
           title="Technique archive coverage during training")
    handles, labels = ax.get_legend_handles_labels()
    if stage_ax is not None:
        stage_ax.set(ylabel="SQD stage (max techniques per prompt)", ylim=(0, len(TECHNIQUES) + 0.5))
        h2, l2 = stage_ax.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    ax.legend(handles, labels, fontsize=8, loc="upper left")
    return _save(fig, out / "coverage_over_steps.png")


def technique_usage(results: dict, out: Path) -> Path | None:
    rows = []
    for name, r in results.items():
        ok = [s for s in r["samples"] if s["status"] == "ok" and s.get("techniques") is not None]
        if not ok:  # no correct samples, or results written before techniques were recorded
            continue
        for t in ("none", *TECHNIQUES):
            used = [(not s["techniques"]) if t == "none" else (t in s["techniques"]) for s in ok]
            rows.append({"experiment": name, "technique": t, "share": sum(used) / len(ok)})
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(8, 4))
    sns.barplot(x=[r["technique"] for r in rows], y=[r["share"] for r in rows], hue=[r["experiment"] for r in rows],
                ax=ax)
    ax.set(xlabel="", ylabel="share of correct samples using it", ylim=(0, 1),
           title="Techniques in the correct evaluation samples (none: no technique detected)")
    ax.tick_params(axis="x", labelrotation=20)
    return _save(fig, out / "technique_usage.png")


COMPARISON_METRICS = {  # key in comparison.json -> axis label
    "best_gflops": "best GFLOPS", "mean_gflops_ok": "mean GFLOPS (ok)", "pass_at_1": "pass@1",
    "distinct_technique_sets_ok": "distinct technique sets (ok)", "archive_coverage": "archive coverage",
}


def comparison(summary: dict, out: Path) -> Path:
    """One panel per metric: each seed's value per arm, with the median marked."""
    arms = list(summary["arms"])
    fig, axes = plt.subplots(1, len(COMPARISON_METRICS), figsize=(3.2 * len(COMPARISON_METRICS), 3.6))
    for ax, (key, label) in zip(axes, COMPARISON_METRICS.items()):
        xs = [arm for arm in arms for _ in summary["arms"][arm]["runs"]]
        ys = [run[key] if run[key] is not None else np.nan for arm in arms for run in summary["arms"][arm]["runs"]]
        sns.stripplot(x=xs, y=ys, hue=xs, order=arms, ax=ax, size=7, jitter=0.1, legend=False)
        for i, arm in enumerate(arms):
            med = summary["arms"][arm]["stats"][key]["median"]
            if med is not None:
                ax.hlines(med, i - 0.3, i + 0.3, color="black", linewidth=1.5)
        ax.set(title=label, xlabel="", ylabel="")
        ax.tick_params(axis="x", labelsize=8)
    seeds = len(summary["arms"][arms[0]]["runs"])
    fig.suptitle(f"GRPO-only vs GRPO+SQD: {seeds} seeds each, {summary['steps']} steps, "
                 f"{summary['reward_evaluations']} reward evaluations per run (bar: median)", fontsize=10)
    return _save(fig, out / "comparison.png")


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def all_figures(results: dict, out: str | Path) -> list[Path]:
    out = Path(out)
    figs = [reward_curve(results, out), status_over_steps(results, out), gflops_distribution(results, out),
            status_breakdown(results, out), metrics_table(results, out), archive_heatmap(results, out),
            coverage_over_steps(results, out), technique_usage(results, out)]
    return [f for f in figs if f is not None]
