"""How good a model is: ``classification`` (accuracy, chapter 06) and ``language`` (bits per byte,
chapter 07).
"""

from fromscratch.metrics.classification import Predictions, accuracy, predict_labels
from fromscratch.metrics.language import bits_per_byte, scoring_windows
from fromscratch.metrics.translation import BleuScore, bleu, bleu_by_length  # chapter 09

__all__ = [
    "BleuScore",
    "bleu",
    "bleu_by_length",
    "Predictions",
    "accuracy",
    "bits_per_byte",
    "predict_labels",
    "scoring_windows",
]
