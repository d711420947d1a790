"""Sample completions from any causal LM (a local directory or a hub id) for a problem prompt.

    lab sample --model models/seed-policy --problem dgemm --num 64 --permit simd,openmp --out s.jsonl

The prompt is the problem's (lab.policy.prompts), with the permitted-techniques sentence when
`--permit` is given ("none" permits nothing). Models with a chat template are
prompted through it, as chat models expect; others get the raw prompt text. The
output is JSONL that `lab score-batch` reads: {id, problem, prompt, permitted,
completion, model, temperature, seed}.
"""

from __future__ import annotations

import os
import time
from pathlib import Path


class ModelNotFound(FileNotFoundError):
    """No model at the given path (and it is not a hub id that is available offline)."""


def load_policy(model_id: str, device: str | None = None):
    """(model, tokenizer) from a directory or hub id, in eval mode."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    path = Path(model_id).expanduser()
    is_dir = (path / "config.json").is_file()
    # Anything that cannot be a hub id ("org/name") must be a local model directory; so is
    # anything under the lab's own models/ folder or under an existing local folder.
    first = model_id.split("/")[0]
    hub_like = (
        not is_dir
        and len(model_id.split("/")) == 2
        and not model_id.startswith((".", "/", "~"))
        and first != "models"
        and not Path(first).is_dir()
    )
    missing = (
        f"no model at {model_id} (looked in {path.resolve()}: not a directory with config.json, nor a "
        f"hub id available here; `make seed-model` builds models/seed-policy in the repository root)"
    )
    if not is_dir and not hub_like:
        raise ModelNotFound(missing)
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(path) if is_dir else model_id)
        model = AutoModelForCausalLM.from_pretrained(str(path) if is_dir else model_id, dtype=torch.float32)
    except (OSError, ValueError):
        raise ModelNotFound(missing) from None
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    return model.to(device).eval(), tokenizer


def chat_prompt(tokenizer, prompt: str) -> str:
    """The text a model is given: through its chat template when it has one."""
    if getattr(tokenizer, "chat_template", None):
        return tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], tokenize=False, add_generation_prompt=True
        )
    return prompt


def generate(
    model,
    tokenizer,
    prompt: str,
    num: int,
    temperature: float = 1.0,
    max_new_tokens: int = 512,
    seed: int = 0,
    batch_size: int = 64,
    truncated: list[bool] | None = None,
) -> list[str]:
    """`num` sampled completions of one prompt (batched, with the KV cache). With a list as
    `truncated`, whether each completion hit `max_new_tokens` before its end is appended to it."""
    import torch

    torch.manual_seed(seed)
    torch.set_num_threads(len(os.sched_getaffinity(0)))
    text = chat_prompt(tokenizer, prompt)
    ids = tokenizer(text, return_tensors="pt", add_special_tokens=False)["input_ids"].to(model.device)
    out: list[str] = []
    with torch.no_grad():
        while len(out) < num:
            k = min(batch_size, num - len(out))
            gen = model.generate(
                ids.repeat(k, 1),
                attention_mask=torch.ones(k, ids.shape[1], dtype=torch.long, device=model.device),
                do_sample=temperature > 0,
                temperature=temperature if temperature > 0 else None,
                top_p=1.0,
                top_k=0,
                max_new_tokens=max_new_tokens,
                pad_token_id=(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id),
                eos_token_id=tokenizer.eos_token_id,
            )
            new = gen[:, ids.shape[1] :]
            out += tokenizer.batch_decode(new, skip_special_tokens=True)
            if truncated is not None:
                ended = (new == tokenizer.eos_token_id).any(dim=1)
                truncated += [bool(new.shape[1] >= max_new_tokens and not e) for e in ended]
    return out


def sample_records(
    model_id: str,
    problem: str,
    num: int,
    permitted: frozenset[str] | None = None,
    temperature: float = 1.0,
    seed: int = 0,
    max_new_tokens: int = 512,
    policy=None,
    mode: str | None = None,
    threads: int = 2,
    split: str = "train",
    phrasings: int = 1,
    first_phrasing: int = 0,
) -> tuple[list[dict], float]:
    """Sampled completions as score-batch records, and the seconds generation took. `mode`
    (serial | openmp, with `threads`) states the execution model in the prompt; the prompt is
    a phrasing of the `split` set (train, or eval: the held-out ones), and with `phrasings` >
    1 the completions are spread evenly over that many phrasings in turn (record i asks
    phrasing first_phrasing + i mod `phrasings`, modulo the phrasings there are). Each record
    says whether generation cut it off (`truncated`)."""
    from lab.harness.problems import load_problem
    from lab.policy.prompts import prompt_text

    model, tokenizer = policy or load_policy(model_id)
    available = len(load_problem(problem).phrasings(split))
    count = min(phrasings, available)
    asked = [(first_phrasing + j) % available for j in range(count)]
    prompts = [prompt_text(problem, permitted, mode, threads, phrasing=a, split=split) for a in asked]
    start = time.monotonic()
    texts: dict[int, list[str]] = {}
    cut: dict[int, list[bool]] = {}
    for j, prompt in enumerate(prompts):
        share = len(range(j, num, count))
        cut[j] = []
        # Phrasing 0 keeps the seed as given (what `lab sample --seed` always meant); each
        # phrasing has its own, whichever call asks it.
        texts[j] = generate(
            model, tokenizer, prompt, share, temperature, max_new_tokens, seed + 100_003 * asked[j], truncated=cut[j]
        )
    seconds = time.monotonic() - start
    perm = sorted(permitted) if permitted is not None else None
    records = []
    for i in range(num):
        j, k = i % count, i // count
        records.append(
            {
                "id": f"{problem}-{mode}-{seed}-{i}" if mode else f"{problem}-{seed}-{i}",
                "problem": problem,
                "mode": mode,
                "threads": threads if mode == "openmp" else None,
                "prompt": prompts[j],
                "split": split,
                "phrasing": asked[j],
                "permitted": perm,
                "completion": texts[j][k],
                "truncated": cut[j][k],
                "model": model_id,
                "temperature": temperature,
                "seed": seed,
            }
        )
    return records, seconds
