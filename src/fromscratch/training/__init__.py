"""Training (chapters 01, 06, 07, 12): the one loop and what it needs.

- :mod:`~fromscratch.training.loop`: ``train(model, batches, loss_fn, config)`` and ``TrainConfig``;
- :mod:`~fromscratch.training.watch`: the losses read back from the device and checked, the progress bar;
- :mod:`~fromscratch.training.schedule`: warm-up and decay, by steps or by seconds;
- :mod:`~fromscratch.training.batches`: moving a batch to the device, its size, the longest batch;
- :mod:`~fromscratch.training.history`: the losses and evaluations of a run, and their plot;
- :mod:`~fromscratch.training.resume`: everything a run changes, so it resumes exactly;
- :mod:`~fromscratch.training.checkpoints`: atomic, resumable checkpoints named from a run's configs;
- :mod:`~fromscratch.training.precision`: the precision a device can really run fast, and the one
  table of what each precision's name means;
- :mod:`~fromscratch.training.losses`: the losses of the course's tasks;
- :mod:`~fromscratch.training.distributed`: data-parallel training under ``torchrun`` (ch. 12);
- :mod:`~fromscratch.training.memory`: what a training step holds in memory, and the one rule for
  whether it fits a GPU (ch. 12);
- :mod:`~fromscratch.training.fits`: does a run fit the GPU, checked before its first step;
- :mod:`~fromscratch.training.rl`: RL from verifiable rewards: advantages, the clipped loss, pass@k (ch. 17);
- :mod:`~fromscratch.training.timing`: ``time_step``, the one way to time a training step.

The loop imports none of the models; the rest imports the rooms below it (models, data, tokenizers,
utils); never a chapter.
"""

from fromscratch.training.batches import to_device
from fromscratch.training.checkpoints import checkpoint_path, load_checkpoint, run_checkpoint, save_checkpoint
from fromscratch.training.history import History
from fromscratch.training.loop import TrainConfig, train
from fromscratch.training.rl import clipped_policy_loss, group_advantages, pass_at_k, rloo_advantages
from fromscratch.training.schedule import Schedule, lr_factor
from fromscratch.training.timing import time_step

__all__ = [
    "History",
    "Schedule",
    "TrainConfig",
    "checkpoint_path",
    "clipped_policy_loss",
    "group_advantages",
    "load_checkpoint",
    "lr_factor",
    "pass_at_k",
    "rloo_advantages",
    "run_checkpoint",
    "save_checkpoint",
    "time_step",
    "to_device",
    "train",
]
