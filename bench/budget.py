"""Budgets: randomised trials of the governor against a loopback provider that bills what it sends.

Each trial runs one benchmark (40 items x 5 runs, 100 requests in flight) against the loopback
provider with random settings: the client (OpenAI or Anthropic), the model (with the model's own
tokenizer billing the prompt, or an unknown one billing every UTF-8 byte), a prompt mixing
scripts (ASCII, accents, CJK, runes, emoji, mathematical letters), ``n`` choices, an output
limit (the request's own, the Anthropic client's default, or none: the runner then sends one),
reply lengths around that limit (the provider honours it), a served-model switch to a dearer
model declared with ``billed_as``, the same switch left undeclared (the endpoint bills a dearer
model than the one asked for and nothing says so), and a USD or a token cap sized to bind.

Prints the overshoots (spend or tokens past the cap; goal 0), the trials the governor had to halt
(a reply past its reservation or billed as an undeclared dearer model; only the undeclared
switches are expected here, the provider honours the limit), for the undeclared switches the
overshoots beyond one request (goal 0: until a reply shows the billed model one request at a
time is in flight, and the first dearer reply stops the benchmark) and the most runs any of
them answered (goal 1: one request was sent), and the median
spend/cap ratio of the trials where the cap bound (goal >= 0.8: the bound is true without being
needlessly loose). Bounded in time: about 10 minutes with the defaults on two busy cores.

The loopback bills prompts by the model's tokenizer or by UTF-8 bytes, the very bound the
governor reserves, so the ratio here is the bound's tightness when the provider bills the worst
case; a real tokenizer that bills fewer tokens than bytes leaves prompt-heavy requests looser.

    .venv/bin/python bench/budget.py [--trials 500] [--seed 1]
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import sys
import time
import warnings
from typing import Any

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import hrbench as hb  # noqa: E402
from hrbench.models import DEFAULT_MAX_OUTPUT_TOKENS  # noqa: E402
from hrbench.testing import LoopbackServer  # noqa: E402

ITEMS, RUNS, IN_FLIGHT = 40, 5, 100

SCRIPTS = [
    "abcdefghijklmnopqrstuvwxyz     ",
    "àéîõüçñßøåæœ",
    "漢字かな交じり文中文字符",
    "ᚠᚢᚦᚨᚱᚲᚷᚹᚺᚾᛁᛃ",
    "🙂🙃🤖🚀🌍🎉👍🏽🧪",
    "𝔄𝔅ℭ𝔇𝔈𝔉𝒜𝒝𝒞𝕏𝕐ℤ",
]

PRICES = {"local-x": {"input": 2.0, "output": 8.0}, "local-y": {"input": 6.0, "output": 24.0}}
"""Models with no shipped tokenizer (billed by bytes), priced for the trials (USD per million)."""

DEARER = {"gpt-4o-mini": "gpt-4o", "claude-haiku-4-5": "claude-sonnet-4-5", "local-x": "local-y"}


def _prompt(rng: random.Random) -> str:
    chars = [rng.choice(rng.choice(SCRIPTS)) for _ in range(rng.randint(5, 300))]
    return "".join(chars)


def _trial(srv: LoopbackServer, rng: random.Random, pricing: hb.Pricing) -> dict[str, Any]:
    kind = rng.choice(["openai", "anthropic"])
    own_tokenizer = kind == "openai" and rng.random() < 0.5
    model = (
        rng.choice(["gpt-4o-mini", "gpt-4o"])
        if own_tokenizer
        else rng.choice(["claude-haiku-4-5", "local-x"] if kind == "anthropic" else ["local-x"])
    )
    switch = model in DEARER and rng.random() < 0.3
    undeclared = switch and rng.random() < 0.5  # billed as the dearer model, not declared
    n = rng.randint(1, 3) if kind == "openai" else 1
    limit_kind = rng.choice(["request", "client", "none"])
    limit = rng.randint(16, 2000)
    settings: dict[str, Any] = {"api_key_env": None, "trust_env": False, "max_connections": IN_FLIGHT}
    if switch and not undeclared:
        settings["billed_as"] = [DEARER[model]]
    params: dict[str, Any] = {"n": n} if n > 1 else {}
    if limit_kind == "request":
        params["max_tokens"] = limit
        sent = limit
    elif limit_kind == "client":
        settings["max_tokens"] = limit
        sent = limit
    else:
        sent = DEFAULT_MAX_OUTPUT_TOKENS if kind == "openai" else 1024  # the runner's or the client's
    client = (hb.OpenAIClient if kind == "openai" else hb.AnthropicClient)(
        model, base_url=srv.base_url, **settings
    )
    prompt = _prompt(rng)
    srv.set(
        reply_words=max(1, int(sent * rng.uniform(0.5, 3.0))),
        prompt_tokens="tiktoken" if own_tokenizer else "bytes",
        serve_model=DEARER[model] if switch else None,
        honour_max_tokens=True,
    )
    req = hb.Request(
        messages=[{"role": "user", "content": prompt}],
        params={**params, "max_tokens": sent},
        model=DEARER[model] if switch else model,
        provider=kind,
    )
    usd_each, tokens_each = pricing.reservation(req)
    token_cap = rng.random() < 0.3
    k = rng.uniform(15, 60)  # the cap holds this many worst cases: it binds before 200 requests
    gov = (
        hb.Governor(max_tokens=int(k * tokens_each))
        if token_cap
        else hb.Governor(max_usd=k * (usd_each or 0.0))
    )
    arm = hb.Arm("ask", lambda item, ctx: ctx.call(prompt, **params).raw_text)
    ref = hb.Reference({f"q{i}": i for i in range(ITEMS)}, labels=None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bench = hb.benchmark(
            arm, ref, runs=RUNS, client=client, governor=gov, pricing=pricing, concurrency=IN_FLIGHT
        )
    cap = gov.max_tokens if token_cap else gov.max_usd
    spent = gov.tokens if token_cap else gov.usd
    assert cap is not None
    one = max(((r.tokens_in + r.tokens_out) if token_cap else (r.usd or 0.0)) for r in bench.rows)
    live = sum(1 for r in bench.rows if r.failure_kind != "budget_stop")
    return {
        "kind": kind,
        "model": model,
        "switch": switch,
        "undeclared": undeclared,
        "over_one": spent > cap * (1 + 1e-9) + one,
        "sent": live,
        "n": n,
        "limit": limit_kind,
        "cap": "tokens" if token_cap else "usd",
        "over": spent > cap * (1 + 1e-9),
        "ratio": spent / cap if cap else 0.0,
        "bound": any(r.failure_kind == "budget_stop" for r in bench.rows),
        "halted": gov.halted is not None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=500)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    print(
        f"budget: {args.trials} randomised trials (seed {args.seed}) of the governor against a loopback provider"
    )
    print(
        f"  hrbench:  hb.benchmark() of {ITEMS} items x {RUNS} runs, {IN_FLIGHT} in flight, OpenAI or Anthropic "
        "client, a USD or token cap sized to bind, random prompts, n, limits and served-model switches"
    )
    print(
        "  baseline: the cap itself (spend past it is an overshoot) and the provider's bill of what it sent"
    )
    pricing = hb.Pricing(overrides=PRICES)
    results = []
    start = time.perf_counter()
    with LoopbackServer(record=False) as srv:
        for i in range(args.trials):
            results.append(_trial(srv, rng, pricing))
            if (i + 1) % 50 == 0:
                print(f"  {i + 1} trials, {time.perf_counter() - start:.0f} s", file=sys.stderr)
    hidden = [r for r in results if r["undeclared"]]
    overs = [r for r in results if r["over"] and not (r["undeclared"] and r["cap"] == "usd")]
    bound = [r["ratio"] for r in results if r["bound"] and not r["halted"]]
    print(f"trials: {len(results)} ({IN_FLIGHT} requests in flight, {ITEMS * RUNS} requests each)")
    print(
        "  clients: "
        + ", ".join(f"{k} {sum(r['kind'] == k for r in results)}" for k in ("openai", "anthropic"))
        + f"; served-model switches {sum(r['switch'] for r in results)} ({len(hidden)} undeclared)"
        + f"; n > 1: {sum(r['n'] > 1 for r in results)}"
        + f"; token caps {sum(r['cap'] == 'tokens' for r in results)}"
    )
    print(f"overshoots: {len(overs)} (goal 0)")
    for r in overs[:10]:
        print(f"  {r}")
    print(f"halted (a reply past its reservation or billed dearer): {sum(r['halted'] for r in results)}")
    if hidden:
        beyond = [r for r in hidden if r["over_one"] and r["cap"] == "usd"]
        usd_hidden = [r for r in hidden if r["cap"] == "usd"]
        print(
            f"undeclared dearer model: {len(usd_hidden)} USD-capped trials; overshoots beyond one request: "
            f"{len(beyond)} (goal 0); passed the cap by that one request: "
            f"{sum(r['over'] for r in usd_hidden)}; most runs answered: "
            f"{max((r['sent'] for r in usd_hidden), default=0)} (goal 1); halted: "
            f"{sum(r['halted'] for r in usd_hidden)} of {len(usd_hidden)}"
        )
        for r in beyond[:10]:
            print(f"  {r}")
    if bound:
        print(
            f"median spend/cap where the cap bound: {statistics.median(bound):.3f} over {len(bound)} trials "
            f"(goal >= 0.8); min {min(bound):.3f}"
        )
    for cap in ("usd", "tokens"):
        ratios = [r["ratio"] for r in results if r["bound"] and not r["halted"] and r["cap"] == cap]
        if ratios:
            print(f"  {cap} caps: median {statistics.median(ratios):.3f} over {len(ratios)}")
    print(f"wall: {time.perf_counter() - start:.0f} s")


if __name__ == "__main__":
    main()
