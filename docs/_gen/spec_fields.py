"""What each field of a benchmark or evaluate spec means, for the generated spec reference.

Keys are ``Struct.field`` as the JSON Schema in ``schema/`` names them; a value is the
description, or ``(description, example)`` with the example as a TOML line. A field the schema
has and this table lacks fails ``tests/docs/test_reference_coverage.py`` unless the Struct gives
it a description of its own.
"""

from __future__ import annotations

STRUCTS: dict[str, str] = {
    "BenchmarkParams": "The top level of a benchmark spec: `hrb bench FILE.toml`, `Client.benchmark(spec)`, the wire's `benchmark`.",
    "PromptArmSpec": '`kind = "prompt"`: an arm that sends one prompt per run and answers with the reply.',
    "ReadingArmSpec": '`kind = "reading"`: a reading recipe (`direct`, `chunked`, `retrieve`) with its settings.',
    "OutputsArmSpec": '`kind = "outputs"`: an arm that answers from outputs made elsewhere (scores them without calling a model).',
    "ImportArmSpec": '`kind = "import"`: an arm the daemon imports: an `Arm`, a function `fn(item, ctx)`, or a factory.',
    "ReferenceSpec": "`[reference]`: the labelled items, inline or read from a file.",
    "OpenAIClientSpec": '`kind = "openai"`: any OpenAI-compatible chat-completions endpoint (OpenAI, vLLM, llama.cpp, Ollama, a router).',
    "AnthropicClientSpec": '`kind = "anthropic"`: the Anthropic Messages API.',
    "ReplayClientSpec": '`kind = "replay"`: answers from a stored recording, each arm with the replies it got.',
    "MockClientSpec": '`kind = "mock"`: a model inside the daemon, for tests and examples: canned replies, an echo, or a function.',
    "PriceSpec": 'A model\'s price in USD per million tokens; `"free"` in its place declares the model free.',
    "PriceTierSpec": "A long-context tier of a price: the rates of every token once a prompt passes `above` tokens.",
    "GovernorSpec": "`[governor]`: the benchmark's budget. A limit left out is no cap on that quantity; an empty table means no limits at all.",
    "StopSpec": "`[stop]`: end the benchmark as soon as its comparison is sure (see the stop-when-sure guide).",
    "StopPlanSpec": "`[stop.plan]`: the difference worth finding and what is known of the variance, as `hb.power` takes them.",
    "BatchSpec": "`[batch]`: send the arms' model calls through the provider's batch API, at its batch rate (see the batch guide).",
    "RayExecutorSpec": '`[executor]` with `kind = "ray"`: run the cells on a Ray cluster (the daemon needs `hrbench[ray]`).',
    "EvaluateParams": "The top level of an evaluate spec: `hrb eval FILE.toml`, the wire's `evaluate`.",
    "EvalModuleSpec": "`[module]` of an evaluate spec: a signature, and a model or a function.",
    "EvalMetricSpec": "`[metric]` of an evaluate spec: a built-in metric or an import path.",
}

_CLIENT = {
    "kind": "Which client this table is.",
    "model": ("The model name sent with each request.", 'model = "llama3.1:8b"'),
    "api_key_env": (
        "The NAME of the environment variable that holds the API key, never the key; read from your shell "
        "at each request. `false` in TOML (`null` on the wire) sends no key, for local servers.",
        "api_key_env = false",
    ),
    "timeout_s": ("Seconds one attempt may take before it is retried.", "timeout_s = 120"),
    "max_connections": "Most connections open to the endpoint at once.",
    "max_attempts": "Most attempts per request (the first included) on retryable failures (429, 5xx, a lost reply).",
    "max_total_s": "Seconds a request may take over all its attempts.",
    "billed_as": (
        "Other models a reply may be billed as (a router, an alias of a dearer model): a budget reserves "
        "at the dearest of them and `model`.",
        'billed_as = ["gpt-4o"]',
    ),
    "settings": ("Extra body fields sent with every request.", "settings = { top_p = 0.9 }"),
    "price": (
        "The price of `model`, in USD per million tokens, over the price table (a local or unlisted model). "
        'A USD cap needs a price. `"free"` declares the model free (a rate of 0 for a priced model is refused).',
        "price = { input = 0.1, output = 0.2 }",
    ),
    "prices": (
        "Prices of other models by name (a `billed_as` model, a model an arm asks for), in USD per million tokens.",
        'prices = { "router-model" = { input = 1.0, output = 2.0 } }',
    ),
}

FIELDS: dict[str, str | tuple[str, str]] = {
    # the benchmark spec
    "BenchmarkParams.arms": "The arms to compare: a list of `[[arms]]` tables, each with a `kind`.",
    "BenchmarkParams.reference": (
        "The labelled items: a `[reference]` table, or the name or hash of a reference stored with `hrb ref put`.",
        'reference = "caps"',
    ),
    "BenchmarkParams.client": "The model client the arms call: a `[client]` table with a `kind`.",
    "BenchmarkParams.scorer": (
        "What decides each row right or wrong: `exact`, `answer_contains`, `numeric`, `choice`, `pattern`, "
        "`squad`, `tatqa`, `judge`, or `package.module:function`.",
        'scorer = "squad"',
    ),
    "BenchmarkParams.scorer_settings": (
        "Keyword arguments of the scorer (a judge's client goes in `[scorer_settings.client]`).",
        "scorer_settings = { abs_tol = 0.01 }",
    ),
    "BenchmarkParams.metrics": (
        "Graded scores reported beside the scorer's accuracy: `tatqa`, `squad`, `answer_contains` or an import path.",
        'metrics = ["answer_contains"]',
    ),
    "BenchmarkParams.runs": ("Runs (draws) per arm and item; intervals need 5 or more.", "runs = 5"),
    "BenchmarkParams.split": (
        "The split (or splits) the accuracy is computed on; items of other splits are run but not counted.",
        'split = "test"',
    ),
    "BenchmarkParams.seed": (
        "Seeds `ctx.rng`, the arms' private random stream (per seed, arm, item and run). It is not sent "
        "to the model and not part of the cache key; to send a provider seed put `seed` in an arm's `params`.",
        "seed = 7",
    ),
    "BenchmarkParams.governor": "The budget: a `[governor]` table. Left out, the default limits apply (400 calls, 5 USD).",
    "BenchmarkParams.cache": (
        "Serve repeated requests from the response cache; `false` for fresh draws.",
        "cache = false",
    ),
    "BenchmarkParams.record": (
        "Record every reply under this name, to replay later with a `replay` client.",
        'record = "capitals-2026-11"',
    ),
    "BenchmarkParams.concurrency": (
        "How many (arm, item) pairs run at once; 16 when not given.",
        "concurrency = 32",
    ),
    "BenchmarkParams.resume": "The id of a stored benchmark to resume (`hrb bench --resume ID`); other fields may be left out.",
    "BenchmarkParams.retry_errors": "With `resume`: run the runs that ended in an error again and replace their rows.",
    "BenchmarkParams.stream": "Stream rows as they are scored (`hrb bench --no-rows` turns it off).",
    "BenchmarkParams.detach": "Keep running when the connection that submitted it closes (`hrb bench --detach`).",
    "BenchmarkParams.name": (
        "The benchmark's name (`hrb bench FILE` uses the file's name).",
        'name = "capitals"',
    ),
    "BenchmarkParams.python_path": (
        "Folders the daemon imports `import` arms, mock functions and scorers from (`hrb bench` adds the spec's folder).",
        'python_path = ["/home/me/project"]',
    ),
    "BenchmarkParams.env": "Values of the variables the spec names (API keys), sent by `hrb` from your shell; never stored.",
    "BenchmarkParams.stop": "Stop as soon as the comparison is sure: a `[stop]` table. Left out, every cluster runs.",
    "BenchmarkParams.batch": "Batch mode: a `[batch]` table (`hrb bench --batch` adds one with the defaults). Left out, every call goes through the synchronous API.",
    "BenchmarkParams.executor": (
        "Where the cells run: `local` (the daemon) or a Ray cluster.",
        'executor = "ray"',
    ),
    # arms
    "PromptArmSpec.kind": "`prompt`.",
    "PromptArmSpec.name": (
        "The arm's name, unique in the benchmark; part of every cache key.",
        'name = "ask"',
    ),
    "PromptArmSpec.template": (
        "The prompt: `{item}` is the item, and a mapping item's keys are fields (`{question}`); `{{` is a brace.",
        'template = "Capital of {item}?"',
    ),
    "PromptArmSpec.system": ("A system message sent before the prompt.", 'system = "Answer in one word."'),
    "PromptArmSpec.model": ("A model other than the client's.", 'model = "gpt-4o"'),
    "PromptArmSpec.params": (
        "Request fields sent with the prompt (part of the cache key).",
        "params = { temperature = 0.7, max_tokens = 50 }",
    ),
    "PromptArmSpec.version": (
        "The arm's version, recorded with the benchmark: a resume refuses a changed arm. Not part of the cache key.",
        'version = "2"',
    ),
    "PromptArmSpec.tools": (
        "Tools the model may call, by import path (code): the arm runs a tool loop, each turn a request of the run.",
        'tools = { capital = "mytools:capital" }',
    ),
    "PromptArmSpec.max_steps": ("The most model turns of the tool loop (8 by default).", "max_steps = 4"),
    "PromptArmSpec.reasoning_effort": (
        "OpenAI's `reasoning_effort`, sent with every request of the arm (refused for an Anthropic client).",
        'reasoning_effort = "low"',
    ),
    "PromptArmSpec.thinking_budget": (
        "Anthropic's thinking `budget_tokens`, sent with every request (at least 1024; refused for an OpenAI-compatible client).",
        "thinking_budget = 2048",
    ),
    "PromptArmSpec.sweep": (
        "One arm per value (per combination, with both), named `NAME-VALUE`: a sweep of the reasoning settings.",
        'sweep = { reasoning_effort = ["low", "high"] }',
    ),
    "SweepSpec.reasoning_effort": ("The efforts to sweep.", 'reasoning_effort = ["low", "high"]'),
    "SweepSpec.thinking_budget": ("The thinking budgets to sweep (tokens).", "thinking_budget = [1024, 8192]"),
    "ReadingArmSpec.kind": "`reading`.",
    "ReadingArmSpec.recipe": ("The reading recipe: `direct`, `chunked` or `retrieve`.", 'recipe = "chunked"'),
    "ReadingArmSpec.name": "The arm's name (the recipe's when not given).",
    "ReadingArmSpec.model": "A model other than the client's.",
    "ReadingArmSpec.settings": ("The recipe's settings.", "settings = { chunk_words = 300 }"),
    "ReadingArmSpec.reasoning_effort": (
        "OpenAI's `reasoning_effort`, sent with every request of the arm (refused for an Anthropic client).",
        'reasoning_effort = "low"',
    ),
    "ReadingArmSpec.thinking_budget": (
        "Anthropic's thinking `budget_tokens`, sent with every request (at least 1024; refused for an OpenAI-compatible client).",
        "thinking_budget = 2048",
    ),
    "ReadingArmSpec.sweep": (
        "One arm per value (per combination, with both), named `NAME-VALUE`: a sweep of the reasoning settings.",
        'sweep = { reasoning_effort = ["low", "high"] }',
    ),
    "OutputsArmSpec.kind": "`outputs`.",
    "OutputsArmSpec.name": "The arm's name.",
    "OutputsArmSpec.outputs": (
        "Outputs inline: item id to one output, or a list with one output per run.",
        'outputs = { q1 = "Paris", q2 = ["Lima", "Lima"] }',
    ),
    "OutputsArmSpec.path": (
        'A file of outputs the daemon reads: a JSON object of the same shape, or JSON lines `{"item", "output", "run"}` (`run` optional; `id` may stand for `item`).',
        'path = "predictions.jsonl"',
    ),
    "OutputsArmSpec.id_field": "In a file of predictions made elsewhere, the field holding the item id.",
    "OutputsArmSpec.prediction_field": "In a file of predictions made elsewhere, the field holding the prediction.",
    "OutputsArmSpec.scale_field": "The field holding a prediction's scale word (TAT-QA: thousand, million, percent).",
    "OutputsArmSpec.format": (
        "`outputs`, `tatqa` for a TAT-QA run file, or another tool's results: `inspect`, `lm-eval`, `promptfoo`."
    ),
    "OutputsArmSpec.source_arm": (
        "Which of the file's arms to read when another tool's results hold several "
        "(lm-eval: a filter; promptfoo: `PROVIDER | PROMPT`).",
        'source_arm = "openai:gpt-4o-mini | prompt-1"',
    ),
    "OutputsArmSpec.id_var": (
        'In promptfoo\'s results (`format = "promptfoo"`), the test variable holding the item id (`id` when not given).',
        'id_var = "question_id"',
    ),
    "OutputsArmSpec.missing": (
        "`refuse`: an item without an output is refused before the first run; `error`: its runs are `error` runs.",
        'missing = "error"',
    ),
    "ImportArmSpec.kind": "`import`.",
    "ImportArmSpec.path": (
        "`package.module:attribute`: an `Arm`, a function `fn(item, ctx)` or a factory.",
        'path = "mypkg.arms:ask"',
    ),
    "ImportArmSpec.name": "The arm's name (the imported arm's when not given).",
    "ImportArmSpec.settings": "Keyword arguments: the attribute is called with them and must return an `Arm` or a function.",
    "ImportArmSpec.reasoning_effort": (
        "OpenAI's `reasoning_effort`, sent with every request of the arm (refused for an Anthropic client).",
        'reasoning_effort = "low"',
    ),
    "ImportArmSpec.thinking_budget": (
        "Anthropic's thinking `budget_tokens`, sent with every request (at least 1024; refused for an OpenAI-compatible client).",
        "thinking_budget = 2048",
    ),
    "ImportArmSpec.sweep": (
        "One arm per value (per combination, with both), named `NAME-VALUE`: a sweep of the reasoning settings.",
        'sweep = { reasoning_effort = ["low", "high"] }',
    ),
    # reference
    "ReferenceSpec.items": (
        "Inline items: id to payload (or a list: ids `1`, `2`, ...).",
        'items = { q1 = "France", q2 = "Peru" }',
    ),
    "ReferenceSpec.labels": (
        "Labels by item id (a list only beside a list of items); a label may be a list of accepted answers.",
        'labels = { q1 = "Paris", q2 = ["Lima", "Lima, Peru"] }',
    ),
    "ReferenceSpec.cluster": (
        "Each item's cluster, by id, or one for all; intervals are clustered on it.",
        'cluster = ["a", "a"]',
    ),
    "ReferenceSpec.split": ("Each item's split, by id, or one for all.", 'split = "test"'),
    "ReferenceSpec.path": ("A reference file the daemon reads.", 'path = "dev-v2.0.json"'),
    "ReferenceSpec.format": (
        "The file's format: `rows` (JSON lines of records), `squad`, `tatqa`, "
        "or another tool's results: `inspect`, `lm-eval`, `promptfoo`.",
        'format = "squad"',
    ),
    "ReferenceSpec.limit": ("Keep the first N items of the file.", "limit = 50"),
    "ReferenceSpec.ids": ("Keep only these item ids.", 'ids = ["q1", "q2"]'),
    "ReferenceSpec.ids_from": (
        "Keep only the ids found in this JSON lines file (under `id_field`), e.g. the items a run of predictions answered.",
        'ids_from = "predictions.jsonl"',
    ),
    "ReferenceSpec.id_field": "The id field of the records in `path` and `ids_from`.",
    "ReferenceSpec.id_var": (
        'In promptfoo\'s results (`format = "promptfoo"`), the test variable holding the item id (`id` when not given).',
        'id_var = "question_id"',
    ),
    # clients
    **{f"OpenAIClientSpec.{k}": v for k, v in _CLIENT.items()},
    "OpenAIClientSpec.base_url": (
        "The API root: the provider's, or a local server's (vLLM, llama.cpp, Ollama).",
        'base_url = "http://127.0.0.1:8000/v1"',
    ),
    "OpenAIClientSpec.max_tokens": (
        "The output limit sent when a request sets none (a USD or token cap always sends one: 1,024 by default).",
        "max_tokens = 400",
    ),
    **{f"AnthropicClientSpec.{k}": v for k, v in _CLIENT.items()},
    "AnthropicClientSpec.base_url": "The API root.",
    "AnthropicClientSpec.max_tokens": "The output limit sent when a request sets none.",
    "AnthropicClientSpec.anthropic_version": "The `anthropic-version` header sent.",
    "ReplayClientSpec.kind": "`replay`.",
    "ReplayClientSpec.recording": ("The name of the stored recording.", 'recording = "capitals-2026-11"'),
    "ReplayClientSpec.strict": "`true`: a request the recording lacks is a `ReplayMiss` error run; `false`: ask `fallback` and record it.",
    "ReplayClientSpec.fallback": "The live client asked on a miss (with `strict = false`).",
    "ReplayClientSpec.model": "The model the recording was made with, when it holds several.",
    "ReplayClientSpec.provider": "The provider the recording was made with (`openai`, `anthropic`).",
    "ReplayClientSpec.base_url": "The endpoint the recording was made against, when not its own.",
    "MockClientSpec.kind": "`mock`.",
    "MockClientSpec.function": (
        "`package.module:function`, called as `fn(messages, params)`.",
        'function = "mypkg.fake:reply"',
    ),
    "MockClientSpec.reply": ("One reply to every prompt.", 'reply = "Paris"'),
    "MockClientSpec.replies": (
        "Prompt (the last message's content) to reply.",
        '"Capital of France?" = "Paris"',
    ),
    "MockClientSpec.default": ("The reply to a prompt `replies` lacks.", 'default = "I do not know"'),
    "MockClientSpec.echo": "Answer with the prompt.",
    "MockClientSpec.model": "The model name rows and traces show.",
    "MockClientSpec.delay_s": "Seconds each reply waits, to simulate latency.",
    "PriceSpec.input": ("USD per million input tokens.", "input = 0.15"),
    "PriceSpec.output": ("USD per million output tokens.", "output = 0.6"),
    "PriceSpec.cached_input": (
        "USD per million cached input tokens (`input` when not given).",
        "cached_input = 0.075",
    ),
    "PriceSpec.tiers": (
        "Long-context rates: once a request's prompt has more than `above` tokens, every token is billed at the tier's rates.",
        "tiers = [{above = 200000, input = 6.0, output = 22.5}]",
    ),
    "PriceTierSpec.above": ("Prompt tokens past which the tier applies.", "above = 200000"),
    "PriceTierSpec.input": ("USD per million input tokens in the tier.", "input = 6.0"),
    "PriceTierSpec.output": ("USD per million output tokens in the tier.", "output = 22.5"),
    "PriceTierSpec.cached_input": (
        "USD per million cached input tokens in the tier (the tier's `input` when not given).",
        "cached_input = 0.6",
    ),
    # governor, executor
    "GovernorSpec.max_calls": ("Most model calls (attempts that were sent).", "max_calls = 5000"),
    "GovernorSpec.max_usd": (
        "Most USD, at list price, reserved at each request's worst case.",
        "max_usd = 2.0",
    ),
    "GovernorSpec.max_tokens": ("Most tokens, input and output.", "max_tokens = 1000000"),
    "GovernorSpec.defaults": "`true`: a limit left out is the default's, not no cap (what `hrb bench --max-usd` sends).",
    "GovernorSpec.max_calls_per_run": (
        "Most model calls one run sends; a run that would pass it ends `budget_stop`, the benchmark goes on.",
        "max_calls_per_run = 8",
    ),
    "GovernorSpec.max_usd_per_run": ("Most USD one run spends, each request reserved at its worst case.", "max_usd_per_run = 0.05"),
    "GovernorSpec.max_tokens_per_run": ("Most tokens one run spends, input and output.", "max_tokens_per_run = 20000"),
    "RayExecutorSpec.kind": "`ray`.",
    "RayExecutorSpec.address": (
        "`auto` (a running cluster), `local` (one started for the run), or `ray://host:port`.",
        'address = "local"',
    ),
    "RayExecutorSpec.num_cpus": "CPUs of a `local` cluster.",
    "RayExecutorSpec.worker_concurrency": "Runs at once within one task.",
    "RayExecutorSpec.batch_size": "Cells per Ray task.",
    "RayExecutorSpec.max_retries": "Retries of a task whose worker died.",
    # stop when sure
    "StopSpec.goal": (
        "`rank`: which arm is better; `tolerance`: the difference within `tolerance`; "
        "`rank_or_tolerance`: whichever comes first per pair; `full_run`: would the rest of the reference change the answer.",
        'goal = "rank"',
    ),
    "StopSpec.pairs": (
        "The pairs of arms of interest (every pair by default; `alpha` is split over them).",
        'pairs = [["terse", "plain"]]',
    ),
    "StopSpec.tolerance": (
        "The half-width, in accuracy, that `tolerance` goals stop at.",
        "tolerance = 0.05",
    ),
    "StopSpec.alpha": ("The chance of a wrong decision, however often the test looks.", "alpha = 0.05"),
    "StopSpec.plan": "A `[stop.plan]` table: the power plan that sizes `max_clusters`.",
    "StopSpec.max_clusters": (
        "Stop after this many clusters (default: twice the plan's, at most the reference's).",
        "max_clusters = 40",
    ),
    "StopSpec.min_clusters": "Clusters run before the first look.",
    "StopSpec.method": (
        "The sequential test: `auto` (the default: `symmetric`, or `asymptotic` for a small plan of "
        "clusters of similar size), `exact`, `symmetric`, `asymptotic` or `strict`; one asked for outside "
        "its validity warns.",
        'method = "symmetric"',
    ),
    "StopSpec.seed": "Seeds the random order the clusters run in.",
    "StopSpec.margin": (
        "A pair whose confidence sequence lies within plus or minus this difference, in accuracy, is "
        "settled as no different (default: 1.75 times the plan's `diff`; 0: never).",
        "margin = 0.05",
    ),
    "StopSpec.order": (
        "`uniform` (the default) or `informative`: clusters drawn with known probabilities from how the "
        "paired difference varied on each in earlier benchmarks of the same reference, each weighted by the "
        "inverse of its probability (uniform without such benchmarks).",
        'order = "informative"',
    ),
    "StopSpec.best_arm": "Stop as soon as one arm is decided better than every other.",
    "StopPlanSpec.diff": ("The difference worth finding, in accuracy.", "diff = 0.05"),
    "StopPlanSpec.power": "The chance of finding `diff` when it is there.",
    "StopPlanSpec.pilot": (
        "A stored benchmark (id or name) whose rows give the variances and cluster sizes.",
        'pilot = "capitals"',
    ),
    "StopPlanSpec.arm_a": "With `pilot`: the first arm of the planned pair.",
    "StopPlanSpec.arm_b": "With `pilot`: the second arm of the planned pair.",
    "StopPlanSpec.var_within": "The variance between runs within an item, stated instead of a pilot's.",
    "StopPlanSpec.var_between": "The variance between items of their true difference, stated instead of a pilot's.",
    "StopPlanSpec.var_cluster": "The variance between clusters of their mean difference, stated instead of a pilot's.",
    "StopPlanSpec.runs": "Runs per item the plan assumes.",
    "StopPlanSpec.items_per_cluster": "Items per cluster the plan assumes.",
    "StopPlanSpec.accuracy": "The arms' accuracy, stated, for the exact power with few clusters.",
    # batch mode
    "BatchSpec.wave": (
        "Clusters per wave: their runs' calls go out in one batch. Default: every cluster at once; with a "
        "`[stop]` table, a quarter of its plan's clusters (an eighth of the most it may run), a wave at a time.",
        "wave = 8",
    ),
    "BatchSpec.poll_s": ("Seconds between two status checks of a batch.", "poll_s = 60"),
    "BatchSpec.max_wait_s": (
        "The longest a batch is waited for (seconds); it is then cancelled and its lines not answered "
        "are handled as expired. Providers give a batch 24 hours.",
        "max_wait_s = 86400",
    ),
    "BatchSpec.expired": (
        "An expired line: `resubmit` (in a later batch, twice at most), `sync` (at once, through the "
        "synchronous API, at list price) or `fail` (an error row).",
        'expired = "resubmit"',
    ),
    "BatchSpec.max_lines": "The most lines in one batch (default: the provider's most, 50,000 or 100,000).",
    "BatchSpec.gather_s": "Seconds to wait for more lines while some runs are busy elsewhere, before sending what is queued.",
    "BatchSpec.discount": "A line's price as a share of the standard price, for a model whose batch price is not listed.",
    # evaluate
    "EvaluateParams.module": "The module to evaluate: a `[module]` table.",
    "EvaluateParams.data": (
        "The data rows, each a table of input and expected fields.",
        'data = [{ text = "great film", sentiment = "positive" }]',
    ),
    "EvaluateParams.metric": ("The metric: a built-in name or a `[metric]` table.", 'metric = "exact_match"'),
    "EvaluateParams.client": "The model client a model module calls.",
    "EvaluateParams.epochs": ("Times each row is run.", "epochs = 3"),
    "EvaluateParams.concurrency": "Rows run at once.",
    "EvaluateParams.return_format": "`structured` (scores with their rows) or `simple` (the score alone).",
    "EvaluateParams.cache": "Serve repeated requests from the response cache.",
    "EvaluateParams.trace_context": "A value recorded with each trace (for your own correlation).",
    "EvaluateParams.python_path": "Folders the daemon imports `fn` and metrics from.",
    "EvaluateParams.env": "Values of the variables the spec names (API keys), sent by `hrb` from your shell; never stored.",
    "EvalModuleSpec.signature": (
        "Inputs and outputs with types.",
        "signature = \"text -> sentiment: enum('positive', 'negative')\"",
    ),
    "EvalModuleSpec.instructions": "A model module's instructions.",
    "EvalModuleSpec.fn": "A plain-function module: `package.module:function`.",
    "EvalModuleSpec.params": "Sampling parameters of a model module's requests.",
    "EvalModuleSpec.name": "The module's name.",
    "EvalMetricSpec.name": "`exact_match`, `f1`, `contains`, `field_match`, `tatqa_exact_match`, `tatqa_f1`, or an import path.",
    "EvalMetricSpec.field": "The output field the metric reads.",
    "EvalMetricSpec.column": "The data column holding the expected value.",
    "EvalMetricSpec.fields": "The output fields `field_match` compares.",
    "EvalMetricSpec.normalise": "`true`/`squad`: SQuAD v2.0 normalisation (drops signs, points, articles); `numbers`: keeps them.",
    "EvalMetricSpec.threshold": "Turns the metric into a pass mark: a score at or above it passes.",
}
