"""Benchmark: our pure-Python GPT-2 tokeniser against tiktoken (Rust), on real IMDb reviews (chapter 10).

Both encode the same reviews to the same ids (checked here too); the script prints the time each
takes, in reviews and in megabytes per second, on one thread. Ours is timed twice: with an empty
chunk cache (every word merged from bytes) and warm (repeated words looked up), since real text
repeats most of its words.

    python benchmarks/bpe_speed.py               # 2,000 training reviews
    python benchmarks/bpe_speed.py --reviews 200
"""

from __future__ import annotations

import argparse
import os
import time

from fromscratch.data.imdb import load_imdb
from fromscratch.data.pretrained import gpt2_files, tiktoken_gpt2
from fromscratch.tokenizers import read_gpt2_files


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--reviews", type=int, default=2_000, help="training reviews to encode (default 2,000)"
    )
    args = parser.parse_args()
    print(f"load average at start {os.getloadavg()}")
    reviews = load_imdb(100, 8, train_reviews=args.reviews, test_reviews=2).train
    texts = [reviews.text(i) for i in range(len(reviews))]
    megabytes = sum(len(t.encode("utf-8")) for t in texts) / 1e6
    ours = read_gpt2_files(*gpt2_files())  # a fresh tokeniser: its chunk cache starts empty
    theirs = tiktoken_gpt2()
    theirs.encode_ordinary("warm-up")
    rows = []
    for name, encode in (
        ("ours (pure Python, cold cache)", ours.encode),
        ("ours (pure Python, warm cache)", ours.encode),  # the same reviews again: every chunk cached
        ("tiktoken (Rust)", theirs.encode_ordinary),
    ):
        start = time.perf_counter()
        ids = [encode(t) for t in texts]
        seconds = time.perf_counter() - start
        rows.append((name, seconds, ids))
        if name.startswith("ours (pure Python, cold"):
            ours_ids = ids
    assert all(ids == ours_ids for _, _, ids in rows), "the tokenisers disagree"
    tokens = sum(len(i) for i in ours_ids)
    print(
        f"{len(texts):,} IMDb reviews, {megabytes:.2f} MB, {tokens:,} GPT-2 tokens "
        "(identical ids from all three)"
    )
    for name, seconds, _ in rows:
        print(
            f"{name:32s} {seconds:7.3f} s  {len(texts) / seconds:9,.0f} reviews/s  "
            f"{megabytes / seconds:6.2f} MB/s"
        )
    print(f"tiktoken is {rows[0][1] / rows[2][1]:.0f}x (cold) / {rows[1][1] / rows[2][1]:.0f}x (warm) faster")
    print(f"load average at the end {os.getloadavg()}")


if __name__ == "__main__":
    main()
