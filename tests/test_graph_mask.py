"""A graph as an attention mask (chapter 13): a node sees its neighbours and itself, nothing else."""

from __future__ import annotations

import pytest
import torch

from fromscratch.attention import SelfAttention, graph_mask
from fromscratch.data.graphs import karate_club
from fromscratch.models import SetTransformer

PATH = torch.tensor([[0, 1, 0, 0], [1, 0, 1, 0], [0, 1, 0, 1], [0, 0, 1, 0]])  # 0 - 1 - 2 - 3


def test_graph_mask_is_the_adjacency_with_self_loops():
    mask = graph_mask(PATH)
    assert mask.dtype == torch.bool
    assert torch.equal(mask, (PATH + torch.eye(4, dtype=torch.long)).bool())
    assert torch.equal(graph_mask(PATH, self_loops=False), PATH.bool())
    weighted = PATH * 0.5
    assert torch.equal(graph_mask(weighted), mask), "weights are ignored: nonzero = an edge"
    assert graph_mask(torch.stack([PATH, PATH.T])).shape == (2, 4, 4)


def test_a_non_neighbours_features_do_not_change_an_output_in_one_layer():
    torch.manual_seed(0)
    attention = SelfAttention(8, heads=2).eval()
    x = torch.randn(1, 4, 8)
    changed = x.clone()
    changed[0, 3] += torch.randn(8)  # node 3: not a neighbour of node 0 or 1
    mask = graph_mask(PATH)
    for written_out in (False, True):
        out = [attention(v, attn_mask=mask, attention=[] if written_out else None) for v in (x, changed)]
        torch.testing.assert_close(out[0][0, :2], out[1][0, :2])  # nodes 0 and 1 did not see it
        assert not torch.allclose(out[0][0, 2], out[1][0, 2])  # node 2, its neighbour, did


def test_information_travels_one_hop_per_layer():
    torch.manual_seed(0)
    mask = graph_mask(PATH)
    for depth in (1, 2, 3):
        model = SetTransformer(input_dim=4, hidden=8, emb=8, heads=2, depth=depth, pooling=None).eval()
        x = torch.eye(4)[None].requires_grad_()  # one-hot node ids
        model(x, attn_mask=mask)[0, 0].sum().backward()  # node 0's output
        reached = x.grad[0].abs().sum(dim=1) > 0  # which nodes' features it depends on
        assert reached.tolist() == [node <= depth for node in range(4)]


def test_a_mask_of_the_wrong_shape_is_the_mask_apis_error():
    attention = SelfAttention(8, heads=2)
    with pytest.raises(ValueError, match=r"does not broadcast to \(1, 2, 4, 4\)"):
        attention(torch.randn(1, 4, 8), attn_mask=graph_mask(torch.ones(3, 3)))
    with pytest.raises(ValueError, match="square"):
        graph_mask(torch.ones(3, 4))
    with pytest.raises(ValueError, match="square"):
        graph_mask(torch.ones(4))


def test_karate_club_is_zacharys():
    club = karate_club()
    assert club.adjacency.shape == (34, 34) and int(club.adjacency.sum()) == 2 * 78
    assert torch.equal(club.adjacency, club.adjacency.T) and club.adjacency.diagonal().sum() == 0
    assert club.labels[0] == 0 and club.labels[33] == 1 and club.labels.bincount().tolist() == [17, 17]
    assert club.classes == ("Mr. Hi", "Officer")
