"""ExemplarPool: storage, retrieval, seeding, persistence and concurrency."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from simjudge.llm import HashingEmbedder, MiniLMEmbedder
from simjudge.llm.embeddings import minilm_path
from simjudge.pipelines.pool import ExemplarPool, PoolError, TaskFields
from simjudge.pipelines.pool_seed import EXEMPLAR_DIR, load_exemplars, seed_pool
from simjudge.tasks.spec import Solution


def solution(task: str, asset: str = "StorageFurniture-0", link: str = "link_1",
             description: str = "", provenance: dict | None = None) -> Solution:
    obj = asset.split("-")[0]
    return Solution.parse({
        "task": task,
        "description": description,
        "scene": {"objects": [{"name": obj, "asset": asset, "center": [0.7, 0.5]}]},
        "subtasks": [
            {"name": "grasp the handle", "kind": "primitive",
             "code": f'rgbs, final_state = grasp_object_link(self, "{obj}", "{link}")\n'
                     f'success = check_grasped(self, "{obj}", "{link}")'},
            {"name": "pull", "kind": "reward", "code": "def _compute_reward(self):\n"
                                                     "    return 0.0, False"},
        ],
        "provenance": provenance or {},
    })


TASKS = [
    ("Open Cabinet Drawer", "Slide the top drawer of the cabinet out.", "StorageFurniture-0"),
    ("Press Button", "Press the red button on the panel.", "ButtonPanel-0"),
    ("Turn Faucet", "Rotate the faucet handle to let water run.", "Faucet-0"),
    ("Close Laptop", "Fold the laptop screen down until it is shut.", "Laptop-0"),
]


def fill(pool: ExemplarPool) -> None:
    for name, desc, asset in TASKS:
        pool.add_task({"name": name, "description": desc, "asset": asset, "tags": ["t"]},
                      solution(name, asset), {"task_success": True,
                                              "subtask_success": [True, True]})


class CountingEmbedder(HashingEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.embedded: list[str] = []

    def _embed_batch(self, texts):
        self.embedded += texts
        return super()._embed_batch(texts)


@pytest.fixture(scope="module")
def minilm():
    try:
        minilm_path()
        import sentence_transformers  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import problem means "extra missing"
        pytest.skip(f"MiniLM extra missing ({exc}); run `make llm`")
    embedder = MiniLMEmbedder()
    embedder.load()
    return embedder


def test_wal_mode_and_schema(tmp_path):
    path = tmp_path / "pool" / "pool.sqlite"
    with ExemplarPool(path, embedder=HashingEmbedder()) as pool:
        assert pool.journal_mode == "wal"
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
    assert {"tasks", "solutions", "outcomes", "embeddings"} <= tables
    conn.close()


def test_not_a_pool(tmp_path):
    bad = tmp_path / "x.sqlite"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(PoolError, match="not a usable exemplar pool"):
        ExemplarPool(bad, embedder=HashingEmbedder())


def test_minilm_ranks_drawer_tasks_together(tmp_path, minilm):
    pool = ExemplarPool(tmp_path / "p.sqlite", embedder=minilm)
    fill(pool)
    top = pool.top_k("Open Drawer", "pull the drawer open", k=2)
    assert [e.name for e in top][0] == "Open Cabinet Drawer"
    sims = {e.name: e.similarity for e in pool.top_k("Open Drawer", "pull the drawer open", k=4)}
    assert sims["Open Cabinet Drawer"] > sims["Press Button"] + 0.2
    assert top[0].task == top[0].solution.task == "Open Cabinet Drawer" and top[0].asset == "StorageFurniture-0"
    assert pool.search("push a button", k=1)[0].name == "Press Button"
    dims = pool._query("SELECT DISTINCT model, dim FROM embeddings")
    assert dims == [("all-MiniLM-L6-v2", 384)]


def test_embedder_normalises_and_caches(minilm):
    vecs = minilm.embed(["Open Drawer: pull the drawer open", "Press Button"])
    assert vecs.shape == (2, 384) and abs(float((vecs[0] ** 2).sum()) - 1) < 1e-5
    again = minilm.embed(["Press Button"])
    assert (again[0] == vecs[1]).all()
    with pytest.raises(TypeError):
        minilm.embed("not a list")


def test_only_successes_are_exemplars(tmp_path):
    pool = ExemplarPool(tmp_path / "p.sqlite", embedder=HashingEmbedder())
    fail = {"task_success": False, "subtask_success": [True, False], "run_dir": "runs/a"}
    assert pool.append_success("Open Door", solution("Open Door"), fail) is None
    assert pool.list() == [] and len(pool) == 0
    pool.add_task({"name": "Open Door", "description": "Swing it open."},
                  solution("Open Door"), fail)
    assert len(pool) == 0 and pool.top_k("Open Gate", "swing the gate", k=2) == []
    sol_id = pool.append_success({"name": "Open Door"}, solution("Open Door", link="link_0"),
                                 {"task_success": True, "subtask_success": [True, True]})
    assert sol_id is not None and len(pool) == 1
    (ex,) = pool.top_k("Open Gate", "swing the gate", k=2)
    assert ex.solution_id == sol_id and ex.description == "Swing it open."
    entry = pool.show("Open Door")
    assert entry.task.n_solutions == 2 and entry.task.n_successful == 1
    assert entry.solutions[0]["outcomes"][0] == {**fail, "created": entry.solutions[0][
        "outcomes"][0]["created"]}


def test_top_k_excludes_query_task_by_default(tmp_path):
    pool = ExemplarPool(tmp_path / "p.sqlite", embedder=HashingEmbedder())
    fill(pool)
    names = [e.name for e in pool.top_k("Press Button", "Press the red button on the panel.")]
    assert "Press Button" not in names and len(names) == 2
    same = pool.top_k("Press Button", "Press the red button on the panel.", k=1, exclude=())
    assert same[0].name == "Press Button" and same[0].similarity == pytest.approx(1.0, abs=1e-5)
    with pytest.raises(ValueError, match="k must be"):
        pool.top_k("x", k=0)


def test_persistence_across_reopen_reuses_embeddings(tmp_path):
    path = tmp_path / "p.sqlite"
    first = CountingEmbedder()
    with ExemplarPool(path, embedder=first) as pool:
        fill(pool)
        before = [(e.name, e.similarity) for e in pool.top_k("Open Drawer", "pull it", k=3)]
    assert len(first.embedded) == len(TASKS) + 1
    second = CountingEmbedder()
    with ExemplarPool(path, embedder=second) as pool:
        assert [t.name for t in pool.list()] == sorted(n for n, _, _ in TASKS)
        after = [(e.name, e.similarity) for e in pool.top_k("Open Drawer", "pull it", k=3)]
        assert pool.show("Turn Faucet").solutions[0]["solution"] == solution("Turn Faucet",
                                                                             "Faucet-0")
    assert after == before
    assert second.embedded == []  # stored vectors and the cached query vector were reused


def test_description_change_reembeds(tmp_path):
    embedder = CountingEmbedder()
    pool = ExemplarPool(tmp_path / "p.sqlite", embedder=embedder)
    fill(pool)
    pool.search("drawer")
    pool.add_task({"name": "Press Button", "description": "Push the big green button."},
                  solution("Press Button", "ButtonPanel-0"), True)
    pool.search("drawer")
    assert embedder.embedded[-1] == "Press Button: Push the big green button."
    assert pool.show("Press Button").task.description == "Push the big green button."


def test_show_unknown_suggests(tmp_path):
    pool = ExemplarPool(tmp_path / "p.sqlite", embedder=HashingEmbedder())
    fill(pool)
    with pytest.raises(PoolError, match=r"did you mean \['Press Button'\]"):
        pool.show("Press Buton")


def test_bad_inputs(tmp_path):
    pool = ExemplarPool(tmp_path / "p.sqlite", embedder=HashingEmbedder())
    with pytest.raises(PoolError, match="non-empty name"):
        pool.add_task({"description": "x"}, solution("x"))
    with pytest.raises(PoolError, match="task_success must be a bool"):
        pool.add_task({"name": "Open Door"}, solution("Open Door"),
                      {"task_success": "yes"})
    with pytest.raises(PoolError, match="must be a Solution"):
        pool.add_task({"name": "Open Door"}, {"task": "Open Door"})


def write_seed(folder):
    folder.mkdir()
    (folder / "01_open_drawer.yaml").write_text(solution("Open Drawer").to_yaml())
    (folder / "02_custom.yaml").write_text(solution(
        "Lift Lid", "Box-0", description="Raise the lid of the box.",
        provenance={"tags": ["open", "lid"], "asset": "Box-0"}).to_yaml())
    (folder / "03_faucet.yml").write_text(solution("Turn Faucet", "Faucet-0",
                                                   description="Turn the tap on.").to_yaml())


def test_seed_from_folder(tmp_path):
    write_seed(tmp_path / "seed")
    items = load_exemplars(tmp_path / "seed")
    assert [f.name for f, _ in items] == ["Open Drawer", "Lift Lid", "Turn Faucet"]
    drawer = items[0][0]  # filled from the built-in task of the same name
    assert drawer.description.startswith("Pull the bottom drawer")
    assert drawer.asset == "StorageFurniture-0" and "drawer" in drawer.tags
    assert items[1][0] == TaskFields("Lift Lid", "Raise the lid of the box.", "Box-0",
                                     ("open", "lid"))
    pool = ExemplarPool(tmp_path / "p.sqlite", embedder=HashingEmbedder())
    assert seed_pool(pool, tmp_path / "seed") == 3
    assert seed_pool(pool, tmp_path / "seed") == 0  # idempotent
    assert len(pool) == 3 and pool.show("Lift Lid").solutions[0]["source"] == "seed:seed"
    assert pool.show("Lift Lid").solutions[0]["outcomes"][0]["subtask_success"] == [True, True]
    assert pool.top_k("Open Drawer", k=1, exclude=())[0].name == "Open Drawer"


def test_bad_seed_file_is_named(tmp_path):
    folder = tmp_path / "seed"
    folder.mkdir()
    (folder / "broken.yaml").write_text("task: X\nscene: {objects: []}\nsubtasks: []\n")
    with pytest.raises(PoolError, match="broken.yaml"):
        load_exemplars(folder)
    assert load_exemplars(tmp_path / "missing") == []


def test_shipped_seed_folder_loads():
    items = load_exemplars(EXEMPLAR_DIR)
    assert all(isinstance(sol, Solution) and fields.name for fields, sol in items)
    assert len({fields.name for fields, _ in items}) == len(items)


READER = textwrap.dedent("""
    import sys, time
    from simjudge.llm import HashingEmbedder
    from simjudge.pipelines.pool import ExemplarPool
    pool = ExemplarPool(sys.argv[1], embedder=HashingEmbedder())
    n, end = 0, time.monotonic() + float(sys.argv[2])
    while time.monotonic() < end:
        pool.top_k("Open Drawer", "pull", k=2); pool.list(); n += 1
    print(n)
""")


def test_concurrent_readers_and_writer(tmp_path):
    path = tmp_path / "p.sqlite"
    ExemplarPool(path, embedder=HashingEmbedder()).close()
    proc = subprocess.Popen([sys.executable, "-c", READER, str(path), "1.5"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        pool = ExemplarPool(path, embedder=HashingEmbedder())
        try:
            while not stop.is_set():
                pool.top_k("Open Drawer", "pull the drawer", k=2)
                pool.list()
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)
        finally:
            pool.close()

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    writer = ExemplarPool(path, embedder=HashingEmbedder())
    for i in range(20):
        writer.add_task({"name": f"Task {i}", "description": f"Open drawer number {i}."},
                        solution(f"Task {i}"), True)
        time.sleep(0.02)
    out, err = proc.communicate(timeout=60)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert not errors, errors
    assert proc.returncode == 0, err
    assert int(out.strip()) > 0
    assert len(writer) == 20 and len(writer.top_k("Open Drawer", "pull", k=3)) == 3


def test_shipped_exemplars_are_at_least_15_verified_solutions():
    from simjudge.pipelines.pool_seed import load_exemplars

    items = load_exemplars()
    assert len(items) >= 15
    for fields, solution in items:
        assert solution.provenance["verified"]["subtask_success"]
        assert all(solution.provenance["verified"]["subtask_success"])
        assert fields.asset
        assert not fields.name.endswith("-v0"), "exemplars are keyed by task name, not env id"
