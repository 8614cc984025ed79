"""A real graph for chapter 13: Zachary's karate club (Zachary 1977), as ``networkx`` ships it.

34 members of a university karate club and the 78 friendships seen outside the club. The club then
split in two: the members who followed the instructor ("Mr. Hi", node 0) and those who stayed with
the administrator ("Officer", node 33). Predicting each member's side from the friendships, given
the side of only a few, is the classic small test of learning on graphs.

Shapes: ``n`` nodes (34).
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

__all__ = ["FACTIONS", "Graph", "karate_club"]

FACTIONS = ("Mr. Hi", "Officer")  # label 0 and label 1: the instructor's and the administrator's side


@dataclass(frozen=True)
class Graph:
    """A graph with one label per node."""

    adjacency: torch.Tensor  # float (n, n), symmetric, 1 where two nodes are friends, 0 on the diagonal
    labels: torch.Tensor  # int64 (n,): each node's faction, an index into `classes`
    classes: tuple[str, ...]  # the name of each label
    nx_graph: object  # the networkx graph itself (for drawing)


def karate_club() -> Graph:
    """Zachary's karate club: 34 nodes, 78 edges, the two factions after the split as labels."""
    import networkx  # imported here: only chapter 13 needs it

    graph = networkx.karate_club_graph()
    nodes = sorted(graph.nodes)
    adjacency = torch.as_tensor(
        networkx.to_numpy_array(graph, nodelist=nodes, weight=None), dtype=torch.float32
    )
    labels = torch.tensor([FACTIONS.index(graph.nodes[node]["club"]) for node in nodes])  # (n,)
    return Graph(adjacency=adjacency, labels=labels, classes=FACTIONS, nx_graph=graph)
