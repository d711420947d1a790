"""The experiments: the base policy and the trained arms share one evaluation protocol and one code path.

    from lab.config import load_config
    cfg = load_config("configs/default.yaml").experiment("grpo")
    metrics = run_experiment(cfg)            # what `lab run` and the notebooks call

An experiment of kind `baseline` evaluates the policy as it is; kind `grpo` trains it
first, once per seed of `seeds` (lab.rl.train; GRPO+SQD when `sqd` is set; after a
rejection-sampling warm start, lab.rl.warm_start, when `warm_start` is set) into
`<runs_dir>/<name>/s<seed>/`, resuming from the last checkpoint of the same training
config. A warm start is made once per seed under `<runs_dir>/warm_starts/` and shared by
every arm that would make the same one (`warm_start_dir`).

Evaluation protocol (v2): for every seed, sample `evaluation.samples` completions spread
over the problem's held-out phrasings (`eval_prompts`, never shown in training) at
`evaluation.temperature`, measure them as `measure` says, turn each status into a reward
(lab.rl.reward, the one place that does), mark the completions whose exact text was
scored in that seed's training (`seen_in_training`), and write `<results_dir>/<name>/`:

- config.json: the resolved experiment config, the training phrasings (`train_prompts`),
  the code fingerprint, git commit and machine;
- samples.jsonl: each completion with its seed, phrasing, EvalResult, reward, detected
  techniques and `seen_in_training`;
- samples_restricted.jsonl (with `evaluation.restricted_samples`): the same for held-out
  phrasings that permit only some techniques (`restricted_sets`), each with `compliant`;
  metrics.json then has their pass@1, compliance and expected speedup under `restricted`;
- train_log.jsonl, training_samples.jsonl, excessive.jsonl, archive.json, archive_stats.json,
  warm_start.json: every seed's training log and scored training completions (trained runs);
- dynamics.json: what the training batches wrote per step, by kernel family, with the
  entropy and the zero-spread groups (lab.analysis.dynamics; trained runs);
- learning_curve.json: the same protocol, with `evaluation.curve_samples` per seed, at
  step 0, after the warm start and at every checkpoint, ending with the final metrics;
- metrics.json: lab.analysis.metrics.summarize(...) with 95% bootstrap intervals
  (lab.analysis.intervals: a trained arm's training seeds are resampled as clusters), the
  figures per seed and without the samples seen in training, the truncation rate, where it
  was measured, and "complete": true — written last, so a run is finished exactly when it
  exists.

A suite experiment (`suite` set) is evaluated the same way on every (problem, mode)
entry, with the prompt stating the mode and the kernel measured in it (serial on 1
thread): samples.jsonl holds them all, each with its problem and mode, and metrics.json
one row per entry (`rows`) and the means over the problems of each mode (`by_mode`);
lab.analysis.suite puts the arms side by side.

Every file is written atomically (lab.files). config.json also holds the result's
provenance (lab.pipeline.reuse.provenance: measurement version, commit and dirty flag,
machine, the policy's weights sha256, date); a finished experiment is reused when
lab.pipeline.reuse finds it current for this code, machine, policy and config, and
`overwrite=True` (`lab run --overwrite`, `make reproduce FRESH=1`) measures afresh. Training
checkpoints are resumed only by the code that wrote them, byte for byte
(lab.provenance.exact_code).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import random
import shutil
import statistics
from collections import Counter
from pathlib import Path

from filelock import FileLock

from lab.analysis.dynamics import family_dynamics
from lab.analysis.intervals import metric_intervals, metric_values
from lab.analysis.metrics import summarize
from lab.config import ExperimentConfig, LabConfig
from lab.files import read_json, read_jsonl, write_json, write_jsonl
from lab.harness.evaluate import evaluate_batch
from lab.harness.extract import source_or_none
from lab.harness.machine import BLAS_PROBLEMS, machine_class, openblas_gflops
from lab.harness.problems import load_problem
from lab.pipeline.plan import arm_order
from lab.pipeline.reuse import provenance, reusable
from lab.policy.prompts import prompt_texts
from lab.policy.sample import load_policy, sample_records
from lab.provenance import exact_code, policy_sha256
from lab.results import EXCESSIVE, RESTRICTED_SAMPLES, TRAINING_SAMPLES, is_finished, open_config
from lab.rl.reward import reward_from_result
from lab.rl.sqd import descriptor, subsets_up_to
from lab.rl.train import (
    config_changes,
    import_unsloth_first,
    text_hash,
    train,
)
from lab.rl.warm_start import warm_start
from lab.techniques import TECHNIQUES, confirm, detect, problem_techniques

WARM_START = "warm_start"  # the phase of a run's warm start (training records, the learning curve)
WARM_STARTS = "warm_starts"  # under runs_dir: the warm starts, each shared by every arm that would make it
RUN_CODE = "code.txt"  # the exact code and machine class of a training run: checkpoints resume only under both


def open_experiment(config_path: str | Path, name: str, overrides: list[str] | tuple = ()) -> ExperimentConfig:
    """One experiment of a config file, after lab.results.open_config (this machine's results folder)."""
    return open_config(config_path, overrides).experiment(name)


def is_complete(cfg: ExperimentConfig, quiet: bool = False) -> bool:
    """True if `cfg.out_dir` holds a finished run of this very config that is current for this
    code, machine and policy (lab.pipeline.reuse), so it is reused; a run cut off midway, or
    one that is not current, is run again."""
    saved = cfg.out_dir / "config.json"
    if not (is_finished(cfg.out_dir) and saved.exists()):
        return False
    ok, why = reusable(read_json(saved), cfg)
    if not ok and not quiet:
        print(f"{cfg.out_dir}: {why}; running it again", flush=True)
    return ok


def _start(cfg: ExperimentConfig) -> None:
    cfg.out_dir.mkdir(parents=True, exist_ok=True)
    for stale in (
        "metrics.json",
        RESTRICTED_SAMPLES,
        "train_log.jsonl",
        "archive.json",
        "archive_stats.json",
        TRAINING_SAMPLES,
        EXCESSIVE,
        "learning_curve.json",
        "warm_start.json",
    ):
        (cfg.out_dir / stale).unlink(missing_ok=True)
    write_json(
        cfg.out_dir / "config.json",
        {
            **cfg.to_dict(),
            "code": exact_code(),
            **provenance(cfg),
            # What training may show the policy (the phrasings, in each entry's mode); evaluation
            # asks the held-out ones, listed in metrics.json as eval_prompts.
            "train_prompts": train_prompts(cfg),
        },
    )


def train_prompts(cfg: ExperimentConfig) -> list[str] | dict[str, list[str]]:
    """The training phrasings of a single problem (a list), or of each `problem/mode` of a suite."""
    texts = {
        f"{e.problem}/{e.mode}": prompt_texts(e.problem, "train", e.mode, cfg.measure.threads) for e in cfg.entries
    }
    return next(iter(texts.values())) if cfg.suite is None else texts


def evaluate_policy(
    cfg: ExperimentConfig,
    models: dict[int, str] | str,
    seen: dict[int, set[str]] | None = None,
    curve: dict | None = None,
) -> dict:
    """The evaluation protocol: samples.jsonl, then metrics.json (written last).

    `models` maps each seed to the policy it evaluates (one trained run per seed), or is one
    policy sampled with every seed of the config. Every (problem, mode) entry is sampled
    `evaluation.samples` times per seed over the held-out phrasings and measured in its mode;
    `seen` (seed -> text hashes scored in that seed's training) marks `seen_in_training`;
    a learning `curve` (learning_curve) gets these final metrics as its last point and is
    written to learning_curve.json.
    A single problem's metrics sit at the top level; a suite's in one row per entry, with
    the means per mode."""
    models = models if isinstance(models, dict) else dict.fromkeys(cfg.seeds, models)
    trained = cfg.kind != "baseline"
    samples = _sample_and_score(cfg, models, cfg.evaluation.samples, seen or {})
    write_jsonl(cfg.out_dir / "samples.jsonl", samples)
    rows = [_entry_row(cfg, e.problem, e.mode, _of_entry(samples, e.problem, e.mode), trained) for e in cfg.entries]
    if cfg.evaluation.restricted_samples:
        restricted = _sample_and_score(cfg, models, cfg.evaluation.restricted_samples, seen or {}, restricted=True)
        write_jsonl(cfg.out_dir / RESTRICTED_SAMPLES, restricted)
        for row, e in zip(rows, cfg.entries):
            row["restricted"] = _restricted_row(_of_entry(restricted, e.problem, e.mode), trained)
    if curve is not None:
        curve["points"].append(_curve_point(cfg.train.steps, list(models), rows))
        write_json(cfg.out_dir / "learning_curve.json", curve)
    metrics = {"experiment": cfg.name, "model": models[cfg.seeds[0]] if len(set(models.values())) == 1 else models}
    metrics["seeds"] = list(models)
    metrics["seeds_are_training_runs"] = trained  # the intervals resample them as clusters
    if cfg.suite is None:
        metrics.update(rows[0])
    else:
        metrics.update(
            {"suite": [f"{e.problem}/{e.mode}" for e in cfg.suite], "rows": rows, "by_mode": mode_means(rows)}
        )
    machines = sorted({r["machine"] for r in samples if r.get("machine")})
    metrics.update(
        {
            "host": sorted({r["host"] for r in samples if r.get("host")}),
            # One fingerprint when one kind of machine measured every sample (a cluster refuses
            # workers of another kind); a list says the samples were measured on several.
            "machine": machines[0] if len(machines) == 1 else (machines or machine_class()),
            "isolation": sorted({r["isolation"] for r in samples if r.get("isolation")}),
        }
    )
    _record_measuring_class(cfg, machines)
    if (cfg.out_dir / TRAINING_SAMPLES).exists():
        metrics["training"] = training_summary(cfg.out_dir)
    archive_path = cfg.out_dir / "archive.json"
    if archive_path.exists():
        summaries = read_json(archive_path)
        archive = {p: {k: v for k, v in a.items() if k != "elites"} for p, a in summaries.items()}
        metrics["archive"] = archive[cfg.problem] if cfg.suite is None else archive
        per_seed = cfg.out_dir / "archive_stats.json"
        if per_seed.exists():
            metrics["archive_per_seed"] = read_json(per_seed)
    metrics["complete"] = True
    write_json(cfg.out_dir / "metrics.json", metrics)
    return metrics


def _record_measuring_class(cfg: ExperimentConfig, machines: list[str]) -> None:
    """The machine class of a result is the class that measured it: the cluster's workers' when
    they measured every sample (a cluster refuses workers of another class), not the client's,
    which config.json recorded when the run started."""
    path = cfg.out_dir / "config.json"
    saved = read_json(path)
    if len(machines) == 1 and saved.get("machine_class") != machines[0]:
        write_json(path, {**saved, "machine_class": machines[0]})


def training_summary(out_dir: Path) -> dict:
    """What training saw, from its log and its record of scored completions: how many were
    scored, the best rate and speedup among them (overall and per seed), the share of
    completions cut off at max_completion_length (TRL's clipped ratio, mean over steps) and
    the share of groups whose rewards had no spread (no gradient)."""
    scored = read_jsonl(out_dir / TRAINING_SAMPLES)
    log = read_jsonl(out_dir / "train_log.jsonl")
    ok = [r for r in scored if r["status"] == "ok"]
    seeds = list(dict.fromkeys(r["seed"] for r in scored))

    def best(rows, key):
        values = [r[key] for r in rows if r.get(key) is not None]
        return max(values) if values else None

    return {
        "scored": len(scored),
        "ok": len(ok),
        "best_gflops": best(ok, "gflops"),
        "best_speedup": best(ok, "speedup"),
        "best_gflops_per_seed": {str(s): best([r for r in ok if r["seed"] == s], "gflops") for s in seeds},
        "truncation_rate": statistics.fmean(r.get("completions/clipped_ratio", 0.0) for r in log) if log else None,
        "zero_spread_groups": statistics.fmean(r.get("frac_reward_zero_std", 0.0) for r in log) if log else None,
    }


def _of_entry(samples: list[dict], problem: str, mode: str) -> list[dict]:
    return [s for s in samples if s["problem"] == problem and s["mode"] == mode]


def restricted_sets(problem: str, mode: str | None, seed: int, num: int) -> list[frozenset[str]]:
    """The permitted sets of `num` technique-restricted prompts for one seed: drawn with
    replacement from the subsets of at most two of the techniques that apply to the problem
    (OpenMP never in serial mode), by a generator seeded with the problem, mode and seed, so
    that every arm is asked the same."""
    applicable = [t for t in problem_techniques(problem) if not (mode == "serial" and t == "openmp")]
    options = subsets_up_to(2, applicable)
    return random.Random(f"{problem}/{mode}/{seed}").choices(options, k=num)


def _generation_calls(entry, seed: int, num: int, restricted: bool, phrasings: int) -> list[tuple]:
    """(permitted set, phrasing, count) per generation call: for the plain prompt one call
    spreading `num` over the phrasings; for the restricted prompts, prompt i permits the i-th
    of `restricted_sets` and asks phrasing (i + seed x num) mod `phrasings`: the phrasings in
    turn, each seed going on where the previous one stopped, so that every held-out phrasing
    is asked even when there are fewer prompts per seed than phrasings. Prompts alike are
    generated together."""
    if not restricted:
        return [(None, 0, num)]
    draws = restricted_sets(entry.problem, entry.mode, seed, num)
    calls = Counter((permitted, (i + seed * num) % phrasings) for i, permitted in enumerate(draws))
    return [(permitted, first, count) for (permitted, first), count in calls.items()]


def _sample_and_score(
    cfg: ExperimentConfig,
    models: dict[int, str],
    num: int,
    seen: dict[int, set[str]],
    restricted: bool = False,
) -> list[dict]:
    """`num` completions per seed and (problem, mode) of the held-out phrasings, scored: each
    sample record with its EvalResult, reward, techniques, seed and `seen_in_training`. With
    `restricted`, each prompt permits one of `restricted_sets` and its record says whether the
    kernel kept to it (`compliant`: the detected techniques are all permitted)."""
    policies: dict[str, object] = {}
    samples: list[dict] = []
    for seed, model in models.items():
        if model not in policies:
            policies[model] = load_policy(model)
        for entry in cfg.entries:
            problem = load_problem(entry.problem)
            measure = cfg.measure.for_mode(entry.mode)
            records, sample_s = [], 0.0
            what = "technique-restricted " if restricted else ""
            print(
                f"{cfg.name}: sampling {num} {what}completions, {entry.problem}/{entry.mode}, seed {seed}", flush=True
            )
            for permitted, first, count in _generation_calls(entry, seed, num, restricted, len(problem.eval_prompts)):
                part, seconds = sample_records(
                    model,
                    entry.problem,
                    count,
                    permitted,
                    cfg.evaluation.temperature,
                    seed,
                    cfg.evaluation.max_new_tokens,
                    policy=policies[model],
                    mode=entry.mode,
                    threads=cfg.measure.threads,
                    split="eval",
                    phrasings=len(problem.eval_prompts) if permitted is None else 1,
                    first_phrasing=first,
                )
                if permitted is not None:  # ids unique within the seed's restricted samples
                    for rec in part:
                        rec["id"] += f"-{descriptor(permitted)}-p{first}"
                records += part
                sample_s += seconds
            results = evaluate_batch([r["completion"] for r in records], entry.problem, measure, compute=cfg.compute)
            for rec, res in zip(records, results):
                used = _techniques(rec["completion"], problem.signature, entry.problem, res.object_facts)
                sample = {
                    **rec,
                    **res.to_dict(),
                    "mode": entry.mode,
                    "reward": reward_from_result(res, cfg.reward),
                    "techniques": used,
                    "seen_in_training": text_hash(rec["completion"]) in seen.get(seed, set()),
                    "sample_s": round(sample_s / max(1, len(records)), 4),
                }
                if restricted:
                    sample["compliant"] = used is not None and set(used) <= set(rec["permitted"])
                samples.append(sample)
    return samples


def _restricted_row(samples: list[dict], trained: bool) -> dict:
    """Figures of one entry's technique-restricted samples, each with its interval: pass@1,
    compliance (the share of ok kernels that use only permitted techniques), expected speedup
    (every ok kernel's, as on the plain prompt) and the compliant expected speedup (a kernel
    that broke the restriction counts 0, as a failure does: what the prompt asked for)."""
    metrics = ("pass_at_1", "compliance", "expected_speedup", "compliant_expected_speedup")
    cis = metric_intervals(samples, [s["seed"] for s in samples] if trained else None, metrics=metrics)
    return {"n_samples": len(samples), **metric_values(samples, metrics)} | {f"{m}_ci": cis[f"{m}_ci"] for m in metrics}


#: The headline metrics a row repeats per seed and over the samples not seen in training.
_SUBSET_METRICS = ("n_samples", "pass_at_1", "mean_gflops_ok", "median_gflops_ok", "best_gflops", "expected_speedup")


def _openblas(samples: list[dict], problem_name: str, n: int, threads: int) -> float | None:
    """OpenBLAS's GFLOP/s on the machine that measured `samples`: timed here now when it was
    this one, else the median of the calibrations the measuring hosts (cluster workers)
    recorded in the results. None for problems without a BLAS routine."""
    if problem_name not in BLAS_PROBLEMS:
        return None
    here = machine_class()
    elsewhere = [
        s["calibration"]["openblas_gflops"]
        for s in samples
        if s.get("machine") not in (None, "", here) and (s.get("calibration") or {}).get("openblas_gflops")
    ]
    return statistics.median(elsewhere) if elsewhere else openblas_gflops(problem_name, n, threads)


def _entry_row(cfg: ExperimentConfig, problem_name: str, mode: str, samples: list[dict], trained: bool) -> dict:
    """The metrics of one (problem, mode) over every seed's samples: lab.analysis.metrics plus
    95% intervals (training seeds resampled as clusters for a trained arm), the figures of
    each seed, the same over the samples not seen in training, the truncation rate, the
    technique sets of ok kernels, OpenBLAS where the problem has it, and the prompts asked."""
    problem = load_problem(problem_name)
    measure = cfg.measure.for_mode(mode)
    blas = _openblas(samples, problem_name, measure.n or problem.timed_n(measure.mode), measure.threads)
    clusters = [s["seed"] for s in samples] if trained else None
    row = {"problem": problem_name, "mode": measure.mode, "threads": measure.threads, "unit": problem.unit}
    row.update(summarize(samples, blas))
    row.update(metric_intervals(samples, clusters))
    if blas:
        median, ci = row["median_gflops_ok"], row["median_gflops_ok_ci"]
        row["median_fraction_of_openblas"] = median / blas if median is not None else None
        row["median_fraction_of_openblas_ci"] = [x / blas for x in ci] if ci else None
    row["per_seed"] = {
        str(seed): {
            k: v for k, v in summarize([s for s in samples if s["seed"] == seed], blas).items() if k in _SUBSET_METRICS
        }
        for seed in dict.fromkeys(s["seed"] for s in samples)
    }
    unseen = [s for s in samples if not s.get("seen_in_training")]
    row["seen_in_training"] = len(samples) - len(unseen)
    row["unseen"] = {
        **{k: v for k, v in summarize(unseen, blas).items() if k in _SUBSET_METRICS},
        **(metric_intervals(unseen, [s["seed"] for s in unseen] if trained else None) if unseen else {}),
    }
    row["truncation_rate"] = sum(bool(s.get("truncated")) for s in samples) / len(samples) if samples else None
    ok_sets = Counter(
        "+".join(s["techniques"]) or "none" for s in samples if s["status"] == "ok" and s["techniques"] is not None
    )
    row["distinct_technique_sets_ok"] = len(ok_sets)
    row["technique_sets_ok"] = dict(ok_sets.most_common())
    row["eval_prompts"] = prompt_texts(problem_name, "eval", mode, cfg.measure.threads)
    row["sample_s"] = round(sum(s.get("sample_s", 0.0) for s in samples), 2)
    return row


#: Metrics averaged over the problems of a mode (suite-level figures).
_MODE_MEANS = ("pass_at_1", "expected_speedup")
_MODE_MEANS_BY_K = ("pass_at_k", "speedup_n_at_k", "efficiency_n_at_k")


def mode_means(rows: list[dict]) -> dict[str, dict]:
    """Per execution model: the mean over its problems of pass@1, expected speedup and the
    @k metrics (k present in every row), and how many problems it averages."""
    out = {}
    for mode in dict.fromkeys(r["mode"] for r in rows):
        group = [r for r in rows if r["mode"] == mode]
        means: dict = {"problems": len(group)}
        for key in _MODE_MEANS:
            values = [r[key] for r in group if r.get(key) is not None]
            means[key] = statistics.fmean(values) if values else None
        for key in _MODE_MEANS_BY_K:
            ks = set.intersection(*(set(r.get(key) or {}) for r in group))
            means[key] = {k: statistics.fmean(r[key][k] for r in group) for k in sorted(ks, key=int)}
        out[mode] = means
    return out


def _techniques(completion: str, signature: str, problem: str, facts: dict | None = None) -> list[str] | None:
    """Techniques detected in the completion's kernel (registry order; those that apply to
    `problem`), corrected by its compiled object's `facts` (lab.techniques.confirm); None if
    no kernel extracts."""
    source = source_or_none(completion, signature)
    if source is None:
        return None
    used = confirm(detect(source, problem), facts, problem)
    return [t for t in TECHNIQUES if t in used]


def run_experiment(cfg: ExperimentConfig, overwrite: bool = False) -> dict:
    """Run one experiment (train first, once per seed, if its kind is grpo) and return its
    metrics; a finished run of the same config is reused unless `overwrite`."""
    if is_complete(cfg) and not overwrite:
        print(f"{cfg.out_dir}: finished and current; reusing it (overwrite to measure again)", flush=True)
        return read_json(cfg.out_dir / "metrics.json")
    if cfg.train.use_unsloth:
        import_unsloth_first()  # before sampling or the warm start load the model with transformers
    _start(cfg)
    if cfg.kind == "baseline":
        return evaluate_policy(cfg, cfg.model)
    runs = {seed: cfg.for_seed(seed) for seed in cfg.seeds}
    code = f"{exact_code()}-{machine_class()}"  # checkpoints resume only under this code, on this class
    finals = {}
    # With a warm start, GRPO starts from the fine-tuned policy (its folder is known ahead).
    warms = {seed: warm_start_dir(run, code) if cfg.warm_start else None for seed, run in runs.items()}
    for seed, run in runs.items():
        warm = warms[seed]
        grpo = dataclasses.replace(run, model=str(warm / "final")) if warm else run
        if overwrite or config_changes(run.run_dir, grpo) or _other_code(run.run_dir, code):
            if run.run_dir.exists():
                print(f"{run.run_dir}: starting training afresh", flush=True)
            shutil.rmtree(run.run_dir, ignore_errors=True)
        run.run_dir.mkdir(parents=True, exist_ok=True)
        (run.run_dir / RUN_CODE).write_text(code + "\n")
        if warm:
            print(f"{cfg.name}: warm start of seed {seed} into {warm}", flush=True)
            # Another process may make or reuse the same warm start (arms run side by side).
            with FileLock(str(warm) + ".lock"):
                warm_start(run, warm, warm_start_fingerprint(run))
        print(f"{cfg.name}: training seed {seed} into {run.run_dir}", flush=True)
        finals[seed] = str(train(grpo))
    _collect_training(cfg, runs, warms)
    seen: dict[int, set[str]] = {seed: set() for seed in runs}
    for row in read_jsonl(cfg.out_dir / TRAINING_SAMPLES):
        seen[row["seed"]].add(row["text_hash"])
    curve = learning_curve(cfg, runs, seen, warms) if cfg.evaluation.curve_samples else None
    return evaluate_policy(cfg, finals, seen, curve)


def _other_code(run_dir: Path, code: str) -> bool:
    """True if run_dir holds training made by other code than `code` (this code's
    fingerprint), or of unknown code: the checkpoints of a training run are resumed or reused
    only by the code that started it, as finished results are (is_complete)."""
    saved = run_dir / RUN_CODE
    return run_dir.exists() and (not saved.exists() or saved.read_text().strip() != code)


def warm_start_fingerprint(run: ExperimentConfig) -> dict:
    """What the warm start of a run reads of its config (lab.rl.warm_start): the policy, the
    seed, what it trains on and how that is measured (problem, suite, measure, compute), its
    own settings, and the completion length and precision it samples and fine-tunes with. Arms
    that differ only in what GRPO does after it (reward, SQD, the rest of `train`) agree on it."""
    settings = run.to_dict()
    keys = ("model", "seed", "problem", "suite", "measure", "compute", "warm_start")
    return {
        **{k: settings.get(k) for k in keys},
        "train": {k: settings["train"][k] for k in ("max_completion_length", "bf16")},
    }


def warm_start_dir(run: ExperimentConfig, code: str | None = None) -> Path:
    """The folder of a run's warm start, shared by every arm of its runs_dir with the same
    fingerprint (`warm_start_fingerprint`), made by the same code on the same machine class
    (`code`, as checkpoints are resumed) from the same policy weights: a screen of GRPO settings
    makes each seed's warm start once. runs_dir/warm_starts/<key>/, with the fingerprint
    beside it (fingerprint.json)."""
    code = code or f"{exact_code()}-{machine_class()}"
    fingerprint = warm_start_fingerprint(run)
    made_by = {"fingerprint": fingerprint, "code": code, "policy_sha256": policy_sha256(run.model)}
    key = hashlib.sha256(json.dumps(made_by, sort_keys=True).encode()).hexdigest()[:16]
    folder = Path(run.runs_dir) / WARM_STARTS / key
    folder.mkdir(parents=True, exist_ok=True)
    if not (folder / "fingerprint.json").exists():
        write_json(folder / "fingerprint.json", made_by)
    return folder / "warm_start"


def _collect_training(cfg: ExperimentConfig, runs: dict[int, ExperimentConfig], warms: dict[int, Path | None]) -> None:
    """Every seed's training log and training samples (its warm start's, from `warms`, first),
    each row with its seed, into out_dir, and their dynamics by kernel family; the first seed's
    archive as archive.json and every seed's archive stats beside it."""
    log = [{"seed": seed, **row} for seed, run in runs.items() for row in read_jsonl(run.run_dir / "train_log.jsonl")]
    write_jsonl(cfg.out_dir / "train_log.jsonl", log)
    # A warm start's scored samples were shown in training too: step 0, phase warm_start.
    scored = []
    for seed, run in runs.items():
        warm = warms[seed] / "scored.jsonl" if warms[seed] else None
        if warm and warm.exists():
            scored += [{"seed": seed, "step": 0, "phase": WARM_START, **row} for row in read_jsonl(warm)]
        scored += [{"seed": seed, "phase": "grpo", **row} for row in read_jsonl(run.run_dir / TRAINING_SAMPLES)]
    write_jsonl(cfg.out_dir / TRAINING_SAMPLES, scored)
    # The kernels the excessive-speedup guard flagged, whole, to be read (lab.rl.guard).
    flagged = [
        {"seed": seed, **row}
        for seed, run in runs.items()
        for row in read_jsonl(run.run_dir / EXCESSIVE, missing_ok=True)
    ]
    write_jsonl(cfg.out_dir / EXCESSIVE, flagged)
    write_json(cfg.out_dir / "dynamics.json", family_dynamics(scored, log))
    if cfg.warm_start:
        write_json(
            cfg.out_dir / "warm_start.json",
            {str(seed): read_json(warms[seed] / "summary.json") for seed in runs},
        )
    archives = {seed: read_json(run.run_dir / "archive.json") for seed, run in runs.items()}
    write_json(cfg.out_dir / "archive.json", archives[cfg.seeds[0]])
    write_json(
        cfg.out_dir / "archive_stats.json",
        {
            str(seed): {p: {k: v for k, v in a.items() if k != "elites"} for p, a in arch.items()}
            for seed, arch in archives.items()
        },
    )


def learning_curve(
    cfg: ExperimentConfig,
    runs: dict[int, ExperimentConfig],
    seen: dict[int, set[str]],
    warms: dict[int, Path | None],
) -> dict:
    """The evaluation protocol at step 0 (phase `base`: the starting policy; and phase
    `warm_start`: the policy after the warm start in `warms`, if any) and at every saved
    checkpoint of each seed's run before the last step (evaluate_policy adds the final one),
    `evaluation.curve_samples` completions per seed and entry, with the same intervals as the
    final metrics: {"points": [{"step", "phase", "seeds", "entries": [row per entry]}]}."""
    stages: list[tuple[int, str, dict[int, str]]] = [(0, "base", dict.fromkeys(runs, cfg.model))]
    if cfg.warm_start is not None:
        stages.append((0, WARM_START, {s: str(warms[s] / "final") for s in runs}))
    checkpoints: dict[int, dict[int, str]] = {}
    for seed, run in runs.items():
        for ckpt in run.run_dir.glob("checkpoint-*"):
            step = int(ckpt.name.split("-")[1])
            if step < cfg.train.steps:
                checkpoints.setdefault(step, {})[seed] = str(ckpt)
    stages += [(step, "grpo", checkpoints[step]) for step in sorted(checkpoints)]
    points = []
    for step, phase, models in stages:
        print(f"{cfg.name}: learning curve, {phase} step {step} ({len(models)} seeds)", flush=True)
        samples = _sample_and_score(cfg, models, cfg.evaluation.curve_samples, seen)
        rows = [
            _entry_row(cfg, e.problem, e.mode, _of_entry(samples, e.problem, e.mode), trained=phase != "base")
            for e in cfg.entries
        ]
        points.append(_curve_point(step, sorted(models), rows, phase))
    return {"experiment": cfg.name, "curve_samples": cfg.evaluation.curve_samples, "points": points}


def _curve_point(step: int, seeds: list[int], rows: list[dict], phase: str = "grpo") -> dict:
    keep = {"problem", "mode", "threads", "unit", "n_samples", "openblas_gflops", "truncation_rate", "seen_in_training"}
    keep |= set(_CURVE_METRICS) | {f"{m}_ci" for m in _CURVE_METRICS}
    entries = [{k: v for k, v in r.items() if k in keep} for r in rows]
    return {"step": step, "phase": phase, "seeds": seeds, "entries": entries}


#: The metrics a learning curve follows (each with its interval).
_CURVE_METRICS = (
    "pass_at_1",
    "mean_gflops_ok",
    "median_gflops_ok",
    "expected_speedup",
    "best_gflops",
    "median_fraction_of_openblas",
)


def run_all(config: LabConfig, overwrite: bool = False) -> dict[str, dict]:
    """Every experiment of a config file, in the config's order (lab.pipeline.plan)."""
    return {name: run_experiment(config.experiments[name], overwrite) for name in arm_order(config)}
