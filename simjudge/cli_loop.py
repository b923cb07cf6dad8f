"""Command-line parsers for the acquisition loop: ``acquire``, ``pool``, ``dataset``, ``prm``.

Thin like :mod:`simjudge.cli`: arguments in, one library call out.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

__all__ = ["add_loop_commands"]


def _acquire(args: argparse.Namespace) -> int:
    from simjudge.tasks.acquire import acquire
    from simjudge.tasks.components import make_execute_fn, make_proposer, open_pool
    from simjudge.tasks.proposer import TaskRequest
    from simjudge.tasks.verifiers import make_verifier

    out = Path(args.out)
    request = TaskRequest.resolve(args.task, args.description or "", args.object)
    proposer = make_proposer(args.proposer, out, args.model, args.llm_cache, args.temperature,
                             args.max_tokens)
    judge_client = None
    if args.verifier == "llm":
        from simjudge.tasks.components import make_client_for

        judge_client = make_client_for(args.judge_proposer or args.proposer if args.proposer
                                       != "template" else "local", out, args.model,
                                       args.llm_cache)
    score = make_verifier(args.verifier, args.prm, args.strategy, judge_client)
    pool = None if args.no_pool else open_pool(args.pool)
    result = acquire(
        request, proposer, make_execute_fn(args.reward_solver, args.budget_steps, args.seed),
        out, candidates=args.candidates, score=score, verifier_name=args.verifier,
        execute_all=args.execute == "all", pool=pool, top_k=args.top_k, seed=args.seed,
        resume=args.resume,
        config={"reward_solver": args.reward_solver, "budget_steps": args.budget_steps,
                "model": args.model, "strategy": args.strategy},
    )
    print((out / "summary.md").read_text())
    verdict = "solved" if result.task_success else "not solved by any executed candidate"
    print(f"{request.name}: {verdict}; details in {out}/summary.json")
    return 0


def _pool(args: argparse.Namespace) -> int:
    from simjudge.tasks.components import open_pool

    pool = open_pool(args.pool)
    if args.pool_command == "list":
        for t in pool.list():
            print(f"{t.name:32s} {t.asset:22s} solutions={t.n_solutions} successful={t.n_successful}")
    elif args.pool_command == "show":
        entry = pool.show(args.name)
        solutions = [{**s, "solution": s["solution"].to_yaml()} for s in entry.solutions]
        print(json.dumps({"task": entry.task.__dict__, "solutions": solutions}, indent=2,
                         default=str))
    else:
        for ex in pool.search(args.text, k=args.k):
            print(f"{ex.similarity:.3f}  {ex.task}: {ex.description}")
    return 0


def _dataset(args: argparse.Namespace) -> int:
    from simjudge.tasks.components import make_execute_fn, make_proposer
    from simjudge.tasks.dataset import build_dataset
    from simjudge.tasks.proposer import TaskRequest

    out = Path(args.out)
    tasks = [TaskRequest.resolve(t.strip()) for t in args.tasks.split(",") if t.strip()]
    proposer = make_proposer(args.proposer, out, args.model, args.llm_cache)
    if args.proposer == "template":
        completer = proposer
    else:
        from simjudge.tasks.llm_proposer import Completer

        completer = Completer(proposer.client, temperature=proposer.temperature)
    records = build_dataset(
        tasks, proposer, completer,
        make_execute_fn(args.reward_solver, args.budget_steps, args.seed, video=False), out,
        base=args.base, completions=args.completions, seed=args.seed,
    )
    print(f"{len(records)} labelled prefixes ({sum(r.label for r in records)} positive) in {out}")
    return 0


def _prm(args: argparse.Namespace) -> int:
    from simjudge.judges.prm import PRMConfig
    from simjudge.tasks.dataset import load_records
    from simjudge.tasks.llm import MiniLMEmbedder
    from simjudge.tasks.prm_eval import train_eval, write_report

    records = load_records(args.data)
    embed = MiniLMEmbedder().embed
    config = PRMConfig(epochs=args.epochs, seed=args.seed)
    splits = ["task", "solution"] if args.prm_command == "eval" else [args.split]
    results = [
        train_eval(records, embed, split, test_tasks=args.test_tasks.split(",")
                   if args.test_tasks else (), config=config, use_rule=not args.no_rule,
                   seed=args.seed)
        for split in splits
    ]
    if args.prm_command == "train":
        results[0]["verifier"].save(args.out)
    report = write_report(results, args.out)
    print(report.read_text())
    return 0


def add_loop_commands(sub: argparse._SubParsersAction) -> None:
    """Register the loop's subcommands on the main parser's subparsers."""
    p = sub.add_parser("acquire", help="propose, verify, execute and pool solutions for a task")
    p.add_argument("--task", required=True, help="task name or built-in id, e.g. 'Open Drawer'")
    p.add_argument("--description", default=None)
    p.add_argument("--object", default=None, help="asset id for a task that is not built in")
    p.add_argument("--candidates", type=int, default=4)
    p.add_argument("--proposer", default="template", choices=["template", "local", "openai", "replay"])
    p.add_argument("--model", default=None, help="LLM model (registry name or server model)")
    p.add_argument("--llm-cache", default=None, help="recorded exchanges (required for replay)")
    p.add_argument("--temperature", type=float, default=0.7)
    p.add_argument("--max-tokens", type=int, default=1024,
                   help="token budget per LLM proposal attempt (runaway replies stop here)")
    p.add_argument("--verifier", default="rule", choices=["none", "rule", "prm", "llm"])
    p.add_argument("--judge-proposer", default=None, help="LLM backend of the llm verifier")
    p.add_argument("--prm", default=None, help="trained PRM folder (for --verifier prm)")
    p.add_argument("--strategy", default="last", help="PRM aggregation strategy")
    p.add_argument("--execute", default="best", choices=["best", "all"])
    p.add_argument("--reward-solver", default="sac", help="sac (default), mpc or oracle")
    p.add_argument("--budget-steps", type=int, default=None, help="SAC env steps per reward subtask")
    p.add_argument("--pool", default=None, help="exemplar pool file")
    p.add_argument("--no-pool", action="store_true", help="propose without exemplars")
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", required=True)
    p.add_argument("--resume", action="store_true")
    p.set_defaults(func=_acquire)

    p = sub.add_parser("pool", help="the exemplar task pool")
    psub = p.add_subparsers(dest="pool_command", required=True)
    for name in ("list", "show", "search"):
        q = psub.add_parser(name)
        q.add_argument("--pool", default=None)
        if name == "show":
            q.add_argument("name")
        if name == "search":
            q.add_argument("text")
            q.add_argument("-k", type=int, default=5)
        q.set_defaults(func=_pool)

    p = sub.add_parser("dataset", help="verifier datasets")
    dsub = p.add_subparsers(dest="dataset_command", required=True)
    q = dsub.add_parser("build", help="propose, complete, execute and label prefixes")
    q.add_argument("--tasks", required=True, help="comma-separated task names or ids")
    q.add_argument("--base", type=int, default=3)
    q.add_argument("--completions", type=int, default=2)
    q.add_argument("--proposer", default="template", choices=["template", "local", "openai", "replay"])
    q.add_argument("--model", default=None)
    q.add_argument("--llm-cache", default=None)
    q.add_argument("--reward-solver", default="mpc", help="mpc (default here), sac or oracle")
    q.add_argument("--budget-steps", type=int, default=None)
    q.add_argument("--seed", type=int, default=0)
    q.add_argument("--out", required=True)
    q.set_defaults(func=_dataset)

    p = sub.add_parser("prm", help="train and evaluate the process verifier")
    rsub = p.add_subparsers(dest="prm_command", required=True)
    for name in ("train", "eval"):
        q = rsub.add_parser(name)
        q.add_argument("--data", required=True, help="dataset folder from `dataset build`")
        q.add_argument("--out", required=True)
        q.add_argument("--split", default="task", choices=["task", "solution"])
        q.add_argument("--test-tasks", default=None, help="comma-separated (split by task)")
        q.add_argument("--epochs", type=int, default=150)
        q.add_argument("--no-rule", action="store_true", help="without rule-judge features")
        q.add_argument("--seed", type=int, default=0)
        q.set_defaults(func=_prm)
