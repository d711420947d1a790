"""Figures from results JSON only (never from live objects), saved as PNG.

    from lab.results import load_results
    from lab.analysis.plots import all_figures
    all_figures(load_results("results"), "results/figures")

Every figure states its n (samples, steps, seeds), titles both axes with units, keeps
legends outside the data, and draws confidence intervals where the results record one
(a metric `key` with `key_ci: [lo, hi]`; older results have none and draw without).

- reward_curve: mean reward per training step with its spread (± one std across the
  batch), one panel per experiment because reward definitions differ between arms (SQD
  adds -100 forbidden penalties); the reward definition comes from results[name]["config"]
  (the experiment's config.json) when the entry carries one
- status_over_steps: the status mix of the training batches over steps
- gflops_distribution: GFLOPS of ok samples per experiment (log axis) with their median
  and the OpenBLAS and textbook-baseline lines
- status_breakdown: status shares (and counts) per experiment
- metrics_table: pass@k and speedup@k per experiment (a table, also returned as rows)
- archive_heatmap: the technique archive of each trained experiment, cells coloured
  by their best GFLOPS (rows: subsets of the loop-level techniques, columns: subsets of
  the kernel-level ones, as the technique registry groups them)
- coverage_over_steps: archive coverage per training step, with the SQD stage
- technique_usage: share of correct evaluation samples using each technique
- comparison: every pair of arms (from comparison.json): the difference of each headline
  metric with its 95% interval, filled where it holds after Holm's correction
- training_dynamics: what collapse looks like in training, per step and seed: the policy's
  entropy, the share of groups whose rewards are all equal (no GRPO signal), the best ok
  rate seen so far (against OpenBLAS), and the mean completion length
- family_dynamics: per training step and kernel family (lab.analysis.dynamics): its share of
  the completions, its success rate and its mean reward, one row per trained arm
- learning_curve: each trained arm's held-out metrics at every evaluated checkpoint, with
  their intervals (from learning_curve.json)
- suite_heatmap: expected speedup per problem (rows) and mode x arm (columns), from the
  suite summary (lab.analysis.suite), each trained cell marked where it differs from the
  base (Holm-corrected)
- suite_modes: base -> trained per execution model: the suite means of pass@1 and of
  expected speedup, one bar per arm
- sqd_study: the SQD variants side by side (from results/sqd_study.json), one row per part
  of the study (DGEMM, the suite): expected speedup and compliance with their intervals,
  collapse (dominant technique share), archive coverage and the best training speedup
- sqd_training: the SQD variants over their training steps (each arm's training_curve): the
  share of ok completions, their median speedup and the best speedup so far
"""

from __future__ import annotations

import itertools
import textwrap
from pathlib import Path

import matplotlib
import matplotlib.colors
import matplotlib.ticker

matplotlib.use("Agg")  # files only; no display needed
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import seaborn as sns  # noqa: E402

from lab.analysis.dynamics import family_dynamics as dynamics_of  # noqa: E402
from lab.config import MODES, STATUSES  # noqa: E402
from lab.files import read_json  # noqa: E402
from lab.results import CALIBRATION, MACHINES, recorded_class  # noqa: E402
from lab.rl.sqd import descriptor  # noqa: E402
from lab.techniques import REGISTRY, TECHNIQUES  # noqa: E402

_STATUS_COLORS = dict(zip(STATUSES, sns.color_palette("tab10", len(STATUSES))))


# --- shared helpers ---------------------------------------------------------------------


def _legend_outside(ax, **kw):
    """Legend right of the axes, so it never hides data (_save keeps it in the PNG)."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1), borderaxespad=0, fontsize=8, frameon=False, **kw)


def _ci(metrics: dict, key: str, k=None) -> tuple[float, float] | None:
    """The recorded confidence interval of metrics[key] (metrics[key + "_ci"], per k for @k
    metrics), or None: results written before CIs were recorded have none."""
    ci = metrics.get(f"{key}_ci")
    if isinstance(ci, dict):
        ci = ci.get(str(k))
    if isinstance(ci, (list, tuple)) and len(ci) == 2 and all(isinstance(v, (int, float)) for v in ci):
        return float(ci[0]), float(ci[1])
    return None


def _span(values) -> str:
    """'16' when all equal, '14–16' when not (e.g. a batch cut short)."""
    lo, hi = min(values), max(values)
    return f"{lo}" if lo == hi else f"{lo}–{hi}"


def _seeds_of(log: list[dict]) -> list:
    return list(dict.fromkeys(row.get("seed") for row in log))


def _train_n(log: list[dict]) -> str:
    """'40 steps × 16 completions × 3 seeds' of a training log (completions counted from
    status_counts; one row per step and seed)."""
    seeds = _seeds_of(log)
    first = [row for row in log if row.get("seed") == seeds[0]] if log else []
    steps = f"{len(first)} step{'s' if len(first) != 1 else ''}"
    sizes = [sum(row["status_counts"].values()) for row in first if row.get("status_counts")]
    runs = f" × {len(seeds)} seeds" if len(seeds) > 1 else ""
    return (f"{steps} × {_span(sizes)} completions" if sizes else steps) + runs


def _per_step(log: list[dict]) -> list[dict]:
    """The training log of several seeds as one row per step: the mean over seeds of the reward,
    its batch spread and the archive coverage, and the status counts summed."""
    steps: dict[int, list[dict]] = {}
    for row in log:
        steps.setdefault(row["step"], []).append(row)
    out = []
    for step, rows in sorted(steps.items()):
        counts: dict[str, int] = {}
        for row in rows:
            for status, c in (row.get("status_counts") or {}).items():
                counts[status] = counts.get(status, 0) + c
        merged = {
            "step": step,
            "seeds": len(rows),
            "reward": float(np.mean([r.get("reward", np.nan) for r in rows])),
            "reward_std": float(np.mean([r.get("reward_std", 0.0) for r in rows])),
            "status_counts": counts,
        }
        if rows[0].get("archive"):
            problem = next(iter(rows[0]["archive"]))
            merged["coverage"] = float(np.mean([r["archive"][problem]["coverage"] for r in rows]))
            merged["stage"] = rows[0].get("stage", {}).get(problem) if rows[0].get("stage") else None
        out.append(merged)
    return out


def _runs_n(logs: dict[str, list[dict]]) -> str:
    ns = {name: _train_n(log) for name, log in logs.items()}
    if len(set(ns.values())) == 1:
        return f"n = {next(iter(ns.values()))} per run"
    return "n: " + ", ".join(f"{name} {n}" for name, n in ns.items())


def _reward_spec(result: dict) -> tuple[dict | None, object]:
    """(reward config, sqd config) of an experiment, from its config.json when the results
    entry carries one; (None, None) if unknown."""
    cfg = result.get("config")
    if not isinstance(cfg, dict):
        return None, None
    reward = cfg.get("reward")
    return (reward if isinstance(reward, dict) else None), cfg.get("sqd")


_POSITIVE = {"gflops": "GFLOPS", "speedup": "speedup (×)", "log_speedup": "log(1 + speedup)"}


def _reward_text(result: dict) -> tuple[str, list[str]]:
    """y-label and caption lines naming the reward definition, as far as it is known."""
    reward, sqd = _reward_spec(result)
    lines = []
    if reward:
        positive = _POSITIVE.get(reward.get("positive"), str(reward.get("positive", "?")))
        ylabel = f"reward: {positive} if correct, else penalty"
        penalties = reward.get("penalties") or {}
        by_value: dict[float, list[str]] = {}
        for status, value in penalties.items():
            by_value.setdefault(value, []).append(status)
        if by_value:
            lines.append("penalties: " + "; ".join(f"{v:g} {', '.join(s)}" for v, s in sorted(by_value.items())))
    else:
        ylabel = "reward"
    if sqd:
        forbidden = ((reward or {}).get("penalties") or {}).get("forbidden")
        lines.append(
            "SQD: a technique outside the prompt's permitted set is forbidden"
            + (f" ({forbidden:g})" if forbidden is not None else "")
        )
    elif result.get("config") is not None and reward:
        lines.append("no SQD: every technique permitted")
    return ylabel + "\n(mean ± std of each step's batch, mean over seeds)", lines


# --- figures ----------------------------------------------------------------------------


def reward_curve(results: dict, out: Path) -> Path | None:
    runs = {name: r["train_log"] for name, r in results.items() if r["train_log"]}
    if not runs:
        return None
    # One panel (and y-axis) per experiment: arms may score the same code differently
    # (SQD's forbidden penalties), so one shared reward axis would compare unlike numbers.
    fig, axes = plt.subplots(1, len(runs), figsize=(7 * len(runs), 4.6), squeeze=False)
    for ax, (name, log) in zip(axes[0], runs.items()):
        rows = _per_step(log)
        steps = [row["step"] for row in rows]
        mean = np.array([row["reward"] for row in rows])
        std = np.array([row["reward_std"] for row in rows])
        ylabel, lines = _reward_text(results[name])
        ax.plot(steps, mean)
        ax.fill_between(steps, mean - std, mean + std, alpha=0.2)
        ax.axhline(0, color="gray", linewidth=0.6)
        ax.set(xlabel="training step", ylabel=ylabel)
        ax.set_title("\n".join([f"{name}: n = {_train_n(log)}", *lines]), fontsize=9)
    fig.suptitle(
        "Reward during training, one panel per experiment (reward definitions may differ: "
        "do not compare across panels)",
        fontsize=10,
    )
    return _save(fig, out / "reward_curve.png")


def status_over_steps(results: dict, out: Path) -> Path | None:
    runs = {name: r["train_log"] for name, r in results.items() if r["train_log"]}
    if not runs:
        return None
    fig, axes = plt.subplots(1, len(runs), figsize=(6.5 * len(runs) + 1.5, 4), squeeze=False)
    legend = {}  # one legend for all panels: the union of statuses seen
    for ax, (name, log) in zip(axes[0], runs.items()):
        rows = _per_step(log)
        steps = [row["step"] for row in rows]
        totals = [sum(row["status_counts"].values()) or 1 for row in rows]
        shares = {s: [row["status_counts"].get(s, 0) / t for row, t in zip(rows, totals)] for s in STATUSES}
        shares = {s: v for s, v in shares.items() if any(v)}
        for poly, s in zip(ax.stackplot(steps, *shares.values(), colors=[_STATUS_COLORS[s] for s in shares]), shares):
            legend[s] = poly
        ax.set(
            xlabel="training step",
            ylabel="share of the step's batches (all seeds)",
            ylim=(0, 1),
            title=f"Status mix during training: {name}\nn = {_train_n(log)}",
        )
    order = [s for s in STATUSES if s in legend]
    _legend_outside(axes[0][-1], handles=[legend[s] for s in order], labels=order, title="status")
    return _save(fig, out / "status_over_steps.png")


def gflops_distribution(results: dict, out: Path) -> Path | None:
    ok = {
        name: [s["gflops"] for s in r["samples"] if s["status"] == "ok" and s.get("gflops")]
        for name, r in results.items()
    }
    rows = [(name, g) for name, gs in ok.items() for g in gs]
    if not rows:
        return None
    names = list(results)
    fig, ax = plt.subplots(figsize=(8, 0.9 * len(names) + 1.8))
    # seaborn jitters with NumPy's global generator: seed it here (and restore it after), so the
    # figure redraws byte-identical from the same JSON.
    rng_state = np.random.get_state()
    np.random.seed(0)
    sns.stripplot(
        x=[g for _, g in rows],
        y=[n for n, _ in rows],
        hue=[n for n, _ in rows],
        order=names,
        hue_order=names,
        ax=ax,
        alpha=0.6,
        jitter=0.25,
        legend=False,
    )
    np.random.set_state(rng_state)
    for i, name in enumerate(names):  # median of the ok samples, with its CI where recorded
        m = results[name]["metrics"]
        if not ok[name]:
            continue
        med = m.get("median_gflops_ok") or float(np.median(ok[name]))
        ci = _ci(m, "median_gflops_ok")
        if ci:
            ax.errorbar(
                med,
                i,
                xerr=[[med - ci[0]], [ci[1] - med]],
                fmt="none",
                ecolor="black",
                capsize=4,
                label="CI of the median" if i == 0 else None,
                zorder=4,
            )
        ax.plot(
            med,
            i,
            marker="|",
            markersize=22,
            markeredgewidth=2,
            color="black",
            linestyle="none",
            label="median" if i == 0 else None,
            zorder=4,
        )
    ax.set_xscale("log")
    # 1-2-5 ticks in plain numbers: the data span about one decade, where decade ticks show one label.
    ax.xaxis.set_major_locator(matplotlib.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0), numticks=30))
    ax.xaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}"))
    ax.xaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    blas = next(
        (r["metrics"]["openblas_gflops"] for r in results.values() if r["metrics"].get("openblas_gflops")), None
    )
    base = [s["baseline_gflops"] for r in results.values() for s in r["samples"] if s.get("baseline_gflops")]
    if blas:
        ax.axvline(blas, color="black", linestyle="--", label=f"OpenBLAS ({blas:.0f} GFLOPS)")
    if base:
        mid = sorted(base)[len(base) // 2]
        ax.axvline(mid, color="gray", linestyle=":", label=f"textbook baseline ({mid:.1f} GFLOPS)")
    ax.set_yticks(
        range(len(names)), labels=[f"{name}\n{len(ok[name])} ok of {len(results[name]['samples'])}" for name in names]
    )
    ax.set_ylim(len(names) - 0.5, -0.5)  # every experiment keeps its row, even with no ok sample
    ax.set(
        xlabel="GFLOPS of correct samples (log scale)",
        ylabel="experiment (n ok of n samples)",
        title="What each experiment's policy writes: one point per correct evaluation sample",
    )
    _legend_outside(ax, markerscale=0.5)
    return _save(fig, out / "gflops_distribution.png")


def status_breakdown(results: dict, out: Path) -> Path | None:
    if not results:
        return None
    fig, ax = plt.subplots(figsize=(8, 0.7 * len(results) + 1.6))
    names = list(results)
    ns = [r["metrics"]["n_samples"] for r in results.values()]
    labels = [f"{name}\n(n = {n})" for name, n in zip(names, ns)]
    left = [0.0] * len(names)
    for status in STATUSES:
        counts = [r["metrics"]["status_counts"].get(status, 0) for r in results.values()]
        shares = [c / max(1, n) for c, n in zip(counts, ns)]
        if any(shares):
            bars = ax.barh(labels, shares, left=left, color=_STATUS_COLORS[status], label=status)
            ax.bar_label(
                bars,
                labels=[str(c) if sh >= 0.025 else "" for c, sh in zip(counts, shares)],
                label_type="center",
                fontsize=7,
                color="white",
            )
            left = [a + b for a, b in zip(left, shares)]
    cis = [(i, r["metrics"]["pass_at_1"], _ci(r["metrics"], "pass_at_1")) for i, r in enumerate(results.values())]
    cis = [(i, p, ci) for i, p, ci in cis if ci]
    if cis:  # pass@1 is the ok share: its CI spans the ok bar's end, drawn at the bar's top edge
        ax.errorbar(
            [p for _, p, _ in cis],
            [i + 0.3 for i, _, _ in cis],
            fmt="none",
            ecolor="black",
            capsize=4,
            xerr=[[p - ci[0] for _, p, ci in cis], [ci[1] - p for _, p, ci in cis]],
            label="pass@1 CI",
        )
    ax.set(
        xlabel="share of evaluation samples (counts in the bars)",
        ylabel="experiment (n samples)",
        xlim=(0, 1),
        title="Status of evaluation samples",
    )
    _legend_outside(ax, title="status")
    return _save(fig, out / "status_breakdown.png")


def metrics_rows(results: dict) -> list[dict]:
    """One row per experiment; columns are the same for all (None where a metric is missing,
    e.g. speedup@10 of a run with fewer than 10 samples, or the archive of the baseline).
    A metric with a recorded CI in any experiment gets a "<column> CI" column of (lo, hi)."""
    ks = sorted({int(k) for r in results.values() for k in r["metrics"]["speedup_n_at_k"]})
    fields = [
        ("pass@1", "pass_at_1", None),
        ("mean GFLOPS (ok)", "mean_gflops_ok", None),
        ("median GFLOPS (ok)", "median_gflops_ok", None),
        ("median / OpenBLAS", "median_fraction_of_openblas", None),
        ("best GFLOPS", "best_gflops", None),
        ("expected speedup", "expected_speedup", None),
        ("expected speedup (ok)", "expected_speedup_ok", None),
        *[(f"speedup@{k}", "speedup_n_at_k", k) for k in ks],
        ("best / OpenBLAS", "fraction_of_openblas_best", None),
    ]
    with_ci = {label for label, key, k in fields if any(_ci(r["metrics"], key, k) for r in results.values())}
    rows = []
    for name, r in results.items():
        m = r["metrics"]
        row = {"experiment": name, "n samples": m.get("n_samples"), "seeds": len(m.get("seeds") or [None])}
        for label, key, k in fields:
            row[label] = m.get(key) if k is None else (m.get(key) or {}).get(str(k))
            if label in with_ci:
                row[f"{label} CI"] = _ci(m, key, k)
        row["technique sets (ok)"] = m.get("distinct_technique_sets_ok")
        row["archive coverage"] = (m.get("archive") or {}).get("coverage")
        rows.append(row)
    return rows


def _cell(v) -> str:
    return f"{v:.3g}" if isinstance(v, float) else ("—" if v is None else str(v))


def metrics_table(results: dict, out: Path) -> Path | None:
    rows = metrics_rows(results)
    if not rows:
        return None
    cols = [c for c in rows[0] if not c.endswith(" CI")]  # a CI goes into its value's cell
    cells = [
        [
            _cell(row[c]) + (f" [{row[c + ' CI'][0]:.3g}, {row[c + ' CI'][1]:.3g}]" if row.get(c + " CI") else "")
            for c in cols
        ]
        for row in rows
    ]
    has_ci = any(c.endswith(" CI") for c in rows[0])
    fig, ax = plt.subplots(figsize=(1.15 * len(cols) + (1.5 if has_ci else 0), 0.4 * len(rows) + 1.6))
    ax.axis("off")
    table = ax.table(cellText=cells, colLabels=[textwrap.fill(c, 12) for c in cols], loc="center", cellLoc="center")
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.scale(1, 1.5)
    for j in range(len(cols)):  # wrapped headers need two lines
        table[0, j].set_height(table[0, j].get_height() * 1.8)
    ns = sorted({row["n samples"] for row in rows if row["n samples"] is not None})
    ax.set_title(f"Evaluation metrics per experiment (n = {', '.join(map(str, ns)) or '?'} samples each)", fontsize=10)
    fig.text(
        0.01,
        0.02,
        ("[lo, hi]: confidence interval; " if has_ci else "no confidence intervals recorded; ")
        + "—: not available (archive: training runs only); archive coverage: share of 128 cells",
        fontsize=7,
        color="dimgray",
    )
    return _save(fig, out / "metrics_table.png")


# Heatmap axes: the subsets of the loop-level techniques (rows) by the subsets of the
# kernel-level ones (columns): 16 x 8 = all 128 cells of the archive.
_ROW_TECHS = tuple(t for t in TECHNIQUES if REGISTRY[t].scope == "loop")
_COL_TECHS = tuple(t for t in TECHNIQUES if REGISTRY[t].scope == "kernel")


def _abbreviations(techs) -> str:
    return ", ".join(f"{REGISTRY[t].short}: {t}" for t in techs if REGISTRY[t].short != t)


def _subsets(techs) -> list[tuple[str, ...]]:
    return [c for k in range(len(techs) + 1) for c in itertools.combinations(techs, k)]


def _label(subset) -> str:
    return "+".join(REGISTRY[t].short for t in subset) or "none"


def _archived(results: dict) -> dict:
    return {name: r["metrics"]["archive"] for name, r in results.items() if r["metrics"].get("archive")}


def archive_heatmap(results: dict, out: Path) -> Path | None:
    runs = _archived(results)
    if not runs:
        return None
    rows, cols = _subsets(_ROW_TECHS), _subsets(_COL_TECHS)
    top = max((v for a in runs.values() for v in a["cells"].values()), default=1.0)
    fig, axes = plt.subplots(1, len(runs), figsize=(5.6 * len(runs), 7), squeeze=False)
    for ax, (name, archive) in zip(axes[0], runs.items()):
        grid = np.full((len(rows), len(cols)), np.nan)
        for i, r in enumerate(rows):
            for j, c in enumerate(cols):
                grid[i, j] = archive["cells"].get(descriptor(set(r) | set(c)), np.nan)
        sns.heatmap(
            grid,
            ax=ax,
            cmap="viridis",
            vmin=0,
            vmax=top,
            annot=True,
            fmt=".0f",
            annot_kws={"size": 7},
            xticklabels=[_label(c) for c in cols],
            yticklabels=[_label(r) for r in rows],
            cbar_kws={"label": "best GFLOPS in the cell"},
            linewidths=0.5,
            linecolor="white",
        )
        ax.set_facecolor("#eeeeee")  # empty cells
        log = results[name].get("train_log") or []
        n = f"n = {_train_n(log)}" if log else "n not logged"
        ax.set_title(
            f"{name}: {archive['cells_filled']} of 128 cells, QD score {archive['qd_score']:.0f} GFLOPS\n"
            f"archive of training ({n})",
            fontsize=9,
        )
        ax.set(
            xlabel=f"kernel-level techniques in the code\n({_abbreviations(_COL_TECHS)})",
            ylabel=f"loop-level techniques in the code\n({_abbreviations(_ROW_TECHS)})",
        )
        ax.tick_params(axis="x", labelrotation=60, labelsize=8)
        ax.tick_params(axis="y", labelsize=8)
    fig.suptitle(
        "Technique archive: best GFLOPS of correct training code per technique set "
        "(grey: never reached; QD score: sum of cell bests)",
        fontsize=10,
    )
    return _save(fig, out / "archive_heatmap.png")


def coverage_over_steps(results: dict, out: Path) -> Path | None:
    runs = {name: r["train_log"] for name, r in results.items() if r["train_log"] and r["train_log"][0].get("archive")}
    if not runs:
        return None
    fig, ax = plt.subplots(figsize=(7, 4.8))
    stage_ax = None
    for name, log in runs.items():
        rows = _per_step(log)
        steps = [row["step"] for row in rows]
        (line,) = ax.plot(steps, [row["coverage"] for row in rows], label=f"{name}: coverage (mean over seeds)")
        if rows[0].get("stage") is not None:
            stage_ax = stage_ax or ax.twinx()
            stage_ax.step(
                steps,
                [row["stage"] for row in rows],
                where="post",
                color=line.get_color(),
                linestyle=":",
                label=f"{name}: SQD stage (first seed)",
            )
    ax.set(
        xlabel="training step",
        ylabel="archive coverage (share of 128 cells)",
        ylim=(0, None),
        title=f"Technique archive coverage during training\n{_runs_n(runs)}",
    )
    handles, labels = ax.get_legend_handles_labels()
    if stage_ax is not None:
        stage_ax.set(ylabel="SQD stage (max techniques per prompt)", ylim=(0, len(TECHNIQUES) + 0.5))
        h2, l2 = stage_ax.get_legend_handles_labels()
        handles, labels = handles + h2, labels + l2
    # below the axes: the right side holds the stage axis
    ax.legend(handles, labels, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=2, frameon=False)
    return _save(fig, out / "coverage_over_steps.png")


def technique_usage(results: dict, out: Path) -> Path | None:
    rows = []
    for name, r in results.items():
        ok = [s for s in r["samples"] if s["status"] == "ok" and s.get("techniques") is not None]
        if not ok:  # no correct samples, or results written before techniques were recorded
            continue
        for t in ("none", *TECHNIQUES):
            used = [(not s["techniques"]) if t == "none" else (t in s["techniques"]) for s in ok]
            rows.append(
                {
                    "experiment": f"{name} (n = {len(ok)} ok of {len(r['samples'])})",
                    "technique": t,
                    "share": sum(used) / len(ok),
                }
            )
    if not rows:
        return None
    fig, ax = plt.subplots(figsize=(9.5, 4))
    sns.barplot(
        x=[r["technique"] for r in rows], y=[r["share"] for r in rows], hue=[r["experiment"] for r in rows], ax=ax
    )
    ax.set(
        xlabel="technique detected in the source (none: no technique detected)",
        ylabel="share of correct samples using it",
        ylim=(0, 1),
        title="Techniques in the correct evaluation samples (a sample may use several)",
    )
    ax.tick_params(axis="x", labelrotation=20)
    _legend_outside(ax, title="experiment")
    return _save(fig, out / "technique_usage.png")


COMPARISON_METRICS = {  # metric in comparison.json -> label
    "pass_at_1": "pass@1",
    "mean_gflops_ok": "mean GFLOPS (ok)",
    "median_gflops_ok": "median GFLOPS (ok)",
    "expected_speedup": "expected speedup",
}


def comparison(summary: dict, out: Path) -> Path:
    """One panel per metric: every pair's difference (a − b) with its 95% interval, a marker
    filled where the Holm-corrected verdict finds a difference; a zero line."""
    pairs = summary["pairs"]
    fig, axes = plt.subplots(1, len(COMPARISON_METRICS), figsize=(3.6 * len(COMPARISON_METRICS), 0.6 * len(pairs) + 2))
    labels = [f"{p['a']} − {p['b']}" for p in pairs]
    for ax, (key, label) in zip(np.atleast_1d(axes), COMPARISON_METRICS.items()):
        for y, pair in enumerate(pairs):
            d = pair["metrics"][key]
            if d["difference"] is None:
                continue
            found = d.get("verdict_holm") in ("better", "worse")
            if d["ci"]:
                ax.hlines(y, d["ci"][0], d["ci"][1], color="black", linewidth=1.5)
            ax.scatter(d["difference"], y, color="black" if found else "white", edgecolor="black", zorder=3, s=36)
        ax.axvline(0, color="gray", linewidth=0.8)
        ax.set_yticks(range(len(pairs)), labels=labels if ax is np.atleast_1d(axes)[0] else [], fontsize=8)
        ax.set_ylim(-0.6, len(pairs) - 0.4)
        ax.invert_yaxis()
        ax.set(xlabel=f"difference in {label}", title=label)
    arms = summary["arms"]
    ns = ", ".join(f"{a} {m['metrics'].get('n_samples')}" for a, m in arms.items())
    fig.suptitle(
        f"Arms compared on held-out prompts: difference and 95% bootstrap interval per pair "
        f"(filled: differs after Holm's correction over {summary.get('tests')} tests)\n"
        f"seeds {summary.get('seeds')}; samples per arm: {ns}",
        fontsize=10,
    )
    return _save(fig, out / "comparison.png")


#: The learning-curve panels: metric -> axis label.
CURVE_PANELS = {
    "pass_at_1": "pass@1",
    "median_gflops_ok": "median GFLOPS of ok kernels",
    "expected_speedup": "expected speedup (failures count 0)",
}


def learning_curve(curves: dict[str, dict], out: Path, name: str = "learning_curve.png") -> Path | None:
    """One panel per metric: each trained arm's value at every evaluated checkpoint (step 0: the
    starting policy; for a warm-started arm the fine-tuned one, the base policy marked x) with
    its 95% interval as a band, for the first entry of each curve; OpenBLAS's rate as a line
    on the GFLOPS panel."""
    curves = {arm: c for arm, c in curves.items() if c and c.get("points")}
    if not curves:
        return None
    fig, axes = plt.subplots(1, len(CURVE_PANELS), figsize=(4.6 * len(CURVE_PANELS) + 1.5, 4))
    blas = None
    for arm, curve in curves.items():
        # The line follows the policy GRPO trains (from the warm start's point where there is
        # one); the base policy's point is drawn apart at step 0 when it is not on the line.
        points = curve["points"]
        warm = any(p.get("phase") == "warm_start" for p in points)
        line_points = [p for p in points if not (warm and p.get("phase") == "base")]
        rows = [(p["step"], p["entries"][0]) for p in line_points]
        steps = [s for s, _ in rows]
        for ax, key in zip(axes, CURVE_PANELS):
            values = [r.get(key) for _, r in rows]
            cis = [_ci(r, key) for _, r in rows]
            (line,) = ax.plot(
                steps,
                [np.nan if v is None else v for v in values],
                marker="o",
                label=arm + (" (from warm start)" if warm else ""),
            )
            ax.fill_between(
                steps,
                [c[0] if c else np.nan for c in cis],
                [c[1] if c else np.nan for c in cis],
                color=line.get_color(),
                alpha=0.15,
            )
            if warm:
                base = next(p["entries"][0] for p in points if p.get("phase") == "base")
                if base.get(key) is not None:
                    ax.scatter([0], [base[key]], marker="x", color=line.get_color(), zorder=3)
        blas = blas or rows[0][1].get("openblas_gflops")
    for ax, (key, label) in zip(axes, CURVE_PANELS.items()):
        if key == "median_gflops_ok" and blas:
            ax.axhline(blas, color="black", linestyle="--", linewidth=0.8, label="OpenBLAS")
        ax.set(xlabel="training step (0: starting policy)", ylabel=label, ylim=(0, 1.0 if key == "pass_at_1" else None))
    _legend_outside(axes[-1])
    first = next(iter(curves.values()))
    entry = first["points"][0]["entries"][0]
    n = [p["entries"][0]["n_samples"] for p in first["points"]]
    fig.suptitle(
        f"Learning curve on held-out prompts ({entry['problem']}, {entry['mode']}, {entry['threads']} thread(s)): "
        f"n = {_span(n)} samples per point over {len(first['points'][-1]['seeds'])} seeds; band: 95% interval",
        fontsize=10,
    )
    return _save(fig, out / name)


#: training_dynamics' panels: train_log key -> y label; best_so_far is the running maximum of
#: best_gflops_ok.
DYNAMICS_PANELS = {
    "entropy": "policy entropy (nats per token)",
    "frac_reward_zero_std": "share of groups with equal rewards\n(no GRPO signal)",
    "best_so_far": "best ok rate seen so far ({unit})",
    "completions/mean_length": "mean completion length (tokens)",
}


def training_dynamics(results: dict, out: Path) -> Path | None:
    """Per training step, each trained arm's seeds as thin lines and their mean as a thick one:
    entropy, zero-spread groups, best ok rate seen so far (OpenBLAS dashed), completion length.
    A policy that collapses onto one kernel shows entropy and length settling, every group
    equal and the best rate flat."""
    runs = {name: r["train_log"] for name, r in results.items() if r.get("train_log")}
    if not runs:
        return None
    fig, axes = plt.subplots(1, len(DYNAMICS_PANELS), figsize=(4.4 * len(DYNAMICS_PANELS) + 1.5, 3.9))
    colors = dict(zip(runs, sns.color_palette("deep", len(runs))))
    blas, unit = None, None
    for name, log in runs.items():
        blas = blas or results[name]["metrics"].get("openblas_gflops")
        unit = unit or results[name]["metrics"].get("unit")
        by_seed: dict = {}
        for row in log:
            by_seed.setdefault(row.get("seed", 0), []).append(row)
        for ax, key in zip(axes, DYNAMICS_PANELS):
            lines = []
            for rows in by_seed.values():
                rows = sorted(rows, key=lambda r: r["step"])
                if key == "best_so_far":
                    values = np.fmax.accumulate([r.get("best_gflops_ok") or np.nan for r in rows])
                else:
                    values = np.array([r.get(key, np.nan) for r in rows], dtype=float)
                steps = [r["step"] for r in rows]
                ax.plot(steps, values, color=colors[name], linewidth=0.6, alpha=0.45)
                lines.append(dict(zip(steps, values)))
            steps = sorted(set().union(*lines))
            mean = [np.nanmean([line.get(s, np.nan) for line in lines]) for s in steps]
            ax.plot(steps, mean, color=colors[name], linewidth=2, label=f"{name} ({len(lines)} seeds)")
    for ax, (key, label) in zip(axes, DYNAMICS_PANELS.items()):
        if key == "best_so_far" and blas:
            ax.axhline(blas, color="black", linestyle="--", linewidth=0.8, label="OpenBLAS")
        ax.set(xlabel="training step", ylabel=label.format(unit=unit or "problem's unit"))
        ax.set_ylim(0, 1.02 if key == "frac_reward_zero_std" else None)
    _legend_outside(axes[-1])
    best = axes[list(DYNAMICS_PANELS).index("best_so_far")]
    handles, labels = best.get_legend_handles_labels()
    if "OpenBLAS" in labels:
        best.legend([handles[labels.index("OpenBLAS")]], ["OpenBLAS"], fontsize=7, loc="lower right")
    fig.suptitle(
        "Training dynamics: thin lines one seed each, thick their mean (from each arm's train_log.jsonl)", fontsize=10
    )
    return _save(fig, out / "training_dynamics.png")


#: family_dynamics' panels: a key of each family's per-step figures and its axis label.
FAMILY_PANELS = {
    "share": "share of the step's completions",
    "success": "share ok of the family's attempts",
    "mean_reward": "mean reward of the family\n(the reward in force)",
}
FAMILY_SMOOTHING = 5  # steps in the centred rolling mean drawn (a step holds 16 completions a seed)


def family_dynamics(results: dict, out: Path) -> Path | None:
    """One row per trained arm whose training samples record their techniques, one column per
    FAMILY_PANELS key: each kernel family (lab.techniques.FAMILIES) per training step, pooled over
    seeds (lab.analysis.dynamics), as a rolling mean of FAMILY_SMOOTHING steps. Shows which kind
    of kernel the policy writes, how often each kind is right, and what each earns: a family that
    earns less than the one GRPO settles on is climbed away from, however fast its best kernels."""
    arms = {}
    for name, r in results.items():
        d = dynamics_of(r.get("training_samples") or [], r.get("train_log") or [])
        if d["steps"]:
            arms[name] = d
    if not arms:
        return None
    fig, axes = plt.subplots(
        len(arms), len(FAMILY_PANELS), figsize=(4.4 * len(FAMILY_PANELS) + 1.5, 3.4 * len(arms)), squeeze=False
    )
    families = next(iter(arms.values()))["families"]
    colors = dict(zip(families, sns.color_palette("colorblind", len(families))))
    for row, (name, d) in zip(axes, arms.items()):
        steps = [s["step"] for s in d["steps"]]
        for ax, (key, label) in zip(row, FAMILY_PANELS.items()):
            for fam in families:
                if not any(s["families"][fam]["attempts"] for s in d["steps"]):
                    continue  # a family the arm never wrote
                values = pd.Series([s["families"][fam][key] for s in d["steps"]], dtype=float)
                # The rolling mean skips steps without a value (the family not written that step).
                smooth = values.rolling(FAMILY_SMOOTHING, center=True, min_periods=1).mean()
                ax.plot(steps, smooth, color=colors[fam], label=fam)
            ax.set(xlabel="training step", ylabel=label)
            if key != "mean_reward":
                ax.set_ylim(0, 1.02)
            ax.set_title(f"{name}: {len(d['seeds'])} seeds, {sum(s['n'] for s in d['steps'])} completions", fontsize=9)
        _legend_outside(row[-1], title="kernel family")
    fig.suptitle(
        f"Kernel families in training (from training_samples.jsonl; rolling mean over {FAMILY_SMOOTHING} steps, "
        "seeds pooled)",
        fontsize=10,
    )
    return _save(fig, out / "family_dynamics.png")


# --- the suite ---------------------------------------------------------------------------


def suite_heatmap(summary: dict, out: Path) -> Path | None:
    rows = summary.get("rows") or []
    if not rows:
        return None
    problems = list(dict.fromkeys(r["problem"] for r in rows))
    columns = list(dict.fromkeys((r["mode"], r["arm"]) for r in rows))
    columns.sort(key=lambda c: (MODES.index(c[0]) if c[0] in MODES else len(MODES), summary["arms"].index(c[1])))
    grid = np.full((len(problems), len(columns)), np.nan)
    for r in rows:
        if r["expected_speedup"] is not None:
            grid[problems.index(r["problem"]), columns.index((r["mode"], r["arm"]))] = r["expected_speedup"]
    marks = {
        (e["problem"], e["mode"], arm): {"better": " +", "worse": " -"}.get(e["verdict_holm"], "")
        for arm, entries in summary.get("versus_base", {}).items()
        for e in entries
    }
    annot = [
        [
            f"{grid[i, j]:.2f}{marks.get((p, *columns[j]), '')}" if not np.isnan(grid[i, j]) else ""
            for j in range(len(columns))
        ]
        for i, p in enumerate(problems)
    ]
    finite = grid[np.isfinite(grid) & (grid > 0)]
    norm = matplotlib.colors.LogNorm(vmin=max(finite.min(), 0.01), vmax=finite.max()) if finite.size else None
    fig, ax = plt.subplots(figsize=(1.15 * len(columns) + 3, 0.5 * len(problems) + 2.4))
    sns.heatmap(
        np.where(grid > 0, grid, np.nan),
        ax=ax,
        cmap="viridis",
        norm=norm,
        annot=np.array(annot),
        fmt="",
        annot_kws={"size": 8},
        xticklabels=[f"{m}\n{a}" for m, a in columns],
        yticklabels=problems,
        cbar_kws={"label": "expected speedup over the serial textbook baseline (log scale)"},
        linewidths=0.5,
        linecolor="white",
    )
    ax.set_facecolor("#eeeeee")
    n = sorted({r["n_samples"] for r in rows})
    ax.set(xlabel="execution model / arm", ylabel="problem")
    ax.set_title(
        f"Expected speedup per problem and execution model (n = {', '.join(map(str, n))} samples per cell; "
        "failures count 0; grey: 0)\n+ / -: differs from the base (bootstrap, Holm-corrected over the arm's cells, 5%)",
        fontsize=9,
    )
    return _save(fig, out / "suite_heatmap.png")


def suite_modes(summary: dict, out: Path) -> Path | None:
    by_mode = summary.get("by_mode") or {}
    if not by_mode:
        return None
    arms = list(by_mode)
    modes = sorted(
        {m for arm in arms for m in by_mode[arm]}, key=lambda m: MODES.index(m) if m in MODES else len(MODES)
    )
    fig, axes = plt.subplots(1, 2, figsize=(10, 3.8))
    width = 0.8 / len(arms)
    colors = sns.color_palette("deep", len(arms))
    for ax, key, label in (
        (axes[0], "pass_at_1", "pass@1 (mean over problems)"),
        (axes[1], "expected_speedup", "expected speedup (mean over problems)"),
    ):
        for a, arm in enumerate(arms):
            values = [by_mode[arm].get(m, {}).get(key) or 0.0 for m in modes]
            bars = ax.bar(np.arange(len(modes)) + a * width, values, width, label=arm, color=colors[a])
            ax.bar_label(bars, fmt="%.2f", fontsize=7, label_type="center", color="white")
            cis = [_ci(by_mode[arm].get(m, {}), key) for m in modes]
            if all(cis):  # 95% intervals (lab.analysis.suite); summaries written before them have none
                errors = np.abs(np.array(cis).T - np.array(values))
                centers = np.arange(len(modes)) + a * width
                ax.errorbar(centers, values, yerr=errors, fmt="none", ecolor="black", capsize=3, lw=1)
        ax.set_xticks(np.arange(len(modes)) + width * (len(arms) - 1) / 2, modes)
        ax.set(xlabel="execution model", ylabel=label)
        ax.set_ylim(bottom=0)
    _legend_outside(axes[1])
    problems = sorted({by_mode[a][m]["problems"] for a in arms for m in by_mode[a]})
    fig.suptitle(
        f"The suite per execution model: base -> trained (means over {', '.join(map(str, problems))} problems, "
        "95% bootstrap intervals)",
        fontsize=10,
    )
    return _save(fig, out / "suite_modes.png")


def headroom(report: dict, out: Path) -> Path | None:
    """The headroom of each suite entry (lab.bench.headroom): per mode, each problem's ceiling (best
    known kernel over naive.c, median of the paired rounds, the whisker down to the lowest round)
    at the timed size and at the cache-resident size, the roofline over naive.c as a marker, and
    the threshold below which an entry cannot show a gain."""
    entries = report.get("entries") or []
    if not entries:
        return None
    modes = [m for m in MODES if any(e["mode"] == m for e in entries)]
    problems = list(dict.fromkeys(e["problem"] for e in entries))
    sizes = {"timed": ("timed size", "#4c72b0"), "cache": ("cache-resident size", "#dd8452")}
    fig, axes = plt.subplots(1, len(modes), figsize=(6.5 * len(modes), 4.2), squeeze=False)
    width = 0.38
    for ax, mode in zip(axes[0], modes):
        for s, (size, (label, color)) in enumerate(sizes.items()):
            rows = {e["problem"]: e for e in entries if e["mode"] == mode and e["size"] == size}
            if not rows:  # a report of the timed size alone
                continue
            x = np.array([problems.index(p) for p in rows]) + (s - 0.5) * width
            ceilings = [rows[p]["ceiling"] or np.nan for p in rows]
            lows = [rows[p]["ceiling_lowest"] or np.nan for p in rows]
            ax.bar(x, ceilings, width, color=color, label=f"best known / naive, {label}")
            ax.errorbar(x, ceilings, yerr=[np.subtract(ceilings, lows), np.zeros(len(x))], fmt="none", ecolor="black")
            roofs = [rows[p]["roofline_over_naive"] or np.nan for p in rows]
            ax.scatter(
                x,
                roofs,
                marker="_",
                s=200,
                color="black",
                zorder=3,
                label=f"roofline / naive, {label}" if s == 0 else None,
            )
        ax.axhline(report.get("threshold", 1.5), color="red", lw=1, ls="--", label="threshold")
        ax.set_yscale("log")
        ax.set_xticks(range(len(problems)), problems, rotation=30, ha="right")
        threads = 1 if mode == "serial" else report.get("threads")
        ax.set(title=f"{mode} ({threads} thread{'s' if threads != 1 else ''})", ylabel="x naive.c")
    _legend_outside(axes[0][-1])
    machine = report.get("machine", {})
    fig.suptitle(
        f"Headroom per suite entry: median of {report.get('rounds')} paired rounds (whisker: lowest) "
        f"on {machine.get('cpu', 'this machine')}",
        fontsize=10,
    )
    return _save(fig, out / "headroom.png")


#: sqd_study's panels: pooled key -> y label.
STUDY_PANELS = {
    "expected_speedup": "expected speedup\n(held-out plain prompts)",
    "compliance": "compliance\n(ok kernels of restricted prompts\nusing only permitted techniques)",
    "dominant_share": "share of ok kernels in the\ncommonest technique set (collapse)",
    "coverage": "archive coverage (share of cells,\nmean over problems and seeds)",
    "training_best_speedup": "best speedup reached\nin training",
}


def sqd_study(study: dict, out: Path, filename: str = "sqd_study.png") -> Path | None:
    """The variants side by side: one row of panels per part of the study, one bar per variant,
    95% intervals where the study records them, per-seed values as dots. Written to out/filename."""
    variants = study.get("variants") or {}
    parts = list(dict.fromkeys(part for v in variants.values() for part in v))
    if not parts:
        return None
    names = list(variants)
    fig, axes = plt.subplots(
        len(parts), len(STUDY_PANELS), figsize=(3.3 * len(STUDY_PANELS), 3.2 * len(parts)), squeeze=False
    )
    colors = sns.color_palette("deep", len(names))
    for row, part in zip(axes, parts):
        for ax, (key, label) in zip(row, STUDY_PANELS.items()):
            for i, name in enumerate(names):
                block = variants[name].get(part)
                if not block or block["pooled"].get(key) is None:
                    continue
                value = block["pooled"][key]
                ax.bar(i, value, color=colors[i], width=0.7)
                ci = _ci(block["pooled"], key)
                if ci:
                    ax.errorbar(i, value, yerr=[[value - ci[0]], [ci[1] - value]], ecolor="black", capsize=3, lw=1)
                seeds = [f.get(key) for f in block["per_seed"].values() if f.get(key) is not None]
                ax.scatter([i] * len(seeds), seeds, color="black", s=8, zorder=3)
            ax.set_xticks(range(len(names)), names, rotation=45, ha="right", fontsize=8)
            ax.set_ylabel(label, fontsize=8)
            ax.set_ylim(bottom=0)
        row[0].set_title(part, loc="left", fontsize=10)
    fig.suptitle(
        "SQD variants side by side: bars pooled over seeds and entries (95% interval), dots one seed each", fontsize=10
    )
    return _save(fig, out / filename)


#: sqd_training's panels: training_curve key -> y label.
TRAINING_CURVE_PANELS = {
    "ok_share": "share of training completions ok",
    "median_ok_speedup": "median speedup of the ok ones",
    "best_speedup_so_far": "best speedup so far",
}


def sqd_training(study: dict, out: Path, filename: str = "sqd_study_training.png") -> Path | None:
    """The trained variants over their training steps (each arm's `training_curve`): one row of
    panels per part of the study, one line per variant, each point a span of steps averaged
    over seeds, every problem and mode of the part pooled. Collapse onto the textbook loop
    reads as the median falling towards 1."""
    variants = study.get("variants") or {}
    parts = list(dict.fromkeys(part for v in variants.values() for part, b in v.items() if b.get("training_curve")))
    if not parts:
        return None
    names = list(variants)
    colors = dict(zip(names, sns.color_palette("deep", len(names))))
    fig, axes = plt.subplots(
        len(parts),
        len(TRAINING_CURVE_PANELS),
        figsize=(4.4 * len(TRAINING_CURVE_PANELS) + 1.5, 3.4 * len(parts)),
        squeeze=False,
    )
    seeds, width = set(), set()
    for row, part in zip(axes, parts):
        for arm in names:
            block = variants[arm].get(part) or {}
            curve = block.get("training_curve") or []
            if not curve:
                continue
            n = len(block.get("per_seed") or {}) or max(p["seeds"] for p in curve)
            seeds.add(n)
            width.add(f"{curve[-1]['step'] / len(curve):g}")  # steps per span
            for ax, key in zip(row, TRAINING_CURVE_PANELS):
                points = [(p["step"], p[key]) for p in curve if p.get(key) is not None]
                if points:
                    ax.plot(*zip(*points), color=colors[arm], marker=".", linewidth=1.2, label=f"{arm} ({n} seeds)")
        for ax, (key, label) in zip(row, TRAINING_CURVE_PANELS.items()):
            ax.set(xlabel="training step", ylabel=label)
            ax.xaxis.set_major_locator(matplotlib.ticker.MaxNLocator(integer=True))
            ax.set_ylim(0, 1.02 if key == "ok_share" else None)
            if key == "median_ok_speedup":
                ax.axhline(1, color="black", linestyle=":", linewidth=0.8)  # the textbook loop
        row[0].set_title(part, loc="left", fontsize=10)
        if row[-1].get_legend_handles_labels()[0]:
            _legend_outside(row[-1])
    fig.suptitle(
        f"SQD variants over training: each point {'/'.join(sorted(width))} step(s), mean over {_span(sorted(seeds))} "
        "seeds, problems and modes pooled (speedup over the textbook loop)",
        fontsize=10,
    )
    return _save(fig, out / filename)


def machine_label(path: Path) -> str | None:
    """The machine whose results a figure at `path` draws, as 'measured on <CPU>, <cores> cores
    (machine <class>)': that of the machine's folder it lies in (lab.results: results of one
    machine class per folder, machines/<class>/ for all but the first), else of the nearest
    results folder above it with a calibration; None outside any such folder."""
    for folder in Path(path).absolute().parents:
        calibration = folder / CALIBRATION
        own = folder.parent.name == MACHINES
        if calibration.is_file() or own:
            saved = read_json(calibration) if calibration.is_file() else {}
            cpu, cores = saved.get("cpu_model"), saved.get("cores")
            owner = folder.name if own else recorded_class(saved)
            where = f"{cpu}{f', {cores} cores' if cores else ''} " if cpu else ""
            return f"measured on {where}(machine {owner})"
    return None


def _save(fig, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    label = machine_label(path)
    if label:  # every figure names the machine its numbers come from
        fig.text(0.99, 0.0, label, ha="right", va="top", fontsize=7, color="0.4")
    fig.savefig(path, dpi=120, bbox_inches="tight")  # "tight": keeps legends placed outside the axes
    plt.close(fig)
    return path


def all_figures(results: dict, out: str | Path) -> list[Path]:
    out = Path(out)
    figs = [
        reward_curve(results, out),
        status_over_steps(results, out),
        gflops_distribution(results, out),
        status_breakdown(results, out),
        metrics_table(results, out),
        archive_heatmap(results, out),
        coverage_over_steps(results, out),
        technique_usage(results, out),
        learning_curve({name: r.get("learning_curve") for name, r in results.items()}, out),
        training_dynamics(results, out),
        family_dynamics(results, out),
    ]
    return [f for f in figs if f is not None]
