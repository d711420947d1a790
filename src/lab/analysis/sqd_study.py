"""The SQD study: every variant's figures per seed, pooled and per (problem, mode), with intervals.

    from lab.analysis.sqd_study import write_sqd_study
    study = write_sqd_study(["configs/sqd_study.yaml", "configs/sqd_study_suite.yaml"], "results/sqd_study.json")

Reads the finished arms of each config (lab.pipeline.runner wrote them: metrics.json, samples.jsonl,
samples_restricted.jsonl, training_samples.jsonl, archive_stats.json) and writes one file:

- `variants`: one entry per arm name (the same names in every config: `grpo`, `s0_hard`, ...),
  holding per config (`dgemm`, `suite`: the config's results folder name):
  - `sqd`: the arm's SQD settings (None for plain GRPO and the base policy);
  - `pooled`: over every entry and seed, pass@1, expected speedup and `compliance` (the share of
    ok kernels of technique-restricted prompts that use only permitted techniques), each with
    `<metric>_ci` (trained arms resampled by training seed), `dominant_share` (the share of ok
    kernels in the commonest technique set: collapse) and that set (`dominant_set`),
    `distinct_technique_sets_ok`, `measured` (training completions the harness compiled and
    ran, lab.config.RAN_STATUSES),
    `training_best_speedup` (the largest speedup any training sample reached), and the
    archive's `coverage` (the share of cells filled, mean over problems, then over seeds) and
    `qd_score` (the sum of the elites' rates, mean over seeds; None over several problems,
    whose units do not add);
  - `per_seed`: the same point figures for each seed, with the archive's `coverage`,
    `qd_score` and `qd_score_by_problem`;
  - `entries`: per `problem/mode`, pass@1, mean and median ok rate (the problem's unit), expected
    speedup and compliance with their intervals, the best evaluated rate, `dominant_share`,
    the best rate per archive cell of each seed (`cells`), the problem's archive `coverage` and
    `qd_score` (mean over seeds), and what training reached there (`training_best`);
  - `training_curve`: per span of GRPO steps, the share of ok training completions, their
    median speedup and the best speedup so far, each a mean over seeds (see training_curve).

`comparisons`, per config: every other arm against plain GRPO (`grpo`), and S1–S5 against S0
(`s0_hard`, the first reading), in expected speedup and pass@1 on the plain prompts, and in
compliance and the compliant expected speedup on the restricted ones, each difference with its
95% interval, ratio and verdict, and whether Holm's correction over the config's tests keeps it
(`verdict_holm`).

`elite_audit`, per config with an elite-labels file (`<results_dir>/elite_labels.json`): the
arms' archive elites (each arm's archive.json holds its first seed's) against the techniques
two readers found in them (docs/technique_labels.md): how many are labelled, the readers'
agreement (Cohen's kappa per technique), and per technique the precision and recall, with
Wilson intervals, of the descriptor the archive recorded and of the text detector alone; each
arm's `archive_reread` gives its coverage and QD score as recorded and with every labelled
elite moved to the cell the reading puts it in. `blind_elites` and `merge_readings` are the
labelling's two halves: the sources written out without their reading, the two readings
taken back.

`mixed_code` names, per config, the code fingerprint of each arm when its arms were made by
different code (empty when every comparison is between arms of the same code), and
`mixed_machine` the machine fingerprint of each arm when they were measured on different
machines (a CPU without AVX-512 cannot compile what one with it runs, and the policy built on
each differs). Neither should happen with the runner's reuse rule (lab.pipeline.reuse: a result
of other measuring code or of another machine class is never reused, and each machine class
writes its own results folder, lab.results), so both are checks after the fact.

Expected speedup is over each problem's serial textbook baseline, so it pools across problems;
rates (GFLOP/s, GB/s) are only reported per entry.
"""

from __future__ import annotations

import hashlib
import random
import statistics
from collections import Counter
from collections.abc import Iterable
from pathlib import Path

from scipy.stats import binomtest

from lab.analysis.compare import (
    check_fair,
    held_text,
    interval_text,
    judge,
    number_text,
    ratio_text,
    table_text,
)
from lab.analysis.detection import scores
from lab.analysis.intervals import difference, metric_intervals, metric_values
from lab.config import RAN_STATUSES
from lab.files import read_json, read_jsonl, write_json
from lab.results import RESTRICTED_SAMPLES, TRAINING_SAMPLES, is_finished, open_config, recorded_class
from lab.techniques import TECHNIQUES, detect, problem_techniques

#: Pooled figures with a bootstrap interval.
POOLED = ("pass_at_1", "expected_speedup")
#: Per-entry figures with an interval.
PER_ENTRY = ("pass_at_1", "mean_gflops_ok", "median_gflops_ok", "expected_speedup")


def _collapse(samples: list[dict]) -> tuple[float | None, str | None, int]:
    """(share of ok kernels in the commonest technique set, that set, number of distinct ok sets)."""
    sets = Counter(
        "+".join(s["techniques"]) or "none" for s in samples if s["status"] == "ok" and s.get("techniques") is not None
    )
    total = sum(sets.values())
    if not total:
        return None, None, 0
    commonest, count = sets.most_common(1)[0]
    return count / total, commonest, len(sets)


def _points(samples: list[dict], restricted: list[dict]) -> dict:
    share, commonest, distinct = _collapse(samples)
    return {
        "n_samples": len(samples),
        **metric_values(samples, POOLED),
        **metric_values(restricted, ("compliance",)),
        "restricted_samples": len(restricted),
        "dominant_share": share,
        "dominant_set": commonest,
        "distinct_technique_sets_ok": distinct,
    }


def _with_intervals(points: dict, samples: list[dict], restricted: list[dict], trained: bool, metrics) -> dict:
    seeds = (lambda rows: [s["seed"] for s in rows]) if trained else (lambda rows: None)
    cis = metric_intervals(samples, seeds(samples), metrics=metrics)
    out = dict(points) | {f"{m}_ci": cis[f"{m}_ci"] for m in metrics}
    if restricted:
        out["compliance_ci"] = metric_intervals(restricted, seeds(restricted), metrics=("compliance",))["compliance_ci"]
    return out


def _training(out_dir: Path) -> list[dict]:
    return read_jsonl(out_dir / TRAINING_SAMPLES, missing_ok=True)


def _measured(rows: list[dict]) -> int:
    """Training completions the harness compiled and ran (their `measured` flag; rows written
    before the flag existed: by their status)."""
    return sum(bool(r["measured"]) if "measured" in r else r["status"] in RAN_STATUSES for r in rows)


def _archive_figures(arch: dict) -> dict:
    """A seed's archives (problem -> stats): coverage as the mean share of cells filled over
    problems; the QD score (the sum of elite rates) only when there is one problem, since
    GFLOP/s, GB/s and Gop/s do not add; each problem's score beside it."""
    if not arch:
        return {"coverage": None, "qd_score": None, "qd_score_by_problem": None}
    return {
        "coverage": statistics.fmean(a["coverage"] for a in arch.values()),
        "qd_score": next(iter(arch.values()))["qd_score"] if len(arch) == 1 else None,
        "qd_score_by_problem": {p: a["qd_score"] for p, a in arch.items()},
    }


def _mean_or_none(values: list) -> float | None:
    values = [v for v in values if v is not None]
    return statistics.fmean(values) if values else None


def _ok_values(rows: list[dict], key: str) -> list[float]:
    """`key` of every ok row that has it."""
    return [r[key] for r in rows if r["status"] == "ok" and r.get(key) is not None]


def _best(rows: list[dict], key: str) -> float | None:
    values = _ok_values(rows, key)
    return max(values) if values else None


#: How many spans of steps `training_curve` cuts a run into (at most).
CURVE_WINDOWS = 20


def training_curve(rows: list[dict], windows: int = CURVE_WINDOWS) -> list[dict]:
    """What GRPO wrote over its steps (the warm start left out), in `windows` spans of steps
    (fewer when there are fewer steps), each labelled by its last step. Per span: the share of
    completions that were ok and the median speedup of the ok ones, each the mean over the
    seeds that have them there (`seeds`: how many had completions), and the best speedup so far,
    the mean over seeds once every seed has one (each seed's best is carried over spans, so it
    never falls). Completions of every problem and mode of the part are pooled: a run
    collapsing onto the textbook loop shows the median falling towards 1; one finding a faster
    family, the best so far rising."""
    rows = [r for r in rows if r.get("phase", "grpo") == "grpo" and r.get("step") is not None]
    if not rows:
        return []
    last = max(r["step"] for r in rows)
    spans = min(windows, last)
    grouped: dict = {}
    for r in rows:
        grouped.setdefault(((r["step"] - 1) * spans // last, r.get("seed", 0)), []).append(r)
    best = dict.fromkeys(sorted({r.get("seed", 0) for r in rows}))
    points = []
    for span in range(spans):
        shares, medians = [], []
        for seed in best:
            mine = grouped.get((span, seed), [])
            ok = _ok_values(mine, "speedup")
            if mine:
                shares.append(len(ok) / len(mine))
            if ok:
                medians.append(statistics.median(ok))
                best[seed] = max(ok) if best[seed] is None else max(best[seed], *ok)
        points.append(
            {
                "step": ((span + 1) * last - 1) // spans + 1,  # the last step of the span
                "seeds": len(shares),
                "ok_share": _mean_or_none(shares),
                "median_ok_speedup": _mean_or_none(medians),
                "best_speedup_so_far": None if None in best.values() else statistics.fmean(best.values()),
            }
        )
    return points


def arm_summary(out_dir: Path, trained: bool) -> dict:
    """One arm's block of the study (see the module docstring)."""
    config = read_json(out_dir / "config.json")
    samples = read_jsonl(out_dir / "samples.jsonl")
    restricted = read_jsonl(out_dir / RESTRICTED_SAMPLES, missing_ok=True)
    training = _training(out_dir)
    stats_path = out_dir / "archive_stats.json"
    archives = read_json(stats_path) if stats_path.exists() else {}
    pooled = _with_intervals(_points(samples, restricted), samples, restricted, trained, POOLED)
    pooled["measured"] = _measured(training) if training else None
    pooled["training_best_speedup"] = _best(training, "speedup")
    per_seed = {}
    for seed in dict.fromkeys(s["seed"] for s in samples):
        mine = [r for r in training if r.get("seed") == seed]
        arch = archives.get(str(seed), {})
        per_seed[str(seed)] = _points(
            [s for s in samples if s["seed"] == seed], [s for s in restricted if s["seed"] == seed]
        ) | {
            "measured": _measured(mine) if mine else None,
            "training_best_speedup": _best(mine, "speedup"),
            **_archive_figures(arch),
        }
    for key in ("coverage", "qd_score"):  # the archive's, mean over seeds
        pooled[key] = _mean_or_none([f[key] for f in per_seed.values()])
    entries = {}
    for problem, mode in dict.fromkeys((s["problem"], s["mode"]) for s in samples):
        mine = [s for s in samples if s["problem"] == problem and s["mode"] == mode]
        theirs = [s for s in restricted if s["problem"] == problem and s["mode"] == mode]
        points = _points(mine, theirs) | metric_values(mine, ("mean_gflops_ok", "median_gflops_ok"))
        points["best_gflops"] = _best(mine, "gflops")
        entry = _with_intervals(points, mine, theirs, trained, PER_ENTRY)
        trained_here = [r for r in training if r.get("problem") == problem and r.get("mode") in (mode, None)]
        entry["training_best"] = {"gflops": _best(trained_here, "gflops"), "speedup": _best(trained_here, "speedup")}
        entry["cells"] = {seed: (arch.get(problem) or {}).get("cells") for seed, arch in archives.items()}
        for key in ("coverage", "qd_score"):  # the problem's archive (both modes share it), mean over seeds
            entry[key] = _mean_or_none([(arch.get(problem) or {}).get(key) for arch in archives.values()])
        entries[f"{problem}/{mode}"] = entry
    return {
        "kind": config.get("kind"),
        "sqd": config.get("sqd"),
        "seeds": sorted({s["seed"] for s in samples}),
        "git_commit": config.get("git_commit"),
        "machine": config.get("machine"),
        "pooled": pooled,
        "per_seed": per_seed,
        "entries": entries,
        "training_curve": training_curve(training),
    }


#: Each config's technique labels of its arms' archive elites, found by reading them
#: (docs/technique_labels.md), in its results folder; keyed by the sha256 of the elite's source.
ELITE_LABELS = "elite_labels.json"


def source_hash(source: str) -> str:
    """The key of a kernel in an elite-labels file."""
    return hashlib.sha256(source.encode()).hexdigest()


def _archive(out_dir: Path) -> dict:
    """An arm's archive.json (problem -> stats and elites: the first seed's), {} without one."""
    path = out_dir / "archive.json"
    return read_json(path) if path.exists() else {}


def _distinct_elites(archives: Iterable[dict]) -> dict[str, dict]:
    """Each distinct elite of some archives (archive.json: problem -> stats with `elites`), by
    source hash, with its `problem`; a kernel that is an elite of several arms comes once."""
    out: dict[str, dict] = {}
    for archive in archives:
        for problem, arch in archive.items():
            for elite in arch.get("elites") or []:
                out.setdefault(source_hash(elite["source"]), {"problem": problem, **elite})
    return out


def archive_reread(archive: dict, labels: dict[str, dict]) -> dict:
    """One archive (problem -> stats with `elites`) re-read with `labels` (source hash -> a
    reader's `techniques`), per problem: `elites`, how many are `labelled`, how many of those
    the reading leaves `in_their_cell`, and the `coverage` and `qd_score` as recorded beside
    `coverage_reread` and `qd_score_reread`: each labelled elite moved to the cell of the
    techniques the reader found (the best one kept where several land in one cell; unlabelled
    elites stay where they are). A problem whose archive keeps no elites is left out."""
    out = {}
    for problem, arch in archive.items():
        if not arch.get("elites"):
            continue  # an archive without its elites' sources (or an empty one) cannot be reread
        cells: dict[frozenset, float] = {}
        labelled = kept = 0
        for elite in arch["elites"]:
            recorded = frozenset(elite["techniques"])
            label = labels.get(source_hash(elite["source"]))
            truth = frozenset(label["techniques"]) if label else recorded
            labelled += label is not None
            kept += label is not None and truth == recorded
            cells[truth] = max(cells.get(truth, 0.0), elite["gflops"])
        out[problem] = {
            "elites": len(arch["elites"]),
            "labelled": labelled,
            "in_their_cell": kept,
            "coverage": arch.get("coverage"),
            "coverage_reread": len(cells) / 2 ** len(problem_techniques(problem)),
            "qd_score": arch.get("qd_score"),
            "qd_score_reread": sum(cells.values()),
        }
    return out


def _share(hits: int, total: int) -> tuple[float | None, list[float] | None]:
    """hits / total with its 95% Wilson interval (None, None when total is 0)."""
    if not total:
        return None, None
    ci = binomtest(hits, total).proportion_ci(confidence_level=0.95, method="wilson")
    return hits / total, [float(ci.low), float(ci.high)]


def _read_as(rows: list[dict], key: str) -> dict:
    """detector_report.scores of the prediction `key` against `truth` (per technique: tp, fp,
    fn, precision, recall; `exact`), with a 95% Wilson interval beside each share."""
    out = scores(rows, key)
    for t in TECHNIQUES:
        s = out[t]
        s["precision_ci"] = _share(s["tp"], s["tp"] + s["fp"])[1]
        s["recall_ci"] = _share(s["tp"], s["tp"] + s["fn"])[1]
    out["exact_ci"] = _share(sum(set(r[key]) == set(r["truth"]) for r in rows), len(rows))[1]
    return out


def _readers_agree(labels: list[dict]) -> dict:
    """How far the two readers of each kernel agreed before any disagreement was settled: the
    share of kernels with the same set, and per technique the share agreeing and Cohen's kappa
    (None where both readers gave every kernel the same answer, say never naming it: kappa is
    undefined there)."""
    from sklearn.metrics import cohen_kappa_score  # imported here: it takes a second to load

    pairs = [label["readers"] for label in labels if len(label.get("readers", [])) == 2]
    out: dict = {"kernels": len(pairs), "same_set": _share(sum(set(a) == set(b) for a, b in pairs), len(pairs))[0]}
    for t in TECHNIQUES:
        first, second = [t in a for a, _ in pairs], [t in b for _, b in pairs]
        agree = _share(sum(x == y for x, y in zip(first, second)), len(pairs))[0]
        kappa = float(cohen_kappa_score(first, second)) if len(set(first) | set(second)) == 2 else None
        out[t] = {"agree": agree, "kappa": kappa}
    return out


def elite_audit(archives: dict[str, dict], labels: dict) -> dict:
    """The archive elites of a config's arms (`archives`: arm -> archive.json) against the
    reading in `labels` (an elite-labels file): each distinct elite once, how many are labelled,
    the readers' agreement, and per technique how the archive's recorded descriptor (text,
    corrected by the object where the config verifies techniques) and the text detector alone
    read the labelled ones."""
    elites = _distinct_elites(archives.values())
    kernels = labels.get("kernels", {})
    labelled = {h: kernels[h] for h in elites if h in kernels}
    rows = [
        {
            "problem": elites[h]["problem"],
            "truth": sorted(label["techniques"]),
            "recorded": sorted(elites[h]["techniques"]),
            "text": sorted(detect(elites[h]["source"], elites[h]["problem"])),
        }
        for h, label in labelled.items()
    ]
    return {
        "elites": len(elites),
        "labelled": len(labelled),
        "settled": sum(label.get("decided") == "adjudicated" for label in labelled.values()),
        "readers": _readers_agree(list(labelled.values())),
        "recorded": _read_as(rows, "recorded"),
        "text": _read_as(rows, "text"),
    }


def blind_elites(config_path: str | Path, folder: str | Path, seed: int = 0) -> dict[str, str]:
    """Write each distinct elite of the config's arms (each arm's archive.json) that the
    config's labels file does not hold yet to `folder` as kNNN.c, shuffled and with nothing but
    the source, for readers to label without seeing the archive's reading; returns (and writes
    as index.json) file name -> source hash, what merge_readings takes back."""
    config = open_config(config_path)
    labels_path = Path(config.results_dir) / ELITE_LABELS
    known = read_json(labels_path).get("kernels", {}) if labels_path.exists() else {}
    elites = _distinct_elites(_archive(cfg.out_dir) for cfg in config.experiments.values())
    todo = sorted(h for h in elites if h not in known)
    random.Random(seed).shuffle(todo)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    index = {}
    for i, h in enumerate(todo):
        (folder / f"k{i:03d}.c").write_text(elites[h]["source"])
        index[f"k{i:03d}.c"] = h
    write_json(folder / "index.json", index)
    return index


def merge_readings(
    labels_path: str | Path, index: dict[str, str], first: dict, second: dict, settled: dict
) -> list[str]:
    """Add two readers' labels (file name -> {"techniques", "note", "sure"}) of blind_elites'
    files to the labels file. A kernel both read alike and neither flagged (`sure: false`) is
    `agreed`; one they read differently, or one a reader flagged as borderline, needs an entry
    in `settled` (file name -> {"techniques", "note"}: the decision and the rule behind it) and
    is `adjudicated`. Both readings, their notes and flags are kept. Returns the files that
    still need a decision (nothing is written then)."""

    def open_question(name: str) -> bool:
        differ = sorted(first[name]["techniques"]) != sorted(second[name]["techniques"])
        return differ or not (first[name].get("sure", True) and second[name].get("sure", True))

    unsettled = [name for name in index if open_question(name) and name not in settled]
    if unsettled:
        return unsettled
    path = Path(labels_path)
    labels = read_json(path) if path.exists() else {"guide": "docs/technique_labels.md", "kernels": {}}
    for name, h in index.items():
        readings = (first[name], second[name])
        decision = settled.get(name)
        labels["kernels"][h] = {
            "techniques": sorted((decision or first[name])["techniques"]),
            "decided": "adjudicated" if decision else "agreed",
            "note": decision["note"] if decision else first[name].get("note", ""),
            "readers": [sorted(r["techniques"]) for r in readings],
            "reader_notes": [r.get("note", "") for r in readings],
            "reader_sure": [r.get("sure", True) for r in readings],
        }
    write_json(path, labels)
    return []


#: What the arms are compared on: (metric, the samples it is computed on).
VERSUS = (
    ("expected_speedup", "plain"),
    ("pass_at_1", "plain"),
    ("compliance", "restricted"),
    ("compliant_expected_speedup", "restricted"),
)
#: The references, each with the arms compared against it: every arm against plain GRPO, and
#: the later readings against the first (does a change mend what S0 does?).
REFERENCES = {
    "grpo": None,
    "s0_hard": ("s1_soft", "s2_qd_bonus", "s3_curriculum", "s4_combined", "s5_require"),
}


def comparisons(arms: dict[str, dict]) -> list[dict]:
    """The arms (name -> {"plain", "restricted": samples, "trained": bool}) against each
    reference of REFERENCES present: per VERSUS metric, the difference with its 95% interval,
    the ratio, the p-value and a verdict, kept or not by Holm's correction over all of them."""
    seeds = lambda rows, trained: [r["seed"] for r in rows] if trained else None  # noqa: E731
    pairs = []
    for reference, against in REFERENCES.items():
        if reference not in arms:
            continue
        ref = arms[reference]
        for name, arm in arms.items():
            if name == reference or (against is not None and name not in against):
                continue
            entry = {"a": name, "b": reference, "metrics": {}}
            for metric, which in VERSUS:
                a, b = arm[which], ref[which]
                if a and b:
                    entry["metrics"][metric] = difference(
                        a, b, metric, seeds(a, arm["trained"]), seeds(b, ref["trained"])
                    )
            pairs.append(entry)
    judge([d for p in pairs for d in p["metrics"].values()])
    return pairs


def sqd_study(configs: list[str | Path]) -> dict:
    """The study over the finished arms of each config (unfinished ones are listed as missing).
    Each config's arms must agree in everything but their SQD settings (compare.check_fair);
    arms of one config made by different code, or measured on different machines, are named in
    `mixed_code` and `mixed_machine`."""
    variants: dict[str, dict] = {}
    missing, mixed, mixed_machine, versus, audits = [], {}, {}, {}, {}
    for path in configs:
        config = open_config(path)
        check_fair(config, suites=True)
        part = Path(config.results_dir).name
        labels_path = Path(config.results_dir) / ELITE_LABELS
        labels = read_json(labels_path) if labels_path.exists() else {}
        codes, machines, arms, archives = {}, {}, {}, {}
        for name, cfg in config.experiments.items():
            if not is_finished(cfg.out_dir):
                missing.append(f"{part}/{name}")
                continue
            variants.setdefault(name, {})[part] = arm_summary(cfg.out_dir, cfg.kind == "grpo")
            if labels:  # the elites' sources are only read to audit their labels
                archives[name] = _archive(cfg.out_dir)
                if archives[name]:
                    variants[name][part]["archive_reread"] = archive_reread(archives[name], labels.get("kernels", {}))
            saved = read_json(cfg.out_dir / "config.json")
            codes[name] = saved.get("measurement") or saved.get("code")
            machines[name] = recorded_class(saved)
            arms[name] = {
                "plain": read_jsonl(cfg.out_dir / "samples.jsonl"),
                "restricted": read_jsonl(cfg.out_dir / RESTRICTED_SAMPLES, missing_ok=True),
                "trained": cfg.kind == "grpo",
            }
        if len(set(codes.values())) > 1:
            mixed[part] = codes
        if len(set(machines.values())) > 1:
            mixed_machine[part] = machines
        versus[part] = comparisons(arms)
        if labels:
            audits[part] = {"labels": str(labels_path), **elite_audit(archives, labels)}
    return {
        "configs": [str(p) for p in configs],
        "variants": variants,
        "comparisons": versus,
        "missing": missing,
        "mixed_code": mixed,
        "mixed_machine": mixed_machine,
        "elite_audit": audits,
    }


def write_sqd_study(configs: list[str | Path], out: str | Path) -> dict:
    """sqd_study(configs), written to `out` (results/sqd_study.json)."""
    study = sqd_study(configs)
    write_json(Path(out), study)
    return study


#: The arms as the README and the notebook name them.
NAMES = {
    "baseline": "base policy",
    "grpo": "plain GRPO",
    "s0_hard": "S0 hard violation",
    "s1_soft": "S1 soft violation",
    "s2_qd_bonus": "S2 QD bonus",
    "s3_curriculum": "S3 curriculum",
    "s4_combined": "S4 combined",
    "s5_require": "S5 required sets",
}

#: The study table's columns: (pooled key, heading, digits).
_COLUMNS = (
    ("pass_at_1", "pass@1", 2),
    ("expected_speedup", "expected speedup", 1),
    ("compliance", "compliance", 2),
    ("dominant_share", "commonest ok technique set", 2),
    ("distinct_technique_sets_ok", "distinct ok sets", 0),
    ("coverage", "coverage", 2),
    ("qd_score", "QD score", 0),
    ("measured", "measured in training", 0),
    ("training_best_speedup", "best training speedup", 1),
)


def markdown_tables(study: dict, names: dict[str, str] | None = None) -> list[str]:
    """The README's tables of the study, two per config: one row per arm (pooled figures, with
    95% intervals where the study has them) and one row per comparison (each difference with
    its interval, in bold where Holm's correction keeps it); then, for a config with an elite
    audit, its two tables (audit_tables). `names` gives the
    arms' display names (default NAMES)."""
    names = NAMES if names is None else names
    parts = list(dict.fromkeys(part for v in study["variants"].values() for part in v))
    tables = []
    for part in parts:
        rows = []
        for name, blocks in study["variants"].items():
            if part not in blocks:
                continue
            pooled = blocks[part]["pooled"]
            cells = [names.get(name, name)]
            for key, _, digits in _COLUMNS:
                text = interval_text(pooled.get(key), pooled.get(f"{key}_ci"), digits)
                if key == "dominant_share" and pooled.get("dominant_set"):
                    text += f" ({pooled['dominant_set']})"
                cells.append(text)
            rows.append(cells)
        tables.append(table_text(["arm", *(h for _, h, _ in _COLUMNS)], rows))
        rows = []
        for pair in study["comparisons"].get(part, []):
            cells = [f"{names.get(pair['a'], pair['a'])} − {names.get(pair['b'], pair['b'])}"]
            for metric, _ in VERSUS:
                d = pair["metrics"].get(metric)
                if d is None:
                    cells.append("—")
                    continue
                text = interval_text(d["difference"], d["ci"], 2, sign=True)
                if metric.endswith("expected_speedup") and d.get("ratio") is not None and d.get("ratio_ci"):
                    text += f" ({ratio_text(d['ratio'], d['ratio_ci'])})"
                cells.append(held_text(text, d.get("verdict_holm")))
            rows.append(cells)
        if rows:
            head = ["pair", "expected speedup", "pass@1", "compliance", "compliant expected speedup"]
            tables.append(table_text(head, rows))
        if part in study.get("elite_audit", {}):
            tables += audit_tables(study, part, names)
    return tables


def audit_tables(study: dict, part: str, names: dict[str, str] | None = None) -> list[str]:
    """The README's two tables of a config's elite audit: per arm, its first seed's elites, how
    many the reading leaves in their cell, and coverage and QD score as recorded → as reread; per
    technique, how often the archive recorded it among the labelled elites, its precision and
    recall with 95% Wilson intervals, and the readers' kappa."""
    names = NAMES if names is None else names
    rows = []
    for name, blocks in study["variants"].items():
        for problem, r in (blocks.get(part, {}).get("archive_reread") or {}).items():
            rows.append(
                [
                    names.get(name, name) + (f" ({problem})" if problem != part else ""),
                    str(r["elites"]),
                    f"{r['in_their_cell']} of {r['labelled']}",
                    f"{number_text(r['coverage'], 3)} → {number_text(r['coverage_reread'], 3)}",
                    f"{number_text(r['qd_score'], 0)} → {number_text(r['qd_score_reread'], 0)}",
                ]
            )
    head = ["arm", "elites (first seed)", "labelled elites in their cell", "coverage", "QD score"]
    tables = [table_text(head, rows)]
    audit = study["elite_audit"][part]
    rows = []
    for t in TECHNIQUES:
        s = audit["recorded"][t]
        rows.append(
            [
                t,
                str(s["tp"] + s["fp"]),
                interval_text(s["precision"], s["precision_ci"], 2),
                interval_text(s["recall"], s["recall_ci"], 2),
                number_text(audit["readers"][t]["kappa"], 2),
            ]
        )
    head = ["technique", "recorded", "precision", "recall", "readers' kappa"]
    tables.append(table_text(head, rows))
    return tables
