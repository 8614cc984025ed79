"""The named pipelines that a chapter and a benchmark (or two chapters) share, one module each.

The chapters call :func:`fromscratch.training.train` themselves; a recipe holds what goes around that
call (data, checkpoint names, scoring), and the few that train (``label_efficiency``, ``assistant``,
``assistant_imdb``, ``ddp``) make the same ``train`` call. A recipe takes its sizes as the profile's
typed run (``prof.modern`` is a :class:`~fromscratch.profiles.modern.ModernRun`, and so on).

- :mod:`~fromscratch.recipes.sequence_compare`, :mod:`~fromscratch.recipes.sequence_tasks`: chapter 08's
  step times over the length and the match task's scoring (the four models at one parameter budget are
  :func:`fromscratch.models.budget_configs`);
- :mod:`~fromscratch.recipes.translation`: chapter 09's Multi30k data, checkpoint names, decoding and BLEU;
- :mod:`~fromscratch.recipes.bert_imdb`: chapter 10's BERT on IMDb (data, masked-LM batches, checkpoint
  names, scoring, filling a blank);
- :mod:`~fromscratch.recipes.label_efficiency`: chapter 10's pretraining call and its label-efficiency
  curve (fine-tuning random, pretrained and MiniLM encoders on few labels);
- :mod:`~fromscratch.recipes.ddp`: chapter 12's data-parallel demo (run under ``torchrun``);
- :mod:`~fromscratch.recipes.beyond`: chapter 13's loss of a labelled batch and scoring of a test set;
- :mod:`~fromscratch.recipes.assistant`, :mod:`~fromscratch.recipes.assistant_imdb`: chapter 15's chat
  model (file, oracle, prompting, replies, LoRA-SFT) and what it buys on IMDb beside chapters 06 and 10.

The top floor of the package, above ``profiles`` and ``exercises``: a recipe may import any lower room.
"""
