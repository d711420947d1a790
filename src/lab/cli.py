"""The `lab` command line: one entry point for experiments, scoring and the lab's tools.

    lab run --config configs/default.yaml [--experiment grpo] [--set train.steps=10 ...] [--dry-run] [--notebooks DIR]
    lab status [--json]
    lab score PATH --problem dgemm [--mode serial|openmp] [--n N] [--threads T] [--json] [--emulate aarch64]
    lab score-batch IN.jsonl --out OUT.jsonl [--problem dgemm] [--mode M] [--threads T] [--jobs J]
    lab score-examples [--out results/examples]
    lab problems [--json]
    lab sample --model PATH_OR_ID --problem dgemm --num N [--permit TECH,...] --out S.jsonl
    lab compare [--config configs/default.yaml] [--against EXPERIMENT]   (finished arms only)
    lab calibrate | autotune | seed-model | seed-report
    lab --version

`lab run` is what make calls: it loads and validates the config (lab.config), then runs its
experiments in the config's order (lab.pipeline.plan), reusing those whose results are current
(lab.pipeline.reuse); `--notebooks` runs them through their notebooks instead; `--dry-run`
prints the resolved config and the run's cost. `lab status` says which results are current.
Scoring exits 0 whenever scoring completed, whatever the status. Bad input (a missing
file, an unknown problem, a bad config or JSONL) exits 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.metadata
import json
import os
import sys
from pathlib import Path

import yaml

from lab import paths
from lab.config import MODES, ComputeConfig, ConfigError, MeasureConfig, RewardConfig
from lab.files import write_json, write_jsonl
from lab.harness.cluster import ClusterError
from lab.harness.evaluate import EvalResult, evaluate_batch
from lab.harness.machine import machine_summary
from lab.harness.problems import UnknownProblem, list_problems, load_problem
from lab.harness.target import UnsupportedMachine
from lab.results import machine_path, machine_results_dir, report_provenance
from lab.rl.reward import HarnessReward, reward_from_result


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one clear line instead of usage + message
        raise UsageError(message)


class _Help(argparse.ArgumentDefaultsHelpFormatter, argparse.RawDescriptionHelpFormatter):
    """--help shows every option's default and keeps the descriptions' line breaks."""


def _read(path: str) -> str:
    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no such file: {path}")
    return p.read_text(errors="replace")


def _problem(name: str) -> str:
    try:
        return load_problem(name).name
    except UnknownProblem as err:
        raise UsageError(str(err)) from None


def _scorer(args: argparse.Namespace, problem: str) -> HarnessReward:
    """The reward function the training uses, measuring as the flags say."""
    threads = args.threads if args.threads is not None else (2 if args.mode == "openmp" else 1)
    try:
        measure = MeasureConfig(n=args.n, threads=threads, mode=args.mode)
    except ValueError as err:  # pydantic's ValidationError: its first error's message is the line to show
        errors = getattr(err, "errors", None)
        raise UsageError(errors()[0]["msg"].removeprefix("Value error, ") if errors else str(err)) from None
    cache, jobs = not args.no_cache, getattr(args, "jobs", None)
    address = getattr(args, "dask", None)
    compute = ComputeConfig(backend="dask", address=address) if address else None

    def evaluate(texts, name, config):
        return evaluate_batch(texts, name, config, cache=cache, n_jobs=jobs, progress=len(texts) > 1, compute=compute)

    return HarnessReward(problem, RewardConfig(), measure, evaluate=evaluate)


def _scored(results: list[EvalResult], scorer: HarnessReward) -> list[dict]:
    return [{**r.to_dict(), "reward": reward_from_result(r, scorer.reward)} for r in results]


def _summary(r: dict) -> str:
    if r["status"] == "ok":
        unit = load_problem(r["problem"]).unit if r.get("problem") else "GFLOP/s"
        return (
            f"ok  {r['gflops']:.2f} {unit}  ({r['time_s'] * 1e3:.3f} ms, {r['speedup']:.2f}x the baseline's "
            f"{r['baseline_gflops']:.2f} {unit})  reward {r['reward']:g}"
        )
    return f"{r['status']}  reward {r['reward']:g}  {r['detail']}"


def _shown(metrics: dict, cfg) -> str:
    if cfg.suite is not None:  # a suite: the means per execution model
        shown = {m: {k: v[k] for k in ("pass_at_1", "expected_speedup")} for m, v in metrics["by_mode"].items()}
    else:
        keys = ("n_samples", "pass_at_1", "median_gflops_ok", "best_gflops", "expected_speedup")
        shown = {k: metrics.get(k) for k in keys}
    return ", ".join(
        f"{k} {v:.3g}" if isinstance(v, float) else f"{k} {json.dumps(v) if isinstance(v, dict) else v}"
        for k, v in shown.items()
    )


def cmd_run(args: argparse.Namespace) -> int:
    from lab.harness.machine import machine_class
    from lab.pipeline.plan import arm_order, run_cost, run_notebooks
    from lab.pipeline.runner import run_experiment
    from lab.results import find_config, open_config

    path = find_config(args.config)
    if not path.is_file():
        raise UsageError(f"no such config: {args.config}")
    notebooks = Path(args.notebooks).absolute() if args.notebooks else None  # before open_config moves
    if notebooks and (args.experiment or args.overwrite or args.set):
        raise UsageError(
            "--notebooks runs the config file's whole plan as it is: no --experiment, --set or --overwrite"
        )
    config = open_config(path, args.set)
    names = [config.experiment(args.experiment).name] if args.experiment else arm_order(config)
    if args.dry_run:
        # One experiment: its resolved config as it is (a valid ExperimentConfig); several: by name.
        resolved = {n: config.experiments[n].to_dict() for n in names}
        print(yaml.safe_dump(resolved[names[0]] if args.experiment else resolved, sort_keys=False), end="")
        one = dataclasses.replace(config, experiments={n: config.experiments[n] for n in names})
        cost = run_cost(one, machine_class())
        for name, parts in cost["arms"].items():
            print(
                f"# {name}: {sum(parts.values())} reward evaluations ({', '.join(f'{k} {v}' for k, v in parts.items() if v)})"
            )
        print(
            f"# in all {cost['reward_evaluations']} reward evaluations: about {cost['measuring_minutes']} minutes of "
            f"measuring at {cost['seconds_per_evaluation']:.3g} s each ({cost['rate_from']}); sampling and training "
            "come on top; finished results that are current are reused and cost nothing"
        )
        return 0
    if notebooks:
        # The notebooks of this checkout (an installed package has none: run them from a clone).
        root = paths.repo_root()
        if root is None:
            raise UsageError("--notebooks needs the lab's checkout (notebooks/); this is an installed package")
        run_notebooks(config, path, notebooks, root)
        return 0
    for name in names:
        cfg = config.experiments[name]
        metrics = run_experiment(cfg, overwrite=args.overwrite)
        print(f"{cfg.name}: {_shown(metrics, cfg)} -> {cfg.out_dir}/", flush=True)
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from lab.pipeline.status import report_state, result_status, status_text
    from lab.results import machine_results_dir

    if args.results_dir:
        print(machine_results_dir(args.results))
        return 0
    if args.stale is not None:  # the given reports of this machine that are not current: what to measure again
        for path in args.stale:
            if Path(path).is_file() and report_state(path) == "older_code":
                print(path)
        return 0
    root = Path(args.results)
    if not root.is_dir():
        raise UsageError(f"no such results folder: {args.results}")
    rows = result_status(root, Path.cwd())
    print(json.dumps(rows, indent=1) if args.json else status_text(rows))
    return 0


def cmd_score(args: argparse.Namespace) -> int:
    text = _read(args.path)
    if args.emulate:
        return _score_emulated(text, args)
    scorer = _scorer(args, _problem(args.problem))
    result = _scored(scorer.results([text]), scorer)[0]
    print(json.dumps(result) if args.json else _summary(result))
    return 0


def _score_emulated(text: str, args: argparse.Namespace) -> int:
    from lab.harness.emulated import EmulationUnavailable, check_emulated
    from lab.harness.extract import source_or_none

    source = source_or_none(text, load_problem(_problem(args.problem)).signature) or text
    try:
        verdict = check_emulated(source, args.problem, args.emulate, args.mode or "serial")
    except EmulationUnavailable as err:
        raise UsageError(str(err)) from None
    if args.json:
        print(json.dumps(verdict.__dict__))
    else:
        print(f"{verdict.status} on {verdict.arch} under emulation (unsandboxed; correctness only): {verdict.detail}")
    return 0


def _read_jsonl(path: str) -> list[dict]:
    records = []
    for lineno, line in enumerate(_read(path).splitlines(), 1):
        if not line.strip():
            continue
        try:
            rec = json.loads(line)
        except json.JSONDecodeError as err:
            raise UsageError(f"{path}:{lineno}: not JSON ({err.msg})") from None
        if not isinstance(rec, dict) or "id" not in rec or not isinstance(rec.get("completion"), str):
            raise UsageError(f'{path}:{lineno}: each record needs "id" and a string "completion"')
        records.append(rec)
    return records


def cmd_score_batch(args: argparse.Namespace) -> int:
    records = _read_jsonl(args.input)
    problems = [_problem(rec.get("problem") or args.problem) for rec in records]
    # A record's own mode (`lab sample --mode`) wins over --mode: serial runs on 1 thread, openmp on
    # the record's thread count (--threads, else 2).
    modes = [_mode(rec.get("mode")) for rec in records]
    threads = {rec.get("threads") for rec, m in zip(records, modes) if m == "openmp"} - {None}
    if len(threads) > 1:
        raise UsageError(
            f"{args.input}: openmp records state different thread counts {sorted(threads)}; score them apart"
        )
    if "openmp" in modes and args.mode == "serial":
        args.mode = "openmp"  # the scorer's base setting; records without a mode still get serial
        modes = ["serial" if m is None else m for m in modes]
    if "openmp" in modes and args.threads is None:
        args.threads = threads.pop() if threads else 2
    scorer = _scorer(args, _problem(args.problem))
    results = _scored(scorer.results([rec["completion"] for rec in records], problems, mode=modes), scorer)
    write_jsonl(args.out, ({"id": rec["id"], **res} for rec, res in zip(records, results)))
    counts: dict[str, int] = {}
    for res in results:
        counts[res["status"]] = counts.get(res["status"], 0) + 1
    print(
        f"scored {len(records)} completions -> {args.out}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))
    )
    return 0


def cmd_score_examples(args: argparse.Namespace) -> int:
    out_dir = machine_results_dir(args.out)  # this machine's results folder (lab.results)
    for problem in list_problems():
        files = sorted((paths.harness_dir() / problem / "examples").glob("*.[cm]*"))
        if not files:
            continue
        scorer = _scorer(args, problem)
        rows = [
            {"example": f.name, **r}
            for f, r in zip(files, _scored(scorer.results([f.read_text() for f in files]), scorer))
        ]
        threads, mode = scorer.measure.threads, scorer.measure.mode
        write_json(
            out_dir / f"{problem}_{mode}_t{threads}.json",
            {
                "problem": problem,
                "config": {"n": args.n or load_problem(problem).timed_n(mode), "threads": threads, "mode": mode},
                "machine": machine_summary(),
                "provenance": report_provenance(),
                "results": rows,
            },
        )
        print(f"{problem} ({mode}, {threads} thread{'s' if threads > 1 else ''}):")
        for row in rows:
            print(f"  {row['example']:34s} {_summary(row)}")
    print(f"wrote {out_dir}/")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from lab.harness.calibrate import calibrate

    args.out = str(machine_path(args.out))  # never over another machine's calibration (lab.results)
    machine = calibrate(threads=args.threads_list, n=args.n)
    write_json(args.out, {**machine, "provenance": report_provenance()})
    print(json.dumps(machine["summary"], indent=1))
    print(f"wrote {args.out}")
    return 0


def _permit(value: str | None) -> frozenset[str] | None:
    from lab.techniques import TECHNIQUES

    if value is None:
        return None
    names = frozenset() if value.strip() == "none" else frozenset(t.strip() for t in value.split(",") if t.strip())
    unknown = names - set(TECHNIQUES)
    if unknown:
        raise UsageError(f"unknown technique(s) {', '.join(sorted(unknown))}; known: {', '.join(TECHNIQUES)}")
    return names


def _mode(value) -> str | None:
    if value is not None and value not in MODES:
        raise UsageError(f"unknown mode {value!r}; known: {', '.join(MODES)}")
    return value


def cmd_sample(args: argparse.Namespace) -> int:
    from lab.policy.sample import ModelNotFound, sample_records

    problem = _problem(args.problem)
    if args.num < 1:
        raise UsageError("--num must be positive")
    try:
        records, seconds = sample_records(
            args.model,
            problem,
            args.num,
            _permit(args.permit),
            args.temperature,
            args.seed,
            args.max_new_tokens,
            mode=args.mode,
            threads=args.threads,
            split=args.prompts,
            phrasings=len(load_problem(problem).phrasings(args.prompts)),
        )
    except ValueError as err:  # a technique that does not apply to the problem or mode
        raise UsageError(str(err)) from None
    except ModelNotFound as err:
        raise UsageError(str(err)) from None
    write_jsonl(args.out, records)
    print(f"sampled {len(records)} completions in {seconds:.1f} s -> {args.out}")
    return 0


def cmd_seed_report(args: argparse.Namespace) -> int:
    from lab.policy.sample import ModelNotFound
    from lab.policy.seed_policy.report import seed_report

    try:
        report = seed_report(args.model, args.num, args.seed, args.threads)
    except ModelNotFound as err:
        raise UsageError(str(err)) from None
    report["machine"] = machine_summary()
    report["provenance"] = report_provenance(args.model)
    args.out = str(machine_path(args.out))
    write_json(args.out, report)
    print(json.dumps({k: v for k, v in report.items() if k != "technique_sets_ok"}, indent=1))
    print(f"wrote {args.out}")
    return 0


def cmd_seed_model(args: argparse.Namespace) -> int:
    from lab.policy.seed_policy.pretrain import SMOKE, SeedConfig, build_seed_model

    out = Path(args.out)
    if (out / "config.json").exists() and not args.force:
        print(f"{out} exists (use --force to rebuild)")
        return 0
    base = SMOKE if args.preset == "smoke" else SeedConfig()
    config = dataclasses.replace(
        base, seed=args.seed, **{k: v for k, v in (("examples", args.examples), ("epochs", args.epochs)) if v}
    )
    record = build_seed_model(out, config)
    losses = f"loss {record['loss_first']:.3f} -> {record['loss_last']:.3f}, " if record["losses"] else ""
    print(f"built {out}: {record['parameters'] / 1e6:.1f} M parameters, {losses}{record['build_s']:.0f} s")
    return 0


def cmd_autotune(args: argparse.Namespace) -> int:
    from lab.bench.autotune import autotune

    report = autotune(_problem(args.problem), args.n, args.threads, args.mode)
    args.out = str(machine_path(args.out))
    write_json(args.out, {**report, "provenance": report_provenance()})
    best = report["best"]
    if best is None:
        print(f"no variant of {report['variants']} scored ok -> {args.out}")
        return 0
    blas = report["openblas_gflops"]
    versus = f" = {best['fraction_of_openblas']:.2f} of OpenBLAS ({blas:.1f})" if blas else ""
    print(
        f"{report['ok']}/{report['variants']} variants ok; best {best['gflops']:.1f} {load_problem(report['problem']).unit} "
        f"({best['family']}, {', '.join(best['techniques'])}){versus} at n={report['n']}, {report['mode']}, "
        f"{report['threads']} thread(s) -> {args.out}"
    )
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    from lab.analysis.compare import check_fair, write_comparison
    from lab.analysis.plots import comparison
    from lab.results import is_finished, open_config

    config = open_config(Path(args.config).resolve(), args.set)
    try:
        check_fair(config, args.against)
    except ValueError as err:
        raise UsageError(str(err)) from None
    missing = [name for name, cfg in config.experiments.items() if not is_finished(cfg.out_dir)]
    if missing:
        raise UsageError(
            f"{args.config}: no finished results for {', '.join(missing)} in {config.results_dir}; "
            f"run them first: lab run --config {args.config}"
        )
    summary = write_comparison(config, args.against)
    figure = comparison(summary, Path(config.figures_dir))
    for pair in summary["pairs"]:
        shown = ", ".join(
            f"{m} {d['difference']:+.3g} [{d['ci'][0]:+.3g}, {d['ci'][1]:+.3g}] {d['verdict_holm']}"
            if d["difference"] is not None and d["ci"]
            else f"{m} —"
            for m, d in pair["metrics"].items()
        )
        print(f"{pair['a']} - {pair['b']}: {shown}")
    print(f"wrote {Path(config.results_dir) / 'comparison.json'} and {figure}")
    return 0


def cmd_problems(args: argparse.Namespace) -> int:
    from lab.techniques import problem_techniques

    problems = [load_problem(name) for name in list_problems()]
    if args.json:
        rows = [
            {
                "name": p.name,
                "modes": list(MODES),
                "signature": p.signature,
                "n": p.default_n,
                "timed_n": {m: p.timed_n(m) for m in MODES},
                "odd_n": p.odd_n,
                "unit": p.unit,
                "techniques": list(problem_techniques(p.name)),
            }
            for p in problems
        ]
        print(json.dumps(rows))
        return 0
    for p in problems:
        sizes = ", ".join(f"{m} n={p.timed_n(m)}" for m in MODES) if p.timed_sizes else f"n={p.default_n}"
        print(f"{p.name:10s} {' '.join(MODES):14s} {p.signature}   ({sizes}, odd n={p.odd_n}, {p.unit})")
        print(f"{'':10s} techniques: {', '.join(problem_techniques(p.name))}")
    return 0


def _version() -> str:
    try:
        return importlib.metadata.version("perfrl-lab")
    except importlib.metadata.PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="lab", description="perfRL lab: RL of code LLMs on measured kernel performance.", formatter_class=_Help
    )
    parser.add_argument("--version", action="version", version=f"lab {_version()}")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def command(name: str, helptext: str, func) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=helptext, description=helptext, formatter_class=_Help)
        p.set_defaults(func=func)
        return p

    def measurement(p: argparse.ArgumentParser) -> None:
        p.add_argument("--problem", default="dgemm", help="problem name (see `lab problems`)")
        p.add_argument("--n", type=int, default=None, help="timed size (default: the problem's)")
        p.add_argument(
            "--mode",
            choices=MODES,
            default="openmp",
            help="execution model: serial (1 thread, no OpenMP) or openmp",
        )
        p.add_argument(
            "--threads", type=int, default=None, help="CPUs (OpenMP threads) per evaluation; default 1 serial, 2 openmp"
        )
        p.add_argument("--no-cache", action="store_true", help="measure even if a cached result exists")

    def overrides(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--set",
            action="append",
            default=[],
            metavar="KEY.PATH=VALUE",
            help="override a config setting, e.g. train.steps=10 (repeatable)",
        )

    p = command("run", "run every experiment of a config file in its order, or one (--experiment)", cmd_run)
    p.add_argument("--config", default="configs/default.yaml", help="YAML config file")
    p.add_argument("--experiment", default=None, help="only this experiment of the config's experiments section")
    overrides(p)
    p.add_argument(
        "--dry-run", action="store_true", help="print the resolved config and what running it costs; run nothing"
    )
    p.add_argument(
        "--overwrite", action="store_true", help="measure again even if a current finished run of this config exists"
    )
    p.add_argument(
        "--notebooks",
        metavar="DIR",
        default=None,
        help="run the config through its notebooks (papermill), executed copies into DIR",
    )

    p = command("status", "every result under results/: current, older_code or other_machine", cmd_status)
    p.add_argument("--results", default="results", help="the results folder")
    p.add_argument("--json", action="store_true", help="one JSON list of {path, kind, state, code, commit, ...}")
    p.add_argument(
        "--results-dir", action="store_true", help="print this machine's results folder under --results, and stop"
    )
    p.add_argument(
        "--stale",
        nargs="*",
        metavar="FILE",
        default=None,
        help="print those of these report files that this machine made with other measuring code, and stop",
    )

    p = command("score", "score one completion or C file", cmd_score)
    p.add_argument("path")
    measurement(p)
    p.add_argument(
        "--emulate",
        choices=["aarch64"],
        help="instead: check correctness on this architecture under qemu-user, without the sandbox "
        "(your own code only; no speed)",
    )
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")

    p = command("score-batch", "score a JSONL file of {id, completion, problem?} records", cmd_score_batch)
    p.add_argument("input")
    p.add_argument("--out", required=True)
    p.add_argument("--jobs", type=int, default=None, help="parallel evaluations (default: cores / threads)")
    p.add_argument(
        "--dask",
        metavar="ADDRESS",
        default=None,
        help="measure on the workers of the Dask scheduler at ADDRESS (tcp://host:port); each result names its host",
    )
    measurement(p)

    p = command("score-examples", "score harness/*/examples and write results", cmd_score_examples)
    p.add_argument("--out", default="results/examples")
    measurement(p)

    p = command("calibrate", "measure this machine: CPU, compiler, OpenBLAS and baseline GFLOPS", cmd_calibrate)
    p.add_argument("--out", default="results/machine.json")
    p.add_argument("--n", type=int, default=None, help="size (default: each problem's default)")
    p.add_argument(
        "--threads-list",
        type=lambda s: [int(t) for t in s.split(",")],
        default=None,
        help="thread counts to measure, e.g. 1,2 (default: 1 and all cores)",
    )

    p = command("sample", "sample completions from a causal LM (directory or hub id)", cmd_sample)
    p.add_argument("--model", required=True, help="model directory or hub id")
    p.add_argument("--problem", default="dgemm")
    p.add_argument("--num", type=int, default=64)
    p.add_argument("--permit", default=None, help="permitted techniques, comma-separated, or 'none'")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument(
        "--mode",
        choices=MODES,
        default=None,
        help="state this execution model in the prompt (default: the problem's own prompt, no model stated)",
    )
    p.add_argument("--threads", type=int, default=2, help="the thread count an openmp prompt states")
    p.add_argument(
        "--prompts",
        choices=("train", "eval"),
        default="train",
        help="the problem's training phrasings or its held-out evaluation ones, each in turn",
    )
    p.add_argument("--out", required=True)

    p = command("seed-report", "sample and score the seed policy (results/seed_policy.json)", cmd_seed_report)
    p.add_argument("--model", default="models/seed-policy")
    p.add_argument("--num", type=int, default=256, help="samples per prompt set (the targets are stated for 256)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default="results/seed_policy.json")

    p = command("seed-model", "build the embedded default policy (corpus, tokenizer, model)", cmd_seed_model)
    p.add_argument("--out", default="models/seed-policy")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument(
        "--preset",
        choices=["default", "smoke"],
        default="default",
        help="smoke: a small model for quick end-to-end runs",
    )
    p.add_argument("--examples", type=int, default=None, help="corpus size (default: the preset's)")
    p.add_argument("--epochs", type=float, default=None, help="training epochs (default: the preset's)")
    p.add_argument("--force", action="store_true", help="rebuild even if the model exists")

    p = command("autotune", "sweep the kernel generator's space through the harness", cmd_autotune)
    p.add_argument("--problem", default="dgemm")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--mode", choices=MODES, default="openmp", help="serial: only the variants without OpenMP, 1 thread")
    p.add_argument("--out", default="results/autotune.json")

    p = command("compare", "every arm against every other, with intervals (results/comparison.json)", cmd_compare)
    p.add_argument("--config", default="configs/default.yaml", help="a single-problem config")
    p.add_argument(
        "--against",
        default=None,
        metavar="EXPERIMENT",
        help="an ablation: each other arm against this one (they may differ in reward and training settings)",
    )
    overrides(p)

    p = command("problems", "list the problems and their execution models", cmd_problems)
    p.add_argument("--json", action="store_true", help="one JSON list of {name, modes, signature, n, odd_n, unit}")
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        n, jobs = getattr(args, "n", None), getattr(args, "jobs", None)
        threads = getattr(args, "threads", None)
        if (threads is not None and threads < 1) or (n is not None and n < 1) or (jobs is not None and jobs < 1):
            raise UsageError("--threads, --n and --jobs must be positive")
        return args.func(args)
    except (UsageError, ConfigError, ClusterError, UnsupportedMachine) as err:
        print(f"lab: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
