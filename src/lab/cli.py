"""The `lab` command line.

    lab score PATH --problem dgemm [--n N] [--threads T] [--json]
    lab score-batch IN.jsonl --out OUT.jsonl [--problem dgemm] [--threads T] [--jobs J]
    lab score-examples [--out results/examples]
    lab calibrate [--out results/machine.json]
    lab autotune --problem dgemm [--threads T] [--out results/autotune.json]
    lab seed-model [--out models/seed-policy]
    lab sample --model PATH_OR_ID --problem dgemm --num N [--permit TECH,...] [--temperature T] --out S.jsonl
    lab compare [--config configs/default.yaml] [--seeds 0 1 2] [--results-dir results]
    lab problems

Scoring exits 0 whenever scoring completed, whatever the status; bad usage
(missing file, unknown problem, bad JSONL) exits 2 with one line on stderr.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
from pathlib import Path

from lab.evaluate import EvalConfig, EvalResult, evaluate, evaluate_batch
from lab.problems import HARNESS_DIR, UnknownProblem, list_problems, load_problem


class UsageError(Exception):
    """Bad input from the user: reported as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str):  # one clear line instead of usage + message
        raise UsageError(message)


def _eval_config(args: argparse.Namespace) -> EvalConfig:
    return EvalConfig(n=args.n, threads=args.threads, cache=not args.no_cache)


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


def _summary(r: EvalResult) -> str:
    if r.status == "ok":
        return (f"ok  {r.gflops:.2f} GFLOPS  ({r.time_s * 1e3:.3f} ms, {r.speedup:.2f}x the baseline's "
                f"{r.baseline_gflops:.2f} GFLOPS)  reward {r.reward:g}")
    return f"{r.status}  reward {r.reward:g}  {r.detail}"


def cmd_score(args: argparse.Namespace) -> int:
    text = _read(args.path)
    result = evaluate(text, _problem(args.problem), _eval_config(args))
    if args.json:
        print(json.dumps(result.to_dict()))
    else:
        print(_summary(result))
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
            raise UsageError(f"{path}:{lineno}: each record needs \"id\" and a string \"completion\"")
        records.append(rec)
    return records


def cmd_score_batch(args: argparse.Namespace) -> int:
    records = _read_jsonl(args.input)
    config = _eval_config(args)
    by_problem: dict[str, list[int]] = {}
    for i, rec in enumerate(records):
        by_problem.setdefault(_problem(rec.get("problem") or args.problem), []).append(i)
    results: list[EvalResult | None] = [None] * len(records)
    for problem, idx in by_problem.items():
        for i, res in zip(idx, evaluate_batch([records[i]["completion"] for i in idx], problem, config,
                                              n_jobs=args.jobs)):
            results[i] = res
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(out.suffix + ".partial")
    with open(tmp, "w") as f:
        for rec, res in zip(records, results):
            f.write(json.dumps({"id": rec["id"], **res.to_dict()}) + "\n")
    tmp.replace(out)
    counts: dict[str, int] = {}
    for res in results:
        counts[res.status] = counts.get(res.status, 0) + 1
    print(f"scored {len(records)} completions -> {out}: "
          + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    return 0


def cmd_score_examples(args: argparse.Namespace) -> int:
    config = _eval_config(args)
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    for problem in list_problems():
        files = sorted((HARNESS_DIR / problem / "examples").glob("*.[cm]*"))
        if not files:
            continue
        results = evaluate_batch([f.read_text() for f in files], problem, config)
        rows = [{"example": f.name, **r.to_dict()} for f, r in zip(files, results)]
        (out_dir / f"{problem}_t{config.threads}.json").write_text(json.dumps(
            {"problem": problem, "config": {"n": config.n or load_problem(problem).default_n,
                                            "threads": config.threads}, "results": rows}, indent=1) + "\n")
        print(f"{problem} ({config.threads} thread{'s' if config.threads > 1 else ''}):")
        for f, r in zip(files, results):
            print(f"  {f.name:34s} {_summary(r)}")
    print(f"wrote {out_dir}/")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from lab.calibrate import calibrate

    machine = calibrate(threads=args.threads_list, n=args.n)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(machine, indent=1) + "\n")
    print(json.dumps(machine["summary"], indent=1))
    print(f"wrote {out}")
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


def cmd_sample(args: argparse.Namespace) -> int:
    from lab.sample import ModelNotFound, sample_records

    problem = _problem(args.problem)
    if args.num < 1:
        raise UsageError("--num must be positive")
    try:
        records, seconds = sample_records(args.model, problem, args.num, _permit(args.permit), args.temperature,
                                          args.seed, args.max_new_tokens)
    except ModelNotFound as err:
        raise UsageError(str(err)) from None
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text("".join(json.dumps(r) + "\n" for r in records))
    print(f"sampled {len(records)} completions in {seconds:.1f} s -> {out}")
    return 0


def cmd_seed_report(args: argparse.Namespace) -> int:
    from lab.calibrate import machine_summary
    from lab.sample import ModelNotFound
    from lab.seed_policy.report import seed_report

    try:
        report = seed_report(args.model, args.num, args.seed, args.threads)
    except ModelNotFound as err:
        raise UsageError(str(err)) from None
    report["machine"] = machine_summary()
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    print(json.dumps({k: v for k, v in report.items() if k != "technique_sets_ok"}, indent=1))
    print(f"wrote {out}")
    return 0


def cmd_seed_model(args: argparse.Namespace) -> int:
    from lab.seed_policy.pretrain import SeedConfig, build_seed_model

    out = Path(args.out)
    if (out / "config.json").exists() and not args.force:
        print(f"{out} exists (use --force to rebuild)")
        return 0
    from lab.seed_policy.pretrain import SMOKE

    base = SMOKE if args.preset == "smoke" else SeedConfig()
    config = dataclasses.replace(base, seed=args.seed, **{k: v for k, v in (("examples", args.examples),
                                                                             ("epochs", args.epochs)) if v})
    record = build_seed_model(out, config)
    losses = f"loss {record['loss_first']:.3f} -> {record['loss_last']:.3f}, " if record["losses"] else ""
    print(f"built {out}: {record['parameters'] / 1e6:.1f} M parameters, {losses}{record['build_s']:.0f} s")
    return 0


def cmd_autotune(args: argparse.Namespace) -> int:
    from lab.autotune import autotune

    report = autotune(_problem(args.problem), args.n, args.threads)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=1) + "\n")
    best = report["best"]
    if best is None:
        print(f"no variant of {report['variants']} scored ok -> {out}")
        return 0
    print(f"{report['ok']}/{report['variants']} variants ok; best {best['gflops']:.1f} GFLOPS "
          f"({best['family']}, {', '.join(best['techniques'])}) = {best['fraction_of_openblas']:.2f} of OpenBLAS "
          f"({report['openblas_gflops']:.1f} GFLOPS) at n={report['n']}, {report['threads']} threads -> {out}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    import yaml

    from lab.compare import plan_comparison, run_comparison
    from lab.plots import comparison

    params = yaml.safe_load(_read(args.config)) or {}
    try:
        plan = plan_comparison(params, args.seeds, results_dir=args.results_dir, runs_dir=args.runs_dir)
    except (ValueError, TypeError) as err:
        raise UsageError(str(err)) from None
    summary = run_comparison(plan, results_dir=args.results_dir)
    figure = comparison(summary, Path(args.results_dir) / "figures")
    for arm, data in summary["arms"].items():
        med = {k: v["median"] for k, v in data["stats"].items()}
        shown = ", ".join(f"{k} {'—' if med[k] is None else f'{med[k]:.3g}'}" for k in
                          ("best_gflops", "mean_gflops_ok", "pass_at_1", "distinct_technique_sets_ok",
                           "archive_coverage"))
        print(f"{arm}: {shown} (medians of {len(data['runs'])} seeds)")
    print(f"wrote {Path(args.results_dir) / 'comparison.json'} and {figure}")
    return 0


def cmd_problems(args: argparse.Namespace) -> int:
    for name in list_problems():
        p = load_problem(name)
        print(f"{name:8s} {p.signature}   (n={p.default_n}, odd n={p.odd_n})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="lab", description="perfRL lab: score C kernels on real hardware.")
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    def measurement(p: argparse.ArgumentParser) -> None:
        p.add_argument("--problem", default="dgemm", help="problem name (see `lab problems`)")
        p.add_argument("--n", type=int, default=None, help="timed size (default: the problem's)")
        p.add_argument("--threads", type=int, default=1, help="OpenMP threads / CPUs per evaluation")
        p.add_argument("--no-cache", action="store_true", help="measure even if a cached result exists")

    p = sub.add_parser("score", help="score one completion or C file")
    p.add_argument("path")
    measurement(p)
    p.add_argument("--json", action="store_true", help="print the result as one JSON object")
    p.set_defaults(func=cmd_score)

    p = sub.add_parser("score-batch", help="score a JSONL file of {id, completion, problem?} records")
    p.add_argument("input")
    p.add_argument("--out", required=True)
    p.add_argument("--jobs", type=int, default=None, help="parallel evaluations (default: cores / threads)")
    measurement(p)
    p.set_defaults(func=cmd_score_batch)

    p = sub.add_parser("score-examples", help="score harness/*/examples and write results")
    p.add_argument("--out", default="results/examples")
    measurement(p)
    p.set_defaults(func=cmd_score_examples)

    p = sub.add_parser("calibrate", help="measure this machine: CPU, compiler, OpenBLAS and baseline GFLOPS")
    p.add_argument("--out", default="results/machine.json")
    p.add_argument("--n", type=int, default=None, help="size (default: each problem's default)")
    p.add_argument("--threads-list", type=lambda s: [int(t) for t in s.split(",")], default=None,
                   help="thread counts to measure, e.g. 1,2 (default: 1 and all cores)")
    p.set_defaults(func=cmd_calibrate)

    p = sub.add_parser("sample", help="sample completions from a causal LM (directory or hub id)")
    p.add_argument("--model", required=True, help="model directory or hub id")
    p.add_argument("--problem", default="dgemm")
    p.add_argument("--num", type=int, default=64)
    p.add_argument("--permit", default=None, help="permitted techniques, comma-separated, or 'none'")
    p.add_argument("--temperature", type=float, default=1.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--max-new-tokens", type=int, default=512)
    p.add_argument("--out", required=True)
    p.set_defaults(func=cmd_sample)

    p = sub.add_parser("seed-report", help="sample and score the seed policy (results/seed_policy.json)")
    p.add_argument("--model", default="models/seed-policy")
    p.add_argument("--num", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--out", default="results/seed_policy.json")
    p.set_defaults(func=cmd_seed_report)

    p = sub.add_parser("seed-model", help="build the embedded default policy (corpus, tokenizer, model)")
    p.add_argument("--out", default="models/seed-policy")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--preset", choices=["default", "smoke"], default="default",
                   help="smoke: a tiny model for quick end-to-end runs")
    p.add_argument("--examples", type=int, default=None, help="corpus size (default: the preset's)")
    p.add_argument("--epochs", type=float, default=None, help="training epochs (default: the preset's)")
    p.add_argument("--force", action="store_true", help="rebuild even if the model exists")
    p.set_defaults(func=cmd_seed_model)

    p = sub.add_parser("autotune", help="sweep the kernel generator's space through the harness")
    p.add_argument("--problem", default="dgemm")
    p.add_argument("--n", type=int, default=None)
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--out", default="results/autotune.json")
    p.set_defaults(func=cmd_autotune)

    p = sub.add_parser("compare", help="GRPO-only vs GRPO+SQD over several seeds (results/comparison.json)")
    p.add_argument("--config", default="configs/default.yaml", help="YAML with grpo and grpo_sqd sections")
    p.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    p.add_argument("--results-dir", default="results")
    p.add_argument("--runs-dir", default="runs/compare", help="checkpoints (not committed)")
    p.set_defaults(func=cmd_compare)
    p = sub.add_parser("problems", help="list the problems")
    p.set_defaults(func=cmd_problems)
    return parser


def main(argv: list[str] | None = None) -> int:
    try:
        args = build_parser().parse_args(argv)
        n, jobs = getattr(args, "n", None), getattr(args, "jobs", None)
        if getattr(args, "threads", 1) < 1 or (n is not None and n < 1) or (jobs is not None and jobs < 1):
            raise UsageError("--threads, --n and --jobs must be positive")
        return args.func(args)
    except UsageError as err:
        print(f"lab: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
