"""The few named pipelines chapters reuse, each a short file that calls :func:`fromscratch.training.train`.

- :mod:`~fromscratch.recipes.sequence_compare`, :mod:`~fromscratch.recipes.sequence_tasks`: chapter 08's
  comparisons of recurrence, convolution and attention (one parameter budget, step times, the match task);
- :mod:`~fromscratch.recipes.translation`: chapter 09's Multi30k data, decoding and BLEU;
- :mod:`~fromscratch.recipes.bert_imdb`: chapter 10's BERT on IMDb (data, masked-LM batches, scoring);
- :mod:`~fromscratch.recipes.ddp`: chapter 12's data-parallel demo.

The top floor of the package (with ``profiles`` and ``exercises``): a recipe may import any lower room.
"""
