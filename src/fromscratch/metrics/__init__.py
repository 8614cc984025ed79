"""How good a model is: ``classification`` (accuracy, chapter 06) and ``language`` (bits per byte,
chapter 07); what it costs and how loss scales: ``flops`` and ``scaling`` (chapter 19).
"""

from fromscratch.metrics.classification import Predictions, accuracy, predict_labels
from fromscratch.metrics.flops import flops_per_token, parameter_count, training_flops  # chapter 19
from fromscratch.metrics.language import bits_per_byte, scoring_windows
from fromscratch.metrics.scaling import (  # chapter 19
    LossLaw,
    bootstrap_loss_law,
    compute_optimal,
    fit_loss_law,
    isoflop_minimum,
    power_law_fit,
)
from fromscratch.metrics.translation import BleuScore, bleu, bleu_by_length  # chapter 09

__all__ = [
    "BleuScore",
    "LossLaw",
    "bleu",
    "bleu_by_length",
    "Predictions",
    "accuracy",
    "bits_per_byte",
    "bootstrap_loss_law",
    "compute_optimal",
    "fit_loss_law",
    "flops_per_token",
    "isoflop_minimum",
    "parameter_count",
    "power_law_fit",
    "predict_labels",
    "scoring_windows",
    "training_flops",
]
