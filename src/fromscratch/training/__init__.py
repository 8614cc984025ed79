"""Training (chapters 01, 06, 07, 12): the one loop and what it needs.

- :mod:`~fromscratch.training.loop`: ``train(model, batches, loss_fn, config)`` and ``TrainConfig``;
- :mod:`~fromscratch.training.schedule`: warm-up and decay, by steps or by seconds;
- :mod:`~fromscratch.training.history`: the losses and evaluations of a run, and their plot;
- :mod:`~fromscratch.training.checkpoints`: atomic, resumable checkpoints named from a run's configs;
- :mod:`~fromscratch.training.precision`: the precision a device can really run fast;
- :mod:`~fromscratch.training.losses`: the losses of the course's tasks;
- :mod:`~fromscratch.training.distributed`: data-parallel training under ``torchrun`` (ch. 12);
- :mod:`~fromscratch.training.memory`: what a training step holds in memory (ch. 12).

Imports the layers below it (attention, blocks, models, data); never a recipe, profile or chapter.
"""

from fromscratch.training.checkpoints import checkpoint_path, load_checkpoint, run_checkpoint, save_checkpoint
from fromscratch.training.history import History
from fromscratch.training.loop import TrainConfig, to_device, train
from fromscratch.training.schedule import Schedule, lr_factor

__all__ = [
    "History",
    "Schedule",
    "TrainConfig",
    "checkpoint_path",
    "load_checkpoint",
    "lr_factor",
    "run_checkpoint",
    "save_checkpoint",
    "to_device",
    "train",
]
