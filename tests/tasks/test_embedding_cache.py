"""Query vectors kept on disk: the embedder runs only for texts it never embedded."""

from __future__ import annotations

import numpy as np

from simjudge.llm.embeddings import HashingEmbedder
from simjudge.pipelines.embedding_cache import cached_embed, query_cache_path
from simjudge.pipelines.pool import ExemplarPool
from simjudge.pipelines.pool_seed import seed_pool


class CountingEmbedder(HashingEmbedder):
    """A real (hashing) embedder that records which texts it was asked to embed."""

    def __init__(self) -> None:
        super().__init__(64)
        self.asked: list[str] = []

    def _embed_batch(self, texts):
        self.asked += texts
        return super()._embed_batch(texts)


def test_only_new_texts_reach_the_embedder(tmp_path):
    path = tmp_path / "q.sqlite"
    first = CountingEmbedder()
    a = cached_embed(first, ["open the drawer", "close the door"], path)
    assert first.asked == ["open the drawer", "close the door"]
    second = CountingEmbedder()  # a new process: nothing in memory
    b = cached_embed(second, ["close the door", "open the drawer", "press the button"], path)
    assert second.asked == ["press the button"]
    assert np.array_equal(b[:2], a[::-1]) and b.dtype == np.float32


def test_vectors_of_other_models_are_not_mixed(tmp_path):
    path = tmp_path / "q.sqlite"
    cached_embed(HashingEmbedder(64), ["open the drawer"], path)
    other = CountingEmbedder()
    other.name = "another-model"
    cached_embed(other, ["open the drawer"], path)
    assert other.asked == ["open the drawer"]


def test_an_unusable_cache_is_bypassed(tmp_path):
    path = tmp_path / "q.sqlite"
    path.write_text("not a database")
    embedder = CountingEmbedder()
    vectors = cached_embed(embedder, ["open the drawer"], path)
    assert embedder.asked == ["open the drawer"] and vectors.shape == (1, 64)


def test_the_pool_ranks_the_same_with_cached_queries(tmp_path):
    pool_path = tmp_path / "pool.sqlite"
    assert query_cache_path(pool_path) == tmp_path / "pool.sqlite.queries.sqlite"
    assert query_cache_path(":memory:") is None
    rankings, asked = [], []
    for _ in range(2):
        embedder = CountingEmbedder()
        pool = ExemplarPool(pool_path, embedder=embedder)
        if len(pool) == 0:
            seed_pool(pool)
        top = pool.top_k("Open Drawer", "pull the drawer open", k=3)
        rankings.append([(e.name, e.similarity) for e in top])
        asked.append(embedder.asked)
        pool.close()
    assert rankings[0] == rankings[1] and len(rankings[0]) == 3
    assert "Open Drawer: pull the drawer open" in asked[0]
    assert asked[1] == []  # second run: task vectors from the pool, the query from the cache
