"""Arms against each other on the same held-out evaluation: differences with intervals.

    lab compare --config configs/default.yaml      # the finished arms: results/comparison.json
    lab compare --config configs/ablation.yaml --against grpo     # each variant against one arm

    from lab.analysis.compare import write_comparison
    summary = write_comparison(load_config("configs/default.yaml"))

The arms are the experiments of one single-problem config (baseline, grpo, grpo_sqd...),
each already evaluated with several seeds (lab.pipeline.runner). Before anything is
compared, the arms must agree on what makes a comparison fair: every arm on the model,
problem, measurement, evaluation protocol (all but the learning curve's sample count, which no
comparison reads) and seeds; trained arms also on the reward and
the training budget (only the SQD schedule and the warm start may differ), and each
trained arm's log must show every step of every seed with a full batch of reward
evaluations. A warm start's scored samples are reported beside the budget
(`warm_start_evaluations`): they are reward evaluations the other arms did not get.

An ablation names a `reference` arm: each other arm is compared with it alone, and may
differ from it in the reward and the training settings as well, but every trained arm
keeps the same budget (steps and reward evaluations per step); each arm lists the
settings it changes (`changes`, from the config its results were made with).

`results/comparison.json` then holds, per arm, the headline metrics with their 95%
intervals, and per pair (a later arm of the file against an earlier one, or an arm
against the reference) and metric (pass@1, mean and median ok rate, expected speedup):
the difference a - b with its bootstrap interval (a trained arm's samples resampled by
training seed, the base policy's as independent samples: lab.analysis.intervals), the
ratio a / b with its interval, a p-value, and two verdicts (better / worse / no clear
difference): `verdict` from the interval alone, `verdict_holm` with Holm's correction
over every pair and metric of the file, which is the one to state. Two trained arms share
seeds, so the per-seed differences are listed too (`per_seed`). The file depends on the
results alone (not on when it is written), so rewriting it from the same results leaves
it unchanged. `lab.analysis.plots.comparison` draws it.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path

from lab.analysis.dynamics import final_log_means
from lab.analysis.intervals import difference, holm, verdict
from lab.config import ExperimentConfig, LabConfig, changed_fields
from lab.files import read_json, read_jsonl, write_json
from lab.results import EXCESSIVE, RUN_FACTS, is_finished, project_dir
from lab.techniques import family

#: The metrics compared (names of lab.analysis.metrics / intervals).
METRICS = ("pass_at_1", "mean_gflops_ok", "median_gflops_ok", "expected_speedup")
#: Settings every arm shares, and those trained arms share on top.
_SHARED = ("model", "problem", "measure", "evaluation", "seeds", "suite")
_SHARED_TRAINED = ("reward", "train")
#: Entries of a saved config.json that name or describe a run rather than set it up.
_NOT_SETTINGS = RUN_FACTS | {"name", "seed", "code"}
#: Evaluation settings arms may differ in: the learning curve evaluates checkpoints on the side,
#: and no comparison reads it.
_NOT_COMPARED = ("curve_samples",)


def _settings(arm: ExperimentConfig) -> dict:
    """What fairness compares of an arm: its config, less the evaluation settings no comparison reads."""
    settings = arm.to_dict()
    settings["evaluation"] = {k: v for k, v in settings["evaluation"].items() if k not in _NOT_COMPARED}
    return settings


def check_fair(config: LabConfig, reference: str | None = None, suites: bool = False) -> None:
    """Raise ValueError naming the settings in which two arms differ where they must agree.

    With a `reference` arm (an ablation), trained arms may differ from it in the reward and
    the training settings too, but not in the budget: steps and reward evaluations per step.
    Suites are refused (this module compares single-problem arms) unless `suites` (the SQD
    study, whose arms differ only in their SQD settings)."""
    arms = list(config.experiments.values())
    if not suites and any(a.suite is not None for a in arms):
        raise ValueError(f"{config.path}: comparisons are of single-problem arms; lab.analysis.suite compares suites")
    if reference is not None:
        if reference not in config.experiments:
            raise ValueError(f"{config.path}: no experiment {reference!r} to compare against")
        ref = _settings(config.experiments[reference])
        for a in arms:
            diff = [k for k in _SHARED if _settings(a)[k] != ref[k]]
            if diff:
                raise ValueError(f"unfair comparison: {a.name} and {reference} differ in {', '.join(diff)}")
        budgets = {a.name: (generations(a), a.train.batch_size) for a in arms if a.kind == "grpo"}
        if len(set(budgets.values())) > 1:
            raise ValueError(
                "unfair comparison: the trained arms differ in train budget (generated batches x group_size x "
                f"prompts_per_step): {', '.join(f'{n} {s} x {b}' for n, (s, b) in budgets.items())}"
            )
        return
    for a, b in itertools.combinations(arms, 2):
        keys = _SHARED + (_SHARED_TRAINED if a.kind == b.kind == "grpo" else ())
        da, db = _settings(a), _settings(b)
        diff = [k for k in keys if da[k] != db[k]]
        if diff:
            raise ValueError(f"unfair comparison: {a.name} and {b.name} differ in {', '.join(diff)}")


def changed_settings(a: dict, b: dict) -> dict[str, list]:
    """The settings of config `a` (ExperimentConfig.to_dict()) that differ from `b`'s, by key
    path (lab.config.changed_fields, which also decides when a training run may resume):
    {"reward.positive": [a's, b's]}; the name and what describes a run are left out."""
    return {k: [_at(a, k), _at(b, k)] for k in changed_fields(a, b, ignore=_NOT_SETTINGS)}


def _at(config: dict, path: str):
    """The value at a key path of a nested config (None where it has none)."""
    for key in path.split("."):
        config = config.get(key) if isinstance(config, dict) else None
    return config


def generations(cfg: ExperimentConfig) -> int:
    """The batches a trained arm generated and scored per seed: TRL reuses each batch for
    train.num_iterations optimizer steps, so it generates at every num_iterations-th step."""
    return -(-cfg.train.steps // cfg.train.num_iterations)


def check_budget(cfg: ExperimentConfig, log: list[dict] | None = None) -> int:
    """The reward evaluations of a trained arm; raises RuntimeError unless its log (read from
    its results unless given) shows every step of every seed, and a full batch scored at each
    of its `generations` steps that generated one (with num_iterations > 1 the steps between
    reuse the last batch: their log rows have no generation time; a log older than that field
    counts every row)."""
    log = read_jsonl(cfg.out_dir / "train_log.jsonl") if log is None else log
    total = 0
    for seed in cfg.seeds:
        rows = [r for r in log if r.get("seed") == seed]
        counts = [sum(r["status_counts"].values()) for r in rows if r.get("generation_s", 0.0) is not None]
        if (
            [r["step"] for r in rows] != list(range(1, cfg.train.steps + 1))
            or len(counts) != generations(cfg)
            or any(c != cfg.train.batch_size for c in counts)
        ):
            raise RuntimeError(
                f"{cfg.out_dir}: seed {seed}'s training log does not show {cfg.train.steps} steps with "
                f"{generations(cfg)} batches of {cfg.train.batch_size} reward evaluations; the comparison "
                "would be unfair"
            )
        total += sum(counts)
    return total


def _arm(cfg: ExperimentConfig) -> dict:
    metrics = read_json(cfg.out_dir / "metrics.json")
    samples = read_jsonl(cfg.out_dir / "samples.jsonl")
    saved_path = cfg.out_dir / "config.json"
    saved = read_json(saved_path) if saved_path.exists() else cfg.to_dict()
    trained = cfg.kind == "grpo"
    keep = (
        "n_samples",
        "seeds",
        "openblas_gflops",
        "best_gflops",
        "distinct_technique_sets_ok",
        "truncation_rate",
        "seen_in_training",
    )
    headline = {k: metrics.get(k) for k in keep}
    for m in (*METRICS, "median_fraction_of_openblas"):
        headline[m], headline[f"{m}_ci"] = metrics.get(m), metrics.get(f"{m}_ci")
    # Collapse: the share of ok kernels written with the most common technique set.
    sets = metrics.get("technique_sets_ok") or {}
    headline["dominant_share"] = max(sets.values()) / sum(sets.values()) if sets else None
    headline["dominant_set"] = max(sets, key=sets.get) if sets else None
    # The fast family (lab.techniques.family): vector code over a packed or register-blocked structure.
    fast = sum(c for key, c in sets.items() if family([] if key == "none" else key.split("+")) == "fast")
    headline["fast_family_share"] = fast / sum(sets.values()) if sets else None
    log = read_jsonl(cfg.out_dir / "train_log.jsonl") if trained else []
    headline["entropy_final"] = final_log_means(log)["entropy"]  # each seed's last step (check_budget)
    return {
        "kind": cfg.kind,
        "sqd": cfg.sqd is not None,
        "reward_evaluations": check_budget(cfg, log) if trained else 0,
        "warm_start_evaluations": sum(s["scored"] for s in _warm_starts(cfg).values()),
        # Training kernels the excessive-speedup guard flagged, to be read (lab.rl.guard; None:
        # results from before the guard).
        "excessive_flags": len(read_jsonl(flagged)) if (flagged := cfg.out_dir / EXCESSIVE).exists() else None,
        "training_best_gflops": (metrics.get("training") or {}).get("best_gflops"),
        # What training saw: best kernel per seed, groups without reward spread, truncation.
        "training": metrics.get("training"),
        "metrics": headline,
        "per_seed": metrics.get("per_seed") or {},
        # Which commit and machine made the arm's results (from its config.json, written when
        # its run started: facts of the results, not of this comparison).
        "git_commit": saved.get("git_commit"),
        "machine": saved.get("machine"),
        "_config": saved,
        "_samples": samples,
        "_clusters": [s["seed"] for s in samples] if trained else None,
    }


def _warm_starts(cfg: ExperimentConfig) -> dict:
    path = cfg.out_dir / "warm_start.json"
    return read_json(path) if path.exists() else {}


def judge(tests: list[dict], ci_key: str = "ci") -> list[dict]:
    """Each difference (intervals.difference, its interval under `ci_key`) given its `verdict`
    from its interval, and its `verdict_holm`: that verdict if Holm's correction over all of
    `tests` keeps it, else no clear difference. Returns `tests`."""
    kept = holm([d["p_value"] if d["p_value"] is not None else 1.0 for d in tests])
    for d, keep in zip(tests, kept):
        d["verdict"] = verdict(d[ci_key])
        d["verdict_holm"] = d["verdict"] if keep else "no clear difference"
    return tests


def compare(config: LabConfig, reference: str | None = None) -> dict:
    """comparison.json's content from the finished experiments of `config` (those not finished
    are listed under `missing`): every pair, or with a `reference` arm (an ablation) each
    other arm against it, with the settings it changes (`changes`)."""
    check_fair(config, reference)
    arms = {name: _arm(cfg) for name, cfg in config.experiments.items() if is_finished(cfg.out_dir)}
    missing = [name for name in config.experiments if name not in arms]
    if reference is None:
        matches = [(a, b) for b, a in itertools.combinations(arms, 2)]
    else:
        if reference not in arms:
            raise RuntimeError(f"{config.experiments[reference].out_dir}: the reference arm has no finished results")
        matches = [(a, reference) for a in arms if a != reference]
        for name in arms:
            arms[name]["changes"] = changed_settings(arms[name]["_config"], arms[reference]["_config"])
    pairs = []
    for a, b in matches:
        A, B = arms[a], arms[b]
        entry = {"a": a, "b": b, "metrics": {}}
        for m in METRICS:
            entry["metrics"][m] = difference(A["_samples"], B["_samples"], m, A["_clusters"], B["_clusters"])
        if A["kind"] == B["kind"] == "grpo":
            entry["per_seed"] = {
                m: {
                    s: (A["per_seed"][s][m] - B["per_seed"][s][m])
                    if A["per_seed"].get(s, {}).get(m) is not None and B["per_seed"].get(s, {}).get(m) is not None
                    else None
                    for s in A["per_seed"]
                }
                for m in METRICS
            }
        pairs.append(entry)
    tests = judge([d for p in pairs for d in p["metrics"].values()])
    first = next(iter(config.experiments.values()))
    return {
        "config": os.path.relpath(config.path, project_dir(config.path)),
        "reference": reference,
        "arms": {name: {k: v for k, v in arm.items() if not k.startswith("_")} for name, arm in arms.items()},
        "pairs": pairs,
        "missing": missing,
        "seeds": first.seeds,
        "eval_samples_per_seed": first.evaluation.samples,
        "tests": len(tests),
    }


def write_comparison(config: LabConfig, reference: str | None = None) -> dict:
    """compare(config, reference), written to <results_dir>/comparison.json."""
    summary = compare(config, reference)
    write_json(Path(config.results_dir) / "comparison.json", summary)
    return summary


def number_text(value: float | None, digits: int, sign: bool = False) -> str:
    """A number as the README shows it: fixed digits, a real minus sign, '+' on differences."""
    if value is None:
        return "—"
    text = f"{value:+.{digits}f}" if sign else f"{value:.{digits}f}"
    return text.replace("-", "−")


def interval_text(value: float | None, ci: list | None, digits: int, sign: bool = False) -> str:
    """'1.4 [0.6, 2.3]': a number with its 95% interval, where it has one."""
    if not ci:
        return number_text(value, digits, sign)
    lo, hi = (number_text(v, digits, sign) for v in ci)
    return f"{number_text(value, digits, sign)} [{lo}, {hi}]"


def ratio_text(ratio: float, ci: list) -> str:
    """'7.83× [4.44, 18.00]': a ratio with its interval."""
    return "{}× [{}, {}]".format(*(number_text(v, 2) for v in (ratio, *ci)))


def held_text(text: str, verdict_holm: str | None) -> str:
    """`text` in bold where Holm's correction keeps the difference it reports."""
    return f"**{text}**" if verdict_holm not in (None, "no clear difference") else text


def table_text(head: list[str], rows: list[list[str]]) -> str:
    """A markdown table: the heading, its rule, one line per row of cells."""
    lines = ["| " + " | ".join(cells) + " |" for cells in (head, *rows)]
    return "\n".join([lines[0], "|" + "---|" * len(head), *lines[1:]])


#: The metric columns of markdown_tables: (key, heading, digits).
_COLUMNS = (
    ("pass_at_1", "pass@1", 2),
    ("mean_gflops_ok", "mean GFLOPS (ok)", 1),
    ("median_gflops_ok", "median GFLOPS (ok)", 1),
    ("median_fraction_of_openblas", "median / OpenBLAS", 2),
    ("expected_speedup", "expected speedup", 1),
)


def markdown_tables(summary: dict, names: dict[str, str] | None = None) -> tuple[str, str]:
    """The README's two tables of a comparison (comparison.json's content): one row per arm
    (the headline metrics with their 95% intervals, the best evaluated kernel, the best kernel
    each seed's training scored, in bold at 0.8x that run's OpenBLAS or more, the share of ok
    kernels in the commonest technique set, and the samples seen in training), and one row
    per pair (each difference with its interval, the expected speedup's ratio beside it, in
    bold where Holm's correction keeps it). `names` gives the arms' display names. The README
    pastes them as they are, and a test holds the two equal."""
    names = names or {}
    name = lambda arm: names.get(arm, arm)  # noqa: E731
    head = ["arm", *(h for _, h, _ in _COLUMNS), "best GFLOPS", "best GFLOPS in training (by seed)"]
    head += ["commonest technique set", "seen in training"]
    rows = []
    for arm, a in summary["arms"].items():
        m = a["metrics"]
        cells = [name(arm)] + [interval_text(m.get(k), m.get(f"{k}_ci"), d) for k, _, d in _COLUMNS]
        cells.append(number_text(m.get("best_gflops"), 1))
        by_seed = ((a.get("training") or {}).get("best_gflops_per_seed") or {}).values()
        blas = m.get("openblas_gflops") or float("inf")
        cells.append(
            ", ".join(f"**{v:.1f}**" if v >= 0.8 * blas else f"{v:.1f}" for v in by_seed if v is not None) or "—"
        )
        share = m.get("dominant_share")
        cells.append(f"{share:.0%} ({m.get('dominant_set')})" if share is not None else "—")
        cells.append(str(m.get("seen_in_training")) if m.get("seen_in_training") is not None else "—")
        rows.append(cells)
    pair_head = ["pair", *(h for k, h, _ in _COLUMNS if k != "median_fraction_of_openblas")]
    pairs = []
    for p in summary["pairs"]:
        cells = [f"{name(p['a'])} − {name(p['b'])}"]
        for key, _, digits in _COLUMNS:
            d = p["metrics"].get(key)
            if d is None:
                continue
            text = interval_text(d["difference"], d["ci"], digits, sign=True)
            if key == "expected_speedup" and d.get("ratio") is not None and d.get("ratio_ci"):
                text += f" ({ratio_text(d['ratio'], d['ratio_ci'])})"
            cells.append(held_text(text, d.get("verdict_holm")))
        pairs.append(cells)
    return table_text(head, rows), table_text(pair_head, pairs)


def load_comparison(results_dir: str | Path = "results") -> dict | None:
    path = Path(results_dir) / "comparison.json"
    return read_json(path) if path.exists() else None
